"""The values of the append-only labelling log (SPEC section 12): a project's fixed
settings, one event, which labels an event history leaves in force, which rows it
leaves skipped and which budget it leaves in force.

`certlib.labelling.store` keeps these in an SQLite file; `certlib.labelling.progress`
replays them and `certlib.labelling.record` writes them into the evidence
record.  Nothing here touches a file.

The hash chain: every event carries ``prev_hash`` and ``hash`` (hex SHA-256), ``hash``
being `event_hash` of its fields and ``prev_hash``; the first event's ``prev_hash`` is
`Project.chain_hash`, the hash of the project's fixed settings.  Each hash is SHA-256 of
`canonical_json` (keys sorted, no whitespace, ASCII), so anyone can recompute a chain
from the values alone (`check_chain`): a chain shows that nothing in it was changed
after it was written *unless every later hash was recomputed too*; what a rewrite is
checked against is the store's chain, or a head (`ChainCheck.head`) kept elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # annotations only: these values need no numpy
    from ..core._values import ClassValue
    from .session import SessionSettings

__all__ = ["CHAIN_FORMAT", "EVENT_KINDS", "FILE_ANNOTATOR", "ChainCheck", "Event", "Identity",
           "Project", "budget_in_force", "canonical_json", "check_chain", "event_hash",
           "file_seed", "labels_in_force", "same_annotator", "skipped_rows", "step_labels",
           "utc_now"]

# label: a row's label; undo: cancels the label event its ``undoes`` names (the store:
# the annotator's own newest label in force); skip: the annotator passes
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
#: the version of the hash chain's serialisation (`canonical_json`, `event_hash`,
#: `Project.chain_fields`); an evidence record names it
CHAIN_FORMAT = 1
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


@dataclass(frozen=True)
class Identity:
    """Who appends an event: the name shown, and the identity provider's account when
    signed in.

    Attributes
    ----------
    name : str
        What the event log and the record show (the e-mail when signed in).
    subject : str or None, default None
        The identity provider's ``sub`` (None in local mode, where a name is typed).
    issuer : str or None, default None
        The identity provider (its ``iss``), or None.

    Examples
    --------

    >>> ana = Identity("ana@example.org", subject="1234", issuer="https://id.example.org")
    >>> str(ana), same_annotator(ana, Identity("Ana@Example.org ", subject="1234"))
    ('ana@example.org', True)
    >>> same_annotator(ana, Identity("ana@example.org", subject="9999"))
    False
    """

    name: str
    subject: str | None = None
    issuer: str | None = None

    def __str__(self) -> str:
        return self.name


def _name_of(who: object) -> str:
    return str(who.name if isinstance(who, Identity) else who).strip().casefold()


def same_annotator(a: object, b: object) -> bool:
    """Whether two annotators are one person (who may undo a label, who may review it).

    Two `Identity` values that both carry a ``subject`` are compared by it (and by
    their issuers when both name one): an account keeps its subject when its e-mail
    changes, and two accounts never share one.  Otherwise names are compared as text,
    without surrounding spaces and case.

    Parameters
    ----------
    a, b : str, Identity or object
        Annotator names (any other value is compared as its text) or identities.

    Returns
    -------
    bool
        They are the same person's.

    Examples
    --------

    >>> same_annotator(" Ana", "ana"), same_annotator("ana", Identity("ana", subject="7"))
    (True, True)
    """
    if isinstance(a, Identity) and isinstance(b, Identity) and a.subject and b.subject:
        return a.subject == b.subject and (a.issuer is None or b.issuer is None
                                           or a.issuer == b.issuer)
    return _name_of(a) == _name_of(b)


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
    chain_pool_hash : str or None, default None
        The pool hash the event chain pins (`chain_fields`) when ``pool_hash`` was
        rewritten since to the same pool's current hash (a store recognising a pool by
        the hash of an earlier build); None: ``pool_hash`` itself.
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
    chain_pool_hash: str | None = None

    def chain_fields(self) -> dict[str, object]:
        """The settings the event chain pins, as JSON values: what `chain_hash` hashes.

        Returns
        -------
        dict
            ``id``, ``pool_hash`` (the one the chain pinned), ``pool_name``, ``n``,
            ``candidates``, ``classes``, ``objective``, ``policy``, ``rule``,
            ``tolerance`` (exact, ``"p/q"``), ``seed``, ``budget`` (at start),
            ``prelabel_bound`` and ``created_at``.
        """
        return {"id": self.id, "pool_hash": self.chain_pool_hash or self.pool_hash,
                "pool_name": self.pool_name, "n": self.n, "candidates": list(self.candidates),
                "classes": list(self.classes), "objective": self.objective,
                "policy": self.policy, "rule": self.rule, "tolerance": str(self.tolerance),
                "seed": self.seed, "budget": self.budget,
                "prelabel_bound": self.prelabel_bound, "created_at": self.created_at}

    @property
    def chain_hash(self) -> str:
        """The ``prev_hash`` of the project's first event: SHA-256 (hex) of
        `canonical_json` of `chain_fields`, so the chain pins the settings too."""
        return _sha256(self.chain_fields())

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
    subject : str or None, default None
        The identity provider's subject of the annotator when signed in (`Identity`).
    prev_hash, hash : str or None, default None
        The hash chain (module docstring): the previous event's hash (for the first
        event the project's `Project.chain_hash`) and this event's `event_hash`; None
        for an event not (yet) in a store.
    """

    seq: int
    kind: str  # one of EVENT_KINDS
    row_id: ClassValue | None
    label: ClassValue | None
    annotator: str
    at: str  # UTC, ISO 8601
    undoes: int | None = None
    subject: str | None = None
    prev_hash: str | None = None
    hash: str | None = None

    @property
    def identity(self) -> Identity:
        """Who appended the event (name and subject; an event stores no issuer)."""
        return Identity(self.annotator, self.subject)

    def to_dict(self) -> dict[str, object]:
        """The event as JSON-ready values.

        Returns
        -------
        dict
            Its fields by name, as the evidence record's event log lists them.
        """
        return {"seq": self.seq, "kind": self.kind, "row_id": self.row_id, "label": self.label,
                "annotator": self.annotator, "subject": self.subject, "at": self.at,
                "undoes": self.undoes, "prev_hash": self.prev_hash, "hash": self.hash}


def canonical_json(value: object) -> bytes:
    """The bytes a chain hash is taken of: JSON with sorted keys, no whitespace, ASCII.

    Values go in exactly as the log holds them (a row id ``7`` and ``"7"`` differ,
    ``1`` and ``1.0`` too).

    Parameters
    ----------
    value : object
        JSON values (dicts, lists, strings, numbers, None).

    Returns
    -------
    bytes
        The serialisation.

    Examples
    --------

    >>> print(canonical_json({"seq": 2, "kind": "label", "label": 1.0, "who": "Zoë"}).decode())
    {"kind":"label","label":1.0,"seq":2,"who":"Zo\\u00eb"}
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode("ascii")


def _sha256(value: object) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


def event_hash(project_id: int, event: Event, prev_hash: str) -> str:
    """The hash of one event in its project's chain.

    SHA-256 (hex) of `canonical_json` of ``{"project", "seq", "kind", "row_id", "label",
    "annotator", "subject", "at", "undoes", "prev_hash"}``: every field of the event as
    stored (not its own ``hash``), the project's id and the previous event's hash.

    Parameters
    ----------
    project_id : int
        The project's id.
    event : Event
        The event (its ``prev_hash`` and ``hash`` are not read).
    prev_hash : str
        The previous event's hash, or `Project.chain_hash` for the first event.

    Returns
    -------
    str
        64 lowercase hex digits.

    Examples
    --------

    >>> e = Event(1, "label", 7, 1, "ana", "2024-05-01T09:30:00.123Z")
    >>> h = event_hash(1, e, "0" * 64)
    >>> len(h), h == event_hash(1, Event(1, "label", 7, 1, "bob", e.at), "0" * 64)
    (64, False)
    """
    return _sha256({"project": project_id, "seq": event.seq, "kind": event.kind,
                    "row_id": event.row_id, "label": event.label,
                    "annotator": event.annotator, "subject": event.subject, "at": event.at,
                    "undoes": event.undoes, "prev_hash": prev_hash})


@dataclass(frozen=True)
class ChainCheck:
    """A hash chain recomputed (`check_chain`).

    Attributes
    ----------
    events : int
        Events checked.
    head : str
        The newest event's recorded hash (the project's `Project.chain_hash` when it
        has no event).
    broken_at : int or None
        The ``seq`` of the first event that does not fit the chain (None: none).
    reason : str
        Why it does not fit, one sentence ("" when the chain holds).

    Examples
    --------

    >>> ChainCheck(3, "ab" * 32).ok, ChainCheck(3, "ab" * 32, 2, "...").ok
    (True, False)
    """

    events: int
    head: str
    broken_at: int | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        """True when every event fits the chain."""
        return self.broken_at is None


_HASHED = "kind, row_id, label, annotator, subject, time (at) or undoes"


def check_chain(project_id: int, genesis: str, events: Sequence[Event]) -> ChainCheck:
    """Recompute a project's hash chain and name the first event that does not fit.

    An event does not fit when it is not numbered next, when its ``prev_hash`` is not
    the previous event's hash (``genesis`` for the first), or when its fields do not
    hash to its ``hash`` (`event_hash`).  A chain recomputed after an edit fits: what a
    rewrite is checked against is a head kept elsewhere (module docstring).

    Parameters
    ----------
    project_id : int
        The project's id.
    genesis : str
        `Project.chain_hash` of the project's settings.
    events : sequence of Event
        Its log, in sequence order.

    Returns
    -------
    ChainCheck
        ``ok``, the head, and the first broken ``seq`` with the reason.

    Examples
    --------

    >>> p = Project(1, "h" * 64, "demo.csv", 4, ("A", "B"), (0, 1), "augrc",
    ...             "adaptive-pair-sum", "shared", Fraction(0), 0, None, 2,
    ...             "2024-05-01T09:00:00.000Z")
    >>> e = Event(1, "label", 7, 1, "ana", "2024-05-01T09:30:00.123Z")
    >>> e = Event(1, "label", 7, 1, "ana", e.at, prev_hash=p.chain_hash,
    ...           hash=event_hash(1, e, p.chain_hash))
    >>> check_chain(1, p.chain_hash, [e]).ok
    True
    >>> forged = Event(1, "label", 7, 1, "bob", e.at, prev_hash=e.prev_hash, hash=e.hash)
    >>> check_chain(1, p.chain_hash, [forged]).broken_at
    1
    """
    last = events[-1].hash if events else genesis
    head = last if isinstance(last, str) else ""
    prev = genesis
    for i, e in enumerate(events, start=1):
        if e.seq != i:
            return ChainCheck(len(events), head, e.seq,
                              f"event {e.seq} is event {i} of the log: events were removed, "
                              "reordered or renumbered")
        if e.prev_hash != prev:
            what = ("the hash of the project's settings: the project's settings (pool hash, "
                    "candidates, policy, ...) were changed" if i == 1 else
                    f"the hash of event {i - 1}: an event was removed or replaced")
            return ChainCheck(len(events), head, e.seq,
                              f"event {e.seq}: its prev_hash is not {what}")
        if not isinstance(e.hash, str) or event_hash(project_id, e, prev) != e.hash:
            return ChainCheck(len(events), head, e.seq,
                              f"event {e.seq} ({e.kind}): its fields do not hash to its "
                              f"recorded hash: its {_HASHED} was changed after it was "
                              "written")
        prev = e.hash
    return ChainCheck(len(events), head)


def labels_in_force(events: Iterable[Event]) -> list[Event]:
    """Label events still in force, in reading order (an undo cancels the label event it
    names, a correction replaces its row's label in place).

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
    >>> log = [Event(1, "label", 7, 1, "ana", "t1"), Event(2, "label", 3, 0, "bob", "t2"),
    ...        Event(3, "undo", 7, 1, "ana", "t3", undoes=1)]   # ana's own, not the newest
    >>> [e.row_id for e in labels_in_force(log)]
    [3]
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
        The label event an undo cancelled (None for any other event, and for an undo
        naming no label in force).  An undo cancels the label (or correction) event its
        ``undoes`` names, wherever it stands in the reading order (an annotator takes back
        their own newest label while a colleague's later ones stay); one naming none
        cancels the newest.
    """
    if e.kind == "label":
        stack.append(e)
    elif e.kind == "undo" and stack:
        if e.undoes is None:
            return stack, stack.pop()
        for i, x in enumerate(stack):
            if x.seq == e.undoes:
                return stack, stack.pop(i)
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
