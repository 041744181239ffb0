"""HiGHS calls for the covering problem: floats, hints only (SPEC section 7).

Everything here is floating point and nothing here is trusted: `certlib.certificates.covering`
rounds the LP duals to rationals and evaluates the bounds exactly, and checks every
candidate witness with integer sums.  scipy is imported inside the functions, so
importing this module does not import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

#: An LP solution as a hint: x (m,), the duals lam (r,) >= 0 and the LP value.
LPSolution: TypeAlias = "tuple[NDArray[np.float64], NDArray[np.float64], float]"

__all__ = ["MilpHint", "lp_direct", "lp_relaxation", "milp_solution"]


def lp_direct(G: NDArray[np.int64], D: NDArray[np.integer] | NDArray[np.floating],
              ) -> LPSolution | None:
    """The covering LP ``min 1.x  s.t.  G x >= D, 0 <= x <= 1`` in one HiGHS dual-simplex
    call (a hint).

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray, shape (r,)
        Deficits (floats when a subsample's are scaled).

    Returns
    -------
    tuple (x, lam, value) or None
        A basic optimal solution, its duals (>= 0) and value; None when HiGHS fails.
    """
    from scipy.optimize import linprog

    m = G.shape[1]
    try:
        res = linprog(np.ones(m), A_ub=-G.astype(np.float64), b_ub=-D.astype(np.float64),
                      bounds=(0.0, 1.0), method="highs-ds")
    except (ValueError, RuntimeError):
        return None
    if res.status != 0 or res.x is None:
        return None
    # marginals are d(objective)/d(b_ub) <= 0 for A_ub x <= b_ub; our rows are -G x <= -D
    lam = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
    return np.asarray(res.x, dtype=np.float64), np.maximum(lam, 0.0), float(res.fun)


_SIFT_MIN = 2000  # below this many columns HiGHS is fast enough on the whole LP
_SIFT_SAMPLE = 750


def lp_relaxation(G: NDArray[np.int64], D: NDArray[np.int64]) -> LPSolution | None:
    """LP relaxation with HiGHS dual simplex; returns (x, lam, value) or None (a hint).

    On many rows the HiGHS call itself grows superlinearly (thousands of bound
    flips per iteration), so large problems are solved by *sifting*: multipliers
    from a strided subsample of rows classify every row by its reduced cost
    1 - lam.g_i into fixed at 1, fixed at 0 and a band near 0 that goes to
    HiGHS with the residual deficits; rows whose reduced cost has the wrong sign
    under the band's duals join the band, until none does.  The result is an
    optimal basic solution of the full LP (fixed rows are nonbasic at a bound),
    so rounding still adds at most r rows.  Any trouble falls back to one HiGHS
    call on every row.  Either way the answer is only a hint: the witness and
    the bounds are checked exactly by the callers.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.

    Returns
    -------
    tuple (x, lam, value) or None
        As `lp_direct`, for the whole problem.
    """
    m = G.shape[1]
    if m < _SIFT_MIN:
        return lp_direct(G, D)
    sub = np.arange(0, m, -(-m // _SIFT_SAMPLE))
    Gs = G[:, sub]
    tot = G.sum(axis=1, dtype=np.int64).astype(np.float64)
    guess = lp_direct(Gs, D * (Gs.sum(axis=1).astype(np.float64) / tot))
    if guess is None:
        return lp_direct(G, D)
    score = guess[1] @ G
    width = max(300, m // 20)
    band = np.zeros(m, dtype=bool)
    band[np.argsort(np.abs(score - 1.0), kind="stable")[:width]] = True
    ones = (score > 1.0) & ~band
    for _ in range(20):
        zeros = ~band & ~ones
        R = D - G[:, ones].sum(axis=1, dtype=np.int64)
        if (G[:, band].sum(axis=1, dtype=np.int64) < R).any():
            # the band cannot meet the residual deficits: widen it with the rows fixed
            # at 0 that are closest to entering
            idx = np.flatnonzero(zeros)
            if idx.size == 0:
                break
            band[idx[np.argsort(-score[idx], kind="stable")[:width]]] = True
            continue
        cols = np.flatnonzero(band)
        res = lp_direct(G[:, cols], R)
        if res is None:
            break
        xb, lam, val = res
        score = lam @ G
        wrong = (ones & (score < 1.0 - 1e-9)) | (zeros & (score > 1.0 + 1e-9))
        if not wrong.any():
            x = ones.astype(np.float64)
            x[cols] = xb
            return x, lam, float(np.count_nonzero(ones)) + val
        band |= wrong
        ones &= ~band
    return lp_direct(G, D)


@dataclass(frozen=True)
class MilpHint:
    """What HiGHS's MILP returned: unverified columns and an unproved optimality claim."""

    cols: NDArray[np.int64] | None  # columns set to 1 in its best solution, None without one
    claims_optimal: bool  # HiGHS says the solution is optimal (status 0); not a proof
    nodes: int  # branch-and-bound nodes HiGHS explored (deterministic for fixed options)


def milp_solution(G: NDArray[np.int64], D: NDArray[np.int64], *, node_limit: int,
                  time_limit: float) -> MilpHint:
    """HiGHS MILP on ``min 1.x  s.t.  G x >= D, x in {0,1}`` with deterministic options.

    HiGHS's branch-and-bound is deterministic for fixed input and options, so the
    node limit makes the answer reproducible;
    ``time_limit`` is only a safety net and changes the answer only when it binds.
    ``mip_rel_gap = 0``: with an integer objective HiGHS stops at a claimed optimum,
    not at a relative gap.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    node_limit : int
        Branch-and-bound nodes HiGHS may explore (at least 1).
    time_limit : float
        Seconds, a safety net.

    Returns
    -------
    MilpHint
        Unverified columns and HiGHS's unproved optimality claim.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    m = G.shape[1]
    try:
        res = milp(np.ones(m), integrality=np.ones(m),
                   constraints=LinearConstraint(G.astype(np.float64), lb=D.astype(np.float64),
                                                ub=np.inf),
                   bounds=Bounds(0.0, 1.0),
                   options={"node_limit": max(int(node_limit), 1),
                            "time_limit": max(float(time_limit), 1e-3),
                            "presolve": True, "mip_rel_gap": 0.0, "disp": False})
    except (ValueError, RuntimeError):
        return MilpHint(None, False, 0)
    nodes = int(getattr(res, "mip_node_count", None) or 0)
    if res.x is None:
        return MilpHint(None, False, nodes)
    return MilpHint(np.flatnonzero(np.asarray(res.x) > 0.5), res.status == 0, nodes)
