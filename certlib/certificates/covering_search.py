"""Exact branch-and-bound for the covering problem, under a deterministic work budget.

Searches for a cover of ``G[:, S].sum(1) >= D`` smaller than a known one (SPEC section
7, "beyond the paper"); `certlib.certificates.covering` calls it after the root LP, the exact
fixing and HiGHS's MILP.  Every decision is exact: HiGHS's node LPs only suggest
multipliers and branching columns, the bounds and fixings come from
`certlib.certificates.covering_exact`, incumbents are checked with integer sums.

Work, not time, stops it: each node costs one unit, plus ``r * c // CELLS_PER_UNIT``
when it solves an LP over ``r`` rows and ``c`` columns; a wall-clock deadline is only a
safety net.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray

from .covering_exact import (
    covers,
    exact_dual,
    fewest_largest,
    fix_columns,
    largest_first,
    round_up,
)
from .covering_lp import lp_relaxation

__all__ = ["CELLS_PER_UNIT", "DOMINANCE_MAX_COLS", "Budget", "Dominance", "SearchResult",
           "branch_and_bound"]

# an LP over r rows and c columns costs r * c // CELLS_PER_UNIT units more than 1 (at
# K = 8, r <= 7: about c // 500).  Counting columns alone let the LPs of a K = 32 or 64
# pool at n = 10,000 run a minute on 2,000 units, so the time limit, not the work,
# decided; with the rows (and int64 cuts) they stop on work, after 7 and 10 s on the
# benchmark machine
CELLS_PER_UNIT = 4000
DOMINANCE_MAX_COLS = 3000  # the dominance relation is an m x m boolean matrix


@dataclass
class Budget:
    """Work units left, and the wall-clock safety net."""

    left: int
    deadline: float
    used: int = 0
    time_limited: bool = False

    def spend(self, units: int) -> None:
        """Count ``units`` of work as done.

        Parameters
        ----------
        units : int
            Work units (module docstring).
        """
        self.used += units
        self.left -= units

    def can_work(self) -> bool:
        """True while work is left and the deadline has not passed (noted when it has)."""
        if self.left <= 0:
            return False
        if time.perf_counter() >= self.deadline:
            self.time_limited = True
            return False
        return True


def lp_cost(rows: int, columns: int) -> int:
    """Work units of a search node (or a cut round) that solves an LP of this size.

    Parameters
    ----------
    rows : int
        Constraints of the LP.
    columns : int
        Its columns.

    Returns
    -------
    int
        ``1 + rows * columns // CELLS_PER_UNIT``.

    Examples
    --------
    >>> lp_cost(7, 540), lp_cost(31, 10_000)
    (1, 78)
    """
    return 1 + rows * columns // CELLS_PER_UNIT


class Dominance:
    """Symmetry breaking for the exact search: column a *dominates* column b when
    ``G[:, a] >= G[:, b]`` entrywise (identical columns: the lower index dominates).

    Swapping a dominated column b in a cover for a dominating a outside it gives a
    cover of the same size, and each swap moves the cover up a linear extension of
    this (strict, transitive) order, so every cover has a same-size *canonical*
    cover: one that contains every column dominating one of its columns.  The
    search only looks for canonical covers, so a node may put every column
    dominating an "in" column in, and every column dominated by an "out" column
    out.  Without this it re-proves the same subproblem for every arrangement of
    interchangeable columns (pools with tied confidences have many; HiGHS's
    presolve removes them the same way).  The m x m relation is kept only for
    m <= DOMINANCE_MAX_COLS columns; larger problems are searched without it."""

    def __init__(self, G: NDArray[np.int64]):
        m = G.shape[1]
        self.below: NDArray[np.bool_] | None = None  # below[b, a]: a dominates b
        if m > DOMINANCE_MAX_COLS or m < 2:
            return
        geq = np.ones((m, m), dtype=bool)
        same = np.ones((m, m), dtype=bool)
        for row in G:
            geq &= row[None, :] >= row[:, None]
            same &= row[None, :] == row[:, None]
        idx = np.arange(m)
        geq &= ~same | (idx[None, :] < idx[:, None])
        self.below = geq

    def close(self, status: NDArray[np.int8]) -> NDArray[np.int8] | None:
        """``status`` with every implied in/out set (a copy), or None when no canonical
        cover agrees with it.  One step suffices: the relation is transitive.

        Parameters
        ----------
        status : numpy.ndarray of int8, shape (m,)
            -1 free, 0 out, 1 in.

        Returns
        -------
        numpy.ndarray of int8 or None
            The closed status (``status`` itself without a relation), or None.
        """
        if self.below is None:
            return status
        ones, zeros = status == 1, status == 0
        up = self.below[ones].any(axis=0)  # dominating an "in" column: in
        down = self.below[:, zeros].any(axis=1)  # dominated by an "out" column: out
        if (up & (zeros | down)).any() or (down & ones).any():
            return None
        out: NDArray[np.int8] = status.copy()
        out[up] = 1
        out[down] = 0
        return out


@dataclass(frozen=True)
class SearchResult:
    """What `branch_and_bound` proved and found.

    Parameters
    ----------
    lower : int
        A valid lower bound on the optimum, capped at the incumbent size.
    witness : numpy.ndarray of int64 or None
        A verified cover smaller than the initial U, if one was found.
    """

    lower: int  # valid lower bound on the optimum, capped at the incumbent size
    witness: NDArray[np.int64] | None  # a verified cover smaller than the initial U, if found


def branch_and_bound(G: NDArray[np.int64], D: NDArray[np.int64], U: int, root_lower: int,
                     budget: Budget) -> SearchResult:
    """Exact search for a cover of size <= U - 1 (U: size of a known one, or any
    upper limit).

    Node LPs (HiGHS) only suggest multipliers and branching columns.  A node with
    columns F forced in is discarded when the exact bound
    ``|F| + ceil(weak dual of the residual problem)`` (or the exact surrogate
    bound, or a one-constraint sorting bound) reaches U; columns are fixed by exact
    reduced-cost and cardinality arguments; only canonical covers are searched
    (`Dominance`); incumbents are verified with integer sums.  If the
    stack empties, no cover of size below U exists beyond those found, so
    ``lower`` = final U; when the budget runs out the smallest bound of an open
    node (capped at U) is a valid lower bound.  Each node costs 1 work unit, plus
    ``rows * columns // CELLS_PER_UNIT`` when it solves an LP.

    Parameters
    ----------
    G : numpy.ndarray of int64, shape (r, m)
        Gains.
    D : numpy.ndarray of int64, shape (r,)
        Deficits.
    U : int
        Size of a known cover (or any upper limit): only smaller covers are sought.
    root_lower : int
        A valid lower bound at the root.
    budget : Budget
        The work left and the deadline; spent in place.

    Returns
    -------
    SearchResult
        The proved lower bound and any smaller verified cover.

    Raises
    ------
    RuntimeError
        Never in practice: an incumbent failed the final integer check.
    """
    m = G.shape[1]
    best = None
    dominance = Dominance(G)
    # node: (status array int8: -1 free, 0 out, 1 in; a valid lower bound for the node)
    stack = [(np.full(m, -1, dtype=np.int8), root_lower)]
    stopped = False
    while stack:
        if not budget.can_work():
            stopped = True
            break
        status, node_lb = stack.pop()
        if node_lb >= U:
            continue
        budget.spend(1)
        ones = np.flatnonzero(status == 1)
        free = np.flatnonzero(status == -1)
        nF = len(ones)
        rem = D - G[:, ones].sum(axis=1, dtype=np.int64)
        act = rem > 0
        if not act.any():  # F itself covers
            if nF < U:
                best, U = ones, nF
            continue
        Ga, Ra = G[act][:, free], rem[act]
        if (Ga.sum(axis=1, dtype=np.int64) < Ra).any():
            continue  # infeasible, exactly
        # every constraint is feasible (checked above), so no count is None
        lb = max(node_lb, nF + max(cast(int, fewest_largest(Ga[j], int(Ra[j])))
                                   for j in range(Ga.shape[0])))
        if lb >= U:
            continue
        if Ga.shape[0] == 1:  # one constraint left: solved exactly by sorting
            sol = largest_first(Ga[0], int(Ra[0]))
            if nF + sol.size < U:
                best, U = np.concatenate([ones, free[sol]]), nF + sol.size
            continue
        budget.spend(lp_cost(Ga.shape[0], free.size) - 1)
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
            fixed = fix_columns(Ga, Ra, dual, U - nF)
            if fixed is None:
                continue  # no cover below U in this node, exactly
            out, into = fixed
            if out.any() or into.any():
                status = status.copy()
                status[free[out]] = 0
                status[free[into]] = 1
                closed = dominance.close(status)
                if closed is not None:
                    stack.append((closed, lb))
                continue
        # branch on the most fractional free column (any free column if the LP failed)
        pick = 0 if x is None else int(np.argmin(np.abs(x - 0.5)))
        i = free[pick]
        zero, one = status.copy(), status.copy()
        zero[i], one[i] = 0, 1
        for child in (dominance.close(zero), dominance.close(one)):
            if child is not None:
                stack.append((child, lb))
    if best is not None and not covers(G, D, best):  # cannot happen: every update is exact
        raise RuntimeError("branch-and-bound produced an unverified cover")
    if not stopped:
        return SearchResult(U, best)
    # every node not yet explored is on the stack (the budget is checked before a pop)
    return SearchResult(min([lb for _, lb in stack] + [U]), best)
