"""Append-only labelling store and the evidence record of a labelling session
(SPEC section 12; STYLE rules 6 and 9: the edge that owns sqlite3).

A *project* is one pool (its label-free hash, taken before the first label)
with fixed settings: candidates in priority order, objective, policy, rule,
tolerance, seed, budget and the prelabel bound at start.  Labels are *events*
with a per-project sequence number, a UTC time and an annotator, committed one
transaction per label.  Nothing is ever updated or deleted: `undo_last`
appends an ``undo`` event that cancels the newest label still in force, so the
full history survives in the file.

The state of a labelling session is never stored, only derived:
``store.session(project_id, pool)`` replays the labels in force through
`certlib.Session` (a pure state transition, STYLE rule 6), so a page reload
or a server restart resumes exactly where the annotator stopped.

    store = LabelStore("labels.db")
    pid = store.open_project(pool, "demo.csv", policy="adaptive-pair-sum")
    s = store.session(pid, pool)
    store.append_label(pid, pool.row_ids[s.next_row()], 1, "ana", pool=pool)
    record = store.export_record(pid, pool)       # JSON-ready dict
    verify_record(record, pool).ok                # recomputed from the labels

Concurrency: every write runs in ``BEGIN IMMEDIATE`` on a fresh connection
(WAL mode, busy timeout), so two tabs, two processes or two annotators never
lose a label; ``expect_seq`` lets a page refuse a click made on a stale view.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

import numpy as np

from .errors import CertlibError
from .io import pool_hash
from .policies import get_policy, policy_names
from .prelabel import prelabel_bound
from .session import Session
from .weights import exact_fraction

__all__ = [
    "LabelStore", "Project", "Event", "Guarantee", "Progress", "Verification",
    "guarantee", "verify_record", "default_store_path",
    "StoreError", "UnknownProjectError", "DuplicateLabelError", "PoolMismatchError",
    "StaleStateError", "NothingToUndoError", "RECORD_FORMAT", "RECORD_VERSION",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1
RECORD_FORMAT = "certlib-labelling-record"
RECORD_VERSION = 1
ENV_VAR = "CERTLIB_STORE"
DEFAULT_FILE = "certlib_labels.db"


# ------------------------------------------------------------------ errors
class StoreError(CertlibError):
    """The labelling store refuses an operation (the message says why)."""


class UnknownProjectError(StoreError):
    """No project with this id in the store."""


class DuplicateLabelError(StoreError):
    """The row already has a label in force; undo it first."""


class PoolMismatchError(StoreError):
    """The pool given is not the pool the project was started on."""


class StaleStateError(StoreError):
    """The caller acted on an older view of the project than the store holds."""


class NothingToUndoError(StoreError):
    """Undo with no label in force."""


def default_store_path() -> Path:
    """``$CERTLIB_STORE`` if set, else ``./certlib_labels.db``."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_FILE)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _plain(v):
    """A class value or row id as a JSON scalar (numpy scalars become Python)."""
    return v.item() if isinstance(v, np.generic) else v


def _frac(f: Fraction) -> str:
    return f"{f.numerator}/{f.denominator}" if f.denominator != 1 else str(f.numerator)


# ------------------------------------------------------------ result types
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
        return dict(policy=self.policy, rule=self.rule, tolerance=self.tolerance,
                    seed=self.seed, budget=self.budget)


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


@dataclass(frozen=True)
class Guarantee:
    """What the bounds guarantee for the selected candidate now."""

    kind: str  # "exact", "within tolerance", "budget exhausted", "running", "all labels read"
    selected: str
    excess: Fraction  # worst-case objective gap of `selected` to the best, any completion
    tolerance: Fraction

    @property
    def final(self) -> bool:
        return self.kind != "running"

    def text(self) -> str:
        gap = f"{float(self.excess):.4g}" if self.excess else "0"
        if self.kind == "exact":
            return f"{self.selected} is the best candidate for every completion of the unread labels"
        if self.kind == "within tolerance":
            return (f"{self.selected} is within tau = {float(self.tolerance):g} of the best for every "
                    f"completion (worst-case gap {gap})")
        if self.kind == "running":
            return f"best guess so far {self.selected}, worst-case gap {gap} (not certified yet)"
        return (f"{self.kind}: {self.selected} has the smallest worst-case gap to the best, "
                f"{gap} (exactly {_frac(self.excess)})")


def guarantee(session: Session) -> Guarantee:
    """The guarantee of a session's answer (SPEC section 5)."""
    if session.certified:
        kind = "exact" if session.th.tolerance == 0 else "within tolerance"
    elif session.budget_exhausted:
        kind = "budget exhausted"
    elif session.done:
        kind = "all labels read"
    else:
        kind = "running"
    return Guarantee(kind, session.best_guess, session.excess, session.th.tolerance)


@dataclass(frozen=True)
class Progress:
    """A project replayed: its settings, the log, the session and the bounds path."""

    project: Project
    events: tuple
    session: Session
    lower_path: tuple  # lower_path[t] = K x K lower bounds of r_j - r_k after t labels

    @property
    def guarantee(self) -> Guarantee:
        return guarantee(self.session)

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0

    def rival_bounds(self, k: int | None = None) -> dict:
        """For candidate k (default the best guess): {rival name: (lower list, upper list)} of
        the objective difference obj_j - obj_k after 0, 1, ..., t labels (floats, for plots)."""
        s = self.session
        if k is None:
            k = s.pool.names.index(s.best_guess)
        scale = s.pool.scale
        out = {}
        for j, name in enumerate(s.pool.names):
            if j == k:
                continue
            lo = [float(L[j, k]) / scale for L in self.lower_path]
            hi = [-float(L[k, j]) / scale for L in self.lower_path]
            out[name] = (lo, hi)
        return out


@dataclass(frozen=True)
class Verification:
    """Result of `verify_record`: ok is True when nothing differs."""

    ok: bool
    mismatches: tuple
    labels_read: int
    status: str | None
    selected: str | None


# ------------------------------------------------------------------ schema
_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS projects (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    pool_hash      TEXT NOT NULL,
    pool_name      TEXT NOT NULL,
    n              INTEGER NOT NULL,
    candidates     TEXT NOT NULL,   -- JSON list, tie priority order
    classes        TEXT NOT NULL,   -- JSON list
    objective      TEXT NOT NULL,
    policy         TEXT NOT NULL,
    rule           TEXT NOT NULL,
    tolerance      TEXT NOT NULL,   -- exact fraction "p/q"
    seed           INTEGER NOT NULL,
    budget         INTEGER,         -- NULL = no budget
    prelabel_bound INTEGER NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('label', 'undo')),
    row_id     TEXT,                -- JSON scalar
    label      TEXT,                -- JSON scalar
    annotator  TEXT NOT NULL,
    at         TEXT NOT NULL,
    undoes     INTEGER,
    PRIMARY KEY (project_id, seq)
);
CREATE INDEX IF NOT EXISTS projects_by_pool ON projects (pool_hash);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""


def _in_force(events) -> list:
    """Label events still in force, in reading order (each undo cancels the newest)."""
    stack = []
    for e in events:
        if e.kind == "label":
            stack.append(e)
        elif stack:
            stack.pop()
    return stack


class LabelStore:
    """An SQLite file of labelling projects and their append-only label events."""

    def __init__(self, path=None):
        self.path = Path(path) if path is not None else default_store_path()
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"store path {str(self.path)!r} is a directory; expected a file")
        try:
            with self._connect() as con:
                con.execute("PRAGMA journal_mode=WAL")  # persistent: readers never block the writer
                con.executescript(_SCHEMA)  # idempotent (IF NOT EXISTS)
                con.execute("BEGIN IMMEDIATE")
                rows = con.execute("SELECT version FROM schema_version").fetchall()
                if not rows:
                    con.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
                elif rows[0][0] != SCHEMA_VERSION:
                    con.execute("ROLLBACK")
                    raise StoreError(
                        f"store {str(self.path)!r} has schema version {rows[0][0]}; this certlib "
                        f"reads version {SCHEMA_VERSION}")
                con.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the label store {str(self.path)!r}: {exc}") from None

    # ----------------------------------------------------------- plumbing
    @contextmanager
    def _connect(self):
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            con.execute("PRAGMA foreign_keys=ON")
            con.execute("PRAGMA busy_timeout=30000")
            yield con
        finally:
            con.close()

    @contextmanager
    def _write(self):
        """One write transaction; the lock is taken up front so reads inside it are current."""
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    @staticmethod
    def _project_row(row) -> Project:
        (pid, h, name, n, cands, classes, obj, policy, rule, tol, seed, budget, pre,
         created) = row
        return Project(pid, h, name, n, tuple(json.loads(cands)), tuple(json.loads(classes)),
                       obj, policy, rule, Fraction(tol), seed, budget, pre, created)

    @staticmethod
    def _events_of(con, project_id) -> tuple:
        rows = con.execute(
            "SELECT seq, kind, row_id, label, annotator, at, undoes FROM events "
            "WHERE project_id = ? ORDER BY seq", (project_id,)).fetchall()
        return tuple(Event(seq, kind, None if r is None else json.loads(r),
                           None if lab is None else json.loads(lab), who, at, und)
                     for seq, kind, r, lab, who, at, und in rows)

    def _get(self, con, project_id) -> Project:
        row = con.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone()
        if row is None:
            raise UnknownProjectError(
                f"project_id {project_id!r} is not in the label store {str(self.path)!r}")
        return self._project_row(row)

    @staticmethod
    def _check_pool(project: Project, pool) -> None:
        h = pool_hash(pool)
        if h != project.pool_hash:
            raise PoolMismatchError(
                f"pool hash {h} does not match project {project.id} "
                f"({project.pool_name!r}), which was started on pool hash {project.pool_hash}; "
                "open the same pool file (predictions, confidences, row ids) it was started on")

    # ----------------------------------------------------------- projects
    def create_project(self, pool, name: str, policy: str = "adaptive-pair-sum",
                       tolerance=0.0, budget: int | None = None, seed: int = 0,
                       rule: str = "shared") -> int:
        """Start a new project on ``pool``; returns its id.  The settings are checked by
        starting a session, and the pool hash and prelabel bound are taken now, before
        any label."""
        tol = exact_fraction(tolerance)
        Session.start(pool, policy=policy, rule=rule, tolerance=tol, seed=seed, budget=budget)
        policy_name = get_policy(policy).name
        if policy_name not in policy_names():  # a resumed project looks it up by name
            raise StoreError("policy must be a registered policy name to be stored; "
                             f"got {policy!r}")
        pre = prelabel_bound(pool, tolerance=tol).prelabel_bound
        with self._write() as con:
            cur = con.execute(
                "INSERT INTO projects (pool_hash, pool_name, n, candidates, classes, objective, "
                "policy, rule, tolerance, seed, budget, prelabel_bound, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (pool_hash(pool), str(name), pool.n, json.dumps(list(pool.names)),
                 json.dumps([_plain(c) for c in pool.classes]), pool.objective, policy_name,
                 rule, _frac(tol), int(seed), None if budget is None else int(budget), pre,
                 _now()))
            return int(cur.lastrowid)

    def find_project(self, pool, policy: str = "adaptive-pair-sum", tolerance=0.0,
                     budget: int | None = None, seed: int = 0, rule: str = "shared"):
        """Id of the newest project on this pool with these settings, or None."""
        args = (pool_hash(pool), policy, rule, _frac(exact_fraction(tolerance)), int(seed))
        with self._connect() as con:
            row = con.execute(
                "SELECT id FROM projects WHERE pool_hash = ? AND policy = ? AND rule = ? "
                "AND tolerance = ? AND seed = ? AND budget IS ? ORDER BY id DESC LIMIT 1",
                args + (None if budget is None else int(budget),)).fetchone()
        return None if row is None else int(row[0])

    def open_project(self, pool, name: str, policy: str = "adaptive-pair-sum", tolerance=0.0,
                     budget: int | None = None, seed: int = 0, rule: str = "shared") -> int:
        """Resume the project on this pool with these settings, or create it."""
        pid = self.find_project(pool, policy, tolerance, budget, seed, rule)
        if pid is None:
            pid = self.create_project(pool, name, policy, tolerance, budget, seed, rule)
        return pid

    def project(self, project_id: int) -> Project:
        with self._connect() as con:
            return self._get(con, project_id)

    def projects(self, pool=None) -> tuple:
        """Every project (or those on ``pool``), oldest first."""
        with self._connect() as con:
            if pool is None:
                rows = con.execute("SELECT * FROM projects ORDER BY id").fetchall()
            else:
                rows = con.execute("SELECT * FROM projects WHERE pool_hash = ? ORDER BY id",
                                   (pool_hash(pool),)).fetchall()
        return tuple(self._project_row(r) for r in rows)

    # ------------------------------------------------------------- events
    def events(self, project_id: int) -> tuple:
        """Every event of a project, labels and undos, in sequence order."""
        with self._connect() as con:
            self._get(con, project_id)
            return self._events_of(con, project_id)

    def labels(self, project_id: int) -> tuple:
        """The label events in force, in reading order."""
        return tuple(_in_force(self.events(project_id)))

    @staticmethod
    def _check_seq(events, expect_seq) -> None:
        last = events[-1].seq if events else 0
        if expect_seq is not None and expect_seq != last:
            raise StaleStateError(
                f"the project changed since this view was drawn (expected last event "
                f"{expect_seq}, the store has {last}); nothing was saved, reload to continue")

    def append_label(self, project_id: int, row_id, label, annotator: str, *, pool,
                     expect_seq: int | None = None) -> Event:
        """Record one label, committed at once.  Refuses a row that already has a label in
        force (DuplicateLabelError), a label outside the class set, a row id not in the
        pool and a different pool.  ``pool`` is required: it says which row an id names
        ("1" and 1 are the same row), so a row can never be labelled twice."""
        annotator = str(annotator).strip()
        if not annotator:
            raise StoreError("annotator must be a non-empty name; it goes into the evidence record")
        row_id, label = _plain(row_id), _plain(label)
        with self._write() as con:
            project = self._get(con, project_id)
            self._check_pool(project, pool)
            row_id = pool.row_ids[pool.position(row_id)]
            label = pool.classes[pool.class_code(label)]
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            for e in _in_force(events):
                if e.row_id == row_id:
                    raise DuplicateLabelError(
                        f"row_id {row_id!r} already has label {e.label!r} (event {e.seq}, "
                        f"{e.annotator}, {e.at}); undo it before labelling the row again")
            seq = (events[-1].seq if events else 0) + 1
            ev = Event(seq, "label", _plain(row_id), _plain(label), annotator, _now())
            con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                        (project_id, seq, "label", json.dumps(ev.row_id), json.dumps(ev.label),
                         annotator, ev.at))
        return ev

    def undo_last(self, project_id: int, annotator: str = "", *,
                  expect_seq: int | None = None) -> Event:
        """Cancel the newest label in force by appending an ``undo`` event (nothing is deleted)."""
        with self._write() as con:
            self._get(con, project_id)
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            live = _in_force(events)
            if not live:
                raise NothingToUndoError(f"project {project_id} has no label to undo")
            target = live[-1]
            seq = events[-1].seq + 1
            ev = Event(seq, "undo", target.row_id, target.label, str(annotator).strip(), _now(),
                       target.seq)
            con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (project_id, seq, "undo", json.dumps(ev.row_id), json.dumps(ev.label),
                         ev.annotator, ev.at, target.seq))
        return ev

    # ------------------------------------------------------------ replay
    def progress(self, project_id: int, pool, since: Progress | None = None) -> Progress:
        """Replay the labels in force through a fresh Session (pure transitions).

        ``since``, an earlier Progress of the same project, is extended label by label
        when the log only grew by labels since then (a page's next click), instead of
        replaying from the start; the result is the same state either way."""
        project = self.project(project_id)
        self._check_pool(project, pool)
        events = self.events(project_id)
        old = since.events if since is not None and since.project == project else None
        if old is not None and events[:len(old)] == old and all(
                e.kind == "label" for e in events[len(old):]):
            s, path, new = since.session, list(since.lower_path), events[len(old):]
        else:
            s = Session.start(pool, **project.session_kwargs())
            path, new = [s.lower()], _in_force(events)
        for e in new:
            s = s.observe(pool.position(e.row_id), e.label)
            path.append(s.lower())
        return Progress(project, events, s, tuple(path))

    def session(self, project_id: int, pool) -> Session:
        """The labelling session of a project, rebuilt from its events."""
        return self.progress(project_id, pool).session

    # ------------------------------------------------------------ record
    def export_record(self, project_id: int, pool) -> dict:
        """Evidence record of SPEC section 12, as a JSON-ready dict."""
        p = self.progress(project_id, pool)
        return _record(p)


def _record(p: Progress) -> dict:
    pr, s = p.project, p.session
    g = guarantee(s)
    L = np.asarray(s.L, dtype=np.int64)
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "pool": {"hash": pr.pool_hash, "name": pr.pool_name, "n": pr.n, "K": len(pr.candidates)},
        "candidates": list(pr.candidates),  # tie priority order: earlier wins a tie
        "classes": list(pr.classes),
        "objective": pr.objective,
        "tolerance": _frac(pr.tolerance),
        "budget": pr.budget,
        "policy": pr.policy,
        "seed": pr.seed,
        "rule": pr.rule,
        "prelabel_bound": pr.prelabel_bound,
        "created_at": pr.created_at,
        "labels": [{"seq": e.seq, "row_id": e.row_id, "label": e.label,
                    "annotator": e.annotator, "at": e.at} for e in _in_force(p.events)],
        "events": [e.to_dict() for e in p.events],
        "labels_read": s.t,
        "status": s.status,
        "certified": s.certified,
        "selected": g.selected,
        "guarantee": {"kind": g.kind, "worst_case_excess": _frac(g.excess),
                      "worst_case_excess_float": float(g.excess), "text": g.text()},
        # exact integer bounds of r_j - r_k in scaled-risk units at stop:
        # objective difference = value / (bound_unit * scale)
        "bounds": {"L": L.tolist(), "H": (-L.T).tolist(), "bound_unit": int(s.th.unit),
                   "scale": int(s.pool.scale)},
        "exported_at": _now(),
    }


_REQUIRED = ("format", "version", "pool", "candidates", "classes", "objective", "tolerance",
             "budget", "policy", "seed", "rule", "prelabel_bound", "labels", "events",
             "labels_read", "status", "certified", "selected", "guarantee", "bounds")


def verify_record(record: dict, pool) -> Verification:
    """Recompute the verdict of an evidence record from its labels and the pool.

    Checks the pool hash and settings, that the label list is what the event log
    leaves in force, the prelabel bound, and every reported outcome (labels read,
    status, selected candidate, guarantee, exact L/H bounds).  Labels that the pool
    file itself holds must agree with the record.  Never raises on a bad record:
    every problem is a mismatch."""
    bad = []
    missing = [k for k in _REQUIRED if k not in record]
    if missing or record.get("format") != RECORD_FORMAT:
        bad.append(f"not a {RECORD_FORMAT} record (missing keys: {missing})")
        return Verification(False, tuple(bad), 0, None, None)

    def cmp(what, stored, recomputed):
        if stored != recomputed:
            bad.append(f"{what}: record says {stored!r}, recomputed {recomputed!r}")

    cmp("pool hash", record["pool"].get("hash"), pool_hash(pool))
    cmp("candidates", list(record["candidates"]), list(pool.names))
    cmp("classes", list(record["classes"]), [_plain(c) for c in pool.classes])
    cmp("objective", record["objective"], pool.objective)
    if bad:
        return Verification(False, tuple(bad), 0, None, None)
    try:
        tol = exact_fraction(Fraction(str(record["tolerance"])))
        s = Session.start(pool, policy=record["policy"], rule=record["rule"], tolerance=tol,
                          seed=record["seed"], budget=record["budget"])
    except (CertlibError, ValueError, TypeError, ZeroDivisionError) as exc:
        bad.append(f"settings cannot be replayed: {exc}")
        return Verification(False, tuple(bad), 0, None, None)
    cmp("prelabel bound", record["prelabel_bound"], prelabel_bound(pool, tolerance=tol).prelabel_bound)

    try:
        events = [Event(e["seq"], e["kind"], e["row_id"], e["label"], e["annotator"], e["at"],
                        e.get("undoes")) for e in record["events"]]
    except (KeyError, TypeError) as exc:
        bad.append(f"event log unreadable: {exc!r}")
        events = []
    seqs = [e.seq for e in events]
    if seqs != sorted(set(seqs)):
        bad.append("event sequence numbers are not strictly increasing")
    live = [{"seq": e.seq, "row_id": e.row_id, "label": e.label, "annotator": e.annotator,
             "at": e.at} for e in _in_force(events)]
    if live != list(record["labels"]):
        bad.append("labels differ from the labels the event log leaves in force")

    for i, lab in enumerate(record["labels"]):
        try:
            pos = pool.position(lab["row_id"])
            s = s.observe(pos, lab["label"])
        except (CertlibError, KeyError, TypeError) as exc:
            bad.append(f"label {i + 1} (event {lab.get('seq') if isinstance(lab, dict) else '?'}) "
                       f"cannot be replayed: {exc}")
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
    cmp("worst-case excess", record["guarantee"].get("worst_case_excess"), _frac(g.excess))
    L = np.asarray(s.L, dtype=np.int64)
    cmp("lower bounds L", record["bounds"].get("L"), L.tolist())
    cmp("upper bounds H", record["bounds"].get("H"), (-L.T).tolist())
    return Verification(not bad, tuple(bad), s.t, s.status, g.selected)
