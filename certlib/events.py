"""The values of the append-only labelling log (SPEC section 12): a project's fixed
settings, one event, and which labels an event history leaves in force.

`certlib.store` keeps these in an SQLite file; `certlib.progress` replays them and
`certlib.record` writes them into the evidence record.  Nothing here touches a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction

__all__ = ["Event", "Project", "labels_in_force", "utc_now"]


def utc_now() -> str:
    """The current UTC time as ISO 8601 with milliseconds: ``2024-05-01T09:30:00.123Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Project:
    """Settings fixed when labelling starts (SPEC section 12)."""

    id: int
    pool_hash: str
    pool_name: str
    n: int
    candidates: tuple
    classes: tuple
    objective: str
    policy: str
    rule: str
    tolerance: Fraction
    seed: int
    budget: int | None
    prelabel_bound: int
    created_at: str

    def session_kwargs(self) -> dict:
        return {"policy": self.policy, "rule": self.rule, "tolerance": self.tolerance,
                "seed": self.seed, "budget": self.budget}


@dataclass(frozen=True)
class Event:
    """One row of the append-only log: a label, or an undo of label ``undoes``."""

    seq: int
    kind: str  # "label" or "undo"
    row_id: object
    label: object
    annotator: str
    at: str  # UTC, ISO 8601
    undoes: int | None = None

    def to_dict(self) -> dict:
        return {"seq": self.seq, "kind": self.kind, "row_id": self.row_id, "label": self.label,
                "annotator": self.annotator, "at": self.at, "undoes": self.undoes}


def labels_in_force(events) -> list:
    """Label events still in force, in reading order (each undo cancels the newest).

    >>> log = [Event(1, "label", 7, 1, "ana", "t1"), Event(2, "label", 3, 0, "ana", "t2"),
    ...        Event(3, "undo", 3, 0, "ana", "t3", undoes=2)]
    >>> [e.row_id for e in labels_in_force(log)]
    [7]
    """
    stack = []
    for e in events:
        if e.kind == "label":
            stack.append(e)
        elif stack:
            stack.pop()
    return stack
