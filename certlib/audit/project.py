"""A running update audit kept in the SQLite label store (issue 12; SPEC section 11).

An *audit project* fixes the audit's settings (epsilon, delta, pi, pi_min, seed, judge
and slice columns, window, and the promotion-ledger chain it belongs to).  Traffic
arrives in *batches* (CSV, Parquet or columns: ``pred_incumbent``, ``pred_candidate``,
an item id ``item_id`` -- or ``row_id`` when there is no ``item_id`` --, optional
``label``, the judge and slice columns, anything else kept as extra columns).  Each
batch is validated whole (one message naming the column and the row, nothing stored
otherwise), stored with its SHA-256, and its items keep their arrival order; an item id
already in the project refuses the batch, so a batch appended twice by mistake is
refused.

Routing is decided when an item arrives and stored with it: its routing probability
pi_t, its seeded uniform U_t (`certlib.audit.routing.uniforms`, the draw the batch
audit makes for the same position) and whether it is *routed* to labelling, i.e. the
models disagree, ``U_t < pi_t`` and some part of the audit (Tier 1 of the overall
audit once Tier 0 can no longer certify, a slice audit, the Tier 1 of its window) may
pay for its label.  All of this reads only the predictions and judge scores of the
items up to t, never a label (the paper's predictability condition), and a later batch
never changes it.

Labels are append-only *events* (``label`` and ``undo``, with who and when).  The
labels in force are the batch's own labels and the label events not undone.  The
*queue* is the routed items without a label in force that a part of the audit still
running needs, in arrival order; an undo puts its item back.  A label is written in
one ``BEGIN IMMEDIATE`` transaction that first checks the item has no label in force,
so two annotators on one queue never label an item twice (the second gets
`DuplicateLabelError`).

Nothing else is stored: the verdict, both tiers' intervals, the trace, the slice and
window verdicts are recomputed from the items and the labels in force by the batch
audit (`certlib.audit.core`), so they equal `certlib.audit.audit` on the same items
and labels, and the exported record passes ``certlib verify-audit``.

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

import hashlib
import io as _io
import json
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..labelling import _sqlite
from ..core._values import class_value, class_value_from_text, first_text, first_true, \
    is_empty_cell, is_none_or_nan, python_scalar
from ..errors import (CertlibError, ColumnError, InvalidValueError, LabelError, ParameterError,
                      PoolFileError)
from ..labelling.events import same_annotator, utc_now
from ..labelling.store import (DuplicateLabelError, NothingToUndoError, StaleStateError, StoreError,
                     UnknownProjectError, default_store_path)
from .core import AuditConfig, AuditResult, Stream, _run, make_stream, stray_fraction
from .cs import prpl_eb
from .ledger import PromotionLedger
from .record import make_record, stream_hash
from .routing import Routing, uniforms
from .window import WindowedAudit, WindowVerdict

__all__ = [
    "AUDIT_SCHEMA_VERSION",
    "AuditBatch",
    "AuditEvent",
    "AuditProject",
    "AuditStatus",
    "AuditStore",
    "DuplicateBatchError",
    "QueueItem",
    "check_batch",
    "read_batch",
]

AUDIT_SCHEMA_VERSION = 1
ID_COLUMNS = ("item_id", "row_id")
REQUIRED = ("pred_incumbent", "pred_candidate")
MAX_BYTES = 2 * 1024 ** 3

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


# ------------------------------------------------------------------ values
@dataclass(frozen=True)
class AuditProject:
    """The fixed settings of one audit project (``config`` is the audit's AuditConfig)."""

    id: int
    name: str
    config: AuditConfig
    judge_column: str | None
    slice_column: str | None
    window: int | None
    chain: str | None
    chain_k: int | None
    lifetime_delta: float | None
    created_at: str
    created_by: str

    def to_dict(self) -> dict:
        return {"project_id": self.id, "name": self.name, "config": self.config.to_dict(),
                "judge_column": self.judge_column, "slice_column": self.slice_column,
                "window": self.window, "chain": self.chain, "chain_k": self.chain_k,
                "lifetime_delta": self.lifetime_delta, "created_at": self.created_at,
                "created_by": self.created_by}


@dataclass(frozen=True)
class AuditBatch:
    """One appended batch: items ``first_pos .. first_pos + n_items - 1`` (0-based)."""

    batch_no: int
    sha256: str
    first_pos: int
    n_items: int
    source: str
    added_by: str
    at: str

    def to_dict(self) -> dict:
        return {"batch": self.batch_no, "sha256": self.sha256, "first_item": self.first_pos,
                "items": self.n_items, "source": self.source, "added_by": self.added_by,
                "at": self.at}


@dataclass(frozen=True)
class AuditEvent:
    """A label or an undo (``undoes``: the seq of the label it cancels)."""

    seq: int
    kind: str
    item_id: str
    label: object
    annotator: str
    at: str
    undoes: int | None = None

    def to_dict(self) -> dict:
        return {"seq": self.seq, "kind": self.kind, "item_id": self.item_id,
                "label": self.label, "annotator": self.annotator, "at": self.at,
                "undoes": self.undoes}


@dataclass(frozen=True)
class QueueItem:
    """A routed item waiting for its label: what an annotator sees."""

    pos: int                 # arrival position, 0-based (item t = pos + 1)
    item_id: str
    incumbent: object
    candidate: object
    pi: float
    judge: float | None
    slice: str | None
    extra: dict
    needed_by: tuple         # "audit", "slice <key>", "window <start>-<end>"


@dataclass(frozen=True)
class AuditStatus:
    """A project recomputed from its items and events.

    ``result`` is `certlib.audit.core._run` on every item in arrival order with the
    labels in force (the same as `certlib.audit.audit`); ``windows`` the windowed
    view (None without a window); ``queue`` the routed items still waiting for a
    label; ``last_seq`` the newest event (0: none), for stale-view checks."""

    project: AuditProject
    items: int
    batches: tuple
    events: tuple
    labels_in_force: int
    result: AuditResult
    windows: WindowedAudit | None
    queue: tuple
    routed: int
    last_seq: int
    classes: tuple
    ledger: PromotionLedger | None = field(default=None, compare=False)
    #: labels in force that neither model predicts on any item: (label, items, first
    #: item id) -- a typo (7 for 1) counts both models wrong on that item
    unpredicted: tuple = ()

    @property
    def newest_label(self):
        """The label event an undo without an item would cancel (None: no label in
        force)."""
        live = AuditStore._in_force(self.events)
        return max(live.values(), key=lambda e: e.seq) if live else None

    def to_dict(self) -> dict:
        d = {"project": self.project.to_dict(), "items": self.items,
             "batches": [b.to_dict() for b in self.batches], "events": len(self.events),
             "labels_in_force": self.labels_in_force, "routed": self.routed,
             "queue": len(self.queue),
             "queue_next": None if not self.queue else self.queue[0].item_id}
        d.update(self.result.to_dict())
        if self.windows is not None:
            d["windows"] = [w.to_dict() for w in self.windows.windows]
        if self.ledger is not None:
            d["ledger"] = self.ledger.to_dict()
        if self.unpredicted:
            d["unpredicted_labels"] = [{"label": v, "items": k, "first_item_id": i}
                                       for v, k, i in self.unpredicted]
        return d


# ------------------------------------------------------------------ batches
@dataclass(frozen=True, eq=False)
class _Batch:
    """Columns of a batch file as Python lists (name -> values)."""

    columns: dict
    n: int
    source: str


def read_batch(source, name: str | None = None) -> _Batch:
    """A batch from a CSV/Parquet path, raw file bytes (``name`` gives the suffix), or a
    mapping of column name to values (a dict or a polars/pandas DataFrame)."""
    if isinstance(source, (str, Path)):
        p = Path(source)
        if not p.exists():
            raise PoolFileError(f"batch file {p} does not exist")
        if p.stat().st_size > MAX_BYTES:
            raise PoolFileError(f"batch file {p} is larger than {MAX_BYTES} bytes")
        return _read_bytes(p.read_bytes(), p.name)
    if isinstance(source, (bytes, bytearray)):
        return _read_bytes(bytes(source), name or "batch.csv")
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # pandas or polars
        cols = {str(c): [python_scalar(v) for v in source[c].to_list()] for c in source.columns}
        return _columns(cols, name or "data frame")
    if isinstance(source, dict):
        return _columns({str(k): [python_scalar(v) for v in list(vals)]
                         for k, vals in source.items()}, name or "columns")
    raise ParameterError(f"a batch is a CSV/Parquet path, file bytes or a mapping of columns; "
                         f"got {type(source).__name__}")


def _columns(cols: dict, source: str) -> _Batch:
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise InvalidValueError(f"batch {source}: columns have different lengths {sorted(lengths)}")
    return _Batch(cols, lengths.pop() if lengths else 0, source)


def _read_bytes(data: bytes, name: str) -> _Batch:
    import polars as pl

    from ..io import read_csv_bytes

    suffix = Path(name).suffix.lower()
    try:
        if suffix == ".csv":
            df = read_csv_bytes(name, data, "batch file")
        elif suffix in (".parquet", ".pq"):
            df = pl.read_parquet(_io.BytesIO(data))
        else:
            raise PoolFileError(f"batch file {name}: expected a .csv or .parquet file, "
                                f"got '{suffix}'")
    except CertlibError:  # the reader's own message names the line
        raise
    except Exception as exc:  # polars raises several types for unreadable files
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise PoolFileError(f"batch file {name} cannot be read ({type(exc).__name__}: "
                            f"{first})") from None
    return _Batch({c: df[c].to_list() for c in df.columns}, df.height, name)


def _where(src: str, col: str, row: int, ids=None, id_col: str = "item_id") -> str:
    """Where a batch's bad cell is (``src``: "batch NAME", or "stream file NAME" for
    `certlib audit`): ``row`` is its position, shown as the data row counted from 1 (as
    pool file messages count them), with the item id when known, under its column's name
    (``id_col``: a file's ``row_id`` is not called item_id)."""
    at = f"column `{col}`, data row {row + 1}"
    if ids is not None and row < len(ids) and not is_none_or_nan(ids[row]):
        at += f" ({id_col} {ids[row]!s})"
    return f"{src}: {at}"


def _kind_of(v):
    if isinstance(v, str):
        return "str"
    if isinstance(v, (bool, int, float)) and not (isinstance(v, float) and not math.isfinite(v)):
        return "num"
    return None


@dataclass(frozen=True, eq=False)
class _Rows:
    ids: list
    f: list
    g: list
    labels: list
    judge: list | None
    slices: list | None
    extra: list
    kind: str
    sha256: str


def _validate(batch: _Batch, project: AuditProject, kind: str | None,
              earlier_fraction=lambda: False, stream: bool = False) -> _Rows:
    """The whole batch checked: the first problem raises, naming the column and row.
    ``earlier_fraction()``: whether the project already holds a prediction with a
    fractional part (then a fractional label may be a class; asked only when needed).
    ``stream``: the file of `certlib audit`, which keeps no project: messages call it a
    stream file, and an id column is optional there and only names the items."""
    cols = batch.columns
    src = f"{'stream file' if stream else 'batch'} {batch.source}"
    if batch.n == 0:
        raise InvalidValueError(f"{src} has no rows; expected at least one item")
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    if id_col is None and not stream:
        raise ColumnError(f"{src} lacks the column `item_id` (or `row_id`): every item "
                          "needs an id, so that a batch appended twice is refused")
    for c in REQUIRED:
        if c not in cols:
            raise ColumnError(f"{src} lacks the column `{c}` (expected "
                              f"{', '.join(REQUIRED)}, an item id, optional `label`)")
    for c, what in ((project.judge_column, "judge"), (project.slice_column, "slice")):
        if c is not None and c not in cols:
            raise ColumnError(f"{src} lacks the column `{c}`, the {what} column of "
                              f"audit project {project.id}")
    ids, seen = [], {}
    for i, v in enumerate(cols[id_col] if id_col else [None] * batch.n):
        if id_col is None:  # a stream without ids: the data row names the item
            ids.append(None)
            continue
        if is_empty_cell(v):
            raise InvalidValueError(f"{_where(src, id_col, i)} is empty; every item needs an id")
        t = str(class_value(v)).strip()
        if t in seen and not stream:
            raise InvalidValueError(f"{_where(src, id_col, i)} repeats the id {t!r} of data "
                                    f"row {seen[t] + 1}; item ids must be unique")
        seen[t] = i
        ids.append(t)
    expected = kind
    preds = {}
    for c in REQUIRED:
        out = []
        for i, v in enumerate(cols[c]):
            v = python_scalar(v)
            if is_empty_cell(v):
                raise InvalidValueError(f"{_where(src, c, i, ids, id_col)} is empty; every item "
                                        "needs both predictions")
            if _kind_of(v) is None:
                raise InvalidValueError(f"{_where(src, c, i, ids, id_col)} is {v!r}; expected "
                                        "a class value (every item needs both predictions)")
            out.append(class_value(v))
        col_kind = "str" if any(isinstance(v, str) for v in out) else "num"
        if expected is None:
            expected = col_kind
        elif col_kind != expected:
            # name the cell that makes the difference: in a text column read from a file,
            # the first value that is not a number (a column is text as soon as one cell
            # is: "abc" in pred_incumbent used to be blamed on pred_candidate's data row 1)
            if not kind and col_kind == "num":  # this batch's other column is the text one
                first = REQUIRED[0]
                i = first_text(preds[first])
                raise InvalidValueError(
                    f"{_where(src, first, i, ids, id_col)} is {preds[first][i]!r}, text, but `{c}` "
                    "holds numbers; both predictions must be numbers, or both text")
            i = first_text(out) if col_kind == "str" else 0
            where = "the project's earlier batches hold " if kind else "`pred_incumbent` holds "
            raise InvalidValueError(
                f"{_where(src, c, i, ids, id_col)} is {out[i]!r}; {where}"
                + ("numbers, so every prediction must be a number" if expected == "num"
                   else "text, so every prediction must be text"))
        preds[c] = out
    kind_now = expected
    labels = [None] * batch.n
    if "label" in cols:
        for i, v in enumerate(cols["label"]):
            v = python_scalar(v)
            if is_empty_cell(v):
                continue
            if kind_now == "num" and isinstance(v, str):
                # a file's label column is text as soon as one cell is not a number: the
                # cells that are numbers written as text are numbers, so the error names
                # the cell that is not
                v = class_value_from_text(v)
            if _kind_of(v) != kind_now:
                raise LabelError(f"{_where(src, 'label', i, ids, id_col)} is {v!r}; expected "
                                 + ("a number like the predictions" if kind_now == "num"
                                    else "text like the predictions")
                                 + " (or empty for unlabelled)")
            labels[i] = class_value(v)
    if kind_now == "num":
        have = [v is not None for v in labels]
        i = stray_fraction(preds["pred_incumbent"], preds["pred_candidate"],
                           [float(v) if h else np.nan for v, h in zip(labels, have)], have)
        if i is not None and not earlier_fraction():
            raise LabelError(f"{_where(src, 'label', i, ids, id_col)} is {labels[i]!r}; every "
                             "prediction is a whole number (a class), so a label must be one "
                             "too (or empty for unlabelled)")
    judge = None
    if project.judge_column is not None:
        judge = []
        for i, v in enumerate(cols[project.judge_column]):
            v = python_scalar(v)
            if isinstance(v, str):  # one text cell makes the whole column text: find it
                try:
                    v = float(v)
                except ValueError:
                    pass
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) \
                and math.isfinite(float(v)) and 0.0 <= float(v) <= 1.0
            if not ok:
                raise InvalidValueError(f"{_where(src, project.judge_column, i, ids, id_col)} is "
                                        f"{v!r}; expected a judge score in [0, 1]")
            judge.append(float(v))
    slices = None
    if project.slice_column is not None:
        slices = []
        for i, v in enumerate(cols[project.slice_column]):
            v = python_scalar(v)
            if is_empty_cell(v):
                raise InvalidValueError(f"{_where(src, project.slice_column, i, ids, id_col)} is "
                                        "empty; every item needs a slice")
            slices.append(str(class_value(v)))
    used = {id_col, *REQUIRED, "label", project.judge_column, project.slice_column}
    other = [c for c in cols if c not in used]
    extra = [{c: _json_scalar(cols[c][i]) for c in other} for i in range(batch.n)]
    rows = [[ids[i], preds["pred_incumbent"][i], preds["pred_candidate"][i], labels[i],
             None if judge is None else judge[i], None if slices is None else slices[i],
             extra[i]] for i in range(batch.n)]
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
    return _Rows(ids, preds["pred_incumbent"], preds["pred_candidate"], labels, judge, slices,
                 extra, kind_now, digest)


def check_batch(batch, judge_column: str | None = None, slice_column: str | None = None,
                name: str | None = None, stream: bool = False) -> int:
    """Validate a batch for a project with these columns before creating it (a page
    refuses a bad first batch without leaving an empty project); returns its item count.
    ``stream``: the file of `certlib audit` (`_validate`)."""
    b = batch if isinstance(batch, _Batch) else read_batch(batch, name)
    probe = AuditProject(0, "", AuditConfig.make(epsilon=1.0), judge_column, slice_column,
                         None, None, None, None, "", "")
    return len(_validate(b, probe, None, stream=stream).ids)


def _json_scalar(v):
    v = python_scalar(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


# ------------------------------------------------------------------ routing
def _routing_flags(cfg: AuditConfig, a: np.ndarray, pi: np.ndarray, u: np.ndarray,
                   slices: bool, window: int | None) -> np.ndarray:
    """Routed to labelling: a disagreement drawn (U_t < pi_t) where some part of the
    audit may pay for it: Tier 1 of the overall audit (from the item after Tier 0 can
    no longer certify), any slice audit (ungated), Tier 1 of the item's window.  Every
    term reads a_1..a_t only, so a prefix keeps its flags when items are added."""
    n = a.size
    active = np.zeros(n, dtype=bool)
    if slices:
        active[:] = True
    spans = [(0, n)]
    if window is not None:
        spans += [(lo, min(lo + window, n)) for lo in range(0, n, window)]
    for lo, hi in spans:
        active[lo + _tier1_start(cfg, a[lo:hi]):hi] = True
    return a & (u < pi) & active


def _tier1_start(cfg: AuditConfig, a: np.ndarray) -> int:
    """The first item (0-based) of Tier 1 on disagreements ``a``, as `core._run` finds
    it: the item after Tier 0's lower bound reaches eps/B (``a.size``: not yet)."""
    rlo = prpl_eb(a.astype(float), cfg.delta0, cfg.truncation, cfg.running_intersection).lower
    i_act = first_true(cfg.tier0_cannot_certify(rlo))
    return a.size if i_act is None else i_act + 1


# ------------------------------------------------------------------ the store
class AuditStore:
    """Audit projects in the label store's SQLite file (tables of their own)."""

    def __init__(self, path=None):
        self.path = Path(path) if path is not None else default_store_path()
        _sqlite.open_schema(self.path, _SCHEMA + _TRIGGERS, "audit_schema_version",
                            AUDIT_SCHEMA_VERSION, StoreError, "audit store",
                            kind="audit schema")

    # ----------------------------------------------------------- plumbing
    def _connect(self):
        return _sqlite.connect(self.path)

    def _write(self):
        """One write transaction; the lock is taken up front so reads inside it are current."""
        return _sqlite.write(self.path)

    @contextmanager
    def _read(self):
        """A consistent snapshot: every read of one status in one transaction."""
        with self._connect() as con:
            con.execute("BEGIN")
            try:
                yield con
            finally:
                con.execute("COMMIT")

    def _project_id(self, project_id) -> int:
        text = str(project_id).strip()
        if isinstance(project_id, bool) or not text.isdecimal():
            raise UnknownProjectError(f"audit project id {project_id!r} is not a whole number")
        return int(text)

    def _get(self, con, project_id) -> AuditProject:
        pid = self._project_id(project_id)
        row = con.execute(
            "SELECT id, name, config, judge_column, slice_column, window, chain, chain_k, "
            "lifetime_delta, created_at, created_by FROM audit_projects WHERE id = ?",
            (pid,)).fetchone()
        if row is None:
            raise UnknownProjectError(
                f"audit project {pid} is not in the store {str(self.path)!r}")
        return self._project_row(row)

    @staticmethod
    def _project_row(row) -> AuditProject:
        pid, name, config, jc, sc, window, chain, k, life, created, by = row
        c = json.loads(config)
        r = c["routing"]
        routing = Routing(r["kind"], float("nan") if r.get("pi") is None else float(r["pi"]),
                          float(r["pi_min"]))
        cfg = AuditConfig(float(c["epsilon"]), float(c["delta"]), float(c["delta0"]),
                          float(c["delta1"]), routing, int(c["seed"]), float(c["B"]),
                          float(c["truncation"]), bool(c["running_intersection"]))
        return AuditProject(pid, name, cfg, jc, sc, window, chain, k, life, created, by)

    # ----------------------------------------------------------- projects
    def create(self, *, epsilon, delta=0.05, pi=None, pi_min=None, seed=0,
               judge_column: str | None = None, slice_column: str | None = None,
               window: int | None = None, chain: str | None = None, name: str = "",
               who: str = "") -> int:
        """A new audit project; returns its id.  With ``chain``, ``delta`` is the chain's
        lifetime budget and this audit runs at delta_k = delta 6 / (pi^2 k^2), k its
        place in the chain (paper Prop. 13; `PromotionLedger`)."""
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
                         judge=judge_column is not None, seed=seed)   # checks the settings
        with self._write() as con:
            k = None
            run_delta = delta
            if chain is not None:
                rows = con.execute("SELECT lifetime_delta FROM audit_projects WHERE chain = ?",
                                   (chain,)).fetchall()
                if rows and not math.isclose(rows[0][0], life, rel_tol=1e-12):
                    raise ParameterError(f"chain {chain!r} has lifetime delta {rows[0][0]}; "
                                         f"got {delta!r}")
                k = len(rows) + 1
                run_delta = PromotionLedger.start(life).delta_for(k)
            cfg = AuditConfig.make(epsilon=epsilon, delta=run_delta, pi=pi, pi_min=pi_min,
                                   judge=judge_column is not None, seed=seed)
            cur = con.execute(
                "INSERT INTO audit_projects (name, epsilon, delta, pi, pi_min, seed, "
                "judge_column, slice_column, window, chain, chain_k, lifetime_delta, config, "
                "created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (str(name), cfg.epsilon, cfg.delta,
                 None if cfg.routing.kind == "judge" else cfg.routing.pi, cfg.routing.pi_min,
                 cfg.seed, judge_column, slice_column, None if window is None else int(window),
                 chain, k, life, json.dumps(cfg.to_dict()), utc_now(), str(who).strip()))
            return int(cur.lastrowid)

    def project(self, project_id) -> AuditProject:
        with self._connect() as con:
            return self._get(con, project_id)

    def projects(self, chain: str | None = None) -> tuple:
        """Every audit project (or those of ``chain``), oldest first."""
        q = ("SELECT id, name, config, judge_column, slice_column, window, chain, chain_k, "
             "lifetime_delta, created_at, created_by FROM audit_projects")
        with self._connect() as con:
            rows = (con.execute(q + " ORDER BY id").fetchall() if chain is None else
                    con.execute(q + " WHERE chain = ? ORDER BY chain_k", (chain,)).fetchall())
        return tuple(self._project_row(r) for r in rows)

    # ------------------------------------------------------------ batches
    def append_batch(self, project_id, batch, who: str = "", name: str | None = None) -> AuditBatch:
        """Validate ``batch`` whole (`read_batch` sources), route every item and store it
        in one transaction.  Refuses an item id already in the project, naming the batch
        that holds it; a refused batch stores nothing."""
        b = batch if isinstance(batch, _Batch) else read_batch(batch, name)
        with self._write() as con:
            project = self._get(con, project_id)
            pid = project.id
            kind_row = con.execute("SELECT kind FROM audit_batches WHERE project_id = ? "
                                   "LIMIT 1", (pid,)).fetchone()
            rows = _validate(b, project, None if kind_row is None else kind_row[0],
                             lambda: _has_fraction(con, pid))
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
            routed = _routing_flags(cfg, a, full_pi, full_u, rows.slices is not None,
                                    project.window)[n0:]
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
        return AuditBatch(bno, rows.sha256, n0, n, b.source, str(who).strip(), at)

    def batches(self, project_id) -> tuple:
        with self._connect() as con:
            pid = self._get(con, project_id).id
            return self._batches(con, pid)

    @staticmethod
    def _batches(con, pid) -> tuple:
        return tuple(AuditBatch(*r) for r in con.execute(
            "SELECT batch_no, sha256, first_pos, n_items, source, added_by, at FROM "
            "audit_batches WHERE project_id = ? ORDER BY batch_no", (pid,)).fetchall())

    # ------------------------------------------------------------- events
    @staticmethod
    def _events(con, pid) -> tuple:
        return tuple(AuditEvent(seq, kind, item, json.loads(lab), who, at, und)
                     for seq, kind, item, lab, who, at, und in con.execute(
                         "SELECT seq, kind, item_id, label, annotator, at, undoes FROM "
                         "audit_events WHERE project_id = ? ORDER BY seq", (pid,)).fetchall())

    def events(self, project_id) -> tuple:
        with self._connect() as con:
            pid = self._get(con, project_id).id
            return self._events(con, pid)

    @staticmethod
    def _in_force(events) -> dict:
        """item_id -> the label event in force (labels not undone), in event order."""
        live = {}
        for e in events:
            if e.kind == "label":
                live[e.item_id] = e
            else:
                live.pop(e.item_id, None)
        return live

    def label(self, project_id, item_id, label, who: str, *,
              expect_seq: int | None = None) -> AuditEvent:
        """Record the label of a routed item in one transaction.  Refuses an item with a
        label in force (DuplicateLabelError: another annotator was first), an item not
        routed to labelling, a label of the wrong kind and a stale view (``expect_seq``)."""
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
            live = self._in_force(events)
            if item_id in live:
                e = live[item_id]
                raise DuplicateLabelError(
                    f"item_id {item_id} already has label {e.label!r} (event {e.seq}, "
                    f"{e.annotator}, {e.at}); nothing was saved")
            if not routed:
                raise LabelError(f"item_id {item_id} (item {pos + 1}) was not routed to "
                                 "labelling when it arrived; the audit never uses its label")
            return self._append(con, pid, events, "label", item_id, value, who)

    def undo(self, project_id, who: str = "", item_id=None, *,
             expect_seq: int | None = None) -> AuditEvent:
        """Cancel the newest label in force (or that of ``item_id``) by appending an
        ``undo`` event; the item goes back to the queue.  Batch labels cannot be undone.
        Only the annotator who gave that label may undo it (names compared without
        surrounding spaces and case), as on a labelling project: nobody takes back a
        colleague's label (a walk-through: bob's ``U`` undid alice's label, then he
        labelled the item himself)."""
        who = str(who).strip()
        if not who:
            raise StoreError("annotator must be a non-empty name: only the annotator who gave "
                             "a label may undo it")
        with self._write() as con:
            pid = self._get(con, project_id).id
            events = self._events(con, pid)
            self._check_seq(events, expect_seq)
            live = self._in_force(events)
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
    def _check_seq(events, expect_seq) -> None:
        last = events[-1].seq if events else 0
        if expect_seq is not None and expect_seq != last:
            raise StaleStateError(
                f"the audit changed since this view was drawn (expected last event "
                f"{expect_seq}, the store has {last}); nothing was saved: look again")

    @staticmethod
    def _append(con, pid, events, kind, item_id, value, who, undoes=None) -> AuditEvent:
        seq = (events[-1].seq if events else 0) + 1
        ev = AuditEvent(seq, kind, item_id, value, who, utc_now(), undoes)
        con.execute("INSERT INTO audit_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (pid, seq, kind, item_id, json.dumps(value), who, ev.at, undoes))
        return ev

    # ------------------------------------------------------------ replay
    def _load(self, project_id):
        with self._read() as con:
            project = self._get(con, project_id)
            pid = project.id
            items = con.execute(
                "SELECT item_id, incumbent, candidate, label, judge, slice, extra, pi, routed "
                "FROM audit_items WHERE project_id = ? ORDER BY pos", (pid,)).fetchall()
            batches = self._batches(con, pid)
            events = self._events(con, pid)
        return project, items, batches, events

    def status(self, project_id) -> AuditStatus:
        """The project recomputed from its items and events (module docstring)."""
        project, items, batches, events = self._load(project_id)
        return _status(project, items, batches, events, self)

    def lookahead(self, project_id, status: AuditStatus | None = None) -> dict:
        """For each class, what the queue shows after the queue's first item is labelled
        with it: (the next item, or None when nothing is left to label; the verdict then),
        computed before the label is given, from the items and events (what the Audit
        page's labelling panel draws at a key press).  Empty when the queue is.  Pass the
        ``status`` just computed to save its recomputation."""
        project, items, batches, events = self._load(project_id)
        now = status if status is not None else _status(project, items, batches, events,
                                                        None)
        if not now.queue or now.last_seq != (events[-1].seq if events else 0):
            return {}
        first = now.queue[0]
        seq = now.last_seq + 1
        out = {}
        for c in now.classes:
            ev = AuditEvent(seq, "label", str(first.item_id), c, "", "", None)
            after = _status(project, items, batches, tuple(events) + (ev,), None)
            out[c] = (after.queue[0] if after.queue else None, after.result.verdict)
        return out

    def stream(self, project_id):
        """(incumbent, candidate, labels in force, judge, slices, item ids) in arrival
        order: what `certlib.audit.audit` is given."""
        project, items, _, events = self._load(project_id)
        return _arrays(project, items, events)[:6]

    def ledger(self, chain: str) -> PromotionLedger:
        """The promotion ledger of ``chain``: every audit in it with its current verdict
        (a ``continue`` entry still holds its delta_k: the schedule is fixed by k)."""
        members = self.projects(chain)
        if not members:
            raise UnknownProjectError(f"no audit project belongs to chain {chain!r}")
        led = PromotionLedger.start(members[0].lifetime_delta)
        for p in members:
            project, items, batches, events = self._load(p.id)
            r = _status(project, items, batches, events, None).result
            led = led.record({"project_id": p.id, "name": p.name, "verdict": r.verdict,
                              "tier": r.tier, "stopping_time": r.stopping_time,
                              "labels_used": r.labels_used, "items_seen": r.items_seen})
        return led

    # ------------------------------------------------------------ export
    def stream_csv(self, project_id) -> str:
        """The project's items as a stream file for ``certlib verify-audit`` (item_id,
        pred_incumbent, pred_candidate, label in force, judge, slice, extra columns)."""
        import polars as pl

        project, items, _, events = self._load(project_id)
        f, g, y, judge, slices, ids, extra = _arrays(project, items, events)
        if not ids:
            raise StoreError(f"audit project {project.id} has no items yet")
        data = {"item_id": ids, "pred_incumbent": [class_value(v) for v in f.tolist()],
                "pred_candidate": [class_value(v) for v in g.tolist()],
                "label": [None if is_none_or_nan(v) else class_value(v) for v in y.tolist()]}
        if project.judge_column:
            data[project.judge_column] = judge.tolist()
        if project.slice_column:
            data[project.slice_column] = slices.tolist()
        for c in (extra[0] if extra else {}):
            if c not in data:
                data[c] = [e.get(c) for e in extra]
        return pl.DataFrame(data, strict=False).write_csv()

    def record(self, project_id) -> dict:
        """The evidence record (`certlib.audit.record.make_record`) of the project now,
        with its batches (hashes) and event log."""
        project, items, batches, events = self._load(project_id)
        st = _status(project, items, batches, events, None)
        f, g, _, judge, slices, _, _ = _arrays(project, items, events)
        rec = make_record(st.result, stream_hash(f, g, judge, slices), project.judge_column,
                          project.slice_column)
        rec["audit_project"] = {**project.to_dict(),
                                "batches": [b.to_dict() for b in batches],
                                "events": [e.to_dict() for e in events]}
        return rec

    def export(self, project_id, record_path, stream_path) -> dict:
        """Write the record (JSON) and the stream (CSV) that ``certlib verify-audit
        RECORD STREAM`` checks; returns the record."""
        from .record import write_record

        Path(stream_path).write_text(self.stream_csv(project_id))
        rec = self.record(project_id)
        write_record(record_path, rec)
        return rec


def _has_fraction(con, pid) -> bool:
    """Whether a stored prediction of project ``pid`` has a fractional part.  Predictions
    are stored as JSON of `class_value`, so whole numbers are ints ("1") and only a
    fractional float shows a "." or an exponent ("0.5", "1e-05")."""
    return bool(con.execute(
        "SELECT EXISTS(SELECT 1 FROM audit_items WHERE project_id = ? AND (instr(incumbent, "
        "'.') OR instr(incumbent, 'e') OR instr(candidate, '.') OR instr(candidate, 'e')))",
        (pid,)).fetchone()[0])


def _label_value(label, like, item_id):
    """A label of the project's kind (numbers written as text become numbers)."""
    v = python_scalar(label)
    if isinstance(like, str):
        if not isinstance(v, str) or not v.strip():
            raise LabelError(f"label {label!r} for item_id {item_id}: expected text like the "
                             "predictions")
        return v
    v = class_value_from_text(v)
    if isinstance(v, str) or _kind_of(v) != "num":
        raise LabelError(f"label {label!r} for item_id {item_id}: expected a number like the "
                         "predictions")
    return class_value(v)


def _decode(texts) -> list:
    """Many JSON texts in one parse (a status reads every item on each call)."""
    return json.loads("[" + ",".join(texts) + "]")


def _arrays(project: AuditProject, items, events):
    live = AuditStore._in_force(events)
    ids = [r[0] for r in items]
    f = np.array(_decode(r[1] for r in items), dtype=object)
    g = np.array(_decode(r[2] for r in items), dtype=object)
    y = np.array(_decode("null" if r[3] is None else r[3] for r in items), dtype=object)
    for i, item in enumerate(ids):
        if y[i] is None and item in live:
            y[i] = live[item].label
    if len(items) and all(not isinstance(v, str) for v in f.tolist()):
        f, g = f.astype(float), g.astype(float)
        y = np.array([np.nan if v is None else float(v) for v in y.tolist()])
    judge = None if project.judge_column is None else np.array([r[4] for r in items], float)
    slices = None if project.slice_column is None else np.array([r[5] for r in items], object)
    extra = _decode(r[6] for r in items)
    return f, g, y, judge, slices, ids, extra


def _sub(s: Stream, lo: int, hi: int) -> Stream:
    return Stream(s.a[lo:hi], s.d[lo:hi], s.has_label[lo:hi], s.labels[lo:hi],
                  None if s.judge is None else s.judge[lo:hi], None)


def _empty_result(cfg: AuditConfig) -> AuditResult:
    e = np.empty(0)
    return AuditResult("continue", None, None, 0, (0.0, 1.0), (-cfg.B, cfg.B), (), 0, None,
                       None, cfg, (), e, e, e, e)


def _status(project, items, batches, events, store) -> AuditStatus:
    cfg = project.config
    f, g, y, judge, slices, ids, extra = _arrays(project, items, events)
    n = len(ids)
    routed = np.array([bool(r[8]) for r in items], dtype=bool)
    ledger = store.ledger(project.chain) if (store is not None and project.chain) else None
    if n == 0:
        return AuditStatus(project, 0, batches, events, 0, _empty_result(cfg), None, (), 0,
                           events[-1].seq if events else 0, (), ledger)
    # checked where it came in (batch, label); a project stored before the fractional
    # label check must still open, so that its labels can be read and undone
    stream = make_stream(f, g, y, judge, slices, check_fractions=False)
    result = _run(stream, cfg)
    # What each running part of the audit still needs (see the module docstring).
    need = {}

    def add(mask, why):
        for i in np.flatnonzero(mask & routed & ~stream.has_label):
            need.setdefault(int(i), []).append(why)

    pos = np.arange(n)
    if result.verdict == "continue":
        add(pos >= _tier1_start(cfg, stream.a), "audit")
    for sv in result.slices:
        if sv.verdict == "continue":
            add(slices == sv.slice, f"slice {sv.slice}")
    windows = None
    if project.window is not None:
        w, out, used, needs = project.window, [], 0, None
        for lo in range(0, n, w):
            hi = min(lo + w, n)
            r = _run(_sub(stream, lo, hi), cfg, offset=lo)
            out.append(WindowVerdict(lo + 1, hi, r.verdict, r.tier,
                                     None if r.stopping_time is None else r.stopping_time + lo,
                                     r.labels_used, r.rho_interval, r.delta_interval))
            used += r.labels_used
            if r.verdict == "continue":
                m = (pos >= lo) & (pos < hi)
                add(m, f"window {lo + 1}-{hi}")
                if needs is None and r.needs_label is not None:
                    needs = r.needs_label
        windows = WindowedAudit(w, tuple(out), used, needs)
    queue = tuple(QueueItem(i, ids[i], class_value(f[i]), class_value(g[i]),
                            float(items[i][7]), None if judge is None else float(judge[i]),
                            None if slices is None else str(slices[i]), extra[i],
                            tuple(need[i])) for i in sorted(need))
    predicted = set(f.tolist()) | set(g.tolist())
    read = set(y[stream.has_label].tolist())
    classes = sorted({class_value(v) for v in predicted | read},
                     key=lambda v: (isinstance(v, str), v))
    unpredicted = []
    for v in sorted(read - predicted, key=lambda v: (isinstance(v, str), v)):
        where = np.flatnonzero(stream.has_label & (y == v))
        unpredicted.append((class_value(v), len(where), ids[where[0]]))
    return AuditStatus(project, n, batches, events, int(stream.has_label.sum()), result,
                       windows, queue, int(routed.sum()), events[-1].seq if events else 0,
                       tuple(classes), ledger, tuple(unpredicted))
