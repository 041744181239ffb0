"""Stopping test, elimination and worst-case excess (SPEC section 5, paper Theorem 1).

All bounds are K x K int64 matrices ``L`` with ``L[j, k]`` the exact lower
bound of r_j - r_k over every completion of the unread labels (in the rule's
units, see `certlib.core.pair_terms`).  The upper bound is ``H[j, k] = -L[k, j]`` for
the shared rule.

Candidate k is *certified* when ``L[j, k] >= need[j, k]`` for every j != k:
need = 1 if j < k (j would win a tie), 0 if j > k; with a tolerance tau,
need = -T for all j, T = floor(scale * tau).  The test is exact (if and only
if) and valid after any adaptive query order.  Candidate k is *eliminated*
when some j beats it under every completion, ``L[k, j] >= need0[k, j]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .pair_terms import initial_lower, lower_terms, realised_terms, row_blocks, rule_unit
from .weights import exact_fraction, tolerance_units

__all__ = ["Decision", "Thresholds", "batch_lower", "certified_mask", "decide", "deficits",
           "eliminated_mask", "excess_units", "thresholds"]

_NEVER = np.iinfo(np.int64).min // 4  # threshold that any bound meets (diagonal)


@dataclass(frozen=True, eq=False)
class Thresholds:
    """Integer thresholds of the test for one pool, rule and tolerance."""

    need: np.ndarray  # (K, K): certify k when L[j, k] >= need[j, k] for all j
    elim: np.ndarray  # (K, K): k is out when L[k, j] >= elim[k, j] for some j
    unit: int  # 1, or 2 for the centered rule
    tol_units: int  # T in scaled-risk integers (not multiplied by unit)
    tolerance: Fraction
    scale: int  # scaled risk / scale = objective

    @property
    def K(self) -> int:
        return self.need.shape[0]


def thresholds(K: int, scale: int, rule: str = "shared", tolerance=0.0) -> Thresholds:
    unit = rule_unit(rule)
    tol = exact_fraction(tolerance)
    T = tolerance_units(tol, scale)
    j, k = np.indices((K, K))
    tie = (j < k).astype(np.int64)  # j earlier than k wins a tie
    need = np.full((K, K), -T, dtype=np.int64) * unit if tol > 0 else tie * unit
    elim = tie * unit  # k beaten by j: L[k, j] >= 1 if k < j else 0
    np.fill_diagonal(need, _NEVER)
    elim = elim.copy()
    np.fill_diagonal(elim, -_NEVER)  # a candidate never eliminates itself
    for a in (need, elim):
        a.setflags(write=False)
    return Thresholds(need, elim, unit, T, tol, scale)


def certified_mask(L: np.ndarray, th: Thresholds) -> np.ndarray:
    """Bool (K,) [or (K, m) for a stack (K, K, m)]: which candidates pass the test."""
    need = th.need if L.ndim == 2 else th.need[:, :, None]
    return (L >= need).all(axis=0)


def deficits(need: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``max(0, need - L)`` elementwise, int64: what reading rows must still add to each
    bound before the test passes (SPEC sections 6, 7).  Slices work alike, e.g.
    ``deficits(th.need[:, k], L[:, k])`` for target k; the diagonal gives 0 because
    its threshold is met by any bound."""
    return np.maximum(0, np.asarray(need, dtype=np.int64) - np.asarray(L, dtype=np.int64))


def eliminated_mask(L: np.ndarray, th: Thresholds) -> np.ndarray:
    """Bool (K,) [or (K, m)]: which candidates lose to another under every completion."""
    elim = th.elim if L.ndim == 2 else th.elim[:, :, None]
    return (L >= elim).any(axis=1)


def excess_units(L: np.ndarray, th: Thresholds) -> np.ndarray:
    """Worst-case excess of each candidate, max(0, max_j -L[j, k]), in scaled-risk units
    times ``th.unit``; divide by unit * scale for the objective (SPEC section 5)."""
    Lm = np.where(np.eye(th.K, dtype=bool), 0, L) if L.ndim == 2 else \
        np.where(np.eye(th.K, dtype=bool)[:, :, None], 0, L)
    return np.maximum(0, (-Lm).max(axis=0))


@dataclass(frozen=True)
class Decision:
    """What the bounds say now."""

    certified: bool  # some candidate passes the test (exactly, or within tau)
    selected_index: int  # the certified candidate, or the best worst-case excess
    excess: Fraction  # guaranteed objective gap of `selected_index` to the best, any completion
    eliminated: tuple  # candidates that lose under every completion


def decide(L: np.ndarray, th: Thresholds, prefer: np.ndarray | None = None) -> Decision:
    """Certified candidate if any (smallest worst-case excess, earliest on ties), else
    the candidate with the smallest worst-case excess (the budget-exhausted answer).
    ``prefer`` (K,) bool: when some certified candidate is in it, the choice is made
    among those (the robust certificates under label errors, `certlib.labelling.session`)."""
    cert = certified_mask(L, th)
    exc = excess_units(L, th)
    among = cert & prefer if prefer is not None and (cert & prefer).any() else cert
    pool_of = np.flatnonzero(among) if cert.any() else np.arange(th.K)
    sel = int(pool_of[np.argmin(exc[pool_of])])
    elim = tuple(int(k) for k in np.flatnonzero(eliminated_mask(L, th)))
    return Decision(bool(cert.any()), sel, Fraction(int(exc[sel]), th.unit * th.scale), elim)


def batch_lower(pool, read_rows, labels=None, rule: str = "shared") -> np.ndarray:
    """L after reading ``read_rows`` (positions) with label codes ``labels`` (default: the
    pool's own labels), computed from scratch: the reference for the online updates.

    It deliberately sums ``realised - lower`` from the two ends rather than calling
    `gain_terms` (which `Session` and `replay` use), so that online == batch checks two
    different formulas."""
    read_rows = np.asarray(read_rows, dtype=np.int64)
    if labels is None:
        labels = pool.labels[read_rows]
    L = initial_lower(pool, rule).copy()
    for blk in row_blocks(read_rows.size):
        rows = read_rows[blk]
        L += (realised_terms(pool, rows, np.asarray(labels)[blk], rule)
              - lower_terms(pool, rows, rule)).sum(axis=2, dtype=np.int64)
    return L
