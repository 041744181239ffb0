"""Windowed audit for drift: restart both tiers every W items (paper sections 5.7, 6.5).

Window w covers items [wW, (w+1)W) and certifies its own window-average
Delta at the audit's delta (per-window guarantee, as in the paper; not
family-wise over windows).  Labelling draws are the stream's global U_t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from .core import DEFAULT_CONFIDENCE, AuditConfig, make_stream, run_stream

__all__ = ["WindowVerdict", "WindowedAudit", "audit_windowed"]


@dataclass(frozen=True)
class WindowVerdict:
    """The audit of one window.

    Parameters
    ----------
    start, end : int
        The window's first and last item (1-based, global).
    verdict : {"safe", "regression", "continue"}
        Its verdict.
    tier : int, optional
        The verdict's tier.
    stopping_time : int, optional
        The global 1-based item at which it was issued.
    labels_used : int
        Labels paid for in the window.
    rho_interval, delta_interval : tuple of float
        Its intervals for rho and Delta at its last item processed.
    """

    start: int
    end: int
    verdict: str
    tier: int | None
    stopping_time: int | None
    labels_used: int
    rho_interval: tuple[float, float]
    delta_interval: tuple[float, float]

    def to_dict(self) -> dict[str, object]:
        """The window as JSON-ready data.

        Returns
        -------
        dict
            Every field under its own name.
        """
        return {"start": self.start, "end": self.end, "verdict": self.verdict, "tier": self.tier,
                "stopping_time": self.stopping_time, "labels_used": self.labels_used,
                "rho_interval": list(self.rho_interval),
                "delta_interval": list(self.delta_interval)}


@dataclass(frozen=True)
class WindowedAudit:
    """All windows; the verdict and intervals are those of the latest window reached.

    Parameters
    ----------
    window : int
        The window length W.
    windows : tuple of WindowVerdict
        The windows reached, in order.
    labels_used : int
        Labels paid for over all windows.
    needs_label : int, optional
        The 0-based global row whose label the audit needs next.
    """

    window: int
    windows: tuple[WindowVerdict, ...]
    labels_used: int
    needs_label: int | None

    @property
    def verdict(self) -> str:
        """The latest window's verdict."""
        return self.windows[-1].verdict

    def to_dict(self) -> dict[str, object]:
        """The windowed audit as JSON-ready data (``certlib audit --window``).

        Returns
        -------
        dict
            The latest window's verdict and intervals, the labels, and every window.
        """
        last = self.windows[-1]
        return {"verdict": last.verdict, "tier": last.tier, "stopping_time": last.stopping_time,
                "labels_used": self.labels_used, "rho_interval": list(last.rho_interval),
                "delta_interval": list(last.delta_interval), "slices": [],
                "window": self.window, "needs_label": self.needs_label,
                "windows": [w.to_dict() for w in self.windows]}


def audit_windowed(incumbent: npt.ArrayLike, candidate: npt.ArrayLike,
                   labels: npt.ArrayLike | None = None, *, window: int, epsilon: float,
                   delta: float = 0.05, seed: int = 0, pi: float | None = None,
                   pi_min: float | None = None, judge: npt.ArrayLike | None = None,
                   truncation: float = 0.5,
                   confidence: str = DEFAULT_CONFIDENCE) -> WindowedAudit:
    """Run `certlib.audit.audit` afresh on every window of ``window`` items.

    Stops at the first window that needs a label it does not have.

    Parameters
    ----------
    incumbent, candidate, labels
        As in `certlib.audit.audit`.
    window : int
        The window length W >= 1.
    epsilon, delta, seed, pi, pi_min, judge, truncation, confidence
        As in `certlib.audit.audit`; each window runs at the whole ``delta``.

    Returns
    -------
    WindowedAudit
        Every window reached.

    Raises
    ------
    ParameterError
        ``window`` is no positive integer, or a setting is out of range.
    InvalidValueError, LabelError
        What `certlib.audit.core.make_stream` refuses.

    Examples
    --------
    >>> f = [0] * 3000; g = [0] * 3000
    >>> w = audit_windowed(f, g, None, window=1000, epsilon=0.05)
    >>> [x.verdict for x in w.windows], w.labels_used
    (['safe', 'safe', 'safe'], 0)
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ParameterError(f"`window` must be a positive integer number of items, got {window!r}")
    cfg = AuditConfig.make(epsilon=epsilon, delta=delta, pi=pi, pi_min=pi_min,
                           judge=judge is not None, seed=seed, truncation=truncation,
                           confidence=confidence)
    stream = make_stream(incumbent, candidate, labels, judge=judge)
    out: list[WindowVerdict] = []
    used, needs = 0, None
    for lo in range(0, stream.n, int(window)):
        hi = min(lo + int(window), stream.n)
        r = run_stream(stream.part(lo, hi), cfg, offset=lo)
        out.append(WindowVerdict(lo + 1, hi, r.verdict, r.tier,
                                 None if r.stopping_time is None else r.stopping_time + lo,
                                 r.labels_used, r.rho_interval, r.delta_interval))
        used += r.labels_used
        if r.needs_label is not None:
            needs = r.needs_label
            break
    return WindowedAudit(int(window), tuple(out), used, needs)
