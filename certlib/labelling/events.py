"""The values of the append-only labelling log (SPEC section 12): a project's fixed
settings, one event, which labels an event history leaves in force, which rows it
leaves skipped and which budget it leaves in force.

`certlib.labelling.store` keeps these in an SQLite file; `certlib.labelling.progress`
replays them and `certlib.labelling.record` writes them into the evidence
record.  Nothing here touches a file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # annotations only: these values need no numpy
    from ..core._values import ClassValue
    from .session import SessionSettings

__all__ = ["EVENT_KINDS", "FILE_ANNOTATOR", "Event", "Project", "budget_in_force", "file_seed",
           "labels_in_force", "same_annotator", "skipped_rows", "step_labels", "utc_now"]

# label: a row's label; undo: cancels the newest label in force; skip: the annotator passes
# over a row for now; unskip: every skipped row is available again.  Skips never touch
# the labels, so they never change a bound.  budget: the project's budget is extended,
# the new budget in the event's ``label`` field (None = no budget).
# review_request: a row queued for a second annotator (``label`` the label under
# review); review: that annotator's label for it (changes nothing by itself); correct: the
# label of a row in force is replaced (``undoes`` the label event corrected), keeping its
# place in the reading order, so the session replays with the corrected label.  keep: a
# review disagreement decided for the label in force (``label`` that label; changes
# nothing, ends the disagreement).
EVENT_KINDS = ("label", "undo", "skip", "unskip", "budget", "review_request", "review",
               "correct", "keep")
#: the annotator of the labels a project takes from the pool file when it starts
#: (`certlib.labelling.store.LabelStore.create_project` with ``from_file``); no person may use it
FILE_ANNOTATOR = "(pool file)"


def file_seed(events: Iterable[Event]) -> list[tuple[ClassValue | None, ClassValue | None]]:
    """The labels a project took from the pool file when it started.

    Parameters
    ----------
    events : iterable of Event
        The project's log.

    Returns
    -------
    list of (row id, label)
        The label events by `FILE_ANNOTATOR`, in order.
    """
    return [(e.row_id, e.label) for e in events
            if e.kind == "label" and e.annotator == FILE_ANNOTATOR]


# letters a name can borrow to look like another: digits and capitals that read as l or
# o, and Cyrillic / Greek letters drawn like Latin ones
_LOOKALIKE = str.maketrans({"1": "l", "|": "l", "i": "l", "0": "o", "о": "o", "ο": "o",
                            "р": "p", "ρ": "p", "е": "e", "ε": "e", "і": "l", "ӏ": "l",
                            "ι": "l", "ſ": "f", "ƒ": "f"})


def imitates_file_annotator(name: object) -> bool:
    """Whether a name reads as `FILE_ANNOTATOR` without being it.

    "(pool  file)", "(pooI file)", "pool_file", a Cyrillic o: a reader would take a
    person's labels for labels of the file.  Compared after NFKC, case folding,
    look-alike letters and without anything but letters.

    Parameters
    ----------
    name : object
        An annotator name (compared as text).

    Returns
    -------
    bool
        True for an imitation, False for `FILE_ANNOTATOR` itself and other names.
    """
    return str(name) != FILE_ANNOTATOR and _skeleton(name) == _skeleton(FILE_ANNOTATOR)


def _skeleton(name: object) -> str:
    text = unicodedata.normalize("NFKC", str(name)).casefold().translate(_LOOKALIKE)
    return "".join(ch for ch in text if ch.isalpha())


def same_annotator(a: object, b: object) -> bool:
    """Whether two annotator names name one person (who may undo a label, who may review
    it).

    Parameters
    ----------
    a, b : object
        Annotator names, compared as text without surrounding spaces and case.

    Returns
    -------
    bool
        The names are the same person's.
    """
    return str(a).strip().casefold() == str(b).strip().casefold()


def utc_now() -> str:
    """The current UTC time as ISO 8601 with milliseconds: ``2024-05-01T09:30:00.123Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Project:
    """Settings fixed when labelling starts (SPEC section 12).  ``budget`` is the budget
    at start; ``budget`` events may extend it later (`budget_in_force`).

    Attributes
    ----------
    id : int
        The project's id in its store.
    pool_hash : str
        The label-free hash of its pool (`certlib.pool_hash`), taken before any label.
    pool_name : str
        The name the pool was opened under (a file name).
    n : int
        Rows in the pool.
    candidates : tuple of str
        Candidate names in tie-priority order.
    classes : tuple
        The class values.
    objective : str
        The objective ("augrc", ...).
    policy, rule : str
        The policy's registered name and the bound rule.
    tolerance : Fraction
        tau, exact.
    seed : int
        Seed of the policy's random choices.
    budget : int or None
        The budget at start (None: none).
    prelabel_bound : int
        Labels any policy needs at least, computed before the first label.
    created_at : str
        UTC time of creation, ISO 8601.
    """

    id: int
    pool_hash: str
    pool_name: str
    n: int
    candidates: tuple[str, ...]
    classes: tuple[ClassValue, ...]
    objective: str
    policy: str
    rule: str
    tolerance: Fraction
    seed: int
    budget: int | None
    prelabel_bound: int
    created_at: str

    def session_kwargs(self, events: Iterable[Event] = ()) -> SessionSettings:
        """Keyword arguments of `Session.start` for this project.

        Parameters
        ----------
        events : iterable of Event, default ()
            The project's log: its last ``budget`` event sets the budget (the start
            budget when there is none).

        Returns
        -------
        SessionSettings
            policy, rule, tolerance, seed and the budget in force.
        """
        return {"policy": self.policy, "rule": self.rule, "tolerance": self.tolerance,
                "seed": self.seed, "budget": budget_in_force(self.budget, events)}


@dataclass(frozen=True)
class Event:
    """One row of the append-only log: a label, an undo of label ``undoes``, a skip of
    a row (``label`` None), an unskip of every skipped row (``row_id`` None), a budget
    extension (``row_id`` None, ``label`` the new budget, None for no budget) or a review
    event (`certlib.labelling.reviews`).

    Attributes
    ----------
    seq : int
        Sequence number in the project's log, from 1.
    kind : str
        One of `EVENT_KINDS`.
    row_id : int, float, str or None
        The row concerned (None for unskip and budget events).
    label : int, float, str or None
        The label given, under review or kept; the new budget of a budget event.
    annotator : str
        Who appended the event.
    at : str
        UTC time, ISO 8601 with milliseconds.
    undoes : int or None
        The ``seq`` of the label event an undo cancels or a correction replaces.
    """

    seq: int
    kind: str  # one of EVENT_KINDS
    row_id: ClassValue | None
    label: ClassValue | None
    annotator: str
    at: str  # UTC, ISO 8601
    undoes: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The event as JSON-ready values.

        Returns
        -------
        dict
            Its fields by name, as the evidence record's event log lists them.
        """
        return {"seq": self.seq, "kind": self.kind, "row_id": self.row_id, "label": self.label,
                "annotator": self.annotator, "at": self.at, "undoes": self.undoes}


def labels_in_force(events: Iterable[Event]) -> list[Event]:
    """Label events still in force, in reading order (each undo cancels the newest, a
    correction replaces its row's label in place).

    Parameters
    ----------
    events : iterable of Event
        A project's log, in sequence order.

    Returns
    -------
    list of Event
        The label (or correct) events in force.

    Examples
    --------

    >>> log = [Event(1, "label", 7, 1, "ana", "t1"), Event(2, "label", 3, 0, "ana", "t2"),
    ...        Event(3, "undo", 3, 0, "ana", "t3", undoes=2)]
    >>> [e.row_id for e in labels_in_force(log)]
    [7]
    """
    stack: list[Event] = []
    for e in events:
        stack, _ = step_labels(stack, e)
    return stack


def step_labels(stack: list[Event], e: Event) -> tuple[list[Event], Event | None]:
    """One event applied to the labels in force.

    Parameters
    ----------
    stack : list of Event
        The labels in force, in reading order; changed in place except by a correction.
    e : Event
        The next event of the log.

    Returns
    -------
    stack : list of Event
        The labels in force after ``e``.
    cancelled : Event or None
        The label event an undo cancelled (None for any other event).
    """
    if e.kind == "label":
        stack.append(e)
    elif e.kind == "undo" and stack:
        return stack, stack.pop()
    elif e.kind == "correct":  # the corrected row keeps its place in the order
        stack = [e if x.row_id == e.row_id else x for x in stack]
    return stack, None


def skipped_rows(events: Iterable[Event]) -> tuple[ClassValue | None, ...]:
    """Row ids skipped and not yet back, in the order they were skipped.

    A row is skipped from its skip event until the next ``unskip`` event or until it is
    labelled.

    Parameters
    ----------
    events : iterable of Event
        A project's log, in sequence order.

    Returns
    -------
    tuple
        The row ids.

    Examples
    --------

    >>> log = [Event(1, "skip", 7, None, "ana", "t1"), Event(2, "skip", 3, None, "ana", "t2"),
    ...        Event(3, "label", 3, 0, "ana", "t3"), Event(4, "skip", 5, None, "ana", "t4")]
    >>> skipped_rows(log)
    (7, 5)
    >>> skipped_rows(log + [Event(5, "unskip", None, None, "ana", "t5")])
    ()
    """
    out: dict[ClassValue | None, None] = {}
    for e in events:
        if e.kind == "skip":
            out[e.row_id] = None
        elif e.kind == "label":
            out.pop(e.row_id, None)
        elif e.kind == "unskip":
            out.clear()
    return tuple(out)


def budget_in_force(start_budget: int | None, events: Iterable[Event]) -> int | None:
    """The project's start budget overridden by its last ``budget`` event.

    Parameters
    ----------
    start_budget : int or None
        The budget the project started with (None: none).
    events : iterable of Event
        Its log.

    Returns
    -------
    int or None
        The budget in force (None: no budget).

    Examples
    --------

    >>> log = [Event(1, "label", 7, 1, "ana", "t1"), Event(2, "budget", None, 60, "ana", "t2")]
    >>> budget_in_force(3, log), budget_in_force(3, log[:1])
    (60, 3)
    >>> budget_in_force(3, log + [Event(3, "budget", None, None, "bob", "t3")]) is None
    True
    """
    budget = start_budget
    for e in events:
        if e.kind == "budget":
            # a budget event holds the new budget (the store writes no other value, and
            # `Session.start` refuses any other value a record claims)
            budget = cast("int | None", e.label)
    return budget
