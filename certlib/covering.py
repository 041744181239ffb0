"""The covering problem behind minimum certificates (SPEC section 7, paper 000 Theorem 2).

Given an integer gain matrix G >= 0 (r constraints x m columns) and deficits D,
`cover_enclosure` encloses

    C = min |S|   s.t.   sum_{i in S} G[j, i] >= D[j]   for every j

as ``lower <= C <= upper`` with a witness of size ``upper``.  It knows nothing of
pools: `certlib.certificate` builds G and D from a pool and maps columns to rows.

* ``upper`` is the size of a witness whose covering sums were checked with exact
  integers.  The witness comes from rounding a basic LP solution up (at most r
  fractional entries), then dropping rows that the exact slack shows are
  unnecessary; if the float solution does not verify, a greedy completion is used.
* ``lower`` is the best of several bounds, each evaluated in exact integer
  arithmetic (`certlib.covering_exact`); the LP duals are only a *hint* for the
  multipliers lam:
  - the weak-dual bound ``lam.D + sum_i min(0, 1 - lam.g_i)`` (paper 4.1,
    "Verifying certificate bounds") with lam rounded down to a dyadic rational
    lam_int / 2^s, so the bound is an integer divided by 2^s;
  - the surrogate bound: every cover satisfies the single constraint
    ``sum_i (lam_int.g_i) x_i >= lam_int.D``; its minimum cardinality is found
    exactly by sorting.  It is never weaker than the weak-dual ceiling with the
    same lam, and with lam a unit vector it is the one-constraint bound.

Closing the gap (beyond the paper), within ``time_limit`` seconds:
  1. exact reduced-cost fixing with the root duals: columns that every cover
     smaller than the incumbent must contain, or must leave out;
  2. an exact branch-and-bound on the remaining columns.  Its node LPs (HiGHS)
     only suggest multipliers and branching columns; pruning, fixing and
     incumbents use the exact bounds and integer covering sums.  It finds smaller
     witnesses (node rounding) and, when its search finishes, proves the
     incumbent optimal; on timeout its open nodes still give a valid lower bound;
  3. on small residual problems (<= 2000 columns; HiGHS overruns its time limit on
     larger ones), a HiGHS MILP whose solution is accepted only after the exact
     covering check.
``exact = True`` only when lower == upper with lower proved as above; a solver's
optimality claim never sets it.

One constraint: sorting the gains and taking the largest until the deficit is met
is optimal (exchange argument, paper 4.1 "Two candidates"), so the result is
exact without an LP; its ``lp_value`` is the fractional greedy value, which is the
LP optimum of a single covering constraint.

Floats appear only as hints (`certlib.covering_lp`: the HiGHS LP/MILP calls and
sifting; the greedy scores); every reported bound and witness is checked with
integers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .covering_exact import (
    count_reaching,
    covers,
    exact_dual,
    fewest_largest,
    greedy_complete,
    prune,
    reduced_cost_fixing,
    round_up,
)
from .covering_lp import lp_relaxation, milp_solution
from .errors import ParameterError

__all__ = ["Enclosure", "cover_enclosure", "fewest_largest"]


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
    m = count_reaching(cs, d)
    prev = int(cs[m - 2]) if m >= 2 else 0
    lp = Fraction(m - 1) + Fraction(d - prev, int(g[order[m - 1]]))
    return Enclosure(m, m, np.sort(order[:m]), True, float(lp), lp, "sorting")


_MILP_MAX_COLS = 2000  # HiGHS MILP overruns its time limit badly on larger covers


def _cover_reduced(G: np.ndarray, D: np.ndarray, t0: float, time_limit: float) -> Enclosure:
    r, m = G.shape
    if r == 1:
        return _single(G[0], int(D[0]))
    # exact one-rival bounds m_j (surrogate with a unit multiplier)
    lower = max(fewest_largest(G[j], int(D[j])) for j in range(r))
    method = "lp"
    lp = lp_relaxation(G, D)
    dual = None
    if lp is None:
        witness = greedy_complete(G, D, np.zeros(0, dtype=np.int64))
        lp_value, dual_value = None, None
    else:
        x, lam, lp_value = lp
        dual = exact_dual(G, D, lam)
        dual_value = dual.value
        lower = max(lower, dual.ceil, dual.surrogate)
        witness = round_up(G, D, x)
    U = len(witness)
    deadline = t0 + time_limit
    if lower < U and time.perf_counter() < deadline:
        # Close the gap on the rows not fixed by the root duals: an exact search for a
        # certificate of size <= U - 1 (it also finds witnesses), then a MILP hint.
        if dual is not None:
            out, into = reduced_cost_fixing(dual, U)
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
                if len(cand) < U and covers(G, D, cand):
                    witness, method = cand, "branch-and-bound"
            bb_lower = ones.size + bb.lower
            if bb_lower > lower:
                lower, method = bb_lower, "branch-and-bound"
            if lower < len(witness) and free.size <= _MILP_MAX_COLS \
                    and time.perf_counter() < deadline:
                w2 = _milp(Gr, Rr, deadline - time.perf_counter())
                if w2 is not None:
                    cand = np.concatenate([ones, free[w2]])
                    if len(cand) < len(witness) and covers(G, D, cand):
                        witness, method = prune(G, D, cand), "milp"
    lower = min(lower, len(witness))
    return Enclosure(lower, len(witness), np.sort(witness), lower == len(witness), lp_value,
                     dual_value, method)


def _milp(G: np.ndarray, D: np.ndarray, time_limit: float):
    """A time-limited HiGHS MILP; its answer is a hint, returned only after exact verification."""
    cols = milp_solution(G, D, time_limit)
    if cols is None or not covers(G, D, cols):
        return None
    return prune(G, D, cols)


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
    m = G.shape[1]
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
        lb = max(node_lb, nF + max(fewest_largest(Ga[j], int(Ra[j])) for j in range(Ga.shape[0])))
        if lb >= U:
            continue
        if Ga.shape[0] == 1:  # one constraint left: solved exactly by sorting
            sol = _single(Ga[0], int(Ra[0]))
            if nF + sol.upper < U:
                best, U = np.concatenate([ones, free[sol.witness]]), nF + sol.upper
            continue
        lp = lp_relaxation(Ga, Ra)
        if lp is None:
            x = None
        else:
            x, lam, _ = lp
            dual = exact_dual(Ga, Ra, lam)
            lb = max(lb, nF + dual.ceil, nF + dual.surrogate)
            if lb >= U:
                continue
            local = round_up(Ga, Ra, x)  # rounding heuristic at this node
            if nF + len(local) < U:
                best, U = np.concatenate([ones, free[local]]), nF + len(local)
                if lb >= U:
                    continue
            out, into = reduced_cost_fixing(dual, U - nF)
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
    if best is not None and not covers(G, D, best):  # cannot happen: every update is exact
        raise RuntimeError("branch-and-bound produced an unverified certificate")
    if not timed_out:
        return _BB(U, best)
    # every node not yet explored is on the stack (the deadline is checked before a pop)
    return _BB(min([lb for _, lb in stack] + [U]), best)
