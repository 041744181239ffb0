"""Minimum certificates in hindsight (SPEC section 7, paper 000 Theorem 2, section 4.1).

With every label known and target k (the full-pool winner), a set S of rows
certifies k iff, for every rival j != k,

    sum_{i in S} g_ji >= D_j,     D_j = max(0, need_jk - L_jk(nothing read)),

where g_ji = realised - lower term of row i for the pair (j, k) under the
shared rule (`certlib.contrib`).  C(y) is the smallest such |S|: a covering
integer program.  We report an **enclosure** ``lower <= C(y) <= upper``:

* ``upper`` is the size of a witness whose covering sums were checked with
  exact integers.  The witness comes from rounding a basic LP solution up
  (at most K - 1 fractional entries, so at most z + K - 1 rows), then dropping
  rows that the exact slack shows are unnecessary; if the float solution does
  not verify, a greedy completion is used.
* ``lower`` is the best of several bounds, each evaluated in exact integer
  arithmetic; the LP duals are only a *hint* for the multipliers lam:
  - the weak-dual bound ``lam.D + sum_i min(0, 1 - lam.g_i)`` (paper 4.1,
    "Verifying certificate bounds") with lam rounded down to a dyadic rational
    lam_int / 2^s, so the bound is an integer divided by 2^s;
  - the surrogate bound: every certificate satisfies the single constraint
    ``sum_i (lam_int.g_i) x_i >= lam_int.D``; its minimum cardinality is found
    exactly by sorting.  It is never weaker than the weak-dual ceiling with the
    same lam, and with lam a unit vector it is m_j, the exact one-rival bound.

Closing the gap (beyond the paper), within ``time_limit`` seconds:
  1. exact reduced-cost fixing with the root duals: rows that every certificate
     smaller than the incumbent must contain, or must leave out (usually all
     but a few hundred rows);
  2. an exact branch-and-bound on the remaining rows.  Its node LPs (HiGHS) only
     suggest multipliers and branching rows; pruning, fixing and incumbents use
     the exact bounds above and integer covering sums.  It finds smaller
     witnesses (node rounding) and, when its search finishes, proves the
     incumbent optimal; on timeout its open nodes still give a valid lower bound;
  3. on small residual problems (<= 2000 rows; HiGHS overruns its time limit on
     larger ones), a HiGHS MILP whose solution is accepted only after the exact
     covering check.
``exact = True`` only when lower == upper with lower proved as above; a
solver's optimality claim never sets it.

One rival with a deficit (always the case for K = 2): sorting the gains and
taking the largest until the deficit is met is optimal (exchange argument,
paper 4.1 "Two candidates"), so the result is exact without an LP; its
``lp_value`` is the fractional greedy value, which is the LP optimum of a
single covering constraint.

Floats appear only as hints (the HiGHS LP/MILP calls, the sifting and greedy
scores); every reported bound and witness is checked with integers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .bounds import batch_lower, certified_mask, decide, thresholds
from .contrib import initial_lower, target_terms
from .errors import LabelError, ParameterError
from .pool import UNREAD
from .weights import exact_fraction

__all__ = ["Certificate", "PartialCertificate", "certify", "certify_partial", "cover_enclosure",
           "Enclosure"]

_X_EPS = 1e-9  # LP entries below this count as 0 when rounding up (hint only; verified after)


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Certificate:
    """Enclosure ``lower <= C(y) <= upper`` of the minimum certificate, with a verified witness.

    ``winner`` is the certified candidate's name (with a tolerance: the candidate
    within tau whose certificate is smallest), ``witness`` the row ids of a
    certificate of size ``upper``.  ``exact`` means ``lower == upper`` with
    ``lower`` proved in exact arithmetic.  ``lp_value`` is the LP relaxation
    value (float, a hint): 0.0 when there is nothing to cover, the fractional
    greedy value (that LP's optimum) when one rival has a deficit, None when
    HiGHS failed.  ``deficits`` holds
    D_j for every candidate j against the winner (0 at the winner itself).
    ``dual_bound`` is the exact weak-dual value (a Fraction) when an LP was
    solved.  ``method`` says what closed the enclosure: "none" (nothing to
    cover), "sorting" (one rival), "lp", "milp", "branch-and-bound".
    """

    winner: str
    lower: int
    upper: int
    exact: bool
    lp_value: float | None
    witness: tuple
    winner_index: int
    tolerance: Fraction
    deficits: tuple
    dual_bound: Fraction | None = None
    method: str = "lp"
    candidates: tuple = ()  # names of the candidates that were minimised over

    @property
    def gap(self) -> int:
        return self.upper - self.lower

    def to_dict(self) -> dict:
        """JSON-ready dict: the SPEC section 10 keys first, then extras."""
        return {
            "winner": self.winner,
            "lower": int(self.lower),
            "upper": int(self.upper),
            "exact": bool(self.exact),
            "lp_value": None if self.lp_value is None else float(self.lp_value),
            "witness": [_jsonable(r) for r in self.witness],
            "winner_index": int(self.winner_index),
            "tolerance": float(self.tolerance),
            "deficits": [int(d) for d in self.deficits],
            "dual_bound": None if self.dual_bound is None else float(self.dual_bound),
            "method": self.method,
            "candidates": list(self.candidates),
        }


@dataclass(frozen=True)
class PartialCertificate:
    """Bounds on C(y) after a partial run (SPEC section 7, last paragraph).

    ``upper``: size of a verified sub-certificate among the read rows, or None
    when the read rows do not certify any candidate.  ``lower``: holds for
    every completion of the unread labels (unread rows count with their
    potential gain).  ``winner`` is the certified candidate's name, or None.
    """

    lower: int
    upper: int | None
    exact: bool
    certified: bool
    winner: str | None
    witness: tuple
    tolerance: Fraction
    labels_read: int

    def to_dict(self) -> dict:
        return {"lower": int(self.lower), "upper": self.upper, "exact": bool(self.exact),
                "certified": self.certified, "winner": self.winner,
                "witness": [_jsonable(r) for r in self.witness],
                "tolerance": float(self.tolerance), "labels_read": self.labels_read}


@dataclass(frozen=True)
class Enclosure:
    """Result of the covering problem min |S| s.t. G[:, S].sum(1) >= D (local row indices)."""

    lower: int
    upper: int
    witness: np.ndarray  # local column indices, verified
    exact: bool
    lp_value: float | None
    dual_bound: Fraction | None
    method: str


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


# ----------------------------------------------------------------- exact helpers
def _covers(G: np.ndarray, D: np.ndarray, cols) -> bool:
    """Exact integer check of the covering constraints for a set of columns."""
    cols = np.asarray(cols, dtype=np.int64)
    if G.shape[0] == 0:
        return True
    return bool((G[:, cols].sum(axis=1, dtype=np.int64) >= D).all())


def _min_count(values: np.ndarray, target: int) -> int | None:
    """Smallest number of the largest ``values`` (>= 0) summing to >= target; None if none do.

    Values may be an int64 or an object (Python int) array; the int64 cumulative
    sum is guarded by the caller."""
    if target <= 0:
        return 0
    v = np.sort(values)[::-1]
    cs = np.cumsum(v)
    if cs[-1] < target:
        return None
    return int(np.searchsorted(cs, target, side="left")) + 1


def _prune(G: np.ndarray, D: np.ndarray, cols: np.ndarray, order_key=None) -> np.ndarray:
    """Drop witness columns one at a time while the exact slack allows it.

    Candidates are tried in ascending ``order_key`` (default: total gain), so
    weak rows go first.  Each removal is checked with integer sums."""
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


def _greedy_complete(G: np.ndarray, D: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Add columns by largest normalised remaining coverage until every deficit is met.

    Terminates because the caller has checked that all columns together cover D."""
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
    return _prune(G, D, np.flatnonzero(chosen))


@dataclass(frozen=True)
class _Dual:
    """Exact bounds from one multiplier vector lam ~ lam_int / 2^s."""

    value: Fraction  # weak-dual bound lam'.D + sum_i min(0, 1 - lam'.g_i)
    num: int  # value * 2^s, an integer
    ceil: int  # ceil(value)
    surrogate: int  # exact minimum cardinality of the surrogate constraint (or 0)
    lam_int: np.ndarray  # (r,) dyadic numerators (int64 or object)
    s: int  # denominator exponent
    dots: np.ndarray  # (m,) lam_int . g_i (int64 or object), exact


def _exact_dual(G: np.ndarray, D: np.ndarray, lam) -> _Dual:
    """Evaluate the weak-dual and surrogate bounds for multipliers lam >= 0, exactly.

    lam (floats, a hint) is rounded down to lam_int / 2^s.  s is chosen so the
    int64 sums cannot overflow; if that would cost precision (s < 40) the same
    expressions are evaluated with Python integers instead."""
    r, m = G.shape
    lam = np.nan_to_num(np.asarray(lam, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    lam = np.maximum(lam, 0.0)
    gmax = G.max(axis=1).astype(np.float64) if m else np.zeros(r)
    maxdot = float(lam @ gmax) + 1.0
    # |2^s - lam_int.g_i| <= 2^s * maxdot; a sum of m of them must stay below 2^62
    s = 62 - int(math.ceil(math.log2(max(m, 1) + 1))) - int(math.ceil(math.log2(maxdot + 1))) - 1
    s = min(s, 52)
    if s >= 40:
        lam_int = np.floor(lam * 2.0 ** s).astype(np.int64)
        dots = G.T @ lam_int  # int64, exact: bounded by 2^s * maxdot < 2^61
        total = int(np.minimum(0, (1 << s) - dots).sum(dtype=np.int64))
    else:
        s = 52
        lam_int = np.array([int(math.floor(math.ldexp(v, s))) for v in lam], dtype=object)
        dots = G.T.astype(object) @ lam_int if r else np.zeros(m, dtype=object)
        one = 1 << s
        total = sum(int(one - d) for d in dots if d > one)
    lam_D = sum(int(a) * int(b) for a, b in zip(lam_int, D))
    num = lam_D + total
    value = Fraction(num, 1 << s)
    ceil = -((-num) >> s)
    # surrogate: sum_i dots_i x_i >= lam_D; the int64 cumsum is safe by the choice of s
    sur = _min_count(dots, lam_D) if m else (0 if lam_D <= 0 else None)
    sur = 0 if sur is None else sur  # infeasible surrogate cannot happen when G covers D
    return _Dual(value, num, int(ceil), int(sur), lam_int, s, dots)


def _lp_direct(G: np.ndarray, D: np.ndarray):
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


def _lp(G: np.ndarray, D: np.ndarray):
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
    the bounds are checked exactly by the callers."""
    r, m = G.shape
    if m < _SIFT_MIN:
        return _lp_direct(G, D)
    sub = np.arange(0, m, -(-m // _SIFT_SAMPLE))
    Gs = G[:, sub]
    tot = G.sum(axis=1, dtype=np.int64).astype(np.float64)
    guess = _lp_direct(Gs, D * (Gs.sum(axis=1).astype(np.float64) / tot))
    if guess is None:
        return _lp_direct(G, D)
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
        res = _lp_direct(G[:, cols], R)
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
    return _lp_direct(G, D)


def _round_up(G: np.ndarray, D: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Round an LP solution up, verify exactly, complete greedily if needed, prune."""
    cols = np.flatnonzero(x > _X_EPS)
    if not _covers(G, D, cols):
        return _greedy_complete(G, D, cols)
    return _prune(G, D, cols, order_key=x[cols])


# -------------------------------------------------------------- the covering problem
def cover_enclosure(G, D, time_limit: float = 2.0) -> Enclosure:
    """Enclose min |S| s.t. sum_{i in S} G[j, i] >= D[j] for all j (G >= 0 integer).

    Raises ParameterError when even all columns do not cover D."""
    G = np.asarray(G, dtype=np.int64)
    D = np.asarray(D, dtype=np.int64)
    if G.ndim != 2 or D.shape != (G.shape[0],):
        raise ParameterError("G must be r x m and D of length r")
    if (G < 0).any():
        raise ParameterError("gains must be non-negative")
    t0 = time.perf_counter()
    act = D > 0
    G, D = G[act], D[act]
    if G.shape[0] == 0:
        return Enclosure(0, 0, np.zeros(0, dtype=np.int64), True, 0.0, Fraction(0), "none")
    useful = np.flatnonzero(G.any(axis=0))
    Gu = G[:, useful]
    if (Gu.sum(axis=1, dtype=np.int64) < D).any():
        j = int(np.flatnonzero(Gu.sum(axis=1) < D)[0])
        raise ParameterError(f"constraint {j} cannot be covered even by every row")
    enc = _cover_reduced(Gu, D, t0, time_limit)
    return Enclosure(enc.lower, enc.upper, useful[enc.witness], enc.exact, enc.lp_value,
                     enc.dual_bound, enc.method)


def _single(g: np.ndarray, d: int) -> Enclosure:
    """One constraint: the largest gains first is optimal (paper 4.1, 'Two candidates')."""
    order = np.argsort(-g, kind="stable")
    cs = np.cumsum(g[order])
    m = int(np.searchsorted(cs, d, side="left")) + 1
    prev = int(cs[m - 2]) if m >= 2 else 0
    lp = Fraction(m - 1) + Fraction(d - prev, int(g[order[m - 1]]))
    return Enclosure(m, m, np.sort(order[:m]), True, float(lp), lp, "sorting")


_MILP_MAX_COLS = 2000  # HiGHS MILP overruns its time limit badly on larger covers


def _reduced_cost_fixing(dual: _Dual, U: int):
    """Rows every certificate of size <= U - 1 must leave out / must contain.

    With v = num / 2^s the exact weak-dual value and t_i = 2^s - lam_int.g_i, a
    certificate containing row i with t_i > 0 has size >= v + t_i / 2^s, and one
    without row i with t_i < 0 has size >= v - t_i / 2^s (weak duality).  When that
    exceeds U - 1 the row is fixed.  All integers, no tolerance."""
    room = ((U - 1) << dual.s) - dual.num
    room = max(min(room, 1 << 62), -(1 << 62))  # |t_i| < 2^62 by the choice of s
    t = (1 << dual.s) - dual.dots
    out = (t > 0) & (t > room)
    into = (t < 0) & (-t > room)
    return np.asarray(out, dtype=bool), np.asarray(into, dtype=bool)


def _cover_reduced(G: np.ndarray, D: np.ndarray, t0: float, time_limit: float) -> Enclosure:
    r, m = G.shape
    if r == 1:
        return _single(G[0], int(D[0]))
    # exact one-rival bounds m_j (surrogate with a unit multiplier)
    lower = max(_min_count(G[j], int(D[j])) for j in range(r))
    method = "lp"
    lp = _lp(G, D)
    dual = None
    if lp is None:
        witness = _greedy_complete(G, D, np.zeros(0, dtype=np.int64))
        lp_value, dual_value = None, None
    else:
        x, lam, lp_value = lp
        dual = _exact_dual(G, D, lam)
        dual_value = dual.value
        lower = max(lower, dual.ceil, dual.surrogate)
        witness = _round_up(G, D, x)
    U = len(witness)
    deadline = t0 + time_limit
    if lower < U and time.perf_counter() < deadline:
        # Close the gap on the rows not fixed by the root duals: an exact search for a
        # certificate of size <= U - 1 (it also finds witnesses), then a MILP hint.
        if dual is not None:
            out, into = _reduced_cost_fixing(dual, U)
        else:
            out = into = np.zeros(m, dtype=bool)
        ones = np.flatnonzero(into)
        free = np.flatnonzero(~out & ~into)
        R = D - G[:, ones].sum(axis=1, dtype=np.int64)
        act = R > 0
        Gr, Rr = G[act][:, free], R[act]
        if not act.any():
            # the forced rows alone certify, and every certificate below U contains them
            if ones.size < U:
                witness = ones
            lower, method = min(ones.size, U), "branch-and-bound"
        elif (Gr.sum(axis=1, dtype=np.int64) < Rr).any():
            lower, method = U, "branch-and-bound"  # no certificate below U exists
        else:
            now = time.perf_counter()
            bb_deadline = now + (deadline - now) * (0.5 if free.size <= _MILP_MAX_COLS else 1.0)
            bb = _branch_and_bound(Gr, Rr, U - ones.size, max(0, lower - ones.size),
                                   bb_deadline)
            if bb.witness is not None:
                cand = np.concatenate([ones, free[bb.witness]])
                if len(cand) < U and _covers(G, D, cand):
                    witness, method = cand, "branch-and-bound"
            bb_lower = ones.size + bb.lower
            if bb_lower > lower:
                lower, method = bb_lower, "branch-and-bound"
            if lower < len(witness) and free.size <= _MILP_MAX_COLS \
                    and time.perf_counter() < deadline:
                w2 = _milp(Gr, Rr, deadline - time.perf_counter())
                if w2 is not None:
                    cand = np.concatenate([ones, free[w2]])
                    if len(cand) < len(witness) and _covers(G, D, cand):
                        witness, method = _prune(G, D, cand), "milp"
    lower = min(lower, len(witness))
    return Enclosure(lower, len(witness), np.sort(witness), lower == len(witness), lp_value,
                     dual_value, method)


def _milp(G: np.ndarray, D: np.ndarray, time_limit: float):
    """A time-limited HiGHS MILP; its answer is a hint, returned only after exact verification."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    r, m = G.shape
    try:
        res = milp(np.ones(m), integrality=np.ones(m),
                   constraints=LinearConstraint(G.astype(np.float64), lb=D.astype(np.float64),
                                                ub=np.inf),
                   bounds=Bounds(0.0, 1.0),
                   options={"time_limit": max(time_limit, 1e-3), "disp": False})
    except (ValueError, RuntimeError):
        return None
    if res.x is None:
        return None
    cols = np.flatnonzero(np.asarray(res.x) > 0.5)
    if not _covers(G, D, cols):
        return None
    return _prune(G, D, cols)


@dataclass
class _BB:
    lower: int  # valid lower bound on the optimum, capped at the incumbent size
    witness: np.ndarray | None  # a verified certificate smaller than the initial U, if found


def _branch_and_bound(G, D, U: int, root_lower: int, deadline: float) -> _BB:
    """Exact search for a certificate of size <= U - 1 (U: size of a known one, or any
    upper limit).

    Node LPs (HiGHS) only suggest multipliers and branching rows.  A node with
    rows F forced in is discarded when the exact bound
    ``|F| + ceil(weak dual of the residual problem)`` (or the exact surrogate
    bound, or a one-rival sorting bound) reaches U; rows are fixed by exact
    reduced-cost arguments; incumbents are verified with integer sums.  If the
    stack empties, no certificate of size below U exists beyond those found, so
    ``lower`` = final U; on timeout the smallest bound of an open node (capped at
    U) is a valid lower bound."""
    r, m = G.shape
    best = None
    # node: (status array int8: -1 free, 0 out, 1 in; a valid lower bound for the node)
    stack = [(np.full(m, -1, dtype=np.int8), root_lower)]
    timed_out = False
    while stack:
        if time.perf_counter() > deadline:
            timed_out = True
            break
        status, node_lb = stack.pop()
        if node_lb >= U:
            continue
        ones = np.flatnonzero(status == 1)
        free = np.flatnonzero(status == -1)
        nF = len(ones)
        rem = D - G[:, ones].sum(axis=1, dtype=np.int64)
        act = rem > 0
        if not act.any():  # F itself certifies
            if nF < U:
                best, U = ones, nF
            continue
        Ga, Ra = G[act][:, free], rem[act]
        if (Ga.sum(axis=1, dtype=np.int64) < Ra).any():
            continue  # infeasible, exactly
        lb = max(node_lb, nF + max(_min_count(Ga[j], int(Ra[j])) for j in range(Ga.shape[0])))
        if lb >= U:
            continue
        if Ga.shape[0] == 1:  # one constraint left: solved exactly by sorting
            sol = _single(Ga[0], int(Ra[0]))
            if nF + sol.upper < U:
                best, U = np.concatenate([ones, free[sol.witness]]), nF + sol.upper
            continue
        lp = _lp(Ga, Ra)
        if lp is None:
            x = None
        else:
            x, lam, _ = lp
            dual = _exact_dual(Ga, Ra, lam)
            lb = max(lb, nF + dual.ceil, nF + dual.surrogate)
            if lb >= U:
                continue
            local = _round_up(Ga, Ra, x)  # rounding heuristic at this node
            if nF + len(local) < U:
                best, U = np.concatenate([ones, free[local]]), nF + len(local)
                if lb >= U:
                    continue
            out, into = _reduced_cost_fixing(dual, U - nF)
            if out.any() or into.any():
                status = status.copy()
                status[free[out]] = 0
                status[free[into]] = 1
                stack.append((status, lb))
                continue
        # branch on the most fractional free row (any free row if the LP failed)
        pick = 0 if x is None else int(np.argmin(np.abs(x - 0.5)))
        i = free[pick]
        zero, one = status.copy(), status.copy()
        zero[i], one[i] = 0, 1
        stack.append((zero, lb))
        stack.append((one, lb))
    if best is not None and not _covers(G, D, best):  # cannot happen: every update is exact
        raise RuntimeError("branch-and-bound produced an unverified certificate")
    if not timed_out:
        return _BB(U, best)
    # every node not yet explored is on the stack (the deadline is checked before a pop)
    return _BB(min([lb for _, lb in stack] + [U]), best)


# --------------------------------------------------------------------- the pool layer
def _target_index(pool, target) -> int:
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        k = int(target)
        if not 0 <= k < pool.K:
            raise ParameterError(f"target index {k} is out of range 0..{pool.K - 1}")
        return k
    if isinstance(target, str) and target in pool.names:
        return pool.names.index(target)
    raise ParameterError(f"target must be a candidate name {list(pool.names)} or index; "
                         f"got {target!r}")


def _deficits(th, L0_k: np.ndarray, k: int) -> np.ndarray:
    """D_j = max(0, need_jk - L_jk(nothing read)) for every j, 0 at j = k."""
    D = np.maximum(0, th.need[:, k] - L0_k)
    D[k] = 0
    return D.astype(np.int64)


def _check_tolerance(tolerance) -> Fraction:
    return exact_fraction(tolerance, "tolerance")


def certify(pool, tolerance=0.0, *, time_limit: float = 2.0, target=None) -> Certificate:
    """Enclose the minimum certificate C(y) of a fully labelled pool (SPEC section 7).

    tolerance: tau >= 0 on the objective's scale.  With tau > 0 the deficits use
        need = -floor(scale * tau) and every candidate within tau of the best on
        the full pool is a possible target; the one with the smallest ``upper``
        (then smallest ``lower``, then earliest) is reported, and ``lower`` is
        the minimum of the targets' lowers.
    time_limit: seconds for closing a gap (MILP, then exact branch-and-bound);
        0 stops after the LP, rounding and exact dual bounds.
    target: a candidate name or index to certify instead; it must be the winner
        (tau = 0) or within tau.

    >>> from certlib import Pool
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         labels=[1, 0, 0, 0], names=["A", "B"])
    >>> c = certify(pool)
    >>> (c.winner, c.lower, c.upper, c.exact, c.lp_value)
    ('B', 3, 3, True, 2.5)
    """
    tau = _check_tolerance(tolerance)
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) \
            or not math.isfinite(time_limit) or time_limit < 0:
        raise ParameterError(f"time_limit must be a finite number of seconds >= 0; got {time_limit!r}")
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels == UNREAD)[0])
        raise LabelError(
            f"certify needs every label; row {pool.row_ids[i]!r} (position {i}) has none "
            "(use certify_partial for a partial run)")
    risks = pool.risks()
    th = thresholds(pool.K, pool.scale, "shared", tau)
    T = th.tol_units
    if tau > 0:
        targets = [int(k) for k in np.flatnonzero(risks - risks.min() <= T)]
    else:
        targets = [int(np.argmin(risks))]  # earliest on ties, as Pool.winner
    if target is not None:
        k = _target_index(pool, target)
        if k not in targets:
            what = f"within tolerance {float(tau)} of the best" if tau > 0 else "the full-pool winner"
            raise ParameterError(f"target {pool.names[k]!r} is not {what}; "
                                 f"possible targets: {[pool.names[t] for t in targets]}")
        targets = [k]
    rows = np.arange(pool.n)
    t0 = time.perf_counter()
    results = []
    for pos, k in enumerate(targets):
        left = max(0.0, time_limit - (time.perf_counter() - t0))
        budget = left / (len(targets) - pos)
        lower, gains = target_terms(pool, k, rows, pool.labels)
        D = _deficits(th, lower.sum(axis=1, dtype=np.int64), k)
        enc = cover_enclosure(gains, D, budget)
        results.append((enc.upper, enc.lower, k, enc, D))
    upper, _, k, enc, D = min(results, key=lambda t: (t[0], t[1], t[2]))
    lower = min(t[1] for t in results)
    exact = lower == upper
    return Certificate(
        winner=pool.names[k], lower=int(lower), upper=int(upper), exact=exact,
        lp_value=enc.lp_value, witness=tuple(map(pool.row_ids.__getitem__, enc.witness.tolist())),
        winner_index=k, tolerance=tau, deficits=tuple(int(d) for d in D),
        dual_bound=enc.dual_bound, method=enc.method,
        candidates=tuple(pool.names[t] for t in targets))


def certify_partial(pool, read_rows=None, tolerance=0.0, *, time_limit: float = 2.0
                    ) -> PartialCertificate:
    """Bounds on the minimum certificate after a partial run (SPEC section 7).

    read_rows: row positions read so far (default: every labelled row); each
        must carry a label.
    upper: if the read rows certify a candidate (the stopping test; with tau > 0
        possibly several), the smallest verified certificate among the read rows
        of any of them -- a certificate under the true labels.
    lower: the exact LP/surrogate lower bound of the covering problem in which
        read rows have their realised gain and unread rows their potential gain
        (an unread row could contribute at most that under any completion); it
        is minimised over the candidates that can still win (tau = 0: not
        eliminated, or k alone when certified; tau > 0: every candidate).
    """
    tau = _check_tolerance(tolerance)
    if read_rows is None:
        read = np.flatnonzero(pool.labels != UNREAD)
    else:
        read = np.unique(np.asarray(read_rows, dtype=np.int64))
        if read.size and (read.min() < 0 or read.max() >= pool.n):
            raise ParameterError(f"read_rows must be row positions in 0..{pool.n - 1}")
        missing = read[pool.labels[read] == UNREAD]
        if missing.size:
            i = int(missing[0])
            raise LabelError(f"row {pool.row_ids[i]!r} (position {i}) is listed as read "
                             "but has no label")
    th = thresholds(pool.K, pool.scale, "shared", tau)
    L0 = initial_lower(pool, "shared")
    L = batch_lower(pool, read)
    dec = decide(L, th)
    unread = np.ones(pool.n, dtype=bool)
    unread[read] = False
    if tau > 0:
        # within a tolerance any candidate within tau under the completion may be the
        # one certified most cheaply, whichever the read rows certify now
        targets = list(range(pool.K))
    elif dec.certified:
        targets = [dec.selected]
    else:
        out = set(dec.eliminated)
        targets = [k for k in range(pool.K) if k not in out]
    rows = np.arange(pool.n)
    placeholder = np.where(pool.labels == UNREAD, 0, pool.labels)
    lowers = []
    for k in targets:
        D = _deficits(th, L0[:, k], k)
        _, G = target_terms(pool, k, rows, placeholder, potential_mask=unread)
        if (G.sum(axis=1, dtype=np.int64) < D).any():
            continue  # k cannot be certified under any completion
        lowers.append(cover_enclosure(G, D, 0.0).lower)
    lower = min(lowers) if lowers else 0
    if not dec.certified:
        return PartialCertificate(int(lower), None, False, False, None, (), tau, int(read.size))
    # every candidate the read rows certify (one at tau = 0; possibly several within
    # tau): the smallest verified sub-certificate among them is the upper bound
    best = None
    for k in np.flatnonzero(certified_mask(L, th)):
        k = int(k)
        D = _deficits(th, L0[:, k], k)
        _, G = target_terms(pool, k, read, pool.labels[read])
        enc = cover_enclosure(G, D, time_limit)
        if best is None or enc.upper < best[1].upper:
            best = (k, enc)
    k, enc = best
    lower = min(max(lower, 0), enc.upper)
    witness = tuple(pool.row_ids[int(read[i])] for i in enc.witness)
    return PartialCertificate(int(lower), int(enc.upper), int(lower) == int(enc.upper), True,
                              pool.names[k], witness, tau, int(read.size))
