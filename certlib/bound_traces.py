"""Bounds label by label, for teaching (paper Figure 10) and for plotting.

Along one reading order, the lower bound of ``min_{j != k} (A_j - A_k)`` for the
full-pool winner k is traced under each comparison rule.  The winner is
certified (tau = 0) at the first prefix where every rival's bound clears the
tie rule; the figure marks those points, the hindsight minimum certificate and
the prelabel bound.  Bounds are exact integers; floats appear only in the
``*_objective`` arrays meant for plotting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bounds import thresholds
from .pair_terms import gain_terms, initial_lower, row_blocks
from .policies import PolicyContext, get_policy
from .replay import replay

__all__ = ["BoundPath", "TeachingFigure", "bound_path", "teaching_figure"]


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


def teaching_figure(pool, policy: str = "static-range", seed: int = 0,
                    with_certificate: bool = True) -> TeachingFigure:
    """The data of paper Figure 10: the policy's full reading order, the bound paths of
    the shared, centered and separate rules, the prelabel bound and the certificate."""
    from .certificate import certify
    from .prelabel import prelabel_bound

    pool.risks()  # every label is needed; raises LabelError naming the row otherwise
    pol = get_policy(policy)
    # the full order a policy would read if it never stopped: its static order if it has
    # one; else a replay with the separate rule (which reads furthest), completed with
    # the rows it left unread, by position
    order = pol.static_order(PolicyContext(pool, "shared", seed))
    if order is None:
        r = replay(pool, pol, "separate", seed=seed)
        read = [pool.position(x) for x in r.order]
        seen = set(read)
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
                          cert_lo, cert_hi)
