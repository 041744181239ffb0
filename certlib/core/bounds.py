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
import numpy.typing as npt
from numpy.typing import NDArray

from .pair_terms import initial_lower, lower_terms, realised_terms, row_blocks, rule_unit
from .pool import Pool
from .weights import exact_fraction, tolerance_units

__all__ = ["Decision", "Thresholds", "batch_lower", "certified_mask", "decide", "deficits",
           "eliminated_mask", "excess_units", "thresholds"]

_NEVER = np.iinfo(np.int64).min // 4  # threshold that any bound meets (diagonal)


@dataclass(frozen=True, eq=False)
class Thresholds:
    """Integer thresholds of the test for one pool, rule and tolerance (`thresholds`).

    Parameters
    ----------
    need : numpy.ndarray of int64, shape (K, K)
        Certify k when ``L[j, k] >= need[j, k]`` for all j (diagonal: always met).
    elim : numpy.ndarray of int64, shape (K, K)
        k is out when ``L[k, j] >= elim[k, j]`` for some j (diagonal: never met).
    unit : int
        1, or 2 for the centered rule (its bounds are doubled to stay integer).
    tol_units : int
        T = floor(scale * tau) in scaled-risk integers (not multiplied by ``unit``).
    tolerance : Fraction
        tau, exactly.
    scale : int
        Scaled risk / scale = objective (2 n^2 for AUGRC, n for accuracy).
    """

    need: NDArray[np.int64]  # (K, K): certify k when L[j, k] >= need[j, k] for all j
    elim: NDArray[np.int64]  # (K, K): k is out when L[k, j] >= elim[k, j] for some j
    unit: int  # 1, or 2 for the centered rule
    tol_units: int  # T in scaled-risk integers (not multiplied by unit)
    tolerance: Fraction
    scale: int  # scaled risk / scale = objective

    @property
    def K(self) -> int:
        """Number of candidates."""
        return int(self.need.shape[0])


def thresholds(K: int, scale: int, *, rule: str = "shared",
               tolerance: float | Fraction = 0.0) -> Thresholds:
    """The integer thresholds of the stopping test and of elimination (SPEC section 5).

    Parameters
    ----------
    K : int
        Number of candidates.
    scale : int
        The pool's scale (`certlib.core.pool.Pool.scale`).
    rule : {"shared", "separate", "centered"}
        The comparison rule (`certlib.core.pair_terms`).
    tolerance : float or Fraction
        tau >= 0 on the objective's scale; floats are read through their shortest
        decimal.

    Returns
    -------
    Thresholds
        Read-only ``need`` and ``elim`` matrices and the units they are in.

    Raises
    ------
    ParameterError
        An unknown rule or a tolerance that is not a number >= 0.

    Examples
    --------
    >>> th = thresholds(2, 32)
    >>> th.need[0, 1], th.need[1, 0]   # candidate 0 wins a tie: 1 beats it, 0 suffices
    (np.int64(1), np.int64(0))
    >>> int(thresholds(2, 32, tolerance=0.125).need[0, 1])   # -floor(32 / 8)
    -4
    """
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


def certified_mask(L: NDArray[np.int64], th: Thresholds) -> NDArray[np.bool_]:
    """Which candidates pass the stopping test (Theorem 1: exact, any query order).

    Parameters
    ----------
    L : numpy.ndarray of int64, shape (K, K) or (K, K, m)
        Lower bounds ``L[j, k]`` of r_j - r_k, in the rule's units; a stack of m of them.
    th : Thresholds
        The test's thresholds.

    Returns
    -------
    numpy.ndarray of bool, shape (K,) or (K, m)
        True where candidate k is certified.
    """
    need = th.need if L.ndim == 2 else th.need[:, :, None]
    return np.asarray((L >= need).all(axis=0), dtype=bool)


def deficits(need: npt.ArrayLike, L: npt.ArrayLike) -> NDArray[np.int64]:
    """``max(0, need - L)`` elementwise, int64: what reading rows must still add to each
    bound before the test passes (SPEC sections 6, 7).

    Parameters
    ----------
    need : array_like of int
        Thresholds, e.g. ``th.need`` or the column ``th.need[:, k]`` of target k.
    L : array_like of int
        The matching lower bounds.

    Returns
    -------
    numpy.ndarray of int64
        The deficits, same shape; the diagonal gives 0 because its threshold is met by
        any bound.

    Examples
    --------
    >>> deficits([3, 0, -2], [1, 2, -5]).tolist()
    [2, 0, 3]
    """
    return np.maximum(0, np.asarray(need, dtype=np.int64) - np.asarray(L, dtype=np.int64))


def eliminated_mask(L: NDArray[np.int64], th: Thresholds) -> NDArray[np.bool_]:
    """Which candidates lose to another under every completion of the unread labels.

    Parameters
    ----------
    L : numpy.ndarray of int64, shape (K, K) or (K, K, m)
        Lower bounds, as for `certified_mask`.
    th : Thresholds
        The thresholds (``th.elim``).

    Returns
    -------
    numpy.ndarray of bool, shape (K,) or (K, m)
        True where candidate k is eliminated.
    """
    elim = th.elim if L.ndim == 2 else th.elim[:, :, None]
    return np.asarray((L >= elim).any(axis=1), dtype=bool)


def excess_units(L: NDArray[np.int64], th: Thresholds) -> NDArray[np.int64]:
    """Worst-case excess of each candidate, max(0, max_j -L[j, k]) (SPEC section 5).

    Parameters
    ----------
    L : numpy.ndarray of int64, shape (K, K) or (K, K, m)
        Lower bounds, as for `certified_mask`.
    th : Thresholds
        The thresholds (for ``K``).

    Returns
    -------
    numpy.ndarray of int64, shape (K,) or (K, m)
        In scaled-risk units times ``th.unit``; divide by ``unit * scale`` for the
        objective.
    """
    Lm = np.where(np.eye(th.K, dtype=bool), 0, L) if L.ndim == 2 else \
        np.where(np.eye(th.K, dtype=bool)[:, :, None], 0, L)
    out: NDArray[np.int64] = np.maximum(0, (-Lm).max(axis=0))
    return out


@dataclass(frozen=True)
class Decision:
    """What the bounds say now (`decide`).

    Parameters
    ----------
    certified : bool
        Some candidate passes the test (exactly, or within tau).
    selected_index : int
        The certified candidate, or the one of smallest worst-case excess.
    excess : Fraction
        Guaranteed objective gap of ``selected_index`` to the best, for any completion.
    eliminated : tuple of int
        Candidates that lose under every completion.
    """

    certified: bool  # some candidate passes the test (exactly, or within tau)
    selected_index: int  # the certified candidate, or the best worst-case excess
    excess: Fraction  # guaranteed objective gap of `selected_index` to the best, any completion
    eliminated: tuple[int, ...]  # candidates that lose under every completion


def decide(L: NDArray[np.int64], th: Thresholds, *,
           prefer: NDArray[np.bool_] | None = None) -> Decision:
    """Certified candidate if any (smallest worst-case excess, earliest on ties), else
    the candidate with the smallest worst-case excess (the budget-exhausted answer).

    Parameters
    ----------
    L : numpy.ndarray of int64, shape (K, K)
        Lower bounds ``L[j, k]`` of r_j - r_k, in the rule's units.
    th : Thresholds
        The test's thresholds.
    prefer : numpy.ndarray of bool, shape (K,), optional
        When some certified candidate is in it, the choice is made among those (the
        robust certificates under label errors, `certlib.labelling.session`).

    Returns
    -------
    Decision
        The verdict.
    """
    cert = certified_mask(L, th)
    exc = excess_units(L, th)
    among = cert & prefer if prefer is not None and (cert & prefer).any() else cert
    pool_of = np.flatnonzero(among) if cert.any() else np.arange(th.K)
    sel = int(pool_of[np.argmin(exc[pool_of])])
    elim = tuple(int(k) for k in np.flatnonzero(eliminated_mask(L, th)))
    return Decision(bool(cert.any()), sel, Fraction(int(exc[sel]), th.unit * th.scale), elim)


def batch_lower(pool: Pool, read_rows: npt.ArrayLike, *,
                labels: npt.ArrayLike | None = None,
                rule: str = "shared") -> NDArray[np.int64]:
    """L after reading ``read_rows``, computed from scratch: the reference for the online
    updates.

    It deliberately sums ``realised - lower`` from the two ends rather than calling
    `gain_terms` (which `Session` and `replay` use), so that online == batch checks two
    different formulas.

    Parameters
    ----------
    pool : Pool
        The pool.
    read_rows : array_like of int
        Row positions read.
    labels : array_like of int, optional
        Their label codes (default: the pool's own labels).
    rule : {"shared", "separate", "centered"}
        The comparison rule.

    Returns
    -------
    numpy.ndarray of int64, shape (K, K)
        The exact lower bounds ``L[j, k]`` of r_j - r_k, in the rule's units.
    """
    rows_read = np.asarray(read_rows, dtype=np.int64)
    codes = pool.labels[rows_read] if labels is None else np.asarray(labels)
    L: NDArray[np.int64] = initial_lower(pool, rule).copy()
    for blk in row_blocks(rows_read.size):
        rows = rows_read[blk]
        L += (realised_terms(pool, rows, codes[blk], rule=rule)
              - lower_terms(pool, rows, rule=rule)).sum(axis=2, dtype=np.int64)
    return L
