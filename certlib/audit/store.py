"""Audit projects in the SQLite label store: the schema and `AuditStore` (SPEC section 11).

An *audit project* fixes the audit's settings (epsilon, delta, pi, pi_min, seed, judge
and slice columns, window, and the promotion-ledger chain it belongs to).  Traffic
arrives in *batches* (`certlib.audit.batch` reads and checks them), each validated
whole (one message naming the column and the row, nothing stored otherwise) and stored
with its SHA-256; its items keep their arrival order, and an item id already in the
project refuses the batch, so a batch appended twice by mistake is refused.

Routing is decided when an item arrives and stored with it (`routing_flags`): its
routing probability pi_t, its seeded uniform U_t (`certlib.audit.routing.uniforms`, the
draw the batch audit makes for the same position) and whether it is routed to
labelling.  It reads only the predictions and judge scores of the items up to t, never
a label (the paper's predictability condition), and a later batch never changes it.

Labels are append-only *events* (``label`` and ``undo``, with who and when).  A label
is written in one ``BEGIN IMMEDIATE`` transaction that first checks the item has no
label in force, so two annotators on one queue never label an item twice (the second
gets `DuplicateLabelError`).  Nothing else is stored: the verdict, the intervals and the
queue are recomputed from the items and the labels in force (`certlib.audit.status`).

The tables (``audit_projects``, ``audit_batches``, ``audit_items``, ``audit_events``)
live in the label store's file but are created and versioned here
(``audit_schema_version``), independently of the label store's own schema.

    store = AuditStore()                                   # $CERTLIB_STORE
    pid = store.create(epsilon=0.03, name="ranker v2")
    store.append_batch(pid, "traffic_day1.csv", who="pipeline")
    st = store.status(pid)
    st.result.verdict, [q.item_id for q in st.queue[:3]]
    store.label(pid, st.queue[0].item_id, 1, who="ana")
    store.export(pid, "audit.json", "audit_stream.csv")   # certlib verify-audit audit.json ...
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt

from ..core._values import ClassValue, class_value, class_value_from_text, is_none_or_nan, \
    python_scalar
from ..errors import LabelError, ParameterError
from ..labelling import _sqlite
from ..labelling.events import same_annotator, utc_now
from ..labelling.store import (DuplicateLabelError, NothingToUndoError, StaleStateError,
                               StoreError, UnknownProjectError, default_store_path)
from .batch import ID_COLUMNS, REQUIRED, BatchSource, Kind, check_rows, class_kind, read_batch
from .core import DEFAULT_CONFIDENCE, AuditConfig, tier1_start
from .ledger import PromotionLedger
from .record import make_record, stream_hash
from .routing import Routing, uniforms
from .status import (AuditBatch, AuditEvent, AuditProject, AuditStatus, ItemRow, QueueItem,
                     labels_in_force, recompute, stream_arrays)

__all__ = [
    "AUDIT_SCHEMA_VERSION",
    "AuditStore",
    "DuplicateBatchError",
    "routing_flags",
]

AUDIT_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS audit_projects (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL,
    epsilon        REAL NOT NULL,
    delta          REAL NOT NULL,    -- the audit's delta (delta_k in a chain)
    pi             REAL,             -- NULL with a judge
    pi_min         REAL,             -- NULL = default
    seed           INTEGER NOT NULL,
    judge_column   TEXT,
    slice_column   TEXT,
    window         INTEGER,
    chain          TEXT,             -- promotion-ledger chain, NULL = none
    chain_k        INTEGER,
    lifetime_delta REAL,
    config         TEXT NOT NULL,    -- AuditConfig.to_dict() as JSON
    created_at     TEXT NOT NULL,
    created_by     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_batches (
    project_id INTEGER NOT NULL REFERENCES audit_projects(id),
    batch_no   INTEGER NOT NULL CHECK (batch_no >= 1),
    sha256     TEXT NOT NULL,
    first_pos  INTEGER NOT NULL,
    n_items    INTEGER NOT NULL CHECK (n_items >= 1),
    source     TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('num', 'str')),
    added_by   TEXT NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (project_id, batch_no)
);
CREATE TABLE IF NOT EXISTS audit_items (
    project_id INTEGER NOT NULL REFERENCES audit_projects(id),
    pos        INTEGER NOT NULL CHECK (pos >= 0),   -- arrival order, 0-based
    item_id    TEXT NOT NULL,
    batch_no   INTEGER NOT NULL,
    incumbent  TEXT NOT NULL,                      -- JSON scalar
    candidate  TEXT NOT NULL,                      -- JSON scalar
    label      TEXT,                               -- JSON scalar from the batch, NULL = none
    judge      REAL,
    slice      TEXT,
    extra      TEXT NOT NULL,                      -- JSON object
    disagree   INTEGER NOT NULL,
    pi         REAL NOT NULL,
    u          REAL NOT NULL,
    routed     INTEGER NOT NULL,
    PRIMARY KEY (project_id, pos),
    UNIQUE (project_id, item_id)
);
CREATE TABLE IF NOT EXISTS audit_events (
    project_id INTEGER NOT NULL REFERENCES audit_projects(id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('label', 'undo')),
    item_id    TEXT NOT NULL,
    label      TEXT NOT NULL,                      -- JSON scalar
    annotator  TEXT NOT NULL,
    at         TEXT NOT NULL,
    undoes     INTEGER,
    PRIMARY KEY (project_id, seq)
);
"""
_TABLES = ("audit_projects", "audit_batches", "audit_items", "audit_events")
_TRIGGERS = "".join(
    f"CREATE TRIGGER IF NOT EXISTS {t}_no_update BEFORE UPDATE ON {t} "
    f"BEGIN SELECT RAISE(ABORT, '{t} is append-only'); END;\n"
    f"CREATE TRIGGER IF NOT EXISTS {t}_no_delete BEFORE DELETE ON {t} "
    f"BEGIN SELECT RAISE(ABORT, '{t} is append-only'); END;\n" for t in _TABLES)


class DuplicateBatchError(StoreError):
    """A batch holds an item id already in the project (a batch appended twice)."""


_PROJECT_COLUMNS = ("SELECT id, name, config, judge_column, slice_column, window, chain, "
                    "chain_k, lifetime_delta, created_at, created_by FROM audit_projects")
_Loaded = tuple[AuditProject, list[ItemRow], tuple[AuditBatch, ...], tuple[AuditEvent, ...]]


# ------------------------------------------------------------------ routing at arrival
def routing_flags(cfg: AuditConfig, a: npt.NDArray[np.bool_], pi: npt.NDArray[np.float64],
                  u: npt.NDArray[np.float64], *, slices: bool,
                  window: int | None) -> npt.NDArray[np.bool_]:
    """Which items an audit project routes to labelling when they arrive.

    An item is routed when the models disagree, its draw is taken (U_t < pi_t), and some
    part of the audit may pay for its label: Tier 1 of the overall audit (from the item
    after the one where Tier 0 shows rho >= tier1_from * eps / B, `tier1_start`), any
    slice audit (slices are not gated by Tier 0), or Tier 1 of the item's window.
    Every term reads a_1..a_t only, never a label (the paper's predictability
    condition), so a prefix keeps its flags when items are added.

    Parameters
    ----------
    cfg : AuditConfig
        The audit's settings.
    a : numpy.ndarray of bool
        Disagreement indicators of every item so far.
    pi : numpy.ndarray of float
        Routing probabilities pi_t.
    u : numpy.ndarray of float
        The seeded uniforms U_t (`uniforms`).
    slices : bool
        Whether the audit has per-slice audits.
    window : int, optional
        The window length of a windowed audit (None: no windows).

    Returns
    -------
    numpy.ndarray of bool
        The routed flag of every item.
    """
    n = a.size
    active = np.zeros(n, dtype=bool)
    if slices:
        active[:] = True
    spans = [(0, n)]
    if window is not None:
        spans += [(lo, min(lo + window, n)) for lo in range(0, n, window)]
    for lo, hi in spans:
        active[lo + tier1_start(cfg, a[lo:hi]):hi] = True
    flags: npt.NDArray[np.bool_] = a & (u < pi) & active
    return flags


# ------------------------------------------------------------------ the store
class AuditStore:
    """Audit projects in the label store's SQLite file (tables of their own).

    Parameters
    ----------
    path : str or Path, optional
        The SQLite file (default ``$CERTLIB_STORE`` or ``./certlib_labels.db``); the
        audit tables are created on first use.
    read_only : bool, default False
        Open it read-only even when it could be written.  A file this process cannot
        write (its permissions, a read-only folder or disk) always opens read-only.

    Raises
    ------
    StoreError
        The file holds an audit schema of another version, or cannot be opened.
    certlib.errors.StoreReadOnlyError
        The file cannot be written and holds no audit tables yet (they cannot be created).
    certlib.errors.StoreAccessError
        The file cannot be opened now (a lock held by another process, a full disk).

    Attributes
    ----------
    path : Path
        The SQLite file.
    read_only : bool
        Whether the store was opened read-only: every read works (status, record, stream
        CSV), every write raises `certlib.errors.StoreReadOnlyError` (nothing is saved).
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        self.path: Path = Path(path) if path is not None else default_store_path()
        self._mode: _sqlite.Mode = _sqlite.open_schema(
            self.path, _SCHEMA + _TRIGGERS, "audit_schema_version", AUDIT_SCHEMA_VERSION,
            StoreError, "audit store", kind="audit schema", read_only=read_only)
        self.read_only: bool = self._mode != "rw"

    # ----------------------------------------------------------- plumbing
    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        """One connection for reads; an SQLite failure is a `StoreAccessError`."""
        con: AbstractContextManager[sqlite3.Connection] = _sqlite.connect(
            self.path, self._mode, what="audit store")
        return con

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction; the lock is taken up front so reads inside it are current.
        A read-only store raises `StoreReadOnlyError` here, before anything is opened."""
        tx: AbstractContextManager[sqlite3.Connection] = _sqlite.write(
            self.path, self._mode, what="audit store")
        return tx

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot: every read of one status in one transaction."""
        with self._connect() as con:
            con.execute("BEGIN")
            try:
                yield con
            finally:
                con.execute("COMMIT")

    @staticmethod
    def _project_id(project_id: int | str) -> int:
        text = str(project_id).strip()
        if isinstance(project_id, bool) or not text.isdecimal():
            raise UnknownProjectError(f"audit project id {project_id!r} is not a whole number")
        return int(text)

    def _get(self, con: sqlite3.Connection, project_id: int | str) -> AuditProject:
        pid = self._project_id(project_id)
        row = con.execute(_PROJECT_COLUMNS + " WHERE id = ?", (pid,)).fetchone()
        if row is None:
            raise UnknownProjectError(
                f"audit project {pid} is not in the store {str(self.path)!r}")
        return self._project_row(row)

    @staticmethod
    def _project_row(row: tuple[object, ...]) -> AuditProject:
        # the column types of `audit_projects` (the schema above)
        pid, name, config, jc, sc, window, chain, k, life, created, by = cast(
            tuple[int, str, str, "str | None", "str | None", "int | None", "str | None",
                  "int | None", "float | None", str, str], row)
        c = json.loads(config)
        r = c["routing"]
        routing = Routing(r["kind"], float("nan") if r.get("pi") is None else float(r["pi"]),
                          float(r["pi_min"]))
        cfg = AuditConfig(float(c["epsilon"]), float(c["delta"]), float(c["delta0"]),
                          float(c["delta1"]), routing, int(c["seed"]), float(c["B"]),
                          float(c["truncation"]), bool(c["running_intersection"]),
                          # a project stored before these settings existed keeps its
                          # rules
                          float(c.get("tier1_from", 1.0)), str(c.get("confidence", "prpl-eb")))
        return AuditProject(pid, name, cfg, jc, sc, window, chain, k, life, created, by)

    # ----------------------------------------------------------- projects
    def create(self, *, epsilon: float, delta: float = 0.05, pi: float | None = None,
               pi_min: float | None = None, seed: int = 0, judge_column: str | None = None,
               slice_column: str | None = None, window: int | None = None,
               chain: str | None = None, name: str = "", who: str = "",
               confidence: str = DEFAULT_CONFIDENCE) -> int:
        """Start a new audit project.

        Parameters
        ----------
        epsilon : float
            Tolerance eps > 0 on Delta, the candidate's excess 0/1 risk.
        delta : float, default 0.05
            Miscoverage of the audit; with ``chain``, the chain's lifetime budget, and
            this audit runs at delta_k = delta 6 / (pi^2 k^2), k its place in the chain
            (paper Prop. 13; `PromotionLedger`).
        pi, pi_min : float, optional
            Routing probability on disagreements and its floor (`Routing.make`).
        seed : int, default 0
            Seed of the labelling draws U_t.
        judge_column, slice_column : str, optional
            Batch columns of judge scores in [0, 1] and of slice keys.
        window : int, optional
            Also audit every window of this many items (drift; paper section 5.7).
        chain : str, optional
            The promotion-ledger chain the audit joins.
        name : str, default ""
            A name for people.
        who : str, default ""
            Who creates it (kept in the record).
        confidence : str, default DEFAULT_CONFIDENCE
            Tier 1's confidence sequence, "prpl-eb" or "betting".

        Returns
        -------
        int
            The new project's id.

        Raises
        ------
        ParameterError
            A setting is out of range, a column is not an extra column, or ``delta``
            differs from the chain's lifetime delta.
        """
        for value, what in ((judge_column, "judge_column"), (slice_column, "slice_column")):
            if value is not None and (not isinstance(value, str) or not value.strip()
                                      or value in ID_COLUMNS + REQUIRED + ("label",)):
                raise ParameterError(f"`{what}` must name an extra column of the batches, "
                                     f"got {value!r}")
        if judge_column is not None and judge_column == slice_column:
            raise ParameterError("`judge_column` and `slice_column` must be different columns")
        if window is not None and (isinstance(window, bool) or not isinstance(
                window, (int, np.integer)) or window < 1):
            raise ParameterError(f"`window` must be a positive whole number of items or None, "
                                 f"got {window!r}")
        if chain is not None:
            chain = str(chain).strip()
            if not chain:
                raise ParameterError("`chain` must be a non-empty name or None")
        life = PromotionLedger.start(delta).lifetime_delta if chain is not None else None
        AuditConfig.make(epsilon=epsilon, delta=delta, pi=pi, pi_min=pi_min,
                         judge=judge_column is not None, seed=seed,
                         confidence=confidence)   # checks the settings
        with self._write() as con:
            k = None
            run_delta = delta
            if chain is not None and life is not None:
                rows = con.execute("SELECT lifetime_delta FROM audit_projects WHERE chain = ?",
                                   (chain,)).fetchall()
                if rows and not math.isclose(rows[0][0], life, rel_tol=1e-12):
                    raise ParameterError(f"chain {chain!r} has lifetime delta {rows[0][0]}; "
                                         f"got {delta!r}")
                k = len(rows) + 1
                run_delta = PromotionLedger.start(life).delta_for(k)
            cfg = AuditConfig.make(epsilon=epsilon, delta=run_delta, pi=pi, pi_min=pi_min,
                                   judge=judge_column is not None, seed=seed,
                                   confidence=confidence)
            cur = con.execute(
                "INSERT INTO audit_projects (name, epsilon, delta, pi, pi_min, seed, "
                "judge_column, slice_column, window, chain, chain_k, lifetime_delta, config, "
                "created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (str(name), cfg.epsilon, cfg.delta,
                 None if cfg.routing.kind == "judge" else cfg.routing.pi, cfg.routing.pi_min,
                 cfg.seed, judge_column, slice_column, None if window is None else int(window),
                 chain, k, life, json.dumps(cfg.to_dict()), utc_now(), str(who).strip()))
            return int(cur.lastrowid or 0)

    def project(self, project_id: int | str) -> AuditProject:
        """The settings of one project.

        Parameters
        ----------
        project_id : int or str
            The project's id.

        Returns
        -------
        AuditProject
            Its settings.

        Raises
        ------
        UnknownProjectError
            No such project in the store.
        """
        with self._connect() as con:
            return self._get(con, project_id)

    def projects(self, chain: str | None = None) -> tuple[AuditProject, ...]:
        """Every audit project (or those of ``chain``), oldest first.

        Parameters
        ----------
        chain : str, optional
            Only the projects of this promotion-ledger chain, in chain order.

        Returns
        -------
        tuple of AuditProject
            The projects.
        """
        with self._connect() as con:
            rows = (con.execute(_PROJECT_COLUMNS + " ORDER BY id").fetchall() if chain is None
                    else con.execute(_PROJECT_COLUMNS + " WHERE chain = ? ORDER BY chain_k",
                                     (chain,)).fetchall())
        return tuple(self._project_row(r) for r in rows)

    # ------------------------------------------------------------ batches
    def append_batch(self, project_id: int | str, batch: BatchSource, *, who: str = "",
                     name: str | None = None) -> AuditBatch:
        """Check a batch whole, route every item and store it, in one transaction.

        Parameters
        ----------
        project_id : int or str
            The project.
        batch : str, Path, bytes, BatchColumns, dict or DataFrame
            Any source `certlib.audit.batch.read_batch` reads.
        who : str, default ""
            Who appends it (kept in the record).
        name : str, optional
            What messages call the batch (`read_batch`).

        Returns
        -------
        AuditBatch
            The stored batch.

        Raises
        ------
        DuplicateBatchError
            An item id is already in the project (the message names the batch that
            holds it, and says when this is that batch again); nothing is stored.
        CertlibError
            What `read_batch` and `certlib.audit.batch.check_rows` raise; nothing is
            stored.
        """
        b = read_batch(batch, name)
        with self._write() as con:
            project = self._get(con, project_id)
            pid = project.id
            kind_row = con.execute("SELECT kind FROM audit_batches WHERE project_id = ? "
                                   "LIMIT 1", (pid,)).fetchone()
            kind: Kind | None = None if kind_row is None else kind_row[0]
            rows = check_rows(b, judge_column=project.judge_column,
                              slice_column=project.slice_column, project_id=pid, kind=kind,
                              earlier_fraction=lambda: _has_fraction(con, pid))
            hits = []
            for chunk in range(0, len(rows.ids), 500):
                part = rows.ids[chunk:chunk + 500]
                hits += con.execute(
                    f"SELECT item_id, batch_no, pos FROM audit_items WHERE project_id = ? AND "
                    f"item_id IN ({','.join('?' * len(part))}) ORDER BY pos",
                    (pid, *part)).fetchall()
            if hits:
                same = con.execute("SELECT batch_no FROM audit_batches WHERE project_id = ? "
                                   "AND sha256 = ?", (pid, rows.sha256)).fetchone()
                item, bno, pos = hits[0]
                raise DuplicateBatchError(
                    f"batch {b.source}: item_id {item} (data row {rows.ids.index(item) + 1}) "
                    f"is already in audit project {pid} (batch {bno}, item {pos + 1}); "
                    + (f"this batch is batch {same[0]} again (same SHA-256); "
                       if same else f"{len(hits)} of its ids {'is' if len(hits) == 1 else 'are'} "
                          "already stored; ")
                    + "nothing was appended")
            prev = con.execute("SELECT disagree FROM audit_items WHERE project_id = ? "
                               "ORDER BY pos", (pid,)).fetchall()
            n0, n = len(prev), len(rows.ids)
            cfg = project.config
            a_new = np.array([f != g for f, g in zip(rows.f, rows.g)], dtype=bool)
            a = np.concatenate([np.array([r[0] for r in prev], dtype=bool), a_new])
            judge = None if rows.judge is None else np.asarray(rows.judge, dtype=float)
            pi = cfg.routing.probabilities(judge, n)
            u = uniforms(cfg.seed, n0, n0 + n)
            full_pi = np.concatenate([np.zeros(n0), pi])
            full_u = np.concatenate([np.ones(n0), u])
            routed = routing_flags(cfg, a, full_pi, full_u, slices=rows.slices is not None,
                                   window=project.window)[n0:]
            bno = con.execute("SELECT COALESCE(MAX(batch_no), 0) + 1 FROM audit_batches "
                              "WHERE project_id = ?", (pid,)).fetchone()[0]
            at = utc_now()
            con.execute("INSERT INTO audit_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (pid, bno, rows.sha256, n0, n, b.source, rows.kind, str(who).strip(),
                         at))
            con.executemany(
                "INSERT INTO audit_items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(pid, n0 + i, rows.ids[i], bno, json.dumps(rows.f[i]), json.dumps(rows.g[i]),
                  None if rows.labels[i] is None else json.dumps(rows.labels[i]),
                  None if rows.judge is None else rows.judge[i],
                  None if rows.slices is None else rows.slices[i],
                  json.dumps(rows.extra[i]), int(a_new[i]), float(pi[i]), float(u[i]),
                  int(routed[i])) for i in range(n)])
        return AuditBatch(int(bno), rows.sha256, n0, n, b.source, str(who).strip(), at)

    def batches(self, project_id: int | str) -> tuple[AuditBatch, ...]:
        """The project's batches, oldest first.

        Parameters
        ----------
        project_id : int or str
            The project.

        Returns
        -------
        tuple of AuditBatch
            Its batches.
        """
        with self._connect() as con:
            pid = self._get(con, project_id).id
            return self._batches(con, pid)

    @staticmethod
    def _batches(con: sqlite3.Connection, pid: int) -> tuple[AuditBatch, ...]:
        return tuple(AuditBatch(*r) for r in con.execute(
            "SELECT batch_no, sha256, first_pos, n_items, source, added_by, at FROM "
            "audit_batches WHERE project_id = ? ORDER BY batch_no", (pid,)).fetchall())

    # ------------------------------------------------------------- events
    @staticmethod
    def _events(con: sqlite3.Connection, pid: int) -> tuple[AuditEvent, ...]:
        return tuple(AuditEvent(seq, kind, item, json.loads(lab), who, at, und)
                     for seq, kind, item, lab, who, at, und in con.execute(
                         "SELECT seq, kind, item_id, label, annotator, at, undoes FROM "
                         "audit_events WHERE project_id = ? ORDER BY seq", (pid,)).fetchall())

    def events(self, project_id: int | str) -> tuple[AuditEvent, ...]:
        """The project's label and undo events, oldest first.

        Parameters
        ----------
        project_id : int or str
            The project.

        Returns
        -------
        tuple of AuditEvent
            Its event log.
        """
        with self._connect() as con:
            pid = self._get(con, project_id).id
            return self._events(con, pid)

    def label(self, project_id: int | str, item_id: object, label: object, who: str, *,
              expect_seq: int | None = None) -> AuditEvent:
        """Record the label of a routed item, in one transaction.

        Parameters
        ----------
        project_id : int or str
            The project.
        item_id : object
            The item's id (written as in its batch).
        label : object
            The label, of the predictions' kind (a number written as text is a number).
        who : str
            The annotator (non-empty; kept in the record).
        expect_seq : int, optional
            The newest event the caller's view showed: a different one refuses the
            label (another annotator changed the audit since).

        Returns
        -------
        AuditEvent
            The stored label event.

        Raises
        ------
        DuplicateLabelError
            The item has a label in force (another annotator was first) or came
            labelled in its batch.
        LabelError
            The item was not routed to labelling, or the label is of the wrong kind or
            fractional among whole-number classes.
        StaleStateError
            ``expect_seq`` is not the newest event.
        StoreError
            An empty annotator name, or an item not in the project.
        """
        who = str(who).strip()
        if not who:
            raise StoreError("annotator must be a non-empty name; it goes into the evidence "
                             "record")
        item_id = str(class_value(python_scalar(item_id))).strip()
        with self._write() as con:
            pid = self._get(con, project_id).id
            row = con.execute("SELECT pos, incumbent, label, routed FROM audit_items WHERE "
                              "project_id = ? AND item_id = ?", (pid, item_id)).fetchone()
            if row is None:
                raise StoreError(f"item_id {item_id} is not in audit project {pid}")
            pos, f_json, batch_label, routed = row
            value = _label_value(label, json.loads(f_json), item_id)
            if isinstance(value, float) and not _has_fraction(con, pid):
                # class_value made every whole number an int: this one has a fraction
                raise LabelError(f"label {label!r} for item_id {item_id}: every prediction "
                                 f"in audit project {pid} is a whole number (a class), so a "
                                 "label must be one too")
            events = self._events(con, pid)
            self._check_seq(events, expect_seq)
            if batch_label is not None:
                raise DuplicateLabelError(f"item_id {item_id} came with label "
                                          f"{json.loads(batch_label)!r} in its batch")
            live = labels_in_force(events)
            if item_id in live:
                e = live[item_id]
                raise DuplicateLabelError(
                    f"item_id {item_id} already has label {e.label!r} (event {e.seq}, "
                    f"{e.annotator}, {e.at}); nothing was saved")
            if not routed:
                raise LabelError(f"item_id {item_id} (item {pos + 1}) was not routed to "
                                 "labelling when it arrived; the audit never uses its label")
            return self._append(con, pid, events, "label", str(item_id), value, who)

    def undo(self, project_id: int | str, who: str = "", item_id: object = None, *,
             expect_seq: int | None = None) -> AuditEvent:
        """Cancel the newest label in force (or that of ``item_id``) with an ``undo`` event.

        The item goes back to the queue.  Batch labels cannot be undone.  Only the
        annotator who gave the label may undo it (names compared without surrounding
        spaces and case), as on a labelling project: nobody takes back a colleague's
        label and then labels the item themselves.

        Parameters
        ----------
        project_id : int or str
            The project.
        who : str
            The annotator undoing (must be the one who gave the label).
        item_id : object, optional
            The item whose label to cancel (default: the newest label in force).
        expect_seq : int, optional
            The newest event the caller's view showed (`label`).

        Returns
        -------
        AuditEvent
            The stored undo event.

        Raises
        ------
        NothingToUndoError
            No label in force (for that item).
        StaleStateError
            ``expect_seq`` is not the newest event.
        StoreError
            An empty annotator name, or the label was given by someone else.
        """
        who = str(who).strip()
        if not who:
            raise StoreError("annotator must be a non-empty name: only the annotator who gave "
                             "a label may undo it")
        with self._write() as con:
            pid = self._get(con, project_id).id
            events = self._events(con, pid)
            self._check_seq(events, expect_seq)
            live = labels_in_force(events)
            if item_id is not None:
                key = str(class_value(python_scalar(item_id))).strip()
                if key not in live:
                    raise NothingToUndoError(f"item_id {key} has no label event in force in "
                                             f"audit project {pid}")
                target = live[key]
            else:
                if not live:
                    raise NothingToUndoError(f"audit project {pid} has no label to undo")
                target = max(live.values(), key=lambda e: e.seq)
            if not same_annotator(target.annotator, who):
                raise StoreError(f"the newest label in force (item_id {target.item_id}) was "
                                 f"given by {target.annotator!r}; only they can undo it"
                                 if item_id is None else
                                 f"the label of item_id {target.item_id} was given by "
                                 f"{target.annotator!r}; only they can undo it")
            return self._append(con, pid, events, "undo", target.item_id, target.label,
                                who, target.seq)

    @staticmethod
    def _check_seq(events: tuple[AuditEvent, ...], expect_seq: int | None) -> None:
        last = events[-1].seq if events else 0
        if expect_seq is not None and expect_seq != last:
            raise StaleStateError(
                f"the audit changed since this view was drawn (expected last event "
                f"{expect_seq}, the store has {last}); nothing was saved: look again")

    @staticmethod
    def _append(con: sqlite3.Connection, pid: int, events: tuple[AuditEvent, ...], kind: str,
                item_id: str, value: ClassValue, who: str,
                undoes: int | None = None) -> AuditEvent:
        seq = (events[-1].seq if events else 0) + 1
        ev = AuditEvent(seq, kind, item_id, value, who, utc_now(), undoes)
        con.execute("INSERT INTO audit_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (pid, seq, kind, item_id, json.dumps(value), who, ev.at, undoes))
        return ev

    # ------------------------------------------------------------ replay
    def _load(self, project_id: int | str) -> _Loaded:
        with self._read() as con:
            project = self._get(con, project_id)
            pid = project.id
            items: list[ItemRow] = con.execute(
                "SELECT item_id, incumbent, candidate, label, judge, slice, extra, pi, routed "
                "FROM audit_items WHERE project_id = ? ORDER BY pos", (pid,)).fetchall()
            batches = self._batches(con, pid)
            events = self._events(con, pid)
        return project, items, batches, events

    def status(self, project_id: int | str) -> AuditStatus:
        """The project recomputed from its items and events (`certlib.audit.status`).

        Parameters
        ----------
        project_id : int or str
            The project.

        Returns
        -------
        AuditStatus
            Verdict, intervals, windows, queue, and the chain's ledger in a chain.

        Raises
        ------
        UnknownProjectError
            No such project in the store.
        """
        project, items, batches, events = self._load(project_id)
        ledger = self.ledger(project.chain) if project.chain else None
        return recompute(project, items, batches, events, ledger=ledger)

    def lookahead(self, project_id: int | str, *, status: AuditStatus | None = None
                  ) -> dict[ClassValue, tuple[QueueItem | None, str]]:
        """What the queue shows after its first item is labelled, for each class.

        Computed before the label is given, from the items and events: what the Audit
        page's labelling panel draws at a key press.

        Parameters
        ----------
        project_id : int or str
            The project.
        status : AuditStatus, optional
            The status just computed, to save its recomputation.

        Returns
        -------
        dict
            Class value to (the next item to label, or None when nothing is left to
            label; the verdict then).  Empty when the queue is, or when ``status`` is
            older than the store's newest event.
        """
        project, items, batches, events = self._load(project_id)
        now = status if status is not None else recompute(project, items, batches, events)
        if not now.queue or now.last_seq != (events[-1].seq if events else 0):
            return {}
        first = now.queue[0]
        seq = now.last_seq + 1
        out: dict[ClassValue, tuple[QueueItem | None, str]] = {}
        for c in now.classes:
            ev = AuditEvent(seq, "label", str(first.item_id), c, "", "", None)
            after = recompute(project, items, batches, tuple(events) + (ev,))
            out[c] = (after.queue[0] if after.queue else None, after.result.verdict)
        return out

    def stream(self, project_id: int | str) -> tuple[object, ...]:
        """The project's items as the arrays `certlib.audit.audit` is given.

        Parameters
        ----------
        project_id : int or str
            The project.

        Returns
        -------
        tuple
            (incumbent, candidate, labels in force, judge, slices, item ids) in arrival
            order (`certlib.audit.status.stream_arrays`).
        """
        project, items, _, events = self._load(project_id)
        return stream_arrays(project, items, events)[:6]

    def ledger(self, chain: str) -> PromotionLedger:
        """The promotion ledger of ``chain``: every audit in it with its current verdict.

        A ``continue`` entry still holds its delta_k: the schedule is fixed by k.

        Parameters
        ----------
        chain : str
            The chain's name.

        Returns
        -------
        PromotionLedger
            The chain's audits in chain order.

        Raises
        ------
        UnknownProjectError
            No audit project belongs to ``chain``.
        """
        members = self.projects(chain)
        if not members:
            raise UnknownProjectError(f"no audit project belongs to chain {chain!r}")
        # every project of a chain holds the chain's lifetime delta (`create` sets it)
        led = PromotionLedger.start(cast(float, members[0].lifetime_delta))
        for p in members:
            project, items, batches, events = self._load(p.id)
            r = recompute(project, items, batches, events).result
            led = led.record({"project_id": p.id, "name": p.name, "verdict": r.verdict,
                              "tier": r.tier, "stopping_time": r.stopping_time,
                              "labels_used": r.labels_used, "items_seen": r.items_seen})
        return led

    # ------------------------------------------------------------ export
    def stream_csv(self, project_id: int | str) -> str:
        """The project's items as a stream file for ``certlib verify-audit``.

        Parameters
        ----------
        project_id : int or str
            The project.

        Returns
        -------
        str
            CSV text: item_id, pred_incumbent, pred_candidate, the label in force, the
            judge and slice columns, the extra columns; written by
            `certlib.spreadsheet.csv_text` (text a spreadsheet would run starts with
            ``'``, which `certlib.audit.batch.read_stream` drops when it reads the file).

        Raises
        ------
        StoreError
            The project has no items yet.
        """
        from ..spreadsheet import csv_text

        project, items, _, events = self._load(project_id)
        f, g, y, judge, slices, ids, extra = stream_arrays(project, items, events)
        if not ids:
            raise StoreError(f"audit project {project.id} has no items yet")
        data: dict[str, list[object]] = {
            "item_id": list(ids), "pred_incumbent": [class_value(v) for v in f.tolist()],
            "pred_candidate": [class_value(v) for v in g.tolist()],
            "label": [None if is_none_or_nan(v) else class_value(v) for v in y.tolist()]}
        if project.judge_column and judge is not None:
            data[project.judge_column] = judge.tolist()
        if project.slice_column and slices is not None:
            data[project.slice_column] = slices.tolist()
        for c in (extra[0] if extra else {}):
            if c not in data:
                data[c] = [e.get(c) for e in extra]
        return csv_text(data)

    def record(self, project_id: int | str) -> dict[str, object]:
        """The evidence record of the project now, with its batches and event log.

        Parameters
        ----------
        project_id : int or str
            The project.

        Returns
        -------
        dict
            `certlib.audit.record.make_record` of the status's result, plus an
            ``audit_project`` block (settings, batches with their hashes, events).
        """
        project, items, batches, events = self._load(project_id)
        st = recompute(project, items, batches, events)
        f, g, _, judge, slices, _, _ = stream_arrays(project, items, events)
        rec = make_record(st.result, stream_hash(f, g, judge=judge, slices=slices),
                          judge_column=project.judge_column, slice_column=project.slice_column)
        rec["audit_project"] = {**project.to_dict(),
                                "batches": [b.to_dict() for b in batches],
                                "events": [e.to_dict() for e in events]}
        return rec

    def export(self, project_id: int | str, record_path: str | Path,
               stream_path: str | Path) -> dict[str, object]:
        """Write the record (JSON) and the stream (CSV) that ``certlib verify-audit
        RECORD STREAM`` checks.

        Parameters
        ----------
        project_id : int or str
            The project.
        record_path : str or Path
            Where to write the evidence record.
        stream_path : str or Path
            Where to write the stream file.

        Returns
        -------
        dict
            The record written.
        """
        from .record import write_record

        Path(stream_path).write_text(self.stream_csv(project_id))
        rec = self.record(project_id)
        write_record(record_path, rec)
        return rec


def _has_fraction(con: sqlite3.Connection, pid: int) -> bool:
    """Whether a stored prediction of project ``pid`` has a fractional part.  Predictions
    are stored as JSON of `class_value`, so whole numbers are ints ("1") and only a
    fractional float shows a "." or an exponent ("0.5", "1e-05")."""
    return bool(con.execute(
        "SELECT EXISTS(SELECT 1 FROM audit_items WHERE project_id = ? AND (instr(incumbent, "
        "'.') OR instr(incumbent, 'e') OR instr(candidate, '.') OR instr(candidate, 'e')))",
        (pid,)).fetchone()[0])


def _label_value(label: object, like: object, item_id: str) -> ClassValue:
    """A label of the project's kind (numbers written as text become numbers)."""
    v = python_scalar(label)
    if isinstance(like, str):
        if not isinstance(v, str) or not v.strip():
            raise LabelError(f"label {label!r} for item_id {item_id}: expected text like the "
                             "predictions")
        return v
    v = class_value_from_text(v)
    if isinstance(v, str) or class_kind(v) != "num":
        raise LabelError(f"label {label!r} for item_id {item_id}: expected a number like the "
                         "predictions")
    return class_value(v)
