"""Windowed audit for drift: restart both tiers every W items (paper sections 5.7, 6.5).

Window w covers items [wW, (w+1)W) and certifies its own window-average
Delta at the audit's delta (per-window guarantee, as in the paper; not
family-wise over windows).  Labelling draws are the stream's global U_t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from .core import AuditConfig, Stream, _run, make_stream

__all__ = ["WindowVerdict", "WindowedAudit", "audit_windowed"]


@dataclass(frozen=True)
class WindowVerdict:
    start: int            # first item of the window (1-based)
    end: int              # last item of the window (1-based)
    verdict: str
    tier: int | None
    stopping_time: int | None   # global 1-based item
    labels_used: int
    rho_interval: tuple
    delta_interval: tuple

    def to_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "verdict": self.verdict, "tier": self.tier,
                "stopping_time": self.stopping_time, "labels_used": self.labels_used,
                "rho_interval": list(self.rho_interval),
                "delta_interval": list(self.delta_interval)}


@dataclass(frozen=True)
class WindowedAudit:
    """All windows; ``verdict`` etc. are those of the latest window reached."""

    window: int
    windows: tuple
    labels_used: int
    needs_label: int | None

    @property
    def verdict(self) -> str:
        return self.windows[-1].verdict

    def to_dict(self) -> dict:
        last = self.windows[-1]
        return {"verdict": last.verdict, "tier": last.tier, "stopping_time": last.stopping_time,
                "labels_used": self.labels_used, "rho_interval": list(last.rho_interval),
                "delta_interval": list(last.delta_interval), "slices": [],
                "window": self.window, "needs_label": self.needs_label,
                "windows": [w.to_dict() for w in self.windows]}


def _sub(s: Stream, lo: int, hi: int) -> Stream:
    return Stream(s.a[lo:hi], s.d[lo:hi], s.has_label[lo:hi], s.labels[lo:hi],
                  None if s.judge is None else s.judge[lo:hi], None)


def audit_windowed(incumbent, candidate, labels=None, *, window, epsilon, delta=0.05, seed=0,
                   pi=None, pi_min=None, judge=None, truncation=0.5) -> WindowedAudit:
    """Run :func:`audit` afresh on every window of ``window`` items.

    >>> f = [0] * 3000; g = [0] * 3000
    >>> w = audit_windowed(f, g, None, window=1000, epsilon=0.05)
    >>> [x.verdict for x in w.windows], w.labels_used
    (['safe', 'safe', 'safe'], 0)
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ParameterError(f"`window` must be a positive integer number of items, got {window!r}")
    cfg = AuditConfig.make(epsilon=epsilon, delta=delta, pi=pi, pi_min=pi_min,
                           judge=judge is not None, seed=seed, truncation=truncation)
    stream = make_stream(incumbent, candidate, labels, judge)
    out, used, needs = [], 0, None
    for lo in range(0, stream.n, int(window)):
        hi = min(lo + int(window), stream.n)
        r = _run(_sub(stream, lo, hi), cfg, offset=lo)
        out.append(WindowVerdict(lo + 1, hi, r.verdict, r.tier,
                                 None if r.stopping_time is None else r.stopping_time + lo,
                                 r.labels_used, r.rho_interval, r.delta_interval))
        used += r.labels_used
        if r.needs_label is not None:
            needs = r.needs_label
            break
    return WindowedAudit(int(window), tuple(out), used, needs)
