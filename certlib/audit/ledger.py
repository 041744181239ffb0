"""Promotion ledger: one lifetime guarantee over a chain of updates (paper Prop. 13).

Audit k of the chain runs at delta_k = delta_life * 6 / (pi^2 k^2); these sum
to delta_life over k = 1, 2, ..., so with probability at least 1 - delta_life
no audit in the whole (possibly adaptive, unbounded) chain issues a false
verdict.  The ledger is an immutable value persisted as JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParameterError, PoolFileError
from .cs import check_alpha

__all__ = ["PromotionLedger"]


@dataclass(frozen=True)
class PromotionLedger:
    """A chain of audits sharing one lifetime miscoverage budget.

    Parameters
    ----------
    lifetime_delta : float
        The chain's budget delta_life: with probability at least 1 - delta_life no
        audit of the chain issues a false verdict.
    entries : tuple of dict
        The audits recorded so far, oldest first (their summaries, with ``k`` and
        ``delta_k``).

    Examples
    --------
    >>> led = PromotionLedger.start(0.05)
    >>> round(led.next_delta(), 6)
    0.030396
    >>> led = led.record({"verdict": "safe"})
    >>> round(led.next_delta() * 4, 6) == round(PromotionLedger.start(0.05).next_delta(), 6)
    True
    """

    lifetime_delta: float
    entries: tuple[dict[str, object], ...] = ()

    @classmethod
    def start(cls, lifetime_delta: float) -> PromotionLedger:
        """An empty ledger.

        Parameters
        ----------
        lifetime_delta : float
            The chain's budget, in (0, 1).

        Returns
        -------
        PromotionLedger
            The ledger, no audit yet.

        Raises
        ------
        ParameterError
            ``lifetime_delta`` outside (0, 1).
        """
        return cls(check_alpha(lifetime_delta, "lifetime_delta"))

    def delta_for(self, k: int) -> float:
        """The level of audit k: delta_k = delta_life 6 / (pi^2 k^2).

        Parameters
        ----------
        k : int
            The audit's place in the chain, from 1.

        Returns
        -------
        float
            delta_k.

        Raises
        ------
        ParameterError
            ``k < 1``.
        """
        if k < 1:
            raise ParameterError(f"audit index `k` must be >= 1, got {k}")
        return self.lifetime_delta * 6.0 / (math.pi ** 2 * k * k)

    @property
    def k(self) -> int:
        """Index of the next audit (1-based)."""
        return len(self.entries) + 1

    def next_delta(self) -> float:
        """The level of the next audit.

        Returns
        -------
        float
            delta_k for k = `k`.
        """
        return self.delta_for(self.k)

    @property
    def spent(self) -> float:
        """The budget spent: the sum of delta_k over the audits recorded."""
        return sum(self.delta_for(i + 1) for i in range(len(self.entries)))

    def record(self, summary: Mapping[str, object]) -> PromotionLedger:
        """A new ledger with one more audit.

        Parameters
        ----------
        summary : mapping
            The audit's summary (verdict, tier, ...); ``k`` and ``delta_k`` are added.

        Returns
        -------
        PromotionLedger
            The ledger with the entry appended.
        """
        entry = dict(summary)
        entry["k"] = self.k
        entry["delta_k"] = self.next_delta()
        return PromotionLedger(self.lifetime_delta, self.entries + (entry,))

    def to_dict(self) -> dict[str, object]:
        """The ledger as JSON-ready data (what `save` writes).

        Returns
        -------
        dict
            ``lifetime_delta``, ``schedule``, ``spent`` and ``entries``.
        """
        return {"lifetime_delta": self.lifetime_delta, "schedule": "6/(pi^2 k^2)",
                "spent": self.spent, "entries": list(self.entries)}

    def save(self, path: str | Path) -> None:
        """Write the ledger as JSON.

        Parameters
        ----------
        path : str or Path
            The ledger file.
        """
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, default=str))

    @classmethod
    def load(cls, path: str | Path) -> PromotionLedger:
        """Read a ledger written by `save`.

        Parameters
        ----------
        path : str or Path
            The ledger file.

        Returns
        -------
        PromotionLedger
            The ledger.

        Raises
        ------
        PoolFileError
            The file is missing or not a promotion ledger.
        ParameterError
            Its ``lifetime_delta`` is outside (0, 1).
        """
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
    def open(cls, path: str | Path, lifetime_delta: float) -> PromotionLedger:
        """Load the ledger at ``path``, or start one with ``lifetime_delta`` if absent.

        Parameters
        ----------
        path : str or Path
            The ledger file.
        lifetime_delta : float
            The budget of a new ledger (ignored when the file exists).

        Returns
        -------
        PromotionLedger
            The ledger.

        Raises
        ------
        PoolFileError, ParameterError
            As `load` and `start`.
        """
        return cls.load(path) if Path(path).exists() else cls.start(lifetime_delta)
