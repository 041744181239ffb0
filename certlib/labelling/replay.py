"""Replay a policy over a fully labelled pool (SPEC section 10 `replay`).

Policies whose reading order is known in advance (`Policy.static_order`, or
`Policy.adaptive_order` when only eliminations change it: static, adaptive,
random, vma) are replayed in vectorised blocks: along the order the bounds are
a cumulative sum of per-row gains, so the stopping test and the elimination
test are evaluated on a whole block at once, and an adaptive order is
recomputed only at an elimination (at most K - 1 times).  Other policies step
a `Session`.  Both paths give the same result (tested), and both use the same
exact test.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.bounds import certified_mask, decide, eliminated_mask, thresholds
from ..core.pair_terms import check_rule, gain_terms, initial_lower
from ..errors import LabelError
from .label_errors import check_label_errors, full_pool_fragility, label_error_margin
from ..policies import Policy, PolicyContext, get_policy
from .session import Session, _budget

__all__ = ["ReplayResult", "replay"]


@dataclass(frozen=True)
class ReplayResult:
    """Labels a policy needed, with labels known in hindsight."""

    policy: str
    rule: str
    tolerance: Fraction
    budget: int | None
    labels_read: int
    certified: bool
    selected: str  # certified candidate, or smallest worst-case excess if not certified
    full_pool_winner: str
    excess: Fraction  # guaranteed objective gap of `selected` (0 when certified exactly)
    order: tuple  # row ids read, in order
    n: int
    candidates: tuple
    # issue 14, only when replay(..., label_errors=e) was asked (None otherwise)
    label_errors: int | None = None
    status: str | None = None  # the session's status at stop ("certified but fragile", ...)
    margin: Any = None  # LabelErrorMargin of the answer at stop
    fragility: Any = None  # LabelErrorMargin of the full-pool choice

    @property
    def robust(self) -> bool | None:
        """The answer survives any ``label_errors`` wrong labels among the rows read."""
        return None if self.margin is None else self.margin.robust_to(self.label_errors)

    @property
    def labels_fraction(self) -> float:
        return self.labels_read / self.n

    def to_dict(self) -> dict:
        return {
            "policy": self.policy, "rule": self.rule, "tolerance": float(self.tolerance),
            "budget": self.budget, "labels_read": self.labels_read,
            "labels_fraction": self.labels_fraction, "selected": self.selected,
            "full_pool_winner": self.full_pool_winner, "certified": self.certified,
            "excess": float(self.excess), "n": self.n, "candidates": list(self.candidates),
            "order": list(self.order),
        } | ({} if self.label_errors is None else self._label_error_keys())

    def _label_error_keys(self) -> dict:
        m, f = self.margin, self.fragility
        return {
            "label_errors": self.label_errors, "status": self.status, "robust": self.robust,
            "margin": m.flips, "margin_rival": m.rival, "margin_rows": list(m.row_ids),
            "margin_critical_rows": list(m.critical_ids),
            "full_pool_fragility": f.flips, "full_pool_fragility_rival": f.rival,
            "full_pool_fragility_rows": list(f.row_ids),
        }


def replay(pool, policy="static-range", rule: str = "shared", tolerance=0.0, seed: int = 0,
           budget: int | None = None, *, vectorised: bool = True,
           label_errors: int | None = None) -> ReplayResult:
    """Run ``policy`` with the exact stopping test on a fully labelled pool.

    ``label_errors`` e (issue 14): stop only when the certificate survives any e wrong
    labels among the rows read (`Session.start`); the result then also carries the
    label-error margin at stop and the full-pool fragility (e = 0: the plain test, with
    those two reported)."""
    check_rule(rule)
    e = check_label_errors(label_errors)
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels < 0)[0])
        raise LabelError(
            f"replay needs a fully labelled pool; row {pool.row_ids[i]!r} (position {i}) has "
            f"no label ({pool.n - pool.n_labelled} of {pool.n} rows unlabelled)"
        )
    budget = _budget(budget, pool.n)
    pol = get_policy(policy)
    run = _replay_order(pool, pol, rule, tolerance, seed, budget) \
        if vectorised and not e else None
    status = None
    if run is None:
        s = Session.start(pool, pol, rule, tolerance, seed, budget, label_errors=e)
        while not s.done:
            r = s.next_row()
            s = s.observe(r, pool.classes[pool.labels[r]])
        run, status = (list(s.read_rows), s.decision), s.status
    rows, dec = run
    tol = thresholds(pool.K, pool.scale, rule, tolerance).tolerance
    extra = {}
    if e is not None:
        if status is None:  # the plain test (e = 0) stopped the vectorised replay
            status = _plain_status(dec, tol, budget, len(rows), pool.n)
        extra = dict(label_errors=e, status=status,
                     margin=label_error_margin(pool, rows, tol, rule=rule,
                                               target=dec.selected_index),
                     fragility=full_pool_fragility(pool, tol, rule=rule))
    return ReplayResult(
        policy=pol.name, rule=rule, tolerance=tol,
        budget=budget, labels_read=len(rows), certified=dec.certified,
        selected=pool.names[dec.selected_index], full_pool_winner=pool.names[pool.winner()],
        excess=dec.excess, order=pool.ids_of(rows), n=pool.n,
        candidates=pool.names, **extra,
    )


def _plain_status(dec, tol, budget, t, n) -> str:
    """`Session.status` of the plain test's stop."""
    if dec.certified:
        return "certified" if tol == 0 else "certified within tolerance"
    if budget is not None and t >= budget:
        return "budget exhausted"
    return "all labels read" if t >= n else "running"


def _replay_order(pool, pol: Policy, rule, tolerance, seed, budget):
    """The replay in vectorised blocks, or None when the policy's order is not known in
    advance."""
    th = thresholds(pool.K, pool.scale, rule, tolerance)
    L = initial_lower(pool, rule)
    dec = decide(L, th)
    eliminated = set(dec.eliminated)
    ctx = PolicyContext(pool, rule, seed, th.tolerance, dec.eliminated)
    order = pol.static_order(ctx)
    adaptive = order is None
    if adaptive:
        order = pol.adaptive_order(ctx, tuple(k for k in range(pool.K) if k not in eliminated))
        if order is None:
            return None
    n = pool.n
    limit = n if budget is None else min(budget, n)
    read = np.zeros(n, dtype=bool)
    taken: list[np.ndarray] = []
    t = 0
    block = 256
    while not dec.certified and t < limit:
        pending = order[~read[order]]  # rows of this order still unread
        pos = 0
        restart = False
        while pos < pending.size and t < limit and not dec.certified and not restart:
            m = min(block, pending.size - pos, limit - t)
            rows = pending[pos:pos + m]
            gain = gain_terms(pool, rows, pool.labels[rows], rule)
            cum = L[:, :, None] + np.cumsum(gain, axis=2, dtype=np.int64)
            cert = certified_mask(cum, th).any(axis=0)
            stop = int(np.argmax(cert)) if cert.any() else m
            if adaptive:
                elim = eliminated_mask(cum, th)
                new = elim & ~np.isin(np.arange(pool.K), list(eliminated))[:, None]
                hit = new.any(axis=0)
                if hit.any() and int(np.argmax(hit)) < stop:
                    stop = int(np.argmax(hit))
                    restart = True
            used = m if stop == m else stop + 1
            L = cum[:, :, used - 1].copy()
            read[rows[:used]] = True
            taken.append(rows[:used])
            t += used
            pos += used
            dec = decide(L, th)
            block = min(block * 2, 1 << 15)
        if restart:
            eliminated = set(dec.eliminated)
            active = tuple(k for k in range(pool.K) if k not in eliminated)
            order = pol.adaptive_order(ctx, active)
        elif pos >= pending.size:
            break
    rows = np.concatenate(taken) if taken else np.zeros(0, dtype=np.int64)
    return rows.tolist(), dec
