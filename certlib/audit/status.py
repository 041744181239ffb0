"""An audit project's state: its settings, batches and label events as stored
(`AuditProject`, `AuditBatch`, `AuditEvent`), and its status recomputed from them
(SPEC section 11).

Nothing but the items (with their routing, decided at arrival) and the append-only
label events is stored (`certlib.audit.store`).  The labels in force are the batch's
own labels and the label events not undone (`labels_in_force`); the verdict, both
tiers' intervals, the trace, the slice and window verdicts are recomputed from them by
the batch audit (`certlib.audit.core.run_stream`), so they equal `certlib.audit.audit`
on the same items and labels, and the exported record passes ``certlib verify-audit``.

The *queue* is the routed items without a label in force that a part of the audit
still running needs (Tier 1 of the overall audit once it has started, a
slice audit, the Tier 1 of a window), in arrival order; an undo puts its item back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ..core._values import ClassValue, class_value
from .core import AuditConfig, AuditResult, make_stream, run_stream, tier1_start
from .window import WindowedAudit, WindowVerdict

if TYPE_CHECKING:
    from .ledger import PromotionLedger

__all__ = ["AuditBatch", "AuditEvent", "AuditProject", "AuditStatus", "ItemRow", "QueueItem",
           "StreamArrays", "labels_in_force", "recompute", "stream_arrays"]

#: One stored item as the store reads it: (item_id, incumbent, candidate, label, judge,
#: slice, extra, pi, routed), the JSON columns still as text.
ItemRow = tuple[str, str, str, "str | None", "float | None", "str | None", str, float, int]

#: (incumbent, candidate, labels in force, judge, slices, item ids, extra columns).
StreamArrays = tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any],
                     "npt.NDArray[np.float64] | None", "npt.NDArray[np.object_] | None",
                     list[str], list[dict[str, object]]]


@dataclass(frozen=True)
class AuditProject:
    """The fixed settings of one audit project.

    Parameters
    ----------
    id : int
        The project's id in the store.
    name : str
        A name for people (may be empty).
    config : AuditConfig
        The audit's settings (delta is delta_k in a chain).
    judge_column, slice_column : str, optional
        The batch columns holding judge scores and slice keys.
    window : int, optional
        The window length of the windowed view (None: none).
    chain : str, optional
        The promotion-ledger chain the audit belongs to (None: none).
    chain_k : int, optional
        The audit's place k in its chain, from 1.
    lifetime_delta : float, optional
        The chain's lifetime delta (paper Prop. 13).
    created_at : str
        When it was created (UTC, ISO 8601).
    created_by : str
        Who created it.
    """

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

    def to_dict(self) -> dict[str, object]:
        """The settings as JSON-ready data (the record's ``audit_project`` block).

        Returns
        -------
        dict
            ``project_id``, ``name``, ``config`` and the other fields.
        """
        return {"project_id": self.id, "name": self.name, "config": self.config.to_dict(),
                "judge_column": self.judge_column, "slice_column": self.slice_column,
                "window": self.window, "chain": self.chain, "chain_k": self.chain_k,
                "lifetime_delta": self.lifetime_delta, "created_at": self.created_at,
                "created_by": self.created_by}


@dataclass(frozen=True)
class AuditBatch:
    """One appended batch: items ``first_pos .. first_pos + n_items - 1`` (0-based).

    Parameters
    ----------
    batch_no : int
        The batch's number in its project, from 1.
    sha256 : str
        SHA-256 of its checked rows (`certlib.audit.batch.BatchRows`).
    first_pos : int
        Arrival position of its first item, 0-based.
    n_items : int
        Its number of items.
    source : str
        The file or caller's name of the batch.
    added_by : str
        Who appended it.
    at : str
        When (UTC, ISO 8601).
    """

    batch_no: int
    sha256: str
    first_pos: int
    n_items: int
    source: str
    added_by: str
    at: str

    def to_dict(self) -> dict[str, object]:
        """The batch as JSON-ready data.

        Returns
        -------
        dict
            ``batch``, ``sha256``, ``first_item``, ``items``, ``source``, ``added_by``, ``at``.
        """
        return {"batch": self.batch_no, "sha256": self.sha256, "first_item": self.first_pos,
                "items": self.n_items, "source": self.source, "added_by": self.added_by,
                "at": self.at}


@dataclass(frozen=True)
class AuditEvent:
    """A label or an undo in a project's append-only log.

    Parameters
    ----------
    seq : int
        The event's number, 1, 2, ... in its project.
    kind : {"label", "undo"}
        What it records.
    item_id : str
        The item it is about.
    label : int, float or str
        The label given (for an undo, the label it cancels).
    annotator : str
        Who gave it.
    at : str
        When (UTC, ISO 8601).
    undoes : int, optional
        For an undo, the seq of the label event it cancels.
    """

    seq: int
    kind: str
    item_id: str
    label: ClassValue
    annotator: str
    at: str
    undoes: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The event as JSON-ready data.

        Returns
        -------
        dict
            Every field under its own name.
        """
        return {"seq": self.seq, "kind": self.kind, "item_id": self.item_id,
                "label": self.label, "annotator": self.annotator, "at": self.at,
                "undoes": self.undoes}


@dataclass(frozen=True)
class QueueItem:
    """A routed item waiting for its label: what an annotator sees.

    Parameters
    ----------
    pos : int
        Arrival position, 0-based (the audit's item t is ``pos + 1``).
    item_id : str
        The item's id in its batch.
    incumbent, candidate : int, float or str
        The two models' predictions.
    pi : float
        The routing probability pi_t its label was drawn with.
    judge : float, optional
        The judge score (None without a judge column).
    slice : str, optional
        The slice key (None without a slice column).
    extra : dict
        The item's other columns.
    needed_by : tuple of str
        Which running parts of the audit need its label: ``"audit"``,
        ``"slice <key>"``, ``"window <start>-<end>"``.
    """

    pos: int
    item_id: str
    incumbent: ClassValue
    candidate: ClassValue
    pi: float
    judge: float | None
    slice: str | None
    extra: dict[str, object]
    needed_by: tuple[str, ...]


def labels_in_force(events: Iterable[AuditEvent]) -> dict[str, AuditEvent]:
    """The label events in force: labels not undone, by item id, in event order.

    Parameters
    ----------
    events : iterable of AuditEvent
        A project's event log, oldest first.

    Returns
    -------
    dict of str to AuditEvent
        Item id to the label event in force for it.
    """
    live: dict[str, AuditEvent] = {}
    for e in events:
        if e.kind == "label":
            live[e.item_id] = e
        else:
            live.pop(e.item_id, None)
    return live


@dataclass(frozen=True)
class AuditStatus:
    """A project recomputed from its items and events.

    Parameters
    ----------
    project : AuditProject
        The project's settings.
    items : int
        Items appended so far.
    batches : tuple of AuditBatch
        The batches, oldest first.
    events : tuple of AuditEvent
        The label and undo events, oldest first.
    labels_in_force : int
        Items with a label in force (from their batch or an event not undone).
    result : AuditResult
        `certlib.audit.core.run_stream` on every item in arrival order with the labels
        in force (the same as `certlib.audit.audit`).
    windows : WindowedAudit, optional
        The windowed view (None without a window).
    queue : tuple of QueueItem
        The routed items still waiting for a label, in arrival order.
    routed : int
        Items routed to labelling when they arrived.
    last_seq : int
        The newest event's number (0: none), for stale-view checks.
    classes : tuple
        Every class value predicted or labelled, numbers before text.
    ledger : PromotionLedger, optional
        The promotion ledger of the project's chain (None outside a chain).
    unpredicted : tuple
        Labels in force that neither model predicts on any item, as (label, items, first
        item id): a typo (7 for 1) counts both models wrong on that item.
    """

    project: AuditProject
    items: int
    batches: tuple[AuditBatch, ...]
    events: tuple[AuditEvent, ...]
    labels_in_force: int
    result: AuditResult
    windows: WindowedAudit | None
    queue: tuple[QueueItem, ...]
    routed: int
    last_seq: int
    classes: tuple[ClassValue, ...]
    ledger: PromotionLedger | None = field(default=None, compare=False)
    unpredicted: tuple[tuple[ClassValue, int, str], ...] = ()

    @property
    def newest_label(self) -> AuditEvent | None:
        """The label event an undo without an item would cancel (None: no label in
        force)."""
        live = labels_in_force(self.events)
        return max(live.values(), key=lambda e: e.seq) if live else None

    def to_dict(self) -> dict[str, object]:
        """The status as JSON-ready data (``certlib audit-project status --json``).

        Returns
        -------
        dict
            The project, counts, the queue's length and first item, the result's keys,
            and the windows, ledger and unpredicted labels where there are any.
        """
        d: dict[str, object] = {
            "project": self.project.to_dict(), "items": self.items,
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


def _decode(texts: Iterable[str]) -> list[Any]:
    """Many JSON texts in one parse (a status reads every item on each call)."""
    decoded: list[Any] = json.loads("[" + ",".join(texts) + "]")
    return decoded


def stream_arrays(project: AuditProject, items: Sequence[ItemRow],
                  events: Iterable[AuditEvent]) -> StreamArrays:
    """The stored items as the arrays `certlib.audit.audit` is given.

    Parameters
    ----------
    project : AuditProject
        The project (its judge and slice columns).
    items : sequence of ItemRow
        The stored items in arrival order.
    events : iterable of AuditEvent
        The event log, oldest first.

    Returns
    -------
    tuple
        (incumbent, candidate, labels in force, judge, slices, item ids, extra columns):
        predictions as floats when every one is a number (labels then NaN where
        unlabelled), else as objects; judge and slices None without their columns.
    """
    live = labels_in_force(events)
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
    extra: list[dict[str, object]] = _decode(r[6] for r in items)
    return f, g, y, judge, slices, ids, extra


def _empty_result(cfg: AuditConfig) -> AuditResult:
    e = np.empty(0)
    return AuditResult("continue", None, None, 0, (0.0, 1.0), (-cfg.B, cfg.B), (), 0, None,
                       None, cfg, (), e, e, e, e)


def recompute(project: AuditProject, items: Sequence[ItemRow],
              batches: tuple[AuditBatch, ...], events: tuple[AuditEvent, ...], *,
              ledger: PromotionLedger | None = None) -> AuditStatus:
    """The project's status from its stored items and events (module docstring).

    Parameters
    ----------
    project : AuditProject
        The project's settings.
    items : sequence of ItemRow
        The stored items in arrival order.
    batches : tuple of AuditBatch
        The project's batches.
    events : tuple of AuditEvent
        The event log, oldest first (a label event not yet stored may be appended to
        see what the queue would show after it).
    ledger : PromotionLedger, optional
        The chain's ledger, passed through to the status.

    Returns
    -------
    AuditStatus
        The verdict, intervals, windows, queue and class list now.
    """
    cfg = project.config
    f, g, y, judge, slices, ids, extra = stream_arrays(project, items, events)
    n = len(ids)
    routed = np.array([bool(r[8]) for r in items], dtype=bool)
    if n == 0:
        return AuditStatus(project, 0, batches, events, 0, _empty_result(cfg), None, (), 0,
                           events[-1].seq if events else 0, (), ledger)
    # checked where it came in (batch, label); a project stored before the fractional
    # label check must still open, so that its labels can be read and undone
    stream = make_stream(f, g, y, judge=judge, slices=slices, check_fractions=False)
    result = run_stream(stream, cfg)
    # What each running part of the audit still needs (see the module docstring).
    need: dict[int, list[str]] = {}

    def add(mask: npt.NDArray[np.bool_], why: str) -> None:
        for i in np.flatnonzero(mask & routed & ~stream.has_label):
            need.setdefault(int(i), []).append(why)

    pos = np.arange(n)
    if result.verdict == "continue":
        add(pos >= tier1_start(cfg, stream.a), "audit")
    for sv in result.slices:  # a slice verdict exists only with a slice column
        if sv.verdict == "continue":
            add(cast(npt.NDArray[np.object_], slices) == sv.slice, f"slice {sv.slice}")
    windows = None
    if project.window is not None:
        w, used, needs = project.window, 0, None
        out: list[WindowVerdict] = []
        for lo in range(0, n, w):
            hi = min(lo + w, n)
            r = run_stream(stream.part(lo, hi), cfg, offset=lo)
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

