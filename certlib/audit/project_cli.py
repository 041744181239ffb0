"""``certlib audit-project new|append|label|status|export``: a pipeline feeds traffic and
reads the verdict while annotators label in the browser (`certlib.audit.store`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..cli_output import emit, interval
from ..errors import ParameterError

if TYPE_CHECKING:
    from .store import AuditStore

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit-project`` and its actions to the ``certlib`` command.

    Parameters
    ----------
    sub : argparse subparsers
        The ``certlib`` parser's subcommands.
    """
    from .core import CONFIDENCE, DEFAULT_CONFIDENCE

    p = sub.add_parser("audit-project", help="a running update audit kept in the label store",
                       description="A persistent Discern audit: append traffic in batches, "
                       "label the routed disagreements, read the verdict, export the record.")
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--store", default=None, metavar="PATH",
                       help="SQLite store (default $CERTLIB_STORE or ./certlib_labels.db)")
        q.add_argument("--json", action="store_true", help="print one JSON object")

    n = acts.add_parser("new", help="start an audit project; prints its id")
    n.add_argument("--epsilon", type=float, required=True, help="tolerance eps > 0 on Delta")
    n.add_argument("--delta", type=float, default=0.05,
                   help="miscoverage (default 0.05); with --chain the chain's lifetime budget")
    n.add_argument("--pi", type=float, default=None, help="routing probability (default 0.5)")
    n.add_argument("--pi-min", type=float, default=None, dest="pi_min", help="routing floor")
    n.add_argument("--seed", type=int, default=0, help="seed of the labelling draws")
    n.add_argument("--confidence", choices=CONFIDENCE, default=DEFAULT_CONFIDENCE,
                   help="Tier 1's confidence sequence (default %(default)s)")
    n.add_argument("--judge", default=None, metavar="COLUMN", help="judge score column")
    n.add_argument("--slices", default=None, metavar="COLUMN", help="slice column")
    n.add_argument("--window", type=int, default=None, metavar="W",
                   help="also audit every window of W items (drift)")
    n.add_argument("--chain", default=None, metavar="NAME",
                   help="promotion-ledger chain: audit k runs at delta 6/(pi^2 k^2)")
    n.add_argument("--name", default="", help="a name for the project")
    n.add_argument("--who", default="", help="who starts it (kept in the record)")
    common(n)
    n.set_defaults(func=_new)

    a = acts.add_parser("append", help="append a batch (CSV or Parquet) of items")
    a.add_argument("project", metavar="PROJECT")
    a.add_argument("batch", metavar="BATCH")
    a.add_argument("--who", default="pipeline", help="who appends it (default: pipeline)")
    common(a)
    a.set_defaults(func=_append)

    lab = acts.add_parser("label", help="label a queued item, or --undo the newest label")
    lab.add_argument("project", metavar="PROJECT")
    lab.add_argument("item", metavar="ITEM_ID", nargs="?")
    lab.add_argument("label", metavar="LABEL", nargs="?")
    lab.add_argument("--who", required=True, help="annotator name (kept in the record)")
    lab.add_argument("--undo", action="store_true",
                     help="undo the newest label in force (or that of ITEM_ID)")
    common(lab)
    lab.set_defaults(func=_label)

    s = acts.add_parser("status", help="verdict, intervals and the labelling queue")
    s.add_argument("project", metavar="PROJECT")
    s.add_argument("--queue", type=int, default=5, metavar="N",
                   help="show the first N queued items (default 5)")
    common(s)
    s.set_defaults(func=_status)

    e = acts.add_parser("export", help="write the evidence record and its stream file")
    e.add_argument("project", metavar="PROJECT")
    e.add_argument("--record", required=True, metavar="PATH", help="record JSON to write")
    e.add_argument("--stream", required=True, metavar="PATH", help="stream CSV to write")
    common(e)
    e.set_defaults(func=_export)


def _store(args: argparse.Namespace) -> AuditStore:
    from .store import AuditStore

    return AuditStore(args.store)


def _new(args: argparse.Namespace) -> int:
    st = _store(args)
    pid = st.create(epsilon=args.epsilon, delta=args.delta, pi=args.pi, pi_min=args.pi_min,
                    seed=args.seed, judge_column=args.judge, slice_column=args.slices,
                    window=args.window, chain=args.chain, name=args.name, who=args.who,
                    confidence=args.confidence)
    project = st.project(pid)
    emit(args, project.to_dict(), f"audit project {pid} (delta {project.config.delta:.6g}"
         + (f", chain {project.chain} k={project.chain_k}" if project.chain else "") + ")")
    return 0


def _append(args: argparse.Namespace) -> int:
    st = _store(args)
    b = st.append_batch(args.project, args.batch, who=args.who)
    s = st.status(args.project)
    payload = {"batch": b.to_dict(), "items": s.items, "queue": len(s.queue),
               "verdict": s.result.verdict}
    emit(args, payload, f"batch {b.batch_no}: {b.n_items} items (items {b.first_pos + 1}-"
         f"{b.first_pos + b.n_items}), sha256 {b.sha256}\n"
         f"verdict {s.result.verdict}; {len(s.queue)} item(s) queued for labelling")
    return 0


def _label(args: argparse.Namespace) -> int:
    st = _store(args)
    if args.undo:
        if args.label is not None:
            raise ParameterError("`--undo` takes at most an ITEM_ID, not a LABEL")
        ev = st.undo(args.project, args.who, args.item)
    else:
        if args.item is None or args.label is None:
            raise ParameterError("`label` needs ITEM_ID and LABEL (or --undo)")
        ev = st.label(args.project, args.item, args.label, args.who)
    s = st.status(args.project)
    payload = {"event": ev.to_dict(), "verdict": s.result.verdict, "queue": len(s.queue)}
    emit(args, payload, f"event {ev.seq}: {ev.kind} item {ev.item_id} = {ev.label!r} by "
         f"{ev.annotator}\nverdict {s.result.verdict}; {len(s.queue)} item(s) queued")
    return 0


def _status(args: argparse.Namespace) -> int:
    if args.queue < 0:
        raise ParameterError(f"`--queue` must be >= 0, got {args.queue}")
    s = _store(args).status(args.project)
    d = s.to_dict()
    d["queue_head"] = [{"item_id": q.item_id, "item": q.pos + 1, "incumbent": q.incumbent,
                        "candidate": q.candidate, "pi": q.pi, "needed_by": list(q.needed_by)}
                       for q in s.queue[:args.queue]]
    r = s.result
    tier = f" (tier {r.tier})" if r.tier is not None else ""
    lines = [f"project        {s.project.id} {s.project.name}".rstrip(),
             f"verdict        {r.verdict}{tier}",
             f"items          {s.items} in {len(s.batches)} batch(es); {s.routed} routed",
             f"stopping_time  {r.stopping_time}",
             f"labels_used    {r.labels_used} ({s.labels_in_force} labels in force)",
             f"rho_interval   {interval(r.rho_interval)}",
             f"delta_interval {interval(r.delta_interval)}",
             f"queue          {len(s.queue)} item(s)"]
    for q in s.queue[:args.queue]:
        lines.append(f"  item_id {q.item_id}: incumbent {q.incumbent!r}, candidate "
                     f"{q.candidate!r}, pi {q.pi:.3g} ({', '.join(q.needed_by)})")
    for sv in r.slices:
        lines.append(f"slice {sv.slice}: {sv.verdict}, {sv.labels_used} labels, "
                     f"{interval(sv.delta_interval)}")
    if s.windows is not None:
        for w in s.windows.windows:
            lines.append(f"window {w.start}-{w.end}: {w.verdict}, {w.labels_used} labels")
    if s.ledger is not None:
        lines.append(f"ledger {s.project.chain}: lifetime delta {s.ledger.lifetime_delta:.6g}, "
                     f"{len(s.ledger.entries)} audit(s), spent {s.ledger.spent:.6g}")
    emit(args, d, "\n".join(lines))
    return 0


def _export(args: argparse.Namespace) -> int:
    rec = _store(args).export(args.project, args.record, args.stream)
    emit(args, {"record": args.record, "stream": args.stream, "verdict": rec["verdict"],
                "labels_used": rec["labels_used"]},
         f"wrote {args.record} and {args.stream}; check with: certlib verify-audit "
         f"{args.record} {args.stream}")
    return 0
