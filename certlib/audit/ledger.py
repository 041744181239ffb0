"""Promotion ledger: one lifetime guarantee over a chain of updates (paper Prop. 13).

Audit k of the chain runs at delta_k = delta_life * 6 / (pi^2 k^2); these sum
to delta_life over k = 1, 2, ..., so with probability at least 1 - delta_life
no audit in the whole (possibly adaptive, unbounded) chain issues a false
verdict.  The ledger is an immutable value persisted as JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParameterError, PoolFileError
from .cs import check_alpha

__all__ = ["PromotionLedger"]


@dataclass(frozen=True)
class PromotionLedger:
    """``lifetime_delta`` and the audits recorded so far (``entries``, oldest first).

    >>> led = PromotionLedger.start(0.05)
    >>> round(led.next_delta(), 6)
    0.030396
    >>> led = led.record({"verdict": "safe"})
    >>> round(led.next_delta() * 4, 6) == round(PromotionLedger.start(0.05).next_delta(), 6)
    True
    """

    lifetime_delta: float
    entries: tuple = ()

    @classmethod
    def start(cls, lifetime_delta: float) -> PromotionLedger:
        return cls(check_alpha(lifetime_delta, "lifetime_delta"))

    def delta_for(self, k: int) -> float:
        if k < 1:
            raise ParameterError(f"audit index `k` must be >= 1, got {k}")
        return self.lifetime_delta * 6.0 / (math.pi ** 2 * k * k)

    @property
    def k(self) -> int:
        """Index of the next audit (1-based)."""
        return len(self.entries) + 1

    def next_delta(self) -> float:
        return self.delta_for(self.k)

    @property
    def spent(self) -> float:
        return sum(self.delta_for(i + 1) for i in range(len(self.entries)))

    def record(self, summary: dict) -> PromotionLedger:
        """New ledger with one more audit (its summary dict, delta_k added)."""
        entry = dict(summary)
        entry["k"] = self.k
        entry["delta_k"] = self.next_delta()
        return PromotionLedger(self.lifetime_delta, self.entries + (entry,))

    def to_dict(self) -> dict:
        return {"lifetime_delta": self.lifetime_delta, "schedule": "6/(pi^2 k^2)",
                "spent": self.spent, "entries": list(self.entries)}

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, default=str))

    @classmethod
    def load(cls, path) -> PromotionLedger:
        p = Path(path)
        try:
            data = json.loads(p.read_text())
            led = cls(check_alpha(data["lifetime_delta"], "lifetime_delta"),
                      tuple(data.get("entries", ())))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise PoolFileError(
                f"ledger file {p}: cannot be read as a promotion ledger ({exc})") from None
        return led

    @classmethod
    def open(cls, path, lifetime_delta: float) -> PromotionLedger:
        """Load the ledger at ``path``, or start one with ``lifetime_delta`` if absent."""
        return cls.load(path) if Path(path).exists() else cls.start(lifetime_delta)
