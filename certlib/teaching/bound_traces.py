"""Bounds label by label, for teaching (paper Figure 10) and for plotting.

Along one reading order, the lower bound of ``min_{j != k} (A_j - A_k)`` for the
full-pool winner k is traced under each comparison rule.  The winner is
certified (tau = 0) at the first prefix where every rival's bound clears the
tie rule; the figure marks those points, the hindsight minimum certificate and
the prelabel bound.  Bounds are exact integers; floats appear only in the
``*_objective`` arrays meant for plotting.

`replay_trace` keeps every step of a policy's replay (the dashboard's replay mode): the
exact K x K bounds, best guess and status after each label, so a page can draw any step
without recomputing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.pool import Pool
from ..policies import Policy

from ..core.bounds import thresholds
from ..core.pair_terms import gain_terms, initial_lower, row_blocks
from ..policies import PolicyContext, get_policy
from ..labelling.replay import replay
from ..labelling.session import Session

__all__ = ["BoundPath", "ReplayTrace", "TeachingFigure", "bound_path", "replay_trace",
           "teaching_figure"]


@dataclass(frozen=True, eq=False)
class BoundPath:
    """min over rivals j of L_jk (and H_jk) after each prefix of the order.

    Attributes
    ----------
    rule : str
        The comparison rule of the bounds.
    target : str
        The candidate k whose bounds are traced.
    lower : ndarray of int64, shape (t + 1,)
        ``lower[t]``: min over rivals of L_jk after t labels, in the rule's units.
    upper : ndarray of int64 or None
        The same for min_j H_jk (shared rule only).
    unit : int
        1, or 2 for the centered rule.
    scale : int
        Scaled risk / scale = the objective.
    stop : int or None
        Labels read when the target is first certified (tau = 0); None if never.
    """

    rule: str
    target: str
    lower: NDArray[np.int64]
    upper: NDArray[np.int64] | None
    unit: int
    scale: int
    stop: int | None

    @property
    def lower_objective(self) -> NDArray[np.float64]:
        """The lower bound in objective units (AUGRC), for plotting."""
        return self.lower / (self.unit * self.scale)

    @property
    def upper_objective(self) -> NDArray[np.float64] | None:
        """The upper bound in objective units, for plotting (None: not the shared rule)."""
        return None if self.upper is None else self.upper / (self.unit * self.scale)


def bound_path(pool: Pool, order: ArrayLike, *, rule: str = "shared",
               target: int | None = None) -> BoundPath:
    """Trace the bounds of a target along a reading order (paper 000 Figure 10).

    Parameters
    ----------
    pool : Pool
        A pool whose rows in ``order`` hold labels.
    order : array_like of int
        Row positions in reading order (a full reading order needs every label).
    rule : str, default "shared"
        The comparison rule ("shared", "separate" or "centered").
    target : int, optional
        The candidate index k (default: the full-pool winner).

    Returns
    -------
    BoundPath
        min over rivals of L_jk (and H_jk) after each prefix, and the stopping point.

    Examples
    --------
    >>> from certlib.teaching.worked_examples import figure2_pool
    >>> path = bound_path(figure2_pool(), [0, 1, 2, 3])
    >>> path.target, path.lower.tolist(), path.stop
    ('B', [-6, -4, -2, 2, 2], 3)
    """
    k = pool.winner() if target is None else int(target)
    order = np.asarray(order, dtype=np.int64)
    th = thresholds(pool.K, pool.scale, rule=rule, tolerance=0)
    rivals = [j for j in range(pool.K) if j != k]
    L = initial_lower(pool, rule)
    cols: list[NDArray[np.integer[Any]]] = [L[rivals, k][:, None]]
    ups: list[NDArray[np.integer[Any]]] | None = (
        [(-L[k, rivals])[:, None]] if rule == "shared" else None)
    for blk in row_blocks(order.size):
        rows = order[blk]
        g = gain_terms(pool, rows, pool.labels[rows], rule=rule)
        cols.append(g[rivals, k, :])
        if ups is not None:
            ups.append(-g[k, rivals, :])
    lower_all = np.cumsum(np.concatenate(cols, axis=1), axis=1)  # (K-1, t+1)
    ok = (lower_all >= th.need[rivals, k][:, None]).all(axis=0)
    stop = int(np.argmax(ok)) if ok.any() else None
    upper = None
    if ups is not None:
        upper = np.cumsum(np.concatenate(ups, axis=1), axis=1).min(axis=0)
    return BoundPath(rule, pool.names[k], lower_all.min(axis=0), upper, th.unit, pool.scale, stop)


@dataclass(frozen=True, eq=False)
class TeachingFigure:
    """Everything paper Figure 10 shows, for one pool and one reading order."""

    n: int
    winner: str
    policy: str
    order: tuple[int, ...]  # row positions in reading order
    paths: dict[str, BoundPath]  # rule -> BoundPath
    prelabel: int
    certificate_lower: int | None
    certificate_upper: int | None
    adaptive: bool = False  # the policy has no static order (the order is spliced)


def teaching_figure(pool: Pool, *, policy: str | Policy = "static-range", seed: int = 0,
                    with_certificate: bool = True) -> TeachingFigure:
    """The data of paper 000 Figure 10 for one pool and one policy.

    The policy's full reading order, the bound paths of the shared, centered and
    separate rules, the prelabel bound and the minimum certificate.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    policy : str or Policy, default "static-range"
        The policy whose reading order is traced.
    seed : int, default 0
        Seed of a random policy.
    with_certificate : bool, default True
        Whether to compute the minimum certificate (`certify`), the slowest part.

    Returns
    -------
    TeachingFigure
        Everything the figure shows.

    Raises
    ------
    LabelError
        When a row has no label (the message names it).
    ParameterError
        On an unknown policy.

    Examples
    --------
    >>> from certlib.teaching.worked_examples import figure2_pool
    >>> fig = teaching_figure(figure2_pool())
    >>> fig.winner, fig.order, fig.prelabel, fig.certificate_lower, sorted(fig.paths)
    ('B', (2, 3, 0, 1), 2, 3, ['centered', 'separate', 'shared'])
    """
    from ..certificates.certificate import certify
    from ..certificates.prelabel import prelabel_bound

    pool.risks()  # every label is needed; raises LabelError naming the row otherwise
    pol = get_policy(policy)
    # the full order a policy would read if it never stopped: its static order if it has
    # one.  An adaptive policy's order depends on the rule, so: its replay with the
    # shared rule up to the certificate (the shared curve then stops where `replay` and
    # the Replay page stop), then the rows its replay with the separate rule (which reads
    # furthest) reads and the shared one did not, in that order, then the rest by position
    static = pol.static_order(PolicyContext(pool, "shared", seed))
    adaptive = static is None
    if static is not None:
        order = static
    else:
        read: list[int] = []
        seen: set[int] = set()
        for rule in ("shared", "separate"):
            for x in replay(pool, policy=pol, rule=rule, seed=seed).order:
                i = pool.position(x)
                if i not in seen:
                    seen.add(i)
                    read.append(i)
        rest = [i for i in range(pool.n) if i not in seen]
        order = np.asarray(read + rest, dtype=np.int64)
    rules = ["shared", "centered", "separate"]
    if not (pool.is_binary or pool.shared_prediction):
        rules.remove("centered")
    paths = {rule: bound_path(pool, order, rule=rule) for rule in rules}
    cert_lo = cert_hi = None
    if with_certificate:
        c = certify(pool)
        cert_lo, cert_hi = c.lower, c.upper
    return TeachingFigure(pool.n, pool.names[pool.winner()], pol.name,
                          tuple(order.tolist()), paths, prelabel_bound(pool).prelabel_bound,
                          cert_lo, cert_hi, adaptive=adaptive)


@dataclass(frozen=True, eq=False)
class ReplayTrace:
    """Every step of a policy's replay on a fully labelled pool (`certlib.replay` with the
    states kept).  Step t is the state after the first t labels of ``order``, t = 0..T.

    ``bounds[t]`` is the exact K x K matrix of the session after t labels (`Session.L`,
    in the rule's units: divide by ``unit`` for `Session.lower`); read-only."""

    policy: str
    rule: str
    tolerance: Fraction
    seed: int
    budget: int | None
    candidates: tuple[str, ...]
    n: int
    order: tuple[object, ...]  # row ids read, in order (== replay(...).order)
    rows: tuple[int, ...]  # the same rows as positions
    bounds: tuple[NDArray[np.int64], ...]  # bounds[t]: (K, K) int64, rule units
    best_guess: tuple[str, ...]  # best_guess[t]: candidate name (Session.best_guess)
    status: tuple[str, ...]  # status[t]: Session.status ("running", "certified", ...)
    excess: tuple[Fraction, ...]  # excess[t]: worst-case objective gap of best_guess[t]
    unit: int
    scale: int

    @property
    def T(self) -> int:
        """Labels read at the end of the replay."""
        return len(self.order)

    @property
    def certified(self) -> bool:
        """Whether the replay ended certified (exactly or within the tolerance)."""
        return self.status[-1].startswith("certified")

    @property
    def selected(self) -> str:
        """The final answer, as `ReplayResult.selected`."""
        return self.best_guess[-1]

    def certified_at(self, t: int) -> bool:
        """Whether the state after ``t`` labels is certified.

        Parameters
        ----------
        t : int
            Labels read, 0..T.

        Returns
        -------
        bool
            True when ``status[t]`` is a certified status.
        """
        return self.status[t].startswith("certified")

    def lower(self, t: int) -> NDArray[np.int64] | NDArray[np.float64]:
        """Exact lower bounds of r_j - r_k after t labels, as `Session.lower`.

        Parameters
        ----------
        t : int
            Labels read, 0..T.

        Returns
        -------
        ndarray, shape (K, K)
            In scaled risks: integers, or halves (floats) for the centered rule.
        """
        L = self.bounds[t]
        out: NDArray[np.int64] | NDArray[np.float64] = (
            L // self.unit if self.unit == 1 else L / self.unit)
        return out

    def upper(self, t: int) -> NDArray[np.int64] | NDArray[np.float64]:
        """H[j, k] = -L[k, j] after t labels, as `Session.upper`.

        Parameters
        ----------
        t : int
            Labels read, 0..T.

        Returns
        -------
        ndarray, shape (K, K)
            Upper bounds of r_j - r_k in scaled risks.
        """
        out: NDArray[np.int64] | NDArray[np.float64] = -self.lower(t).T
        return out

    def rival_bounds(self, k: int, t: int | None = None
                     ) -> dict[str, tuple[list[float], list[float]]]:
        """The bounds of each rival against candidate k, label by label, for plots.

        Parameters
        ----------
        k : int
            The candidate index.
        t : int, optional
            The last step (default T).

        Returns
        -------
        dict of str to (list of float, list of float)
            {rival name: (lower list, upper list)} of the objective difference
            obj_j - obj_k after 0, 1, ..., t labels (as `Progress.rival_bounds`).
        """
        t = self.T if t is None else int(t)
        stack = np.stack(self.bounds[: t + 1]).astype(float) / (self.unit * self.scale)
        return {name: (stack[:, j, k].tolist(), (-stack[:, k, j]).tolist())
                for j, name in enumerate(self.candidates) if j != k}


def replay_trace(pool: Pool, *, policy: str | Policy = "static-range", rule: str = "shared",
                 tolerance: float | Fraction = 0.0, seed: int = 0,
                 budget: int | None = None) -> ReplayTrace:
    """The replay of a policy with the state after every label.

    The same order and answer as `certlib.replay`: a `Session` stepped with the pool's
    labels along the replay's order.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    policy : str or Policy, default "static-range"
        The policy replayed.
    rule : str, default "shared"
        The stopping rule.
    tolerance : float or Fraction, default 0.0
        The objective tolerance tau >= 0.
    seed : int, default 0
        Seed of a random policy.
    budget : int, optional
        Stop after this many labels.

    Returns
    -------
    ReplayTrace
        Every step's bounds, best guess, status and excess.

    Raises
    ------
    LabelError
        When a row has no label (the message names the first one).
    ParameterError
        On a bad policy, rule, tolerance or budget.

    Examples
    --------
    >>> from certlib.teaching.worked_examples import figure2_pool
    >>> tr = replay_trace(figure2_pool())
    >>> tr.T, tr.status[0], tr.status[-1], tr.selected
    (4, 'running', 'certified', 'B')
    """
    r = replay(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed, budget=budget)
    s = Session.start(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed,
                      budget=budget)
    rows = tuple(pool.position(x) for x in r.order)
    states = [s]
    for row in rows:
        s = s.observe(row, pool.classes[pool.labels[row]])
        states.append(s)
    return ReplayTrace(
        policy=r.policy, rule=rule, tolerance=r.tolerance, seed=int(seed), budget=r.budget,
        candidates=pool.names, n=pool.n, order=r.order, rows=rows,
        bounds=tuple(x.L for x in states), best_guess=tuple(x.best_guess for x in states),
        status=tuple(x.status for x in states), excess=tuple(x.excess for x in states),
        unit=s.th.unit, scale=pool.scale,
    )
