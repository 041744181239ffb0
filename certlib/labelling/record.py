"""The evidence record of a model-choice labelling session (SPEC section 12): building
it from a replayed project, reading it back from a file, and verifying it against the
pool.

    record = make_record(store.progress(pid, pool))   # JSON-ready dict
    verify_record(read_record("record.json"), pool).ok
    labels_csv(store.progress(pid, pool))             # the labels in force, spreadsheet-safe

The record holds the pool hash (taken before the first label), candidates in priority
order, objective, tolerance, budget, policy, rule and seed, every label in force in
order with time and annotator (plus the full event log, budget extensions included, and
the budget in force at the end), the exact L/H bounds at stop,
the selected candidate with its guarantee, and the prelabel bound; also the label-error
margin of the answer (how many wrong labels among those read undo it, and the rows) and
the second-annotator reviews.  `verify_record` replays the labels on the pool and lists
every mismatch.

A version-3 record also carries the project's hash chain (``"chain"``: the settings it
pins, its head; each event its ``prev_hash`` and ``hash``, `certlib.labelling.events`):
`verify_record` recomputes it, so an event whose annotator, time, label or row was
edited without recomputing every later hash is a mismatch naming the event; given the
store, the record's events and head must be the store's, which a record re-chained
after an edit is not.  A chain recomputed from scratch fits by itself: the store, or a
head kept elsewhere, is what a rewrite is checked against.  An older record without a
chain verifies its labels as before, and the result notes that its annotators and
times are not attested.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..core._values import fraction_text, python_scalar
from ..errors import CertlibError, PoolFileError
from ..spreadsheet import csv_text, safe_cell
from .events import (CHAIN_FORMAT, EVENT_KINDS, FILE_ANNOTATOR, ChainCheck, Event, Project,
                     budget_in_force, canonical_json, check_chain, event_hash,
                     imitates_file_annotator, labels_in_force, same_annotator, step_labels,
                     utc_now)
from ..core.pool import Pool, pool_hash
from ..certificates.prelabel import prelabel_bound
from .progress import Progress, guarantee
from .reviews import review_items
from .session import Session
from ..certificates.verification import RECORD_FORMAT, Verification, refuse_other_kind, unique_keys
from ..core.weights import exact_fraction

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "labels_csv", "make_record", "read_record",
           "spreadsheet_safe", "verify_record"]

#: version 2: the verifier holds the guarantee's sentence to its wording.  A version-1
#: record (whose sentence may be worded otherwise) still verifies: its sentence must name
#: the selected candidate, and it may lack the label-error margin and the reviews when
#: its log holds no review event.  Version 3: the hash chain (module docstring), which
#: versions 1 and 2 lack: their annotators and times are not attested
RECORD_VERSION = 3
_READABLE_VERSIONS = (1, 2, 3)
_CHAINED = 3  # the first version that must carry the chain
NOT_ATTESTED = ("annotators and times are not attested: the record carries no hash chain "
                "(a record written before certlib chained its events), so who gave each "
                "label and when is taken at its word; its labels and verdict are verified")
_EVENT_FIELDS = ("kind", "row_id", "label", "annotator", "subject", "at", "undoes",
                 "prev_hash", "hash")
_REVIEW_KINDS = ("review_request", "review", "correct", "keep")

_REQUIRED = ("format", "version", "pool", "candidates", "classes", "objective", "tolerance",
             "budget", "policy", "seed", "rule", "prelabel_bound", "labels", "events",
             "labels_read", "status", "certified", "selected", "guarantee", "bounds")


def _label_entry(e: Event) -> dict[str, object]:
    return {"seq": e.seq, "row_id": e.row_id, "label": e.label, "annotator": e.annotator,
            "at": e.at}


def make_record(progress: Progress) -> dict[str, object]:
    """The evidence record of a replayed project (SPEC section 12).

    Parameters
    ----------
    progress : Progress
        The project replayed from its log (`LabelStore.progress`).

    Returns
    -------
    dict
        JSON-ready: settings, labels in force, the event log (each event with its
        ``subject``, ``prev_hash`` and ``hash``), the exact bounds at the stop, the
        guarantee, the label-error margin, the reviews and the hash chain's pinned
        settings and head (``"chain"``).
    """
    pr, s = progress.project, progress.session
    g = guarantee(s)
    L = np.asarray(s.L, dtype=np.int64)
    # a log replayed from events that never were in a store has no chain to carry
    chained = all(e.hash is not None for e in progress.events)
    head = progress.events[-1].hash if progress.events else pr.chain_hash
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION if chained else 2,
        "pool": {"hash": pr.pool_hash, "name": pr.pool_name, "n": pr.n, "K": len(pr.candidates)},
        "candidates": list(pr.candidates),  # tie priority order: earlier wins a tie
        "classes": list(pr.classes),
        "objective": pr.objective,
        "tolerance": fraction_text(pr.tolerance),
        "budget": pr.budget,  # at start; the log's budget events extend it
        "budget_in_force": progress.budget,
        "policy": pr.policy,
        "seed": pr.seed,
        "rule": pr.rule,
        "prelabel_bound": pr.prelabel_bound,
        "created_at": pr.created_at,
        "labels": [_label_entry(e) for e in progress.labels],
        "events": [e.to_dict() for e in progress.events],
        "labels_read": s.t,
        "status": s.status,
        "certified": s.certified,
        "selected": g.selected,
        "guarantee": {"kind": g.kind, "worst_case_excess": fraction_text(g.excess),
                      "worst_case_excess_float": float(g.excess), "text": g.text()},
        # exact integer bounds of r_j - r_k in scaled-risk units at stop:
        # objective difference = value / (bound_unit * scale)
        "bounds": {"L": L.tolist(), "H": (-L.T).tolist(), "bound_unit": int(s.th.unit),
                   "scale": int(s.pool.scale)},
        # how many wrong labels among those read would undo the answer, the rows to
        # re-check, and the second-annotator reviews (recomputed by the verifier)
        "label_error_margin": _margin_entry(s),
        "reviews": [i.to_dict() for i in review_items(progress.events)],
        # the settings the event chain pins and its newest hash (module docstring)
        **({"chain": {"format": CHAIN_FORMAT, "project": pr.chain_fields(), "head": head}}
           if chained else {}),
        "exported_at": utc_now(),
    }


def _margin_entry(s: Session) -> dict[str, object]:
    return s.label_error_margin().to_dict()


#: `certlib.spreadsheet.safe_cell` (the rule of every CSV certlib writes), by this module's name
spreadsheet_safe = safe_cell


def labels_csv(progress: Progress) -> str:
    """The labels in force, in reading order, as CSV text.

    Parameters
    ----------
    progress : Progress
        The project replayed.

    Returns
    -------
    str
        Columns ``row_id, label, annotator, time`` (UTC, ISO 8601), written by
        `certlib.spreadsheet.csv_text`: text a spreadsheet would run starts with ``'``,
        and `certlib.spreadsheet.read_csv` reads the original values back (row ids that
        join the pool's).
    """
    return csv_text([(e.row_id, e.label, e.annotator, e.at) for e in progress.labels],
                    header=["row_id", "label", "annotator", "time"])


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A labelling record written as JSON (the labelling page's download).

    Its content is left to `verify_record`, which reports every problem as a mismatch.

    Parameters
    ----------
    path : str or path-like
        The JSON file.

    Returns
    -------
    dict
        The record as read (values as JSON gives them).

    Raises
    ------
    PoolFileError
        The file is missing, not JSON (or names a key twice), or not a labelling record.
    """
    p = Path(path)
    try:
        rec = json.loads(p.read_text(), object_pairs_hook=unique_keys)
    except FileNotFoundError:
        raise PoolFileError(f"record file {str(p)!r} does not exist") from None
    except (OSError, ValueError) as exc:
        raise PoolFileError(f"record file {str(p)!r} is not valid JSON ({exc})") from None
    refuse_other_kind(rec, name=repr(str(p)), want="labelling")
    if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT:
        raise PoolFileError(f"record file {str(p)!r} is not a certlib labelling record "
                            f"(expected \"format\": \"{RECORD_FORMAT}\")")
    return rec


def _undo_problems(events: Sequence[Event], strict: bool) -> list[str]:
    """Each undo must name the label it cancels (the label event its ``undoes`` names, in
    force, and that event's row) -- a log whose undo names row 406 while it cancels row
    152 misleads its reader; ``strict`` (version 2 on): and be by the annotator who gave
    that label, the store's rule."""
    out: list[str] = []
    stack: list[Event] = []
    for e in events:
        had = bool(stack)
        stack, cancelled = step_labels(stack, e)
        if e.kind != "undo":
            continue
        if cancelled is None:
            out.append(f"undo event {e.seq} cancels no label ("
                       + (f"event {e.undoes} is not a label in force)" if had
                          else "none is in force)"))
        elif e.row_id is not None and e.row_id != cancelled.row_id:
            out.append(f"undo event {e.seq} names row_id {e.row_id!r} but cancels event "
                       f"{cancelled.seq}, the label of row_id {cancelled.row_id!r}")
        elif strict and not same_annotator(e.identity, cancelled.identity):
            out.append(f"undo event {e.seq} is by {e.annotator!r}, but the label it cancels "
                       f"(event {cancelled.seq}) is {cancelled.annotator!r}'s; only they can "
                       "undo it")
    return out


def _file_seed_problems(events: Sequence[Event], pool: Pool) -> list[str]:
    """The labels a record says it took from the pool file (annotator FILE_ANNOTATOR)
    must be its first events, label events only, and labels this pool file holds (the
    agreement of their values is checked with every label in force)."""
    out = []
    from_file = [i for i, e in enumerate(events) if same_annotator(e.annotator, FILE_ANNOTATOR)]
    if from_file != list(range(len(from_file))) or any(
            events[i].kind != "label" for i in from_file):
        out.append(f"events by {FILE_ANNOTATOR!r} must be the label events that open the log "
                   "(the labels a project takes from the pool file when it starts)")
    for rid in (events[i].row_id for i in from_file):
        try:
            held = pool.labels[pool.position(rid)] >= 0
        except (CertlibError, KeyError, TypeError):
            continue  # an unknown row is reported where the labels are replayed
        if not held:
            out.append(f"row_id {rid!r} is labelled by {FILE_ANNOTATOR!r} in the record but "
                       "has no label in the pool file")
    return out


class ChainStore(Protocol):
    """What `verify_record` reads of a label store
    (`certlib.labelling.store.LabelStore`)."""

    def project(self, project_id: int) -> Project:
        """A project's fixed settings.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        Project
            Its settings (`Project.chain_fields`: what its chain pins).
        """

    def events(self, project_id: int) -> tuple[Event, ...]:
        """A project's log.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        tuple of Event
            Its events in sequence order, with their hashes.
        """

    def verify_chain(self, project_id: int) -> ChainCheck:
        """A project's chain recomputed.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        ChainCheck
            Whether every event fits, else the first that does not.
        """


def verify_record(record: object, pool: Pool, store: ChainStore | None = None
                  ) -> Verification:
    """Recompute the verdict of an evidence record from its labels and the pool.

    Checks the pool hash and settings, that the label list is what the event log leaves
    in force, the budget in force, the prelabel bound, every reported outcome (labels
    read, status, selected candidate, guarantee, exact L/H bounds), the label-error
    margin, the reviews and the hash chain (module docstring).  Never raises on a bad
    record: a record whose parts have the wrong JSON types (a string where the
    guarantee's object belongs) is a mismatch too.

    Parameters
    ----------
    record : object
        A record as `make_record` writes it or `read_record` reads it.
    pool : Pool
        The pool file it claims to be about.
    store : LabelStore or None, default None
        The label store the record was exported from: its events and head must then be
        the store's chain of the project, up to the record's last event (a store that
        has gone on since is noted, not a mismatch).

    Returns
    -------
    Verification
        ``ok`` when nothing differs; ``mismatches`` one readable line per difference;
        ``notes`` what is not attested (a record without a chain; a store gone on).
    """
    try:
        return _verify(record, pool, store)
    except (AttributeError, TypeError, KeyError, ValueError, OverflowError) as exc:
        return Verification((f"record unreadable: {type(exc).__name__}: {exc}",))


def _chain_problems(record: dict[str, Any], events: Sequence[Event], pool: Pool
                    ) -> list[str]:
    """The record's own chain: the settings it pins are the record's, and every event
    and the head fit (`check_chain`); an event that does not is named, with the field
    changed when one field alone was (`_edited_field`)."""
    chain = record["chain"]
    if not (isinstance(chain, dict) and chain.get("format") == CHAIN_FORMAT
            and isinstance(chain.get("project"), dict) and isinstance(chain.get("head"), str)):
        return [f"hash chain unreadable: \"chain\" must hold \"format\": {CHAIN_FORMAT}, "
                "the \"project\" settings it pins and its \"head\""]
    pinned: dict[str, Any] = chain["project"]
    out: list[str] = []
    keys = sorted(_CHAIN_KEYS)
    if sorted(pinned) != keys:
        return [f"hash chain: the settings it pins name {sorted(pinned)}, expected {keys}"]
    claims = {"pool_name": record["pool"].get("name"), "n": record["pool"].get("n"),
              "candidates": record["candidates"], "classes": record["classes"],
              "objective": record["objective"], "policy": record["policy"],
              "rule": record["rule"], "seed": record["seed"], "budget": record["budget"],
              "prelabel_bound": record["prelabel_bound"],
              "created_at": record.get("created_at")}
    for key, value in claims.items():
        if pinned[key] != value:
            out.append(f"hash chain: the settings it pins say {key} {pinned[key]!r}, the "
                       f"record {value!r}")
    if str(pinned["tolerance"]) != str(record["tolerance"]):
        out.append(f"hash chain: the settings it pins say tolerance {pinned['tolerance']!r}, "
                   f"the record {record['tolerance']!r}")
    if not (isinstance(pinned["pool_hash"], str) and pool.matches_hash(pinned["pool_hash"])):
        out.append(f"hash chain: the settings it pins name pool hash {pinned['pool_hash']!r}, "
                   f"not this pool's ({pool_hash(pool)})")
    genesis = hashlib.sha256(canonical_json(pinned)).hexdigest()
    pid = pinned["id"]
    check = check_chain(pid, genesis, events)
    if not check.ok:
        assert check.broken_at is not None  # not ok
        out.append(f"hash chain: {check.reason}{_edited_field(pid, genesis, events, check, pool)}")
    elif chain["head"] != check.head:
        out.append(f"hash chain: its head is {chain['head']!r}, but the newest event's hash "
                   f"is {check.head!r}")
    return out


_CHAIN_KEYS = frozenset(Project(0, "", "", 0, (), (), "", "", "", Fraction(0), 0, None, 0,
                                "").chain_fields())


def _edited_field(pid: int, genesis: str, events: Sequence[Event], check: ChainCheck,
                  pool: Pool) -> str:
    """Which field of the event at a break was changed, when one field alone was: the
    hash it was written with is known (its own ``hash`` left as it was, or the next
    event's ``prev_hash`` when its hash was recomputed), so each value the field can
    take (the log's annotators, subjects, times and seqs, the pool's rows and classes)
    is tried.  "" when none restores it (a time set to a new value, several fields)."""
    i = next(k for k, e in enumerate(events) if e.seq == check.broken_at)
    e = events[i]
    target: str | None
    if e.seq != i + 1:  # renumbered: no one field to name
        return ""
    if e.prev_hash == (events[i - 1].hash if i else genesis) and e.hash is not None:
        target = e.hash  # its hash left as written: its fields were changed
    elif i:  # the previous event's hash was recomputed: the next prev_hash holds the old
        i, target = i - 1, e.prev_hash
        e = events[i]
    else:
        return ""
    prev = events[i - 1].hash if i else genesis
    if prev is None or target is None:
        return ""
    values: dict[str, list[object]] = {
        "annotator": sorted({x.annotator for x in events}, key=str),
        "subject": [None, *sorted({x.subject for x in events if x.subject}, key=str)],
        "at": sorted({x.at for x in events}, key=str),
        "kind": list(EVENT_KINDS),
        "label": [python_scalar(c) for c in pool.classes] + [None],
        "row_id": [python_scalar(r) for r in pool.row_ids] + [None],
        "undoes": [None, *range(1, len(events) + 1)],
    }
    for name, options in values.items():
        for v in options:
            if v != getattr(e, name) and event_hash(pid, _with(e, name, v), prev) == target:
                return (f" (event {e.seq}'s {name} was changed: it was written as "
                        f"{v!r}, the record says {getattr(e, name)!r})")
    return ""


def _with(e: Event, name: str, value: object) -> Event:
    """The event with one field set (values from a record are untyped JSON)."""
    changed: Event = replace(e, **{name: value})  # type: ignore[arg-type]
    return changed


def _store_problems(record: dict[str, Any], events: Sequence[Event], store: ChainStore
                    ) -> tuple[list[str], list[str]]:
    """The record against the store's chain of its project: (mismatches, notes)."""
    chain = record.get("chain")
    if not (isinstance(chain, dict) and isinstance(chain.get("project"), dict)):
        return (["the record carries no hash chain, so the store's chain cannot vouch for "
                 "its events"], [])
    pid = chain["project"].get("id")
    try:
        project = store.project(pid)
        stored = store.events(pid)
        check = store.verify_chain(pid)
    except CertlibError as exc:
        return [f"store: {exc}"], []
    out: list[str] = []
    ours = project.chain_fields()
    for key in sorted(set(ours) | set(chain["project"])):
        if ours.get(key) != chain["project"].get(key):
            out.append(f"store: project {pid}'s {key}: the record's chain pins "
                       f"{chain['project'].get(key)!r}, the store {ours.get(key)!r}")
    if not check.ok:
        out.append(f"store: the store's own chain of project {pid} is broken: {check.reason}")
    differ = [(e, s) for e, s in zip(events, stored)
              if any(getattr(e, f) != getattr(s, f) for f in _EVENT_FIELDS)
              or e.seq != s.seq]
    if differ:
        e, s = differ[0]
        fields = [f for f in ("seq", *_EVENT_FIELDS) if getattr(e, f) != getattr(s, f)]
        out.append(f"store: event {s.seq} differs from the store's: " + "; ".join(
            f"{f}: record says {getattr(e, f)!r}, the store {getattr(s, f)!r}"
            for f in fields) + (f" (and {len(differ) - 1} later event(s) differ)"
                                if len(differ) > 1 else ""))
    notes: list[str] = []
    if len(events) > len(stored):
        out.append(f"store: the record holds {len(events) - len(stored)} event(s) after the "
                   f"store's newest (event {len(stored)}) of project {pid}")
    else:
        head = stored[len(events) - 1].hash if events else project.chain_hash
        if chain.get("head") != head:
            out.append(f"store: the record's head is {chain.get('head')!r}, the store's hash "
                       f"at event {len(events)} is {head!r}")
        if len(stored) > len(events):
            notes.append(f"the store holds {len(stored) - len(events)} event(s) of project "
                         f"{pid} after the record's last (event {len(events)}): the record "
                         "was exported before them")
    return out, notes


def _verify(record: object, pool: Pool, store: ChainStore | None = None) -> Verification:
    """Recompute the verdict of an evidence record from its labels and the pool.

    Checks the pool hash and settings, that the label list is what the event log
    leaves in force, the budget in force (the start budget extended by the log's
    ``budget`` events, under which the labels are replayed), the prelabel bound, and
    every reported outcome (labels read, status, selected candidate, guarantee, exact
    L/H bounds).  Labels that the pool
    file itself holds must agree with the record, and labels the record says came from
    the pool file must open its log and be labels the file holds.  Never raises on a bad record:
    every problem is a mismatch.  ``recomputed`` holds ``labels_read``, ``status`` and
    ``selected`` when the labels could be replayed."""
    bad: list[str] = []
    if not isinstance(record, dict):
        return Verification(("not a JSON object",))
    missing = [k for k in _REQUIRED if k not in record]
    if missing or record.get("format") != RECORD_FORMAT:
        bad.append(f"not a {RECORD_FORMAT} record (missing keys: {missing})")
        return Verification(tuple(bad))

    def cmp(what: str, stored: object, recomputed: object) -> None:
        if stored != recomputed:
            bad.append(f"{what}: record says {stored!r}, recomputed {recomputed!r}")

    version = record["version"]
    if isinstance(version, bool) or version not in _READABLE_VERSIONS:
        bad.append(f"version: record says {version!r}; this certlib verifies versions "
                   f"{', '.join(map(str, _READABLE_VERSIONS))}")
        return Verification(tuple(bad))
    stored_hash = record["pool"].get("hash")
    if not (isinstance(stored_hash, str) and pool.matches_hash(stored_hash)):
        # (a record written before pool-hash format 2 names a prob_ pool by its old hash)
        cmp("pool hash", stored_hash, pool_hash(pool))
    cmp("pool size n", record["pool"].get("n"), pool.n)
    cmp("number of candidates K", record["pool"].get("K"), len(pool.names))
    cmp("candidates", record["candidates"], list(pool.names))  # a list, not a dict's keys
    cmp("classes", record["classes"], [python_scalar(c) for c in pool.classes])
    cmp("objective", record["objective"], pool.objective)
    if bad:
        return Verification(tuple(bad))
    try:
        events = [Event(e["seq"], e["kind"], e["row_id"], e["label"], e["annotator"], e["at"],
                        e.get("undoes"), e.get("subject"), e.get("prev_hash"), e.get("hash"))
                  for e in record["events"]]
    except (KeyError, TypeError) as exc:
        bad.append(f"event log unreadable: {exc!r}")
        events = []
    # the start budget extended by the log's budget events (a record written before
    # budget events existed has none, and no "budget_in_force")
    budget = budget_in_force(record["budget"], events)
    cmp("budget in force", record.get("budget_in_force", record["budget"]), budget)
    try:
        tol = exact_fraction(Fraction(str(record["tolerance"])))
        s = Session.start(pool, policy=record["policy"], rule=record["rule"], tolerance=tol,
                          seed=record["seed"], budget=budget)
    except (CertlibError, ValueError, TypeError, ZeroDivisionError) as exc:
        bad.append(f"settings cannot be replayed: {exc}")
        return Verification(tuple(bad))
    cmp("prelabel bound", record["prelabel_bound"],
        prelabel_bound(pool, tolerance=tol).prelabel_bound)

    unknown = sorted({str(e.kind) for e in events if e.kind not in EVENT_KINDS})
    if unknown:  # a kind the replay ignores ("approve") would read as a fact
        bad.append(f"event kind(s) {', '.join(map(repr, unknown))} are not events of a "
                   f"labelling project ({', '.join(EVENT_KINDS)})")
    seqs = [e.seq for e in events]
    if seqs != list(range(1, len(seqs) + 1)):  # the store numbers a project's events so
        bad.append("event sequence numbers are not 1, 2, ..., m: events were removed, "
                   "reordered or renumbered")
    listed, live = list(record["labels"]), [_label_entry(e) for e in labels_in_force(events)]
    if live != listed:
        bad.append("labels differ from the labels the event log leaves in force"
                   + _first_difference(listed, live))
    bad.extend(_file_seed_problems(events, pool))
    bad.extend(_undo_problems(events, strict=version >= 2))
    notes: list[str] = []
    if "chain" in record:
        bad.extend(_chain_problems(record, events, pool))
    elif version >= _CHAINED:
        bad.append(f"a version-{version} record carries its hash chain (\"chain\"); this "
                   "one has none")
    else:
        notes.append(NOT_ATTESTED)
    if store is not None:
        theirs, noted = _store_problems(record, events, store)
        bad.extend(theirs)
        notes.extend(noted)
    posing = sorted({e.annotator for e in events if imitates_file_annotator(e.annotator)})
    if posing:
        bad.append(f"annotator name(s) {', '.join(map(repr, posing))} read as "
                   f"{FILE_ANNOTATOR!r}, the pool file's labels, without being it")

    for i, lab in enumerate(record["labels"]):
        try:
            pos = pool.position(lab["row_id"])
            s = s.observe(pos, lab["label"])
        except (CertlibError, KeyError, TypeError) as exc:
            seq = lab.get("seq") if isinstance(lab, dict) else "?"
            bad.append(f"label {i + 1} (event {seq}) cannot be replayed: {exc}")
            break
        truth = int(pool.labels[pos])
        if truth >= 0 and pool.classes[truth] != pool.classes[pool.class_code(lab["label"])]:
            bad.append(f"label of row_id {lab['row_id']!r} is {lab['label']!r} in the record "
                       f"but {pool.classes[truth]!r} in the pool file")
    g = guarantee(s)
    cmp("labels read", record["labels_read"], s.t)
    cmp("status", record["status"], s.status)
    cmp("certified", record["certified"], s.certified)
    cmp("selected", record["selected"], g.selected)
    cmp("guarantee", record["guarantee"].get("kind"), g.kind)
    cmp("worst-case excess", record["guarantee"].get("worst_case_excess"),
        fraction_text(g.excess))
    cmp("worst-case excess (float)", record["guarantee"].get("worst_case_excess_float"),
        float(g.excess))
    if version >= 2:
        cmp("guarantee text", record["guarantee"].get("text"), g.text())
    elif g.selected not in str(record["guarantee"].get("text")):
        bad.append(f"guarantee text: record says {record['guarantee'].get('text')!r}, which "
                   f"does not name the selected candidate {g.selected!r}")
    L = np.asarray(s.L, dtype=np.int64)
    cmp("lower bounds L", record["bounds"].get("L"), L.tolist())
    cmp("upper bounds H", record["bounds"].get("H"), (-L.T).tolist())
    cmp("bound unit", record["bounds"].get("bound_unit"), int(s.th.unit))
    cmp("scale", record["bounds"].get("scale"), int(s.pool.scale))
    # required (a record without them would hide that one wrong label undoes the answer,
    # or a second annotator's disagreement), except in a version-1 record written before
    # they existed, whose log then holds no review event
    old = version == 1 and not any(e.kind in _REVIEW_KINDS for e in events)
    if not (old and "label_error_margin" not in record):
        cmp("label-error margin", record.get("label_error_margin"), _margin_entry(s))
    if not (old and "reviews" not in record):
        cmp("reviews", record.get("reviews"), [i.to_dict() for i in review_items(events)])
    return Verification(tuple(bad),
                        {"labels_read": s.t, "status": s.status, "selected": g.selected},
                        tuple(notes))


def _first_difference(listed: list[Any], live: list[dict[str, object]]) -> str:
    """Where the label list first differs from the labels in force, naming the field."""
    for i, (a, b) in enumerate(zip(listed, live)):
        if a != b:
            if not isinstance(a, dict):
                return f" (label {i + 1} is not an object)"
            fields = [k for k in b if a.get(k) != b[k]] or sorted(set(a) - set(b))
            return (f" (label {i + 1}, event {b['seq']}: " + "; ".join(
                f"{k}: the list says {a.get(k)!r}, its event {b.get(k)!r}" for k in fields)
                + ")")
    return f" ({len(listed)} listed, {len(live)} in force)"
