"""Per-row pair contributions: the one code path behind every bound.

For candidates j, k and row i the scaled risk difference r_j - r_k gets the
term ``d_jki(y_i) = w_ji 1{pred_ji != y_i} - w_ki 1{pred_ki != y_i}`` (SPEC
section 4), which depends on the label of row i alone.  Every algorithm in
certlib needs three numbers per (j, k, i):

* ``lower``: the smallest value the term can take over the class set (an
  unread row contributes this to L_jk);
* ``realised``: its value at the read label;
* ``potential``: ``upper - lower``, what reading the row can at most add.

With at least two classes (a `Pool` guarantees it) these have closed forms:
if j and k predict the same class the term is ``(w_j - w_k) * error`` with both
error values possible, so lower = min(0, w_j - w_k); if they predict different
classes, lower = -w_k (the label equals j's prediction) and upper = w_j; a
third class gives w_j - w_k, which lies between.  So binary pools (paper eq.
(4)), shared multiclass predictions (error bits, paper section 4.5) and
categorical labels with different predictions share these formulas.

Comparison rules (SPEC section 5) change only ``lower``:
* ``shared``: the exact joint bound above (Theorem 1);
* ``separate``: each risk bounded on its own, lower = -w_k;
* ``centered``: a common label term t_i y_i is removed from every risk first
  (t_i the midpoint of the coefficients), then *separate*; everything is
  doubled to stay integer, so this rule works in units of 2.

Arrays are (K, K, m) int64 over a block of m rows; the diagonal is 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..errors import ParameterError
from .pool import Pool

#: Rows of a pool to compute terms on: positions (an integer array) or a slice.
Rows: TypeAlias = slice | NDArray[np.integer[Any]]

__all__ = ["RULES", "rule_unit", "lower_terms", "realised_terms", "gain_terms", "target_terms",
           "potential_terms", "pair_potential", "initial_lower", "row_blocks"]

RULES = ("shared", "separate", "centered")
BLOCK = 1 << 15
_INT32_SAFE = 1 << 28  # n below this keeps 2n-weight sums of two rows in int32


def check_rule(rule: str) -> str:
    """The rule itself, once checked to be one of `RULES`.

    Parameters
    ----------
    rule : str
        A comparison rule name.

    Returns
    -------
    str
        ``rule``.

    Raises
    ------
    ParameterError
        When it is not "shared", "separate" or "centered".
    """
    if rule not in RULES:
        raise ParameterError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    return rule


def rule_unit(rule: str) -> int:
    """Integer multiple in which a rule's bounds are kept (centered doubles).

    Parameters
    ----------
    rule : str
        A comparison rule name.

    Returns
    -------
    int
        2 for "centered", else 1.

    Raises
    ------
    ParameterError
        An unknown rule.
    """
    return 2 if check_rule(rule) == "centered" else 1


def row_blocks(n: int, block: int = BLOCK) -> Iterator[slice]:
    """Consecutive slices of at most ``block`` rows covering 0..n-1: the blocks in which
    (K, K, m) terms are formed, so memory stays bounded for any n.

    Parameters
    ----------
    n : int
        Number of rows.
    block : int
        Rows per block.

    Returns
    -------
    iterator of slice
        The blocks, in order.

    Examples
    --------
    >>> list(row_blocks(5, 2))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    for s in range(0, n, block):
        yield slice(s, min(n, s + block))


def _zero_diag(a: NDArray[np.int64]) -> NDArray[np.int64]:
    K = a.shape[0]
    a[np.arange(K), np.arange(K)] = 0
    return a


def lower_terms(pool: Pool, rows: Rows, *, rule: str = "shared") -> NDArray[np.int64]:
    """(K, K, m) lower ends of d_jki over the class set, in the rule's units.

    Parameters
    ----------
    pool : Pool
        The pool.
    rows : slice or array_like of int
        The m rows.
    rule : {"shared", "separate", "centered"}
        The comparison rule (module docstring).

    Returns
    -------
    numpy.ndarray of int64, shape (K, K, m)
        What each unread row contributes to ``L[j, k]``; the diagonal is 0.

    Raises
    ------
    ParameterError
        An unknown rule, or the centered rule on a multiclass pool whose candidates
        predict differently.
    """
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    if rule == "shared":
        same = P[:, None, :] == P[None, :, :]
        diff = W[:, None, :] - W[None, :, :]
        shared: NDArray[np.int64] = np.where(same, np.minimum(diff, 0), -W[None, :, :])
        return shared
    if rule == "separate":
        lo = np.broadcast_to(-W[None, :, :], (W.shape[0],) + W.shape).copy()
        return _zero_diag(lo)
    if rule == "centered":
        base, a = _linear_form(pool, W, P)
        s = a.min(axis=0) + a.max(axis=0)  # 2 t_i
        two_a = 2 * a - s[None, :]
        lo = (2 * (base[:, None, :] - base[None, :, :])
              + np.minimum(two_a, 0)[:, None, :] - np.maximum(two_a, 0)[None, :, :])
        return _zero_diag(lo)
    check_rule(rule)
    raise AssertionError("unreachable")


def _linear_form(pool: Pool, W: NDArray[np.int64],
                 P: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Risk term w*loss as base + a*y in the queried bit y (paper eq. (3))."""
    if pool.shared_prediction:  # query the error bit e_i: c_j = 0, a_ji = w_ji
        return np.zeros_like(W), W
    if pool.is_binary:
        return W * P, W * (1 - 2 * P)
    raise ParameterError(
        "the centered rule needs binary labels or one shared prediction; this pool has "
        f"{pool.n_classes} classes and different predictions"
    )


def realised_terms(pool: Pool, rows: Rows, labels: npt.ArrayLike, *,
                   rule: str = "shared") -> NDArray[np.int64]:
    """(K, K, m) values of d_jki at the given label codes, in the rule's units.

    Parameters
    ----------
    pool : Pool
        The pool.
    rows : slice or array_like of int
        The m rows.
    labels : array_like of int, shape (m,)
        Their label codes.
    rule : {"shared", "separate", "centered"}
        The comparison rule (sets the unit).

    Returns
    -------
    numpy.ndarray of int64, shape (K, K, m)
        ``w_ji loss_ji - w_ki loss_ki`` times the rule's unit.

    Raises
    ------
    ParameterError
        An unknown rule.
    """
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    loss = W * (P != np.asarray(labels)[None, :])
    d: NDArray[np.int64] = loss[:, None, :] - loss[None, :, :]
    return d * rule_unit(rule)


def gain_terms(pool: Pool, rows: Rows, labels: npt.ArrayLike, *,
               rule: str = "shared") -> NDArray[np.integer[Any]]:
    """(K, K, m) gains ``realised - lower`` of reading rows at the given label codes.

    For the shared rule this is computed without forming both ends: where j and k
    predict alike the gain is max(0, +-(w_j - w_k)) (+ on an error, paper eq. (7)),
    else w_j loss_j + w_k (1 - loss_k).  Blocks are small, int64 keeps it exact.

    Parameters
    ----------
    pool : Pool
        The pool.
    rows : slice or array_like of int
        The m rows read.
    labels : array_like of int, shape (m,)
        Their label codes.
    rule : {"shared", "separate", "centered"}
        The comparison rule.

    Returns
    -------
    numpy.ndarray of int, shape (K, K, m)
        What reading each row adds to ``L[j, k]``; int32 for the shared rule when n is
        below 2**28 (every gain then fits), else int64.

    Raises
    ------
    ParameterError
        An unknown rule, or the centered rule on a multiclass pool whose candidates
        predict differently.
    """
    if rule != "shared":
        return realised_terms(pool, rows, labels, rule=rule) - lower_terms(pool, rows, rule=rule)
    W = pool.weights[:, rows]
    if pool.n < _INT32_SAFE:  # weights < 2n: differences and sums fit in int32
        W = W.astype(np.int32)
    P = pool.preds[:, rows]
    if pool.is_binary:
        # r_j - r_k = c + sum_i b_i y_i with b = a_j - a_k, a = w (1 - 2 yhat) (paper
        # section 3), so reading row i adds b y - min(0, b) = max(0, s (a_j - a_k)) with
        # s = 2y - 1: one clamped outer difference instead of both cases' arrays
        u = W * (1 - 2 * P.astype(W.dtype)) * (2 * np.asarray(labels)[None, :] - 1).astype(W.dtype)
        out: NDArray[np.integer[Any]] = np.maximum(u[:, None, :] - u[None, :, :], 0)
        return out
    loss = P != np.asarray(labels)[None, :]
    Wl = W * loss
    same = P[:, None, :] == P[None, :, :]
    diff = W[:, None, :] - W[None, :, :]
    np.negative(diff, out=diff, where=~loss[:, None, :])
    other = Wl[:, None, :] + (W - Wl)[None, :, :]
    gains: NDArray[np.integer[Any]] = np.where(same, np.maximum(diff, 0), other)
    return gains


def target_terms(pool: Pool, k: int, rows: Rows, labels: npt.ArrayLike,
                 potential_mask: NDArray[np.bool_] | None = None,
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(K, m) lower terms and gains of r_j - r_k against one target k, shared rule.

    Column k of `lower_terms` and `gain_terms` without forming K x K x m (used by the
    certificate LP, whose constraints all concern one target).

    Parameters
    ----------
    pool : Pool
        The pool.
    k : int
        The target candidate.
    rows : slice or array_like of int
        The m rows.
    labels : array_like of int, shape (m,)
        Their label codes (any code on rows flagged in ``potential_mask``).
    potential_mask : numpy.ndarray of bool, shape (m,), optional
        Rows that get their potential gain instead of the realised one (an unread row
        in a partial run).

    Returns
    -------
    lower : numpy.ndarray of int64, shape (K, m)
        The lower terms of each rival j against k (row k is 0).
    gains : numpy.ndarray of int64, shape (K, m)
        The gains (row k is 0).
    """
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    wk, pk = W[k], P[k]
    same = P == pk[None, :]
    lower = np.where(same, np.minimum(W - wk[None, :], 0), -wk[None, :])
    loss = W * (P != np.asarray(labels)[None, :])
    gains = (loss - loss[k][None, :]) - lower
    if potential_mask is not None and potential_mask.any():
        pot = np.where(same, np.abs(W - wk[None, :]), W + wk[None, :])
        gains = np.where(potential_mask[None, :], pot, gains)
    gains[k] = 0
    lower[k] = 0
    return lower, gains


def potential_terms(pool: Pool, rows: Rows) -> NDArray[np.int64]:
    """(K, K, m) potential gains upper - lower of the shared rule (|b_jki| for binary).

    Parameters
    ----------
    pool : Pool
        The pool.
    rows : slice or array_like of int
        The m rows.

    Returns
    -------
    numpy.ndarray of int64, shape (K, K, m)
        The most reading each row can add to ``L[j, k]``; the diagonal is 0.
    """
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    same = P[:, None, :] == P[None, :, :]
    pot: NDArray[np.int64] = np.where(same, np.abs(W[:, None, :] - W[None, :, :]),
                                      W[:, None, :] + W[None, :, :]) \
        * ~np.eye(W.shape[0], dtype=bool)[:, :, None]
    return pot


def pair_potential(pool: Pool, j: int, k: int, rows: Rows = slice(None)) -> NDArray[np.int64]:
    """Potential gains of one pair over rows (symmetric in j, k), shared rule.

    Parameters
    ----------
    pool : Pool
        The pool.
    j, k : int
        The two candidates.
    rows : slice or array_like of int
        The rows (default: all).

    Returns
    -------
    numpy.ndarray of int64
        ``|w_j - w_k|`` where the two predict alike, ``w_j + w_k`` elsewhere (paper
        eq. (10)'s terms).
    """
    wj, wk = pool.weights[j, rows], pool.weights[k, rows]
    same = pool.preds[j, rows] == pool.preds[k, rows]
    pot: NDArray[np.int64] = np.where(same, np.abs(wj - wk), wj + wk)
    return pot


def initial_lower(pool: Pool, rule: str = "shared") -> NDArray[np.int64]:
    """(K, K) L_jk with no label read: the sum of the lower terms of every row.

    Parameters
    ----------
    pool : Pool
        The pool (its labels are not used).
    rule : {"shared", "separate", "centered"}
        The comparison rule.

    Returns
    -------
    numpy.ndarray of int64, shape (K, K)
        The bounds before the first label (paper Proposition 1 for the shared rule).

    Raises
    ------
    ParameterError
        An unknown rule.
    """
    check_rule(rule)
    K = pool.K
    W = pool.weights
    total = W.sum(axis=1, dtype=np.int64)
    if rule in ("shared", "separate"):
        # separate: every unread row contributes -w_k.  shared adds back
        # min(w_j, w_k) on rows where j and k predict alike (paper Proposition 1).
        L: NDArray[np.int64] = np.broadcast_to(-total[None, :], (K, K)).copy()
        if rule == "shared":
            for j in range(K):
                for k in range(j + 1, K):
                    same = pool.preds[j] == pool.preds[k]
                    back = int(np.minimum(W[j], W[k]).sum(where=same, dtype=np.int64))
                    L[j, k] += back
                    L[k, j] += back
        np.fill_diagonal(L, 0)
        return L
    L = np.zeros((K, K), dtype=np.int64)
    for blk in row_blocks(pool.n):
        L += lower_terms(pool, blk, rule=rule).sum(axis=2, dtype=np.int64)
    return L
