"""The append-only labelling store: projects and their label events in an SQLite file
(SPEC section 12; STYLE rules 6 and 9: the edge that owns sqlite3).

A *project* is one pool (its label-free hash, taken before the first label)
with fixed settings: candidates in priority order, objective, policy, rule,
tolerance, seed, budget and the prelabel bound at start.  Labels are *events*
with a per-project sequence number, a UTC time and an annotator, committed one
transaction per label.  Nothing is ever updated or deleted: `undo_last`
appends an ``undo`` event that cancels the newest label still in force, so the
full history survives in the file.  The values (`Project`, `Event`) live in
`certlib.labelling.events`.

Skips are events too: `skip_row` appends a ``skip`` event for a row the annotator
cannot label now, and the policy passes over it while other unread rows are left
(`Session.next_row(skip=...)`); `unskip_all` appends an ``unskip`` event that makes
every skipped row available again, and a skipped row also comes back by itself when
only skipped rows are left.  A skip never touches the labels, so it changes no bound,
no certificate and no evidence-record verdict (the record keeps it in its event log).

A project's budget is fixed at start but may be *extended*: `extend_budget`
appends a ``budget`` event with the new budget (or None, no budget), and the replay uses
the start budget overridden by the last such event, so a session whose budget ran out
continues with the same labels instead of a new project starting at 0.
Stores of schema version 1 (labels and undos only), 2 (no budget events), 3 (no review
events), 4 (no keep events) or 5 (no hash chain) are migrated on opening: the events are
copied unchanged into a table that also admits the new kinds, and the hash chain is
computed over them in sequence order.  A migrated history is attested from the migration
on: its chain proves that no event was rewritten after the migration, not before.

Hash chain (schema version 6): every event row stores ``prev_hash`` and ``hash`` (hex
SHA-256, `certlib.labelling.events.event_hash`): ``hash`` covers the project id, seq,
kind, row id, label, annotator, subject, time, ``undoes`` and ``prev_hash``; the first
event's ``prev_hash`` is the hash of the project's fixed settings
(`certlib.labelling.events.Project.chain_hash`), so the chain pins the project too.
Every append computes its hash inside its write transaction from the newest event's, so
the store's chain is one line; `LabelStore.chain_head` is the newest hash and
`LabelStore.verify_chain` recomputes it, naming the first event that does not fit (an
UPDATE made past the triggers).  A chain recomputed after a rewrite fits again: what it
is checked against is a head kept elsewhere (an exported evidence record, a note).

Who: every method taking an ``annotator`` takes a name (local mode) or an
`Identity` (signed in: ``name`` shown, ``subject`` the identity provider's ``sub``,
stored with the event and hashed with it).  `undo_last` takes back the annotator's own
newest label in force, wherever it stands among the colleagues' labels.

Review: `queue_review` appends a ``review_request`` event per row to be checked
by a second annotator, `append_review` that annotator's label (a ``review`` event, which
changes no bound), and `correct_label` a ``correct`` event that replaces the label of a
row in force, keeping its place in the reading order: the session replays with it;
`keep_label` a ``keep`` event that decides a disagreement for the label in force
(`certlib.labelling.reviews` reads the review state).

The state of a labelling session is never stored, only derived:
``store.resume(project_id, pool)`` replays the labels in force through
`certlib.Session` (a pure state transition, STYLE rule 6; `certlib.labelling.progress`),
so a page reload or a server restart resumes exactly where the annotator stopped.

    store = LabelStore("labels.db")
    pid = store.open_project(pool, "demo.csv", policy="adaptive-pair-sum")
    s = store.session(pid, pool)
    store.append_label(pid, pool.row_ids[s.next_row()], 1, "ana", pool=pool)
    store.skip_row(pid, row_id, "ana", pool=pool)     # pass over a row for now
    store.unskip_all(pid, "ana")                      # every skipped row back
    store.extend_budget(pid, 200, "ana")              # more labels for the same project
    record = store.export_record(pid, pool)       # JSON-ready dict (certlib.labelling.record)
    verify_record(record, pool).ok                # recomputed from the labels

Concurrency: every write runs in ``BEGIN IMMEDIATE`` on a fresh connection
(WAL mode, busy timeout), so two tabs, two processes or two annotators never
lose a label; ``expect_seq`` lets a page refuse a click made on a stale view.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

import numpy as np

from . import _sqlite
from ..core._values import ClassValue, fraction_text, python_scalar
from ..errors import CertlibError
from .events import (FILE_ANNOTATOR, ChainCheck, Event, Identity, Project, budget_in_force,
                     check_chain, event_hash, imitates_file_annotator, labels_in_force,
                     same_annotator, skipped_rows, utc_now)
from ..policies import get_policy, policy_names
from ..core.pool import UNREAD, Pool, pool_hash
from ..certificates.prelabel import prelabel_bound
from .progress import Progress
from .record import make_record, verify_record
from .session import Session
from ..core.weights import exact_fraction

# Re-exported: Project, Event, Identity and ChainCheck from certlib.labelling.events (the
# store's methods take or return them), and verify_record from certlib.labelling.record
# (docs/annotator.md imports it from certlib.labelling.store).
__all__ = [
    "SCHEMA_VERSION",
    "BudgetUsedError",
    "ChainCheck",
    "DuplicateLabelError",
    "Event",
    "Identity",
    "FILE_ANNOTATOR",
    "file_labels",
    "NothingSkippedError",
    "LabelStore",
    "NothingToUndoError",
    "PoolMismatchError",
    "Project",
    "StaleStateError",
    "StoreError",
    "UnknownProjectError",
    "default_store_path",
    "verify_record",
]

SCHEMA_VERSION = 6  # 2: skip and unskip events; 3: budget events; 4: review events;
# 5: keep events; 6: the hash chain and the annotator's subject
ENV_VAR = "CERTLIB_STORE"
DEFAULT_FILE = "certlib_labels.db"


# ------------------------------------------------------------------ errors
class StoreError(CertlibError):
    """The labelling store refuses an operation (the message says why).

    A store file that cannot be read or written now (a full disk, a read-only file, a
    lock held by another process) raises `certlib.errors.StoreAccessError` instead; both
    are a `CertlibError`, which the pages and the command line catch."""


class UnknownProjectError(StoreError):
    """No project with this id in the store."""


class DuplicateLabelError(StoreError):
    """The row already has a label in force; undo it first."""


class PoolMismatchError(StoreError):
    """The pool given is not the pool the project was started on."""


class BudgetUsedError(StoreError):
    """The project's labels in force already fill its budget."""


class StaleStateError(StoreError):
    """The caller acted on an older view of the project than the store holds."""


class NothingToUndoError(StoreError):
    """Undo with no label in force."""


class NothingSkippedError(StoreError):
    """Unskip with no row skipped."""


def _scalar(value: object) -> ClassValue:
    """A row id or class value of the pool as the Python scalar the log stores (a numpy
    scalar unwrapped; `python_scalar` is typed for any value, these are class values)."""
    return cast(ClassValue, python_scalar(value))


def file_labels(pool: Pool) -> list[tuple[ClassValue, ClassValue]]:
    """The labels the pool file holds, in row order.

    What a project started ``from_file`` takes as its first label events
    (`certlib.labelling.events.file_seed`).

    Parameters
    ----------
    pool : Pool
        A pool, possibly with some labels.

    Returns
    -------
    list of (row id, label)
        One pair per labelled row.
    """
    return [(_scalar(pool.row_ids[i]), _scalar(pool.classes[pool.labels[i]]))
            for i in np.flatnonzero(pool.labels != UNREAD).tolist()]


def _annotator_name(annotator: object) -> str:
    """A person's name for an event (of an `Identity`, its ``name``): not empty, and not
    `FILE_ANNOTATOR`."""
    name = str(annotator.name if isinstance(annotator, Identity) else annotator).strip()
    if not name:
        raise StoreError("annotator must be a non-empty name; it goes into the evidence record")
    if same_annotator(name, FILE_ANNOTATOR) or imitates_file_annotator(name):
        raise StoreError(f"{FILE_ANNOTATOR!r} names the labels a project takes from the pool "
                         f"file, and {name!r} reads as it; choose another annotator name")
    return name


def _identity(annotator: str | Identity) -> Identity:
    """Who appends an event: a plain name keeps no subject (local mode); a signed-in
    `Identity` keeps its subject and issuer, its name checked as `_annotator_name`."""
    name = _annotator_name(annotator)
    if isinstance(annotator, Identity):
        return Identity(name, annotator.subject or None, annotator.issuer or None)
    return Identity(name)


def default_store_path() -> Path:
    """Where the label store lives by default: ``$CERTLIB_STORE`` if set, else
    ``./certlib_labels.db``."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_FILE)


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
    created_at     TEXT NOT NULL,
    chain_pool_hash TEXT            -- the pool hash the chain pins, once pool_hash is rewritten
);
CREATE TABLE IF NOT EXISTS events (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('label', 'undo', 'skip', 'unskip', 'budget',
                                         'review_request', 'review', 'correct',
                                         'keep')),
    row_id     TEXT,                -- JSON scalar
    label      TEXT,                -- JSON scalar; of a budget event: the new budget
    annotator  TEXT NOT NULL,
    at         TEXT NOT NULL,
    undoes     INTEGER,
    subject    TEXT,                -- the identity provider's sub; NULL in local mode
    prev_hash  TEXT NOT NULL,       -- hex SHA-256: the previous event's hash (module docstring)
    hash       TEXT NOT NULL,
    PRIMARY KEY (project_id, seq)
);
CREATE INDEX IF NOT EXISTS projects_by_pool ON projects (pool_hash);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""
_EVENTS_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS events"):
                        _SCHEMA.index("CREATE INDEX")]
_TRIGGERS = _SCHEMA[_SCHEMA.index("CREATE TRIGGER"):]


_EVENT_COLUMNS = ("project_id, seq, kind, row_id, label, annotator, at, undoes, subject, "
                  "prev_hash, hash")


def _migrate(con: sqlite3.Connection, version: int) -> None:
    """Version 1 admitted only label and undo events, version 2 no budget events, version 3
    no review events, version 4 no keep events (a CHECK constraint SQLite cannot alter),
    version 5 had no hash chain: copy every event unchanged into a current table, inside
    the caller's transaction, so the history is the same row for row, and chain it in
    sequence order (no subject: a name was all they held)."""
    con.execute("DROP TRIGGER IF EXISTS events_no_update")
    con.execute("DROP TRIGGER IF EXISTS events_no_delete")
    con.execute(f"ALTER TABLE events RENAME TO events_v{version}")
    con.execute(_EVENTS_TABLE)
    if "chain_pool_hash" not in {r[1] for r in con.execute("PRAGMA table_info(projects)")}:
        con.execute("ALTER TABLE projects ADD COLUMN chain_pool_hash TEXT")
    prev: dict[int, str] = {}
    for pid, seq, kind, rid, lab, who, at, undoes in con.execute(
            "SELECT project_id, seq, kind, row_id, label, annotator, at, undoes "
            f"FROM events_v{version} ORDER BY project_id, seq").fetchall():
        if pid not in prev:
            prev[pid] = LabelStore._genesis(con, pid)
        ev = Event(seq, kind, None if rid is None else json.loads(rid),
                   None if lab is None else json.loads(lab), who, at, undoes)
        h = event_hash(pid, ev, prev[pid])
        con.execute(f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                    "NULL, ?, ?)", (pid, seq, kind, rid, lab, who, at, undoes, prev[pid], h))
        prev[pid] = h
    con.execute(f"DROP TABLE events_v{version}")
    for trigger in _TRIGGERS.split("END;")[:-1]:
        con.execute(trigger + "END;")
    con.execute(f"UPDATE schema_version SET version = {SCHEMA_VERSION}")


class LabelStore:
    """An SQLite file of labelling projects and their append-only label events.

    Opening creates the file and its tables if needed, and brings a store of an older
    schema version up to date (module docstring).

    Parameters
    ----------
    path : str, path-like or None, default None
        The store's file (None: `default_store_path`).
    read_only : bool, default False
        Open it read-only even when it could be written.  A file this process cannot
        write (its permissions, a read-only folder or disk) always opens read-only.

    Raises
    ------
    StoreError
        The path is a directory, the file is not an SQLite database, or its schema
        version is one this certlib cannot read.
    certlib.errors.StoreReadOnlyError
        The file cannot be written and does not exist yet, holds no label store, or
        has an older schema version (migrating it needs a write).
    certlib.errors.StoreAccessError
        The file cannot be opened now (`certlib.errors.StoreLockedError`: another
        process holds its lock; `certlib.errors.StoreFullError`: no room to create it).

    Attributes
    ----------
    path : Path
        The store's file.
    read_only : bool
        Whether the store was opened read-only: every read works, every write raises
        `certlib.errors.StoreReadOnlyError` (nothing is saved).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.db")
    >>> LabelStore(path).read_only, LabelStore(path, read_only=True).read_only
    (False, True)
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 read_only: bool = False) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self._mode: _sqlite.Mode = _sqlite.open_schema(
            self.path, _SCHEMA, "schema_version", SCHEMA_VERSION, StoreError, "label store",
            migrate=_migrate, migratable=tuple(range(1, SCHEMA_VERSION)), read_only=read_only)
        self.read_only: bool = self._mode != "rw"
        self._recognised: set[str] = set()  # pool hashes whose old-format projects are rewritten

    # ----------------------------------------------------------- plumbing
    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        """One connection for reads; an SQLite failure is a `StoreAccessError`."""
        return _sqlite.connect(self.path, self._mode, what="label store")

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction; the lock is taken up front so reads inside it are current.
        A read-only store raises `StoreReadOnlyError` here, before anything is opened."""
        return _sqlite.write(self.path, self._mode, what="label store")

    @staticmethod
    def _project_row(row: Sequence[Any]) -> Project:  # an SQLite row: its values untyped
        (pid, h, name, n, cands, classes, obj, policy, rule, tol, seed, budget, pre,
         created, pinned) = row
        return Project(pid, h, name, n, tuple(json.loads(cands)), tuple(json.loads(classes)),
                       obj, policy, rule, Fraction(tol), seed, budget, pre, created, pinned)

    @staticmethod
    def _events_of(con: sqlite3.Connection, project_id: int) -> tuple[Event, ...]:
        rows = con.execute(
            "SELECT seq, kind, row_id, label, annotator, at, undoes, subject, prev_hash, hash "
            "FROM events WHERE project_id = ? ORDER BY seq", (project_id,)).fetchall()
        return tuple(Event(seq, kind, None if r is None else json.loads(r),
                           None if lab is None else json.loads(lab), who, at, und, sub, prev, h)
                     for seq, kind, r, lab, who, at, und, sub, prev, h in rows)

    @staticmethod
    def _genesis(con: sqlite3.Connection, project_id: int) -> str:
        """The ``prev_hash`` of the project's first event (`Project.chain_hash`)."""
        row = con.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone()
        if row is None:
            raise UnknownProjectError(f"project_id {project_id!r} is not in the label store")
        return LabelStore._project_row(row).chain_hash

    def _get(self, con: sqlite3.Connection, project_id: int) -> Project:
        row = con.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone()
        if row is None:
            raise UnknownProjectError(
                f"project_id {project_id!r} is not in the label store {str(self.path)!r}")
        return self._project_row(row)

    def _recognise(self, pool: Pool) -> None:
        """Rewrite to the pool's hash every project that names this ``prob_`` pool by the
        format-1 hash of an earlier build (`certlib.core.pool.Pool.matches_hash`), once per
        store and pool.  The projects table is not part of the append-only log: a
        project's hash only says which pool it is on, and after this every lookup by
        `pool_hash` finds it and its records carry the hash that verifies on any
        machine.  Cheap when there is nothing to do: the old hashes are computed only
        when a project of the same size and candidates names another hash."""
        h = pool_hash(pool)
        if pool.derived is None or h in self._recognised or self.read_only:
            return  # a read-only store is read as it is: its old-format projects stay so
        with self._connect() as con:
            others = {r[0] for r in con.execute(
                "SELECT DISTINCT pool_hash FROM projects WHERE n = ? AND candidates = ? "
                "AND pool_hash != ?", (pool.n, json.dumps(list(pool.names)), h))}
        old = sorted(others & set(pool.legacy_hashes)) if others else []
        if old:
            with self._write() as con:  # the chain keeps pinning the hash it started on
                con.executemany("UPDATE projects SET chain_pool_hash = COALESCE("
                                "chain_pool_hash, pool_hash), pool_hash = ? WHERE pool_hash = ?",
                                [(h, o) for o in old])
        self._recognised.add(h)

    @staticmethod
    def _check_pool(project: Project, pool: Pool) -> None:
        h = pool_hash(pool)
        if not pool.matches_hash(project.pool_hash):
            raise PoolMismatchError(
                f"pool hash {h} does not match project {project.id} "
                f"({project.pool_name!r}), which was started on pool hash {project.pool_hash}; "
                "open the same pool file (predictions, confidences, row ids) it was started on")

    # ----------------------------------------------------------- projects
    def create_project(self, pool: Pool, name: str, *, policy: str = "adaptive-pair-sum",
                       tolerance: float | Fraction = 0.0, budget: int | None = None,
                       seed: int = 0, rule: str = "shared", from_file: bool = False) -> int:
        """Start a new project on ``pool``.

        The settings are checked by starting a session, and the pool hash and prelabel
        bound are taken now, before any label.

        Parameters
        ----------
        pool : Pool
            The pool to label.
        name : str
            The name the pool is shown and recorded under (its file name).
        policy : str, default "adaptive-pair-sum"
            A registered policy name (a resumed project looks it up by name).
        tolerance : float or Fraction, default 0.0
            The stopping test's tau >= 0.
        budget : int or None, default None
            Most labels to read (None: no budget); may be extended later.
        seed : int, default 0
            Seed of the policy's random choices.
        rule : {"shared", "separate", "centered"}, default "shared"
            The bound rule.
        from_file : bool, default False
            The labels the pool file already holds count as read.  They are written as
            the project's first label events, in row order, by the annotator
            `FILE_ANNOTATOR` (a name no person may use), in the same transaction: the
            policy then asks only for unlabelled rows, the evidence record lists them,
            and a budget counts them.  Nobody can undo them, and they are not reviewed:
            the record is checked against the file, so a wrong one is corrected in the
            file.

        Returns
        -------
        int
            The new project's id.

        Raises
        ------
        StoreError
            A policy that is not registered by name, or a budget not above the labels
            taken from the file.
        ParameterError
            A bad rule, tolerance, seed or budget (`Session.start`).
        """
        new = self._new_project(pool, name, policy, tolerance, budget, seed, rule, from_file)
        with self._write() as con:
            return new(con)

    def _new_project(self, pool: Pool, name: str, policy: str, tolerance: float | Fraction,
                     budget: int | None, seed: int, rule: str, from_file: bool
                     ) -> Callable[[sqlite3.Connection], int]:
        """Check the settings and compute what a new project stores (outside any
        transaction: a prelabel bound can take a while); returns the insert, a function
        of a write connection giving the new id."""
        tol = exact_fraction(tolerance)
        Session.start(pool, policy=policy, rule=rule, tolerance=tol, seed=seed, budget=budget)
        policy_name = get_policy(policy).name
        if policy_name not in policy_names():  # a resumed project looks it up by name
            raise StoreError("policy must be a registered policy name to be stored; "
                             f"got {policy!r}")
        known = file_labels(pool) if from_file else []
        if budget is not None and known and int(budget) <= len(known):
            raise StoreError(
                f"a budget of {int(budget):,} labels does not exceed the {len(known):,} labels "
                "the pool file already holds, which count as read: choose a larger budget, "
                "none, or start without the file's labels")
        pre = prelabel_bound(pool, tolerance=tol).prelabel_bound
        row = (pool_hash(pool), str(name), pool.n, json.dumps(list(pool.names)),
               json.dumps([python_scalar(c) for c in pool.classes]), pool.objective,
               policy_name, rule, fraction_text(tol), int(seed),
               None if budget is None else int(budget), pre)

        def insert(con: sqlite3.Connection) -> int:
            cur = con.execute(
                "INSERT INTO projects (pool_hash, pool_name, n, candidates, classes, objective, "
                "policy, rule, tolerance, seed, budget, prelabel_bound, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row + (utc_now(),))
            rowid = cur.lastrowid
            assert rowid is not None  # set by the INSERT just made
            pid = int(rowid)
            at = utc_now()
            events: list[Event] = []
            for rid, lab in known:
                events.append(LabelStore._append(con, pid, events, "label", rid,
                                                 Identity(FILE_ANNOTATOR), lab, at=at))
            return pid

        return insert

    def find_project(self, pool: Pool, *, policy: str = "adaptive-pair-sum",
                     tolerance: float | Fraction = 0.0, budget: int | None = None,
                     seed: int = 0, rule: str = "shared", from_file: bool = False
                     ) -> int | None:
        """The newest project on this pool with these settings.

        The pool hash leaves labels out, so a file whose labels changed still opens its
        old projects by id, never by this match.

        Parameters
        ----------
        pool : Pool
            The pool.
        policy, tolerance, budget, seed, rule
            The settings, as `create_project` takes them.
        from_file : bool, default False
            On a pool file with labels, ask for a project that started from exactly the
            labels the file holds now (`create_project`); without it, for one that
            started from none.

        Returns
        -------
        int or None
            The project's id, or None when there is none.
        """
        self._recognise(pool)
        with self._connect() as con:
            return self._find(con, pool, policy, tolerance, budget, seed, rule, from_file)

    @staticmethod
    def _find(con: sqlite3.Connection, pool: Pool, policy: str, tolerance: float | Fraction,
              budget: int | None, seed: int, rule: str, from_file: bool) -> int | None:
        args = (pool_hash(pool), policy, rule, fraction_text(exact_fraction(tolerance)),
                int(seed))
        want = file_labels(pool) if from_file else []
        rows = con.execute(
            "SELECT id FROM projects WHERE pool_hash = ? AND policy = ? AND rule = ? "
            "AND tolerance = ? AND seed = ? AND budget IS ? ORDER BY id DESC",
            args + (None if budget is None else int(budget),)).fetchall()
        for (pid,) in rows:
            seed_rows = con.execute(
                "SELECT row_id, label FROM events WHERE project_id = ? AND kind = 'label' "
                "AND annotator = ? ORDER BY seq", (pid, FILE_ANNOTATOR)).fetchall()
            if [(json.loads(r), json.loads(lab)) for r, lab in seed_rows] == want:
                return int(pid)
        return None

    def open_project(self, pool: Pool, name: str, *, policy: str = "adaptive-pair-sum",
                     tolerance: float | Fraction = 0.0, budget: int | None = None,
                     seed: int = 0, rule: str = "shared", from_file: bool = False) -> int:
        """Resume the project on this pool with these settings, or create it.

        The search and the creation are one write transaction, so two tabs starting the
        same project at once get the same one.

        Parameters
        ----------
        pool : Pool
            The pool to label.
        name : str
            The pool's name, for a new project.
        policy, tolerance, budget, seed, rule, from_file
            The settings, as `create_project` takes them.

        Returns
        -------
        int
            The id of the project found or created.

        Raises
        ------
        StoreError, ParameterError
            Settings a new project refuses (`create_project`).
        """
        settings = (policy, tolerance, budget, seed, rule, from_file)
        pid = self.find_project(pool, policy=policy, tolerance=tolerance, budget=budget,
                                seed=seed, rule=rule, from_file=from_file)
        if pid is not None:
            return pid
        new = self._new_project(pool, name, *settings)
        with self._write() as con:
            pid = self._find(con, pool, *settings)
            return new(con) if pid is None else pid

    def project(self, project_id: int) -> Project:
        """A project's fixed settings.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        Project
            Its settings.

        Raises
        ------
        UnknownProjectError
            No project with this id.
        """
        with self._connect() as con:
            return self._get(con, project_id)

    def projects(self, pool: Pool | None = None) -> tuple[Project, ...]:
        """Every project of the store, or those on one pool, oldest first.

        Parameters
        ----------
        pool : Pool or None, default None
            Only projects on this pool (by its hash); None: all.

        Returns
        -------
        tuple of Project
            Their settings.
        """
        if pool is not None:
            self._recognise(pool)
        with self._connect() as con:
            if pool is None:
                rows = con.execute("SELECT * FROM projects ORDER BY id").fetchall()
            else:
                rows = con.execute("SELECT * FROM projects WHERE pool_hash = ? ORDER BY id",
                                   (pool_hash(pool),)).fetchall()
        return tuple(self._project_row(r) for r in rows)

    # ------------------------------------------------------------- events
    def events(self, project_id: int) -> tuple[Event, ...]:
        """Every event of a project, in sequence order.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        tuple of Event
            Labels, undos, skips, unskips, budgets and review events.

        Raises
        ------
        UnknownProjectError
            No project with this id.
        """
        with self._connect() as con:
            self._get(con, project_id)
            return self._events_of(con, project_id)

    def labels(self, project_id: int) -> tuple[Event, ...]:
        """The label events in force, in reading order.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        tuple of Event
            The label (or correct) events no undo has cancelled.

        Raises
        ------
        UnknownProjectError
            No project with this id.
        """
        return tuple(labels_in_force(self.events(project_id)))

    @staticmethod
    def _check_seq(events: Sequence[Event], expect_seq: int | None) -> None:
        last = events[-1].seq if events else 0
        if expect_seq is not None and expect_seq != last:
            raise StaleStateError(
                f"the project changed since this view was drawn (expected last event "
                f"{expect_seq}, the store has {last}); nothing was saved: check the row now "
                "shown and answer again")

    def append_label(self, project_id: int, row_id: object, label: object,
                     annotator: str | Identity, *, pool: Pool,
                     expect_seq: int | None = None) -> Event:
        """Record one label, committed at once.

        Parameters
        ----------
        project_id : int
            The project's id.
        row_id : object
            The row's id ("1" and 1 name the same row).
        label : object
            Its label, a class value of the pool.
        annotator : str or Identity
            Who gives it: a name (not empty, not `FILE_ANNOTATOR`), or a signed-in
            `Identity` whose subject is stored with the event.
        pool : Pool
            The project's pool: it says which row an id names, so a row can never be
            labelled twice.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view the label was given on
            (`Progress.last_seq`); another value means the project changed since.

        Returns
        -------
        Event
            The label event appended.

        Raises
        ------
        DuplicateLabelError
            The row already has a label in force.
        BudgetUsedError
            The labels in force already fill the budget in force.
        StaleStateError
            ``expect_seq`` is not the newest event.
        PoolMismatchError
            ``pool`` is not the project's pool.
        UnknownProjectError
            No project with this id.
        StoreError
            An empty or reserved annotator name.
        LabelError
            A row id not in the pool, or a label outside the class set.
        """
        who = _identity(annotator)
        with self._write() as con:
            project = self._get(con, project_id)
            self._check_pool(project, pool)
            row_id = pool.row_ids[pool.position(python_scalar(row_id))]
            label = pool.classes[pool.class_code(python_scalar(label))]
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            in_force = labels_in_force(events)
            for e in in_force:
                if e.row_id == row_id:
                    raise DuplicateLabelError(
                        f"row_id {row_id!r} already has label {e.label!r} (event {e.seq}, "
                        f"{e.annotator}, {e.at}); undo it before labelling the row again")
            # checked in the write transaction: annotators of a team, each on a row of
            # their own, cannot together read more labels than the budget allows
            budget = budget_in_force(project.budget, events)
            if budget is not None and len(in_force) >= budget:
                raise BudgetUsedError(
                    f"the budget of {budget:,} labels is used up, so row_id {row_id!r} was "
                    "not labelled; a lead can extend the budget")
            return self._append(con, project_id, events, "label", _scalar(row_id), who,
                                _scalar(label))

    def undo_last(self, project_id: int, annotator: str | Identity = "", *,
                  expect_seq: int | None = None) -> Event:
        """Cancel the annotator's own newest label in force by appending an ``undo`` event.

        Nothing is deleted.  Each annotator takes back their own labels only (names
        compared without surrounding spaces and case; two signed-in identities by their
        subject), so on a project labelled by a team an undo never waits for the
        colleagues' later labels, which stay in force, and nobody takes back a colleague's
        label.  The labels taken from the pool file are nobody's to undo.

        Parameters
        ----------
        project_id : int
            The project's id.
        annotator : str or Identity, default ""
            Who undoes: their newest label in force is cancelled.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`): another value
            means the project changed since (a colleague's label counts too).

        Returns
        -------
        Event
            The undo event appended (``undoes`` the label event it cancels).

        Raises
        ------
        NothingToUndoError
            The annotator has no label in force (the message names nobody else).
        StoreError
            An empty annotator name.
        StaleStateError
            ``expect_seq`` is not the newest event.
        UnknownProjectError
            No project with this id.
        """
        who = _identity(annotator)
        with self._write() as con:
            self._get(con, project_id)
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            live = labels_in_force(events)
            mine = [e for e in live if e.annotator != FILE_ANNOTATOR
                    and same_annotator(e.identity, who)]
            if not mine:
                if not live:
                    raise NothingToUndoError(f"project {project_id} has no label to undo")
                why = ("every label in force comes from the pool file" if all(
                    e.annotator == FILE_ANNOTATOR for e in live) else
                    "an undo takes back only your own labels")
                raise NothingToUndoError(
                    f"project {project_id} has no label of yours to undo: {why}")
            target = mine[-1]
            return self._append(con, project_id, events, "undo", target.row_id, who,
                                target.label, undoes=target.seq)

    def skip_row(self, project_id: int, row_id: object, annotator: str | Identity, *,
                 pool: Pool, expect_seq: int | None = None) -> Event:
        """Pass over an unread row for now by appending a ``skip`` event (no bound
        changes).

        Parameters
        ----------
        project_id : int
            The project's id.
        row_id : object
            The row's id.
        annotator : str or Identity
            Who skips it.
        pool : Pool
            The project's pool.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        Event
            The skip event appended.

        Raises
        ------
        DuplicateLabelError
            The row has a label in force.
        StoreError
            The row is already skipped, or an empty annotator name.
        StaleStateError, PoolMismatchError, UnknownProjectError
            As in `append_label`.
        """
        who = _identity(annotator)
        with self._write() as con:
            project = self._get(con, project_id)
            self._check_pool(project, pool)
            rid = _scalar(pool.row_ids[pool.position(python_scalar(row_id))])
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            if any(e.row_id == rid for e in labels_in_force(events)):
                raise DuplicateLabelError(f"row_id {rid!r} already has a label in force; "
                                          "only an unread row can be skipped")
            if rid in skipped_rows(events):
                raise StoreError(f"row_id {rid!r} is already skipped")
            return self._append(con, project_id, events, "skip", rid, who)

    def unskip_all(self, project_id: int, annotator: str | Identity = "", *,
                   expect_seq: int | None = None) -> Event:
        """Make every skipped row available again by appending an ``unskip`` event.

        Parameters
        ----------
        project_id : int
            The project's id.
        annotator : str or Identity, default ""
            Who unskips.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        Event
            The unskip event appended.

        Raises
        ------
        NothingSkippedError
            No row is skipped.
        StaleStateError, UnknownProjectError
            As in `append_label`.
        """
        with self._write() as con:
            self._get(con, project_id)
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            if not skipped_rows(events):
                raise NothingSkippedError(f"project {project_id} has no skipped row")
            who = annotator if isinstance(annotator, Identity) else Identity(annotator)
            return self._append(con, project_id, events, "unskip", None,
                                Identity(str(who.name).strip(), who.subject or None))

    def extend_budget(self, project_id: int, new_budget: int | None,
                      annotator: str | Identity, *,
                      expect_seq: int | None = None) -> Event:
        """Extend the project's budget by appending a ``budget`` event.

        The replay uses the new budget from then on, so a session whose budget ran out
        continues with the same labels instead of a new project starting at 0.
        Extension only: a budget is never lowered, and with no budget there is nothing
        to extend.

        Parameters
        ----------
        project_id : int
            The project's id.
        new_budget : int or None
            The new budget, a whole number of labels, or None for no budget.
        annotator : str or Identity
            Who extends it.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        Event
            The budget event appended.

        Raises
        ------
        StoreError
            A non-integer budget, one below the labels in force or not above the budget
            in force, a project without a budget, or an empty annotator name.
        StaleStateError, UnknownProjectError
            As in `append_label`.
        """
        who = _identity(annotator)
        value = python_scalar(new_budget)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise StoreError(f"new_budget must be a whole number of labels or None (no "
                             f"budget); got {new_budget!r}")
        with self._write() as con:
            project = self._get(con, project_id)
            events = self._events_of(con, project_id)
            self._check_seq(events, expect_seq)
            current = budget_in_force(project.budget, events)
            read = len(labels_in_force(events))
            if current is None:
                raise StoreError(f"project {project_id} has no budget, so new_budget "
                                 f"{value!r} cannot extend it")
            if value is not None and value < read:
                raise StoreError(f"new_budget {value!r} is below the {read:,} labels already "
                                 f"in force in project {project_id}")
            if value is not None and value <= current:
                raise StoreError(f"new_budget {value!r} does not extend the budget in force "
                                 f"({current:,} labels) of project {project_id}; a budget "
                                 "can only be raised or removed")
            return self._append(con, project_id, events, "budget", None, who, value)

    # ------------------------------------------------------------ review
    def _labelled_row(self, con: sqlite3.Connection, project_id: int, row_id: object,
                      annotator: Identity, pool: Pool, expect_seq: int | None
                      ) -> tuple[tuple[Event, ...], ClassValue, Event]:
        """Checks shared by the review calls: returns (events, row id, its label event)."""
        project = self._get(con, project_id)
        self._check_pool(project, pool)
        rid = _scalar(pool.row_ids[pool.position(python_scalar(row_id))])
        events = self._events_of(con, project_id)
        self._check_seq(events, expect_seq)
        live = {e.row_id: e for e in labels_in_force(events)}
        if rid not in live:
            raise StoreError(f"row_id {rid!r} has no label in force in project {project_id}; "
                             "only a labelled row can be reviewed or corrected")
        if live[rid].annotator == FILE_ANNOTATOR:
            raise StoreError(f"the label of row_id {rid!r} comes from the pool file, which "
                             "the evidence record is checked against: it is not reviewed here; "
                             "correct the file and start a project from it")
        return events, rid, live[rid]

    def queue_review(self, project_id: int, row_ids: Iterable[object],
                     annotator: str | Identity, *, pool: Pool,
                     expect_seq: int | None = None) -> tuple[Event, ...]:
        """Queue labelled rows for a second annotator.

        One ``review_request`` event per row (its ``label`` the label under review), all
        in one transaction.

        Parameters
        ----------
        project_id : int
            The project's id.
        row_ids : iterable of object
            The rows' ids (at least one).
        annotator : str or Identity
            Who queues them.
        pool : Pool
            The project's pool.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        tuple of Event
            The review_request events appended, in the order given.

        Raises
        ------
        StoreError
            No row given, a row without a label in force (or labelled from the pool
            file), a row already waiting for a review, or an empty annotator name.
        StaleStateError, PoolMismatchError, UnknownProjectError
            As in `append_label`.
        """
        from .reviews import review_items

        who = _identity(annotator)
        out: list[Event] = []
        with self._write() as con:
            ids = list(row_ids)
            if not ids:
                raise StoreError("row_ids must name at least one row to queue for review")
            for rid in ids:
                events, rid, lab = self._labelled_row(con, project_id, rid, who, pool,
                                                      expect_seq)
                if any(i.row_id == rid and i.status == "waiting" for i in review_items(events)):
                    raise StoreError(f"row_id {rid!r} is already waiting for a review")
                out.append(self._append(con, project_id, events, "review_request", rid,
                                        who, lab.label))
                expect_seq = None if expect_seq is None else out[-1].seq
        return tuple(out)

    def append_review(self, project_id: int, row_id: object, label: object,
                      annotator: str | Identity, *, pool: Pool,
                      expect_seq: int | None = None) -> Event:
        """A second annotator's label for a row queued for review (a ``review`` event; no
        bound changes).

        Parameters
        ----------
        project_id : int
            The project's id.
        row_id : object
            The row's id.
        label : object
            The reviewer's label, a class value of the pool.
        annotator : str or Identity
            The reviewer: not one who gave or adopted the label under review
            (`certlib.labelling.reviews.ReviewItem.authors`).
        pool : Pool
            The project's pool.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        Event
            The review event appended.

        Raises
        ------
        StoreError
            A row not queued, or whose label under review was replaced; an annotator who
            gave or adopted that label; an empty annotator name.
        LabelError
            A label outside the class set.
        StaleStateError, PoolMismatchError, UnknownProjectError
            As in `append_label`.
        """
        from .reviews import review_item

        who = _identity(annotator)
        annotator = who.name  # reviews compare names (certlib.labelling.reviews)
        with self._write() as con:
            events, rid, lab = self._labelled_row(con, project_id, row_id, who, pool,
                                                  expect_seq)
            item = review_item(events, rid)
            if item is None:
                raise StoreError(f"row_id {rid!r} is not queued for review")
            if item.status == "withdrawn":
                raise StoreError(f"the label of row_id {rid!r} under review was undone and "
                                 "given again; queue the row again to review the new label")
            if not item.may_review(annotator):
                raise StoreError(f"annotator {annotator!r} gave the label of row_id {rid!r}; a "
                                 "review must come from a second annotator")
            value = _scalar(pool.classes[pool.class_code(python_scalar(label))])
            return self._append(con, project_id, events, "review", rid, who, value)

    def keep_label(self, project_id: int, row_id: object, annotator: str | Identity, *,
                   pool: Pool, expect_seq: int | None = None) -> Event:
        """Decide a review disagreement for the label in force.

        A ``keep`` event naming that label event (no bound changes): the row's status
        becomes "kept" until a new review, a correction or an undo.  As a reviewer
        cannot adopt their own review, someone else decides (the reviewer who disagreed
        may withdraw the review this way).

        Parameters
        ----------
        project_id : int
            The project's id.
        row_id : object
            The row's id.
        annotator : str or Identity
            Who decides: not one who gave the label in force, made the correction that
            put it there, or reviewed it with that label
            (`certlib.labelling.reviews.ReviewItem.may_keep`).
        pool : Pool
            The project's pool.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        Event
            The keep event appended.

        Raises
        ------
        StoreError
            A row whose newest review agrees (or that has none), an annotator who may not
            decide, or an empty annotator name.
        StaleStateError, PoolMismatchError, UnknownProjectError
            As in `append_label`.
        """
        from .reviews import review_item

        who = _identity(annotator)
        annotator = who.name  # reviews compare names (certlib.labelling.reviews)
        with self._write() as con:
            events, rid, lab = self._labelled_row(con, project_id, row_id, who, pool,
                                                  expect_seq)
            item = review_item(events, rid)
            if item is None or item.status != "disagrees":
                raise StoreError(f"row_id {rid!r} has no review disagreement to decide")
            if not item.may_keep(annotator):
                raise StoreError(f"annotator {annotator!r} gave or backed the label of row_id "
                                 f"{rid!r} in force; someone else decides to keep it")
            return self._append(con, project_id, events, "keep", rid, who, lab.label)

    def correct_label(self, project_id: int, row_id: object, label: object,
                      annotator: str | Identity, *, pool: Pool,
                      expect_seq: int | None = None) -> Event:
        """Replace the label in force of a row.

        A ``correct`` event that names the label event it replaces: the row keeps its
        place in the reading order and the session replays with the new label.

        Parameters
        ----------
        project_id : int
            The project's id.
        row_id : object
            The row's id.
        label : object
            The new label, a class value of the pool.
        annotator : str or Identity
            Who corrects: not a reviewer adopting their own review of the row (someone
            else decides a disagreement).
        pool : Pool
            The project's pool.
        expect_seq : int or None, default None
            The newest event's ``seq`` of the view (as in `append_label`).

        Returns
        -------
        Event
            The correct event appended.

        Raises
        ------
        StoreError
            The label already in force, a reviewer adopting their own review, a row
            without a label in force (or labelled from the pool file), or an empty
            annotator name.
        LabelError
            A label outside the class set.
        StaleStateError, PoolMismatchError, UnknownProjectError
            As in `append_label`.
        """
        from .reviews import review_item

        who = _identity(annotator)
        annotator = who.name  # reviews compare names (certlib.labelling.reviews)
        with self._write() as con:
            events, rid, lab = self._labelled_row(con, project_id, row_id, who, pool,
                                                  expect_seq)
            value = _scalar(pool.classes[pool.class_code(python_scalar(label))])
            if value == lab.label:
                raise StoreError(f"row_id {rid!r} already has label {value!r}; nothing to "
                                 "correct")
            item = review_item(events, rid)
            if item is not None and item.reviews \
                    and same_annotator(item.reviews[-1][1], annotator) \
                    and item.review_label == value:
                raise StoreError(f"annotator {annotator!r} gave the review of row_id {rid!r}; "
                                 "a reviewer cannot adopt their own review, another "
                                 "annotator decides")
            return self._append(con, project_id, events, "correct", rid, who, value,
                                undoes=lab.seq)

    @staticmethod
    def _append(con: sqlite3.Connection, project_id: int, events: Sequence[Event], kind: str,
                row_id: ClassValue | None, who: Identity, value: ClassValue | None = None,
                undoes: int | None = None, at: str | None = None) -> Event:
        """Append one event after ``events`` (the project's log as read in the caller's
        write transaction), its hash chained to the newest event's (``value``: the
        label, the new budget, or the label of a review event).  The event returned holds
        the values as the store reads them back, so its hash is the one recomputed."""
        seq = (events[-1].seq if events else 0) + 1
        prev = events[-1].hash if events else LabelStore._genesis(con, project_id)
        assert prev is not None  # every stored event has one (NOT NULL)
        rid = None if row_id is None else json.dumps(row_id)
        stored = None if kind in ("skip", "unskip") else json.dumps(value)
        ev = Event(seq, kind, None if rid is None else json.loads(rid),
                   None if stored is None else json.loads(stored), who.name,
                   at or utc_now(), undoes, who.subject or None)
        ev = replace(ev, prev_hash=prev, hash=event_hash(project_id, ev, prev))
        con.execute(f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (project_id, seq, kind, rid, stored, ev.annotator, ev.at, undoes,
                     ev.subject, prev, ev.hash))
        return ev

    # ------------------------------------------------------------- chain
    def chain_head(self, project_id: int) -> str:
        """The newest event's hash: what a record, a note or another system keeps to check
        later that the project's history was not rewritten (module docstring).

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        str
            64 hex digits (a project without events: the hash of its settings,
            `Project.chain_hash`).

        Raises
        ------
        UnknownProjectError
            No project with this id.

        Examples
        --------

        >>> import tempfile, certlib
        >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
        ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"])
        >>> store = LabelStore(tempfile.mkdtemp() + "/labels.db")
        >>> pid = store.open_project(pool, "demo")
        >>> store.chain_head(pid) == store.project(pid).chain_hash
        True
        >>> e = store.append_label(pid, 0, 1, "ana", pool=pool)
        >>> store.chain_head(pid) == e.hash
        True
        """
        with self._connect() as con:
            project = self._get(con, project_id)
            row = con.execute("SELECT hash FROM events WHERE project_id = ? ORDER BY seq DESC "
                              "LIMIT 1", (project_id,)).fetchone()
        return project.chain_hash if row is None else str(row[0])

    def verify_chain(self, project_id: int) -> ChainCheck:
        """Recompute the project's hash chain from its settings and events.

        Catches an event changed in the file past the append-only triggers (an UPDATE of
        its annotator, time, label, ...), an event removed, or a setting of the project
        changed, unless every later hash was recomputed too: against that, keep the
        head (`chain_head`) elsewhere.

        Parameters
        ----------
        project_id : int
            The project's id.

        Returns
        -------
        ChainCheck
            ``ok``; else ``broken_at``, the first event that does not fit, and the
            reason.

        Raises
        ------
        UnknownProjectError
            No project with this id.

        Examples
        --------

        >>> import tempfile, certlib
        >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
        ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"])
        >>> store = LabelStore(tempfile.mkdtemp() + "/labels.db")
        >>> pid = store.open_project(pool, "demo")
        >>> _ = store.append_label(pid, 0, 1, "ana", pool=pool)
        >>> store.verify_chain(pid).ok
        True
        """
        with self._connect() as con:
            project = self._get(con, project_id)
            events = self._events_of(con, project_id)
        return check_chain(project_id, project.chain_hash, events)

    # ------------------------------------------------------------ replay
    def progress(self, project_id: int, pool: Pool, *,
                 since: Progress | None = None) -> Progress:
        """The project replayed from its events (`Progress.replay`).

        Its settings and log are read in one transaction.

        Parameters
        ----------
        project_id : int
            The project's id.
        pool : Pool
            The pool it was started on.
        since : Progress or None, default None
            An earlier Progress of this project, extended when the log grew by anything
            but an undo, a correction or a budget.

        Returns
        -------
        Progress
            Settings, log, session and bounds path.

        Raises
        ------
        PoolMismatchError
            ``pool`` is not the project's pool.
        UnknownProjectError
            No project with this id.
        """
        self._recognise(pool)
        with self._connect() as con:
            project = self._get(con, project_id)
            events = self._events_of(con, project_id)
        self._check_pool(project, pool)
        return Progress.replay(project, events, pool, since=since)

    def resume(self, project_id: int | str, pool: Pool, *,
               since: Progress | None = None) -> Progress:
        """Reopen a project where its annotators stopped, from an id as a page keeps it in
        its URL.

        Parameters
        ----------
        project_id : int or str
            The project's id, or its decimal text.
        pool : Pool
            The pool it was started on.
        since : Progress or None, default None
            An earlier Progress of this project (`progress`).

        Returns
        -------
        Progress
            The project replayed.

        Raises
        ------
        UnknownProjectError
            A malformed or unknown id (the message names it).
        PoolMismatchError
            ``pool`` is not the project's pool.
        """
        return self.progress(self._project_id(project_id), pool, since=since)

    def _project_id(self, project_id: object) -> int:
        text = str(project_id).strip()
        if isinstance(project_id, bool) or not text.isdecimal():
            raise UnknownProjectError(
                f"project_id {project_id!r} is not in the label store {str(self.path)!r}: "
                "a project id is a positive whole number (1, 2, ...)")
        return int(text)

    def session(self, project_id: int, pool: Pool) -> Session:
        """The labelling session of a project, rebuilt from its events.

        Parameters
        ----------
        project_id : int
            The project's id.
        pool : Pool
            The pool it was started on.

        Returns
        -------
        Session
            The state the labels in force give.

        Raises
        ------
        PoolMismatchError, UnknownProjectError
            As in `progress`.
        """
        return self.progress(project_id, pool).session

    def pool_with_labels(self, project_id: int, pool: Pool) -> Pool:
        """The pool holding a project's labels in force instead of its own.

        What planning from a project's labels needs (``certlib plan --store --project``):
        the rows the project has read carry their labels, every other row is unread,
        whatever labels the pool file had.

        Parameters
        ----------
        project_id : int
            The project's id.
        pool : Pool
            The pool it was started on.

        Returns
        -------
        Pool
            ``pool.with_labels`` of the labels the project's session holds.

        Raises
        ------
        PoolMismatchError, UnknownProjectError
            As in `progress`.

        Examples
        --------
        >>> import os, tempfile, certlib
        >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
        ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
        ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
        >>> store = LabelStore(os.path.join(tempfile.mkdtemp(), "labels.db"))
        >>> pid = store.open_project(pool, "demo", policy="static-range")
        >>> _ = store.append_label(pid, pool.row_ids[2], 0, "ana", pool=pool)
        >>> store.pool_with_labels(pid, pool).labels.tolist()
        [-1, -1, 0, -1]
        """
        return pool.with_labels(self.session(project_id, pool).label_codes)

    # ------------------------------------------------------------ record
    def export_record(self, project_id: int, pool: Pool) -> dict[str, object]:
        """The evidence record of a project (SPEC section 12,
        `certlib.labelling.record.make_record`).

        Parameters
        ----------
        project_id : int
            The project's id.
        pool : Pool
            The pool it was started on.

        Returns
        -------
        dict
            JSON-ready; `verify_record` recomputes it from the labels and the pool.

        Raises
        ------
        PoolMismatchError, UnknownProjectError
            As in `progress`.
        """
        return make_record(self.progress(project_id, pool))
