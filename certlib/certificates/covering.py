"""The covering problem behind minimum certificates (SPEC section 7, paper 000 Theorem 2).

Given an integer gain matrix G >= 0 (r constraints x m columns) and deficits D,
`cover_enclosure` encloses

    C = min |S|   s.t.   sum_{i in S} G[j, i] >= D[j]   for every j

as ``lower <= C <= upper`` with a witness of size ``upper``.  It knows nothing of
pools: `certlib.certificates.certificate` builds G and D from a pool and maps columns to rows.

* ``upper`` is the size of a witness whose covering sums were checked with exact
  integers.  The witness comes from rounding a basic LP solution up (at most r
  fractional entries), then dropping rows that the exact slack shows are
  unnecessary; if the float solution does not verify, a greedy completion is used.
* ``lower`` is the best of several bounds, each evaluated in exact integer
  arithmetic (`certlib.certificates.covering_exact`); the LP duals are only a *hint* for the
  multipliers lam:
  - the weak-dual bound ``lam.D + sum_i min(0, 1 - lam.g_i)`` (paper 4.1,
    "Verifying certificate bounds") with lam rounded down to a dyadic rational
    lam_int / 2^s, so the bound is an integer divided by 2^s;
  - the surrogate bound: every cover satisfies the single constraint
    ``sum_i (lam_int.g_i) x_i >= lam_int.D``; its minimum cardinality is found
    exactly by sorting.  It is never weaker than the weak-dual ceiling with the
    same lam, and with lam a unit vector it is the one-constraint bound.

Closing the gap (beyond the paper), while work is left:
  1. exact fixing with the root duals: columns that every cover smaller than the
     incumbent (size U) must contain, or must leave out, by reduced costs and by
     cardinality (such a cover has at most U - 1 columns; sorting each constraint
     and the dual surrogate shows which columns it cannot do without or cannot
     afford).  This alone often proves that no smaller cover exists;
  2. MILP first: on residual problems of at most ``MILP_MAX_COLS`` columns, HiGHS's
     MILP under a node limit.  Its solution becomes the witness only after the
     integer covering check; a smaller incumbent makes the fixing of step 1 and
     the pruning of step 4 stronger.  When HiGHS claims optimality and the proof
     below does not close, the claim is reported as ``solver_minimum``, never as
     a bound;
  3. mixed-integer rounding cuts (`certlib.certificates.covering_cuts`): up to
     ``MAX_CUT_ROUNDS`` LP solves with cuts derived in integers; the exact weak dual of
     the rows and cuts is a valid bound, and its reduced costs fix more columns before
     step 4 (a restart, as HiGHS does after its root);
  4. an exact branch-and-bound on the remaining columns (`certlib.certificates.covering_search`).
     Its node LPs (HiGHS) only suggest multipliers and branching columns; pruning,
     fixing and incumbents use the exact bounds and integer covering sums, and it
     skips covers that a column swap shows to be redundant (pools with tied
     confidences have many interchangeable rows).  When its search finishes it
     proves the incumbent optimal; when the work runs out its open nodes still
     give a valid lower bound.
``exact = True`` only when lower == upper with lower proved as above; a solver's
optimality claim never sets it.

**Work, not time, decides when to stop**, so one problem gives one enclosure on
any machine.  ``work_limit`` counts search nodes: each node of the exact
branch-and-bound, each LP of the cut rounds and each node HiGHS's MILP reports
counts 1, and a problem of ``r`` rows and ``c`` columns handed to an LP (a search
node, a cut round) or to the MILP counts ``r * c // CELLS_PER_UNIT`` more, as large
ones cost more.
HiGHS is deterministic for fixed input and options, and its MILP gets a node limit,
never a time limit that binds in normal use.  The root LP, rounding and exact
duals are always computed; they and the root fixing are not counted, and
``work_limit=0`` gives the LP enclosure alone.  ``time_limit`` (seconds) is a
safety net for pathological problems: when it stops the search the result says
``time_limited`` and may then differ between machines.

One constraint: sorting the gains and taking the largest until the deficit is met
is optimal (exchange argument, paper 4.1 "Two candidates"), so the result is
exact without an LP; its ``lp_value`` is the fractional greedy value, which is the
LP optimum of a single covering constraint.

Floats appear only as hints (`certlib.certificates.covering_lp`: the HiGHS LP/MILP calls and
sifting; the greedy scores); every reported bound and witness is checked with
integers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from .covering_exact import (
    Dual,
    covers,
    exact_dual,
    fewest_largest,
    fix_columns,
    greedy_complete,
    largest_first,
    prune,
    round_up,
)
from .covering_cuts import cut_bound
from .covering_lp import lp_relaxation, milp_solution
from .covering_search import CELLS_PER_UNIT, Budget, branch_and_bound, lp_cost
from ..errors import ParameterError

__all__ = ["DEFAULT_TIME_LIMIT", "DEFAULT_WORK_LIMIT", "MILP_MAX_COLS", "MILP_NODE_LIMIT",
           "Enclosure", "check_limits", "cover_enclosure", "fewest_largest"]

DEFAULT_WORK_LIMIT = 2000  # search nodes: a few seconds on a laptop for n in the thousands
DEFAULT_TIME_LIMIT = 60.0  # seconds; a safety net only
# HiGHS's MILP root (presolve, cuts, heuristics) is not bounded by its node limit: on the
# benchmark pools it took 0.6-3.7 s for 375-2,825 columns and 10 s for 10,845, so larger
# residual problems skip the MILP (the exact search still runs)
MILP_MAX_COLS = 3000
MILP_NODE_LIMIT = 100  # at most this many of the work units go to HiGHS's MILP
# LP solves for MIR cuts before the branch-and-bound: on the 84 panel pools of the
# benchmark the rounds that closed a gap took at most 5
MAX_CUT_ROUNDS = 10


@dataclass(frozen=True)
class Enclosure:
    """``lower <= min |S| <= upper`` for ``G[:, S].sum(1) >= D``, with a verified witness.

    ``witness``: column indices of a cover of size ``upper`` (checked with integer
    sums).  ``exact``: lower == upper with lower proved in exact arithmetic.
    ``lp_value`` (float, a hint) and ``dual_bound`` (exact weak-dual value) are None
    when the LP failed.  ``method``: the last step that tightened the enclosure
    ("none", "sorting", "lp", "fixing", "milp", "cuts", "branch-and-bound").
    ``solver_minimum``: when not exact, HiGHS's unproved claim that ``upper`` is the
    minimum (it then equals ``upper``), else None.  ``work``: units spent (see the
    module docstring); ``time_limited``: the time safety net stopped the search."""

    lower: int
    upper: int
    witness: NDArray[np.int64]
    exact: bool
    lp_value: float | None
    dual_bound: Fraction | None
    method: str
    solver_minimum: int | None = None
    work: int = 0
    time_limited: bool = False


def check_limits(work_limit: object, time_limit: object) -> None:
    """Validate the stopping parameters; the messages name them.

    Parameters
    ----------
    work_limit : int
        Search nodes, an integer >= 0.
    time_limit : float
        Seconds, a number >= 0.

    Raises
    ------
    ParameterError
        When either is of the wrong type or negative (or the time NaN).
    """
    if isinstance(work_limit, bool) or not isinstance(work_limit, (int, np.integer)) \
            or work_limit < 0:
        raise ParameterError(f"work_limit must be an integer >= 0 (search nodes); "
                             f"got {work_limit!r}")
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) \
            or math.isnan(time_limit) or time_limit < 0:
        raise ParameterError(f"time_limit must be a number of seconds >= 0 (a safety net); "
                             f"got {time_limit!r}")


def cover_enclosure(G: npt.ArrayLike, D: npt.ArrayLike, *,
                    work_limit: int = DEFAULT_WORK_LIMIT,
                    time_limit: float = DEFAULT_TIME_LIMIT) -> Enclosure:
    """Enclose min |S| s.t. sum_{i in S} G[j, i] >= D[j] for all j (G >= 0 integer).

    Parameters
    ----------
    G : array_like of int, shape (r, m)
        Non-negative integer gains: constraint j, column i.
    D : array_like of int, shape (r,)
        Deficits; constraints with D[j] <= 0 are met already.
    work_limit : int
        Search nodes for closing the gap (module docstring); 0 stops after the LP
        enclosure.
    time_limit : float
        Seconds, a safety net; the result says ``time_limited`` if it binds.

    Returns
    -------
    Enclosure
        ``lower <= min |S| <= upper`` with a witness of size ``upper`` checked with
        integer sums.

    Raises
    ------
    ParameterError
        Bad limits, shapes that do not match, a negative gain, or deficits that even
        every column together does not cover.

    Examples
    --------
    >>> enc = cover_enclosure([[3, 1, 0, 1], [0, 2, 3, 1]], [3, 3])
    >>> enc.lower, enc.upper, enc.exact, enc.witness.tolist()
    (2, 2, True, [0, 2])
    """
    check_limits(work_limit, time_limit)
    G = np.asarray(G, dtype=np.int64)
    D = np.asarray(D, dtype=np.int64)
    if G.ndim != 2 or D.shape != (G.shape[0],):
        raise ParameterError("G must be r x m and D of length r")
    if (G < 0).any():
        raise ParameterError("gains must be non-negative")
    budget = Budget(int(work_limit), time.perf_counter() + time_limit)
    act = D > 0
    G, D = G[act], D[act]
    if G.shape[0] == 0:
        return Enclosure(0, 0, np.zeros(0, dtype=np.int64), True, 0.0, Fraction(0), "none")
    useful = np.flatnonzero(G.any(axis=0))
    Gu = G[:, useful]
    if (Gu.sum(axis=1, dtype=np.int64) < D).any():
        j = int(np.flatnonzero(Gu.sum(axis=1) < D)[0])
        raise ParameterError(f"constraint {j} cannot be covered even by every row")
    enc = _cover_reduced(Gu, D, budget)
    return Enclosure(enc.lower, enc.upper, useful[enc.witness], enc.exact, enc.lp_value,
                     enc.dual_bound, enc.method, enc.solver_minimum, budget.used,
                     budget.time_limited)


def _single(g: NDArray[np.int64], d: int) -> Enclosure:
    """One constraint: the largest gains first is optimal (paper 4.1, 'Two candidates');
    the LP optimum takes the last of them fractionally."""
    cols = largest_first(g, d)
    m = cols.size
    lp = Fraction(m - 1) + Fraction(d - int(g[cols[:-1]].sum()), int(g[cols[-1]]))
    return Enclosure(m, m, np.sort(cols), True, float(lp), lp, "sorting")


@dataclass(frozen=True)
class _Residual:
    """What is left of the problem once the root duals fix columns for covers below U."""

    ones: NDArray[np.int64]  # columns every cover of size < U contains
    free: NDArray[np.int64]  # columns not fixed
    G: NDArray[np.int64]  # constraints not yet met by ``ones``, on the free columns
    D: NDArray[np.int64]  # their remaining deficits

    empty: bool = False  # proved: no cover below U at all

    @classmethod
    def fix(cls, G: NDArray[np.int64], D: NDArray[np.int64], dual: Dual | None,
            U: int, dual_rhs: NDArray[np.int64] | None = None) -> _Residual:
        fixed = fix_columns(G, D, dual, U, dual_rhs)
        if fixed is None:
            none = np.zeros(0, dtype=np.int64)
            return cls(none, none, G[:, :0], D, empty=True)
        out, into = fixed
        ones = np.flatnonzero(into)
        free = np.flatnonzero(~out & ~into)
        R = D - G[:, ones].sum(axis=1, dtype=np.int64)
        act = R > 0
        return cls(ones, free, G[act][:, free], R[act])

    @property
    def met_by_ones(self) -> bool:
        return not self.empty and self.G.shape[0] == 0

    @property
    def infeasible(self) -> bool:
        """No cover below U: proved by fixing, or every free column falls short."""
        return self.empty or bool((self.G.sum(axis=1, dtype=np.int64) < self.D).any())

    def lift(self, cols: npt.ArrayLike) -> NDArray[np.int64]:
        return np.concatenate([self.ones, self.free[np.asarray(cols, dtype=np.int64)]])


def _cover_reduced(G: NDArray[np.int64], D: NDArray[np.int64], budget: Budget) -> Enclosure:
    r = G.shape[0]
    if r == 1:
        return _single(G[0], int(D[0]))
    # exact one-constraint bounds (surrogate with a unit multiplier); every constraint
    # is coverable (checked by `cover_enclosure`), so no count is None
    lower = max(cast(int, fewest_largest(G[j], int(D[j]))) for j in range(r))
    method = "lp"
    lp = lp_relaxation(G, D)
    dual = None
    lp_value: float | None
    dual_value: Fraction | None
    if lp is None:
        witness = greedy_complete(G, D, np.zeros(0, dtype=np.int64))
        lp_value, dual_value = None, None
    else:
        x, lam, lp_value = lp
        dual = exact_dual(G, D, lam)
        dual_value = dual.value
        lower = max(lower, dual.ceil, dual.surrogate)
        witness = round_up(G, D, x)
    claimed = False  # HiGHS claims len(witness) is the minimum
    if lower < len(witness) and budget.can_work():
        res = _Residual.fix(G, D, dual, len(witness))
        if not res.met_by_ones and not res.infeasible and res.free.size <= MILP_MAX_COLS:
            hint = _milp(res.G, res.D, budget)
            if hint is not None and covers(G, D, res.lift(hint[0])):
                cand = prune(G, D, res.lift(hint[0]))
                claimed = hint[1] and len(cand) == res.ones.size + len(hint[0])
                if len(cand) < len(witness):
                    witness, method = cand, "milp"
                    res = _Residual.fix(G, D, dual, len(witness))
        if res.met_by_ones:
            # the forced columns alone cover, and every cover below U contains them
            if res.ones.size < len(witness):
                witness = res.ones
            lower, method = len(witness), "fixing"
        elif res.infeasible:
            lower, method = len(witness), "fixing"  # no cover below U exists
        elif budget.can_work():
            U = len(witness)
            cut_lower, res = _cut(res, U, budget)
            if cut_lower > lower:
                lower, method = cut_lower, "cuts"
        if lower < len(witness) and not res.empty and budget.can_work():
            U = len(witness)
            bb = branch_and_bound(res.G, res.D, U - res.ones.size,
                                   max(0, lower - res.ones.size), budget)
            if bb.witness is not None:
                cand = res.lift(bb.witness)
                if len(cand) < U and covers(G, D, cand):
                    witness, method = cand, "branch-and-bound"
                    claimed = False  # HiGHS's claim was wrong; the search found a smaller one
            if res.ones.size + bb.lower > lower:
                lower, method = res.ones.size + bb.lower, "branch-and-bound"
    lower = min(lower, len(witness))
    exact = lower == len(witness)
    return Enclosure(lower, len(witness), np.sort(witness), exact, lp_value, dual_value, method,
                     len(witness) if claimed and not exact else None)


def _cut(res: _Residual, U: int, budget: Budget) -> tuple[int, _Residual]:
    """MIR cut rounds on the residual problem (`certlib.certificates.covering_cuts`),
    each LP counted as a search node of its size.

    Returns the lower bound they prove on the whole problem (the forced columns plus
    the residual's bound; U when no cover below U is left) and the residual left for
    the branch-and-bound: the cuts' exact dual fixes more columns by reduced costs,
    as a restart would."""
    cost = lp_cost(*res.G.shape)
    rounds = min(MAX_CUT_ROUNDS, budget.left // cost)
    if rounds <= 0:
        return 0, res
    cb = cut_bound(res.G, res.D, U - res.ones.size, rounds=rounds, deadline=budget.deadline)
    budget.spend(cb.lps * cost)
    if time.perf_counter() >= budget.deadline:
        budget.time_limited = True
    if res.ones.size + cb.lower >= U or cb.dual is None:
        return res.ones.size + cb.lower, res
    sub = _Residual.fix(res.G, res.D, cb.dual, U - res.ones.size, cb.rhs)
    if sub.infeasible:
        return U, res
    if sub.met_by_ones:  # a smaller cover: rare, and the search on ``res`` finds it
        return res.ones.size + cb.lower, res
    return res.ones.size + cb.lower, _Residual(
        np.concatenate([res.ones, res.free[sub.ones]]), res.free[sub.free], sub.G, sub.D)


def _milp(G: NDArray[np.int64], D: NDArray[np.int64],
          budget: Budget) -> tuple[NDArray[np.int64], bool] | None:
    """HiGHS MILP under the remaining work (at most MILP_NODE_LIMIT nodes) and time.

    Returns (verified, pruned columns, whether HiGHS claims they are a minimum) or
    None.  The claim is dropped when pruning shrinks the solution (then it was not
    optimal); it is never used as a bound."""
    hint = milp_solution(G, D, node_limit=min(budget.left, MILP_NODE_LIMIT),
                         time_limit=budget.deadline - time.perf_counter())
    budget.spend(max(hint.nodes, 1) + G.shape[0] * G.shape[1] // CELLS_PER_UNIT)
    if time.perf_counter() >= budget.deadline:
        budget.time_limited = True
    if hint.cols is None or not covers(G, D, hint.cols):
        return None
    cols = prune(G, D, hint.cols)
    return cols, hint.claims_optimal and len(cols) == len(hint.cols)


