"""The values of the append-only labelling log (SPEC section 12): a project's fixed
settings, one event, which labels an event history leaves in force and which rows it
leaves skipped.

`certlib.store` keeps these in an SQLite file; `certlib.progress` replays them and
`certlib.record` writes them into the evidence record.  Nothing here touches a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction

__all__ = ["EVENT_KINDS", "Event", "Project", "labels_in_force", "skipped_rows", "utc_now"]

# label: a row's label; undo: cancels the newest label in force; skip: the annotator passes
# over a row for now; unskip: every skipped row is available again.  Skips never touch
# the labels, so they never change a bound.
EVENT_KINDS = ("label", "undo", "skip", "unskip")


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
    """One row of the append-only log: a label, an undo of label ``undoes``, a skip of
    a row (``label`` None) or an unskip of every skipped row (``row_id`` None)."""

    seq: int
    kind: str  # one of EVENT_KINDS
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
        elif e.kind == "undo" and stack:
            stack.pop()
    return stack


def skipped_rows(events) -> tuple:
    """Row ids skipped and not yet back, in the order they were skipped: a row is skipped
    from its skip event until the next ``unskip`` event or until it is labelled.

    >>> log = [Event(1, "skip", 7, None, "ana", "t1"), Event(2, "skip", 3, None, "ana", "t2"),
    ...        Event(3, "label", 3, 0, "ana", "t3"), Event(4, "skip", 5, None, "ana", "t4")]
    >>> skipped_rows(log)
    (7, 5)
    >>> skipped_rows(log + [Event(5, "unskip", None, None, "ana", "t5")])
    ()
    """
    out = {}
    for e in events:
        if e.kind == "skip":
            out[e.row_id] = None
        elif e.kind == "label":
            out.pop(e.row_id, None)
        elif e.kind == "unskip":
            out.clear()
    return tuple(out)
