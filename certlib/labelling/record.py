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
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..core._values import fraction_text, python_scalar
from ..errors import CertlibError, PoolFileError
from .events import (EVENT_KINDS, FILE_ANNOTATOR, Event, budget_in_force,
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
#: its log holds no review event
RECORD_VERSION = 2
_READABLE_VERSIONS = (1, 2)
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
        JSON-ready: settings, labels in force, the event log, the exact bounds at the
        stop, the guarantee, the label-error margin and the reviews.
    """
    pr, s = progress.project, progress.session
    g = guarantee(s)
    L = np.asarray(s.L, dtype=np.int64)
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
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
        "exported_at": utc_now(),
    }


def _margin_entry(s: Session) -> dict[str, object]:
    return s.label_error_margin().to_dict()


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A CSV cell a spreadsheet will not run as a formula (OWASP "CSV injection").

    Text starting with ``= + - @``, a tab or a carriage return gets a leading ``'``.
    Numbers stay numbers (a label -1 is the number -1), so only text is ever prefixed.

    Parameters
    ----------
    value : object
        A cell.

    Returns
    -------
    object
        The cell, prefixed when it is text a spreadsheet would run.

    Examples
    --------

    >>> print(spreadsheet_safe('=HYPERLINK("http://x")'))
    '=HYPERLINK("http://x")
    >>> spreadsheet_safe(-1), spreadsheet_safe("-1"), spreadsheet_safe("ana")
    (-1, "'-1", 'ana')
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def labels_csv(progress: Progress) -> str:
    """The labels in force, in reading order, as CSV text.

    Parameters
    ----------
    progress : Progress
        The project replayed.

    Returns
    -------
    str
        Columns ``row_id, label, annotator, time`` (UTC, ISO 8601), every text cell made
        `spreadsheet_safe`.
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["row_id", "label", "annotator", "time"])
    for e in progress.labels:
        w.writerow([spreadsheet_safe(v) for v in (e.row_id, e.label, e.annotator, e.at)])
    return out.getvalue()


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
    """Each undo must name the label it cancels (the newest in force: its row and its
    event) -- a log whose undo names row 406 while it cancels row 152 misleads its reader;
    ``strict`` (version-2 records): and be by the annotator who gave that label, the
    store's rule."""
    out: list[str] = []
    stack: list[Event] = []
    for e in events:
        stack, cancelled = step_labels(stack, e)
        if e.kind != "undo":
            continue
        if cancelled is None:
            out.append(f"undo event {e.seq} cancels no label (none is in force)")
        elif (e.row_id is not None and e.row_id != cancelled.row_id) or (
                e.undoes is not None and e.undoes != cancelled.seq):
            out.append(f"undo event {e.seq} names row_id {e.row_id!r} (event {e.undoes}) but "
                       f"cancels the newest label in force, row_id {cancelled.row_id!r} "
                       f"(event {cancelled.seq})")
        elif strict and not same_annotator(e.annotator, cancelled.annotator):
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


def verify_record(record: object, pool: Pool) -> Verification:
    """Recompute the verdict of an evidence record from its labels and the pool.

    Checks the pool hash and settings, that the label list is what the event log leaves
    in force, the budget in force, the prelabel bound, every reported outcome (labels
    read, status, selected candidate, guarantee, exact L/H bounds), the label-error
    margin and the reviews.  Never raises on a bad record: a record whose parts have the
    wrong JSON types (a string where the guarantee's object belongs) is a mismatch too.

    Parameters
    ----------
    record : object
        A record as `make_record` writes it or `read_record` reads it.
    pool : Pool
        The pool file it claims to be about.

    Returns
    -------
    Verification
        ``ok`` when nothing differs; ``mismatches`` one readable line per difference.
    """
    try:
        return _verify(record, pool)
    except (AttributeError, TypeError, KeyError, ValueError, OverflowError) as exc:
        return Verification((f"record unreadable: {type(exc).__name__}: {exc}",))


def _verify(record: object, pool: Pool) -> Verification:
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
                        e.get("undoes")) for e in record["events"]]
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
    if [_label_entry(e) for e in labels_in_force(events)] != list(record["labels"]):
        bad.append("labels differ from the labels the event log leaves in force")
    bad.extend(_file_seed_problems(events, pool))
    bad.extend(_undo_problems(events, strict=version >= 2))
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
                        {"labels_read": s.t, "status": s.status, "selected": g.selected})
