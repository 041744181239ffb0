"""Mixed-integer rounding cuts: exact lower bounds beyond the LP for the covering problem.

The LP bound ``ceil(LP)`` can fall one short of the minimum cover (on the digits
panel pools 229.3 against a minimum of 231).  A cut is an inequality every 0/1
cover satisfies but the LP optimum does not; with cuts added the LP value rises,
and the exact weak-dual bound of the extended system (`covering_exact.exact_dual`,
paper 000 section 4.1 "Verifying certificate bounds") is still a valid bound,
because that bound holds for any rows that every cover satisfies, whatever the
signs of their coefficients.

Each cut is the mixed-integer rounding (MIR) inequality of one row or of a
non-negative integer combination of rows (Nemhauser and Wolsey, *Integer and
Combinatorial Optimization*, II.1.7): with the columns near 1 complemented
(``z = 1 - x``), a row ``sum c_i z_i >= beta`` over ``z >= 0`` integer is divided
by an integer ``delta`` and rounded.  Everything is computed with Python integers,
so a cut is valid by the theorem, not by a float's last digits; the LP that
suggests multipliers and complementing is a hint only.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .covering_exact import Dual, exact_dual
from .covering_lp import lp_direct

__all__ = ["CutBound", "cut_bound", "mir_cut"]

_MAX_COEF = 1 << 40  # cuts with larger coefficients are dropped (int64 sums stay exact)
_CUTS_PER_ROUND = 10
_SCALE_BITS = 16  # multipliers lam are rounded to integers below 2^16 before aggregating


def mir_cut(a: NDArray[Any], b: int, complement: NDArray[np.bool_],
            delta: int) -> tuple[NDArray[np.int64], int] | None:
    """The MIR cut of ``sum_i a_i x_i >= b`` (x in {0,1}) for divisor ``delta``.

    Columns in ``complement`` are written as ``z_i = 1 - x_i`` first; the cut is
    returned on x, divided by the gcd of its coefficients.

    Parameters
    ----------
    a : numpy.ndarray
        Integer coefficients (int64 or Python ints), any sign.
    b : int
        Right-hand side.
    complement : numpy.ndarray of bool
        Columns to complement (those the LP sets near 1).
    delta : int
        Divisor, > 0.

    Returns
    -------
    tuple (g, d) or None
        The cut ``g.x >= d`` in integers; None when rounding gives nothing (delta
        divides the right-hand side) or a coefficient exceeds 2^40.

    Examples
    --------
    >>> g, d = mir_cut(np.array([3, 3, 3]), 4, np.zeros(3, dtype=bool), 3)
    >>> g.tolist(), d
    ([1, 1, 1], 2)
    """
    arr = np.asarray(a)
    big = abs(int(arr.max(initial=0))) + abs(int(arr.min(initial=0))) if arr.size else 0
    # int64 when no intermediate can pass 2^62 (every term below is at most about
    # m * (max |a| + delta + |b|)); else the same expressions on Python ints
    fast = arr.dtype != object and (arr.size + 2) * (big + delta + abs(int(b)) + 1) < 2**62
    av = arr.astype(np.int64) if fast else arr.astype(object)

    def total(v: NDArray[Any]) -> int:
        return int(v.sum(dtype=np.int64)) if fast else int(sum(int(x) for x in v))

    c = np.where(complement, -av, av)
    beta = int(b) - total(av[complement])
    # <= form: sum (-c_i) z_i <= -beta, over delta: floor parts and remainders
    rho0 = (-beta) % delta
    if rho0 == 0:
        return None
    q = delta - rho0
    neg = -c
    fl = neg // delta
    rho = neg % delta
    e = q * fl + np.maximum(rho - rho0, 0)  # q * MIR coefficient, integers
    E = q * ((-beta) // delta)
    # >= form on z: sum (-e_i) z_i >= -E; back to x (z_i = 1 - x_i on complement)
    g = np.where(complement, e, -e)
    d = -E + total(e[complement])
    if fast:
        div = math.gcd(int(np.gcd.reduce(g)) if g.size else 0, d)
    else:
        div = math.gcd(*(int(v) for v in g), d) if g.size else abs(d)
    if div > 1:
        g, d = g // div, d // div
    gmax = max(abs(int(g.max())), abs(int(g.min()))) if g.size else 0
    if gmax >= _MAX_COEF or abs(d) >= _MAX_COEF:
        return None
    return g.astype(np.int64), int(d)


@dataclass(frozen=True)
class CutBound:
    """The best exact lower bound the cut rounds proved, the LP value of the last
    round (a hint), the cuts added and the LP calls made.  ``dual`` is the exact
    dual of the last round over G's rows and the cuts, ``rhs`` their right-hand
    sides (for reduced-cost fixing, `covering_exact.fix_columns`); None when no LP
    was solved."""

    lower: int
    lp_value: float | None
    cuts: int
    lps: int
    dual: Dual | None = None
    rhs: NDArray[np.int64] | None = None


def _separate(rows: NDArray[np.int64], rhs: NDArray[np.int64], x: NDArray[np.float64],
              lam: NDArray[np.float64]) -> list[tuple[NDArray[np.int64], int]]:
    """Violated MIR cuts from the LP duals' combination and from each row, for
    divisors taken from the fractional columns' coefficients and a few quantiles."""
    complement = x > 1.0 - 1e-9
    frac = (x > 1e-9) & ~complement
    bases = []
    if lam.max(initial=0.0) > 0:
        bases.append(np.floor(lam / lam.max() * (1 << _SCALE_BITS)).astype(np.int64))
    for j in range(rows.shape[0]):
        unit = np.zeros(rows.shape[0], dtype=np.int64)
        unit[j] = 1
        bases.append(unit)
    found: dict[bytes, tuple[float, NDArray[np.int64], int]] = {}
    for w in bases:
        keep = w > 0
        sub, wk = rows[keep], w[keep]
        bound = float(wk.sum()) * float(np.abs(sub).max(initial=0) + np.abs(rhs[keep]).max())
        if bound < 2.0**62:  # int64 sums are exact
            a: NDArray[Any] = wk @ sub
            b = int(wk @ rhs[keep])
        else:
            W = wk.astype(object)
            a = W @ sub.astype(object)
            b = int(W @ rhs[keep].astype(object))
        c = np.where(complement, -a, a)
        deltas = {abs(int(v)) for v in c[frac]}
        pos = np.abs(c.astype(np.float64))
        pos = pos[pos > 0]
        if pos.size:
            deltas |= {int(v) for v in np.quantile(pos, [0.5, 0.75, 0.9, 0.99])}
        for delta in sorted(d for d in deltas if d > 0):
            cut = mir_cut(a, b, complement, delta)
            if cut is None:
                continue
            g, d = cut
            scale = float(np.sqrt((g.astype(np.float64) ** 2).sum())) or 1.0
            violation = (d - float(g @ x)) / scale
            if violation > 1e-6:
                found.setdefault(g.tobytes() + d.to_bytes(16, "little", signed=True),
                                 (violation, g, d))
    best = sorted(found.values(), key=lambda t: -t[0])[:_CUTS_PER_ROUND]
    return [(g, d) for _, g, d in best]


def cut_bound(G: NDArray[np.int64], D: NDArray[np.int64], target: int, *,
              rounds: int, deadline: float = math.inf) -> CutBound:
    """Add MIR cuts for up to ``rounds`` LP solves; stop once the exact bound
    reaches ``target`` (no cover smaller than it) or no cut is violated.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains (>= 0).
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    target : int
        The bound that would close the gap (the incumbent's size).
    rounds : int
        LP solves allowed (each counts as a search node's work for the caller).
    deadline : float, optional
        ``time.perf_counter()`` value after which no further round starts (the
        caller's safety net).

    Returns
    -------
    CutBound
        ``lower`` is max(ceil, surrogate) of the exact weak dual over the rows and
        every cut, for the best round; a valid lower bound on the minimum cover.

    Examples
    --------
    >>> G = np.array([[2, 2, 2, 0], [0, 2, 2, 2]]); D = np.array([3, 3])
    >>> cut_bound(G, D, 2, rounds=3).lower
    2
    """
    rows, rhs = G.astype(np.int64), D.astype(np.int64)
    lower, lp_value, cuts, lps = 0, None, 0, 0
    dual, dual_rhs = None, None
    while lps < rounds and (lps == 0 or time.perf_counter() < deadline):
        lp = lp_direct(rows, rhs)
        lps += 1
        if lp is None:
            break
        x, lam, lp_value = lp
        dual, dual_rhs = exact_dual(rows, rhs, lam), rhs
        lower = max(lower, dual.ceil, dual.surrogate)
        if lower >= target:
            break
        new = _separate(rows, rhs, x, lam)
        if not new:
            break
        rows = np.vstack([rows] + [g[None, :] for g, _ in new])
        rhs = np.concatenate([rhs, np.array([d for _, d in new], dtype=np.int64)])
        cuts += len(new)
    return CutBound(lower, lp_value, cuts, lps, dual, dual_rhs)
