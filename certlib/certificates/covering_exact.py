"""Exact integer pieces of the covering solver (SPEC section 7, paper 000 section 4.1).

The covering problem is ``min |S|  s.t.  sum_{i in S} G[j, i] >= D[j]`` for every
constraint j, with G >= 0 and D integer.  Here are the parts that are *proved*:
covering checks with integer sums, the sorting bound, the weak-dual and surrogate
bounds evaluated in dyadic rationals, reduced-cost fixing, and the repair of a
float LP solution into a verified witness.  Floats enter only as hints (LP
solutions and multipliers from `certlib.certificates.covering_lp`, greedy scores).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

__all__ = ["Dual", "cardinality_fixing", "count_reaching", "covers", "descending_cumsum",
           "exact_dual", "fewest_largest", "fix_columns", "greedy_complete", "largest_first",
           "prune", "reduced_cost_fixing", "round_up"]

_X_EPS = 1e-9  # LP entries below this count as 0 when rounding up (hint only; verified after)


def covers(G: NDArray[np.int64], D: NDArray[np.int64], cols: npt.ArrayLike) -> bool:
    """Exact integer check of the covering constraints for a set of columns.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains, G >= 0.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    cols : array_like of int
        Column indices.

    Returns
    -------
    bool
        Whether ``G[:, cols].sum(1) >= D`` holds for every constraint.

    Examples
    --------
    >>> G, D = np.array([[3, 1, 0], [0, 2, 2]]), np.array([3, 3])
    >>> covers(G, D, [0, 1]), covers(G, D, [0, 2]), covers(G, D, [0, 1, 2])
    (False, False, True)
    """
    c = np.asarray(cols, dtype=np.int64)
    if G.shape[0] == 0:
        return True
    return bool((G[:, c].sum(axis=1, dtype=np.int64) >= D).all())


def descending_cumsum(values: NDArray[Any]) -> NDArray[Any]:
    """Running sums of ``values`` taken largest first.

    Parameters
    ----------
    values : numpy.ndarray
        Integer values (int64, or an object array of Python ints).

    Returns
    -------
    numpy.ndarray
        int64 for integer values, Python ints for an object array.

    Examples
    --------
    >>> descending_cumsum(np.array([1, 5, 3])).tolist()
    [5, 8, 9]
    """
    v = np.sort(values)[::-1]
    out: NDArray[Any] = np.cumsum(v, dtype=np.int64 if v.dtype.kind in "biu" else None)
    return out


def count_reaching(cumsum: NDArray[Any], target: int) -> int | None:
    """Fewest leading terms of a non-decreasing ``cumsum`` whose sum reaches ``target``.

    Parameters
    ----------
    cumsum : numpy.ndarray
        Running sums, non-decreasing (`descending_cumsum`).
    target : int
        The sum to reach.

    Returns
    -------
    int or None
        0 when target <= 0, None when even the whole sum falls short.

    Examples
    --------
    >>> count_reaching(np.array([5, 8, 9]), 6), count_reaching(np.array([5, 8, 9]), 10)
    (2, None)
    """
    if target <= 0:
        return 0
    if cumsum.size == 0 or cumsum[-1] < target:
        return None
    return int(np.searchsorted(cumsum, target, side="left")) + 1


def fewest_largest(values: NDArray[Any], target: int) -> int | None:
    """Smallest number of the largest ``values`` (>= 0) summing to >= target; None if none do.

    The one rule behind the prelabel bound (SPEC section 6), the one-constraint and
    surrogate bounds, and the exact solution of a single covering constraint (paper
    000 section 4.1, "Two candidates": an exchange argument shows largest-first is
    optimal).

    Parameters
    ----------
    values : numpy.ndarray
        Non-negative integers, int64 or an object (Python int) array; callers keep
        the int64 sums below 2^63.
    target : int
        The sum to reach.

    Returns
    -------
    int or None
        The count, 0 when target <= 0, None when all of them fall short.

    Examples
    --------
    >>> fewest_largest(np.array([1, 5, 3, 2]), 7)
    2
    """
    return count_reaching(descending_cumsum(values), target)


def largest_first(g: NDArray[np.int64], d: int) -> NDArray[np.int64]:
    """Columns of the fewest largest gains ``g`` reaching ``d`` (ties: lower index first),
    largest first: the minimum cover of a single constraint (paper 000 section 4.1, "Two
    candidates"; `fewest_largest` counts them).

    Parameters
    ----------
    g : numpy.ndarray of int64, shape (m,)
        Gains of one constraint, >= 0.
    d : int
        Its deficit; the caller checks that all of g reaches it.

    Returns
    -------
    numpy.ndarray of int64
        The column indices.

    Examples
    --------
    >>> largest_first(np.array([1, 5, 3, 5]), 7).tolist()
    [1, 3]
    """
    order = np.argsort(-g, kind="stable")
    return order[:count_reaching(np.cumsum(g[order]), d)]


def prune(G: NDArray[np.int64], D: NDArray[np.int64], cols: npt.ArrayLike, *,
          order_key: NDArray[Any] | None = None) -> NDArray[np.int64]:
    """Drop witness columns one at a time while the exact slack allows it.

    Candidates are tried in ascending ``order_key`` (default: total gain), so
    weak rows go first.  Each removal is checked with integer sums.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    cols : array_like of int
        A cover's columns.
    order_key : numpy.ndarray, optional
        One key per entry of ``cols``; smaller is tried first.

    Returns
    -------
    numpy.ndarray of int64
        The columns kept: still a cover when ``cols`` was one.
    """
    cols = np.asarray(cols, dtype=np.int64)
    if cols.size == 0 or G.shape[0] == 0:
        return cols[:0] if G.shape[0] == 0 else cols
    slack = G[:, cols].sum(axis=1, dtype=np.int64) - D
    sub = G[:, cols]
    removable = (sub <= slack[:, None]).all(axis=0)
    if not removable.any():
        return cols
    key = sub.sum(axis=0) if order_key is None else order_key
    keep = np.ones(cols.size, dtype=bool)
    for t in np.flatnonzero(removable)[np.argsort(key[removable], kind="stable")]:
        g = sub[:, t]
        if (g <= slack).all():
            slack = slack - g
            keep[t] = False
    return cols[keep]


def greedy_complete(G: NDArray[np.int64], D: NDArray[np.int64],
                    start: npt.ArrayLike) -> NDArray[np.int64]:
    """Add columns by largest normalised remaining coverage until every deficit is met.

    Terminates because the caller has checked that all columns together cover D.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    start : array_like of int
        Columns chosen already.

    Returns
    -------
    numpy.ndarray of int64
        A pruned cover containing what was needed of ``start``.
    """
    chosen = np.zeros(G.shape[1], dtype=bool)
    chosen[np.asarray(start, dtype=np.int64)] = True
    rem = D - G[:, chosen].sum(axis=1, dtype=np.int64)
    Df = np.maximum(D, 1).astype(np.float64)
    while (rem > 0).any():
        r = np.maximum(rem, 0)
        score = (np.minimum(G, r[:, None]) / Df[:, None]).sum(axis=0)
        score[chosen] = -1.0
        i = int(np.argmax(score))
        if score[i] <= 0:  # cannot happen when the full set covers D
            raise RuntimeError("greedy completion found no useful row")
        chosen[i] = True
        rem = rem - G[:, i]
    return prune(G, D, np.flatnonzero(chosen))


@dataclass(frozen=True)
class Dual:
    """Exact bounds from one multiplier vector lam ~ lam_int / 2^s."""

    value: Fraction  # weak-dual bound lam'.D + sum_i min(0, 1 - lam'.g_i)
    num: int  # value * 2^s, an integer
    ceil: int  # ceil(value)
    surrogate: int  # exact minimum cardinality of the surrogate constraint (or 0)
    lam_int: NDArray[Any]  # (r,) dyadic numerators (int64 or object)
    s: int  # denominator exponent
    dots: NDArray[Any]  # (m,) lam_int . g_i (int64 or object), exact


def exact_dual(G: NDArray[np.int64], D: NDArray[np.int64], lam: npt.ArrayLike) -> Dual:
    """Evaluate the weak-dual and surrogate bounds for multipliers lam >= 0, exactly.

    lam (floats, a hint) is rounded down to lam_int / 2^s.  s is chosen so the
    int64 sums cannot overflow; if that would cost precision (s < 40) the same
    expressions are evaluated with Python integers instead.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    lam : array_like of float, shape (r,)
        Multipliers, e.g. the LP duals; NaN, infinite or negative entries count as 0.

    Returns
    -------
    Dual
        The bounds, each a valid lower bound on the minimum cover size.

    Examples
    --------
    >>> G, D = np.array([[3, 1, 0], [0, 2, 2]]), np.array([3, 3])
    >>> d = exact_dual(G, D, [0.5, 0.5])
    >>> d.value, d.ceil, d.surrogate
    (Fraction(2, 1), 2, 2)
    """
    r, m = G.shape
    lam_f = np.maximum(np.nan_to_num(np.asarray(lam, dtype=np.float64), nan=0.0, posinf=0.0,
                                     neginf=0.0), 0.0)
    # |G|: cut rows (`covering_cuts`) have coefficients of either sign; the weak-dual
    # bound holds for any rows every cover satisfies, as x is in [0, 1]
    # (at least 1: an all-zero row with a large multiplier would otherwise pass the
    # overflow guard below and wrap lam_int)
    gmax = np.maximum(np.abs(G).max(axis=1), 1).astype(np.float64) if m else np.ones(r)
    maxdot = float(lam_f @ gmax) + 1.0
    # |2^s - lam_int.g_i| <= 2^s * maxdot; a sum of m of them must stay below 2^62
    s = 62 - math.ceil(math.log2(max(m, 1) + 1)) - math.ceil(math.log2(maxdot + 1)) - 1
    s = min(s, 52)
    lam_int: NDArray[Any]
    dots: NDArray[Any]
    if s >= 40:
        lam_int = np.floor(lam_f * 2.0 ** s).astype(np.int64)
        dots = G.T @ lam_int  # int64, exact: bounded by 2^s * maxdot < 2^61
        total = int(np.minimum(0, (1 << s) - dots).sum(dtype=np.int64))
    else:
        s = 52
        lam_int = np.array([math.floor(math.ldexp(v, s)) for v in lam_f], dtype=object)
        dots = G.T.astype(object) @ lam_int if r else np.zeros(m, dtype=object)
        one = 1 << s
        total = sum(int(one - d) for d in dots if d > one)
    lam_D = sum(int(a) * int(b) for a, b in zip(lam_int, D))
    num = lam_D + total
    value = Fraction(num, 1 << s)
    ceil = -((-num) >> s)
    # surrogate: sum_i dots_i x_i >= lam_D; the int64 cumsum is safe by the choice of s
    # a negative dot never helps reach lam_D: counted as 0 (largest-first needs values >= 0)
    sur = fewest_largest(np.maximum(dots, 0), lam_D) if m else (0 if lam_D <= 0 else None)
    sur = 0 if sur is None else sur  # infeasible surrogate cannot happen when G covers D
    return Dual(value, num, int(ceil), int(sur), lam_int, s, dots)


def round_up(G: NDArray[np.int64], D: NDArray[np.int64],
             x: NDArray[np.float64]) -> NDArray[np.int64]:
    """Round an LP solution up, verify exactly, complete greedily if needed, prune.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    x : numpy.ndarray of float64, shape (m,)
        An LP solution (a hint); its positive entries are rounded up to 1.

    Returns
    -------
    numpy.ndarray of int64
        A verified cover (for a basic solution, at most r columns more than the LP
        value: paper Theorem 2).
    """
    cols = np.flatnonzero(x > _X_EPS)
    if not covers(G, D, cols):
        return greedy_complete(G, D, cols)
    return prune(G, D, cols, order_key=x[cols])


def reduced_cost_fixing(dual: Dual, U: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Rows every certificate of size <= U - 1 must leave out / must contain.

    With v = num / 2^s the exact weak-dual value and t_i = 2^s - lam_int.g_i, a
    certificate containing row i with t_i > 0 has size >= v + t_i / 2^s, and one
    without row i with t_i < 0 has size >= v - t_i / 2^s (weak duality).  When that
    exceeds U - 1 the row is fixed.  All integers, no tolerance.

    Parameters
    ----------
    dual : Dual
        Exact bounds from one multiplier vector (`exact_dual`).
    U : int
        Size of a known cover; only covers below it are of interest.

    Returns
    -------
    out : numpy.ndarray of bool, shape (m,)
        Columns every cover of size <= U - 1 leaves out.
    into : numpy.ndarray of bool, shape (m,)
        Columns every such cover contains.
    """
    room = ((U - 1) << dual.s) - dual.num
    if getattr(dual.dots, "dtype", None) == np.int64:
        # int64 path: |t_i| < 2^62 by the choice of s, so capping room keeps every
        # comparison and keeps room inside int64.  The Python-int path (s = 52) has no
        # such bound on t_i and compares unbounded integers: no cap there.
        room = max(min(room, 1 << 62), -(1 << 62))
    t = (1 << dual.s) - dual.dots
    out = (t > 0) & (t > room)
    into = (t < 0) & (-t > room)
    return np.asarray(out, dtype=bool), np.asarray(into, dtype=bool)


def cardinality_fixing(rows: Sequence[tuple[NDArray[Any], int]], t: int,
                       out: NDArray[np.bool_], into: NDArray[np.bool_],
                       ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]] | None:
    """Columns every cover of at most ``t`` columns must leave out / must contain.

    ``rows`` are constraints ``a.x >= b`` (a >= 0 integers over the m columns) that
    every such cover satisfies: the covering constraints themselves and surrogate
    combinations of them.  ``out``/``into`` are columns already fixed.  With
    ``t'`` = t - |into| columns left and ``need`` = b - a(into), the most a cover can
    still collect is the sum of the t' largest free a_i, so
      - if that is below ``need``, no such cover exists (returns None);
      - if the t' largest *other than i* fall short, column i must be in;
      - if i plus the t' - 1 largest others fall short, column i must be out.
    Fixing changes t' and the needs, so the rules run to a fixpoint.  Exact
    integer (or Python int) arithmetic.

    Parameters
    ----------
    rows : sequence of (numpy.ndarray, int)
        Constraints ``(a, b)`` meaning ``a.x >= b``.
    t : int
        The most columns a cover may have.
    out : numpy.ndarray of bool, shape (m,)
        Columns already fixed out.
    into : numpy.ndarray of bool, shape (m,)
        Columns already fixed in.

    Returns
    -------
    tuple of two numpy.ndarray of bool, or None
        New (out, into) masks, or None when no cover of at most t columns exists.
    """
    out, into = out.copy(), into.copy()
    changed = True
    while changed:
        changed = False
        left = t - int(np.count_nonzero(into))
        if left < 0:
            return None
        free = np.flatnonzero(~out & ~into)
        for a, b in rows:
            need = b - a[into].sum()
            if need <= 0:
                continue
            if left == 0 or free.size == 0:
                return None
            v = a[free]
            order = np.argsort(-v, kind="stable")
            cs = np.cumsum(v[order])
            k = min(left, free.size)
            top = cs[k - 1]
            if top < need:
                return None
            pos = np.empty(free.size, dtype=np.int64)
            pos[order] = np.arange(free.size)
            nxt = v[order[k]] if free.size > k else 0
            top_less_one = cs[k - 2] if k >= 2 else 0
            in_top = pos < k
            best_without = np.where(in_top, top - v + nxt, top)
            best_with = np.where(in_top, top, top_less_one + v)
            must_in = free[best_without < need]
            must_out = free[best_with < need]
            if must_in.size or must_out.size:
                into[must_in] = True
                out[must_out] = True
                changed = True
                break
    return out, into


def fix_columns(G: NDArray[np.int64], D: NDArray[np.int64], dual: Dual | None,
                U: int, dual_rhs: NDArray[np.int64] | None = None,
                ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]] | None:
    """(out, into): columns every cover of size <= U - 1 leaves out / contains, by exact
    reduced costs and then cardinality arguments on the constraints and their surrogate.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    dual : Dual or None
        Exact dual bounds, when an LP was solved.
    U : int
        Size of a known cover.
    dual_rhs : numpy.ndarray of int64, optional
        The right-hand sides ``dual`` was computed with, when it is over more rows
        than G (G's rows and cuts, `certlib.certificates.covering_cuts`); default D.

    Returns
    -------
    tuple of two numpy.ndarray of bool, or None
        The (out, into) masks, or None when no cover below U exists.
    """
    m = G.shape[1]
    rows: list[tuple[NDArray[Any], int]]
    if dual is not None:
        out, into = reduced_cost_fixing(dual, U)
        rhs = D if dual_rhs is None else dual_rhs
        lam_D = sum(int(a) * int(b) for a, b in zip(dual.lam_int, rhs, strict=True))
        # a cut row may be negative on a column; such a column never helps the
        # surrogate, and cardinality fixing needs a >= 0
        rows = [(np.maximum(dual.dots, 0), lam_D)]
    else:
        out = into = np.zeros(m, dtype=bool)
        rows = []
    rows += [(G[j], int(D[j])) for j in range(G.shape[0])]
    return cardinality_fixing(rows, U - 1, out, into)
