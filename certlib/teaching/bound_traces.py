"""Bounds label by label, for teaching (paper Figure 10) and for plotting.

Along one reading order, the lower bound of ``min_{j != k} (A_j - A_k)`` for the
full-pool winner k is traced under each comparison rule.  The winner is
certified (tau = 0) at the first prefix where every rival's bound clears the
tie rule; the figure marks those points, the hindsight minimum certificate and
the prelabel bound.  Bounds are exact integers; floats appear only in the
``*_objective`` arrays meant for plotting.

`replay_trace` keeps every step of a policy's replay (issue 9, the dashboard's replay
mode): the exact K x K bounds, best guess and status after each label, so a page can
draw any step without recomputing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.bounds import thresholds
from ..core.pair_terms import gain_terms, initial_lower, row_blocks
from ..policies import PolicyContext, get_policy
from ..labelling.replay import replay
from ..labelling.session import Session

__all__ = ["BoundPath", "ReplayTrace", "TeachingFigure", "bound_path", "replay_trace",
           "teaching_figure"]


@dataclass(frozen=True, eq=False)
class BoundPath:
    """min over rivals j of L_jk (and H_jk) after each prefix of the order."""

    rule: str
    target: str
    lower: np.ndarray  # (n + 1,) int64, in the rule's units; lower[t] after t labels
    upper: np.ndarray | None  # shared rule only: min_j H_jk
    unit: int
    scale: int
    stop: int | None  # labels read when the target is first certified (tau = 0)

    @property
    def lower_objective(self) -> np.ndarray:
        """The lower bound in objective units (AUGRC), for plotting."""
        return self.lower / (self.unit * self.scale)

    @property
    def upper_objective(self) -> np.ndarray | None:
        return None if self.upper is None else self.upper / (self.unit * self.scale)


def bound_path(pool, order, rule: str = "shared", target: int | None = None) -> BoundPath:
    """Trace the bounds of target k (default: the full-pool winner) along ``order``
    (row positions; a full reading order needs every label)."""
    k = pool.winner() if target is None else int(target)
    order = np.asarray(order, dtype=np.int64)
    th = thresholds(pool.K, pool.scale, rule, 0)
    rivals = [j for j in range(pool.K) if j != k]
    L = initial_lower(pool, rule)
    cols = [L[rivals, k][:, None]]
    ups = [(-L[k, rivals])[:, None]] if rule == "shared" else None
    for blk in row_blocks(order.size):
        rows = order[blk]
        g = gain_terms(pool, rows, pool.labels[rows], rule)
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
    order: tuple  # row positions in reading order
    paths: dict  # rule -> BoundPath
    prelabel: int
    certificate_lower: int | None
    certificate_upper: int | None
    adaptive: bool = False  # the policy has no static order (the order is spliced)


def teaching_figure(pool, policy: str = "static-range", seed: int = 0,
                    with_certificate: bool = True) -> TeachingFigure:
    """The data of paper Figure 10: the policy's full reading order, the bound paths of
    the shared, centered and separate rules, the prelabel bound and the certificate."""
    from ..certificates.certificate import certify
    from ..certificates.prelabel import prelabel_bound

    pool.risks()  # every label is needed; raises LabelError naming the row otherwise
    pol = get_policy(policy)
    # the full order a policy would read if it never stopped: its static order if it has
    # one.  An adaptive policy's order depends on the rule, so: its replay with the
    # shared rule up to the certificate (the shared curve then stops where `replay` and
    # the Replay page stop), then the rows its replay with the separate rule (which reads
    # furthest) reads and the shared one did not, in that order, then the rest by position
    order = pol.static_order(PolicyContext(pool, "shared", seed))
    adaptive = order is None
    if adaptive:
        read = []
        seen = set()
        for rule in ("shared", "separate"):
            for x in replay(pool, pol, rule, seed=seed).order:
                i = pool.position(x)
                if i not in seen:
                    seen.add(i)
                    read.append(i)
        rest = [i for i in range(pool.n) if i not in seen]
        order = np.asarray(read + rest, dtype=np.int64)
    rules = ["shared", "centered", "separate"]
    if not (pool.is_binary or pool.shared_prediction):
        rules.remove("centered")
    paths = {rule: bound_path(pool, order, rule) for rule in rules}
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
    candidates: tuple
    n: int
    order: tuple  # row ids read, in order (== replay(...).order)
    rows: tuple  # the same rows as positions
    bounds: tuple  # bounds[t]: (K, K) int64, rule units
    best_guess: tuple  # best_guess[t]: candidate name (Session.best_guess)
    status: tuple  # status[t]: Session.status ("running", "certified", ...)
    excess: tuple  # excess[t]: worst-case objective gap of best_guess[t] (Fraction)
    unit: int
    scale: int

    @property
    def T(self) -> int:
        """Labels read at the end of the replay."""
        return len(self.order)

    @property
    def certified(self) -> bool:
        return self.status[-1].startswith("certified")

    @property
    def selected(self) -> str:
        """The final answer, as `ReplayResult.selected`."""
        return self.best_guess[-1]

    def certified_at(self, t: int) -> bool:
        return self.status[t].startswith("certified")

    def lower(self, t: int) -> np.ndarray:
        """Exact lower bounds of r_j - r_k after t labels, as `Session.lower`."""
        L = self.bounds[t]
        return L // self.unit if self.unit == 1 else L / self.unit

    def upper(self, t: int) -> np.ndarray:
        """H[j, k] = -L[k, j] after t labels, as `Session.upper`."""
        return -self.lower(t).T

    def rival_bounds(self, k: int, t: int | None = None) -> dict:
        """Against candidate k: {rival name: (lower list, upper list)} of the objective
        difference obj_j - obj_k after 0, 1, ..., t labels (default T); floats, for plots
        (as `Progress.rival_bounds`)."""
        t = self.T if t is None else int(t)
        stack = np.stack(self.bounds[: t + 1]).astype(float) / (self.unit * self.scale)
        return {name: (stack[:, j, k].tolist(), (-stack[:, k, j]).tolist())
                for j, name in enumerate(self.candidates) if j != k}


def replay_trace(pool, policy="static-range", rule: str = "shared", tolerance=0.0,
                 seed: int = 0, budget: int | None = None) -> ReplayTrace:
    """The replay of ``policy`` (`certlib.replay`, same order and answer) with the state
    after every label: a Session stepped with the pool's labels along the replay's order.
    Needs every label (raises `LabelError` naming the first unlabelled row)."""
    r = replay(pool, policy, rule, tolerance, seed, budget)
    s = Session.start(pool, policy, rule, tolerance, seed, budget)
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
