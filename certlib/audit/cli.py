"""``certlib audit`` and ``certlib verify-audit`` (SPEC sections 10-11)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..cli_output import emit, interval
from ..errors import InvalidValueError, LabelError, ParameterError

if TYPE_CHECKING:
    from .batch import StreamColumns

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit``, ``verify-audit`` and ``audit-project`` to the ``certlib`` command.

    Parameters
    ----------
    sub : argparse subparsers
        The ``certlib`` parser's subcommands.
    """
    from .core import CONFIDENCE, DEFAULT_CONFIDENCE

    p = sub.add_parser("audit", help="certified no-regression audit of a model update (Discern)",
                       description="Audit candidate vs incumbent on a stream with columns "
                       "pred_incumbent, pred_candidate and optional label. With labels it "
                       "replays; without (or past the last label) it stops at the first row "
                       "that needs a label and names it.")
    p.add_argument("stream", metavar="STREAM", help="CSV or Parquet stream file")
    p.add_argument("--epsilon", type=float, required=True, help="tolerance eps > 0 on Delta")
    p.add_argument("--delta", type=float, default=0.05,
                   help="miscoverage (default 0.05; split delta0 = delta1 = delta/2); with "
                        "--ledger, the lifetime budget")
    p.add_argument("--pi", type=float, default=None, help="constant routing probability "
                   "on disagreements (default 0.5)")
    p.add_argument("--pi-min", type=float, default=None, dest="pi_min",
                   help="routing floor (default: pi; 0.1 with --judge)")
    p.add_argument("--slices", default=None, metavar="COLUMN", help="per-slice verdicts by COLUMN")
    p.add_argument("--judge", default=None, metavar="COLUMN",
                   help="judge score column in [0,1]: pi_t = pi_min + (1 - pi_min) judge_t")
    p.add_argument("--window", type=int, default=None, metavar="W",
                   help="restart the audit every W items (drift)")
    p.add_argument("--seed", type=int, default=0, help="seed of the labelling draws")
    p.add_argument("--confidence", choices=CONFIDENCE, default=DEFAULT_CONFIDENCE,
                   help="Tier 1's confidence sequence (default %(default)s)")
    p.add_argument("--record", default=None, metavar="PATH", help="write the evidence record JSON")
    p.add_argument("--ledger", default=None, metavar="PATH",
                   help="promotion ledger JSON: run at delta_k = delta 6/(pi^2 k^2) and append")
    p.add_argument("--baselines", action="store_true",
                   help="also report uniform, PPI-style and active-testing labels to verdict")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_run_audit)

    v = sub.add_parser("verify-audit", help="recompute an audit evidence record from its stream")
    v.add_argument("record", metavar="RECORD")
    v.add_argument("stream", metavar="STREAM")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=_run_verify)

    from .project_cli import register as register_project  # certlib audit-project

    register_project(sub)


_MEANING = {
    "safe": "promote: the candidate is at most epsilon worse, at any stopping time",
    "regression": "do not promote: the candidate is worse than the incumbent",
    "continue": "no verdict yet: more items (or labels) are needed",
}


def _table(d: dict[str, Any]) -> str:
    tier = f" (tier {d['tier']})" if d.get("tier") is not None else ""
    meaning = f"  -- {_MEANING[d['verdict']]}" if d.get("verdict") in _MEANING else ""
    lines = [f"verdict        {d['verdict']}{tier}{meaning}",
             f"items_seen     {d.get('items_seen', '')}",
             f"stopping_time  {d['stopping_time']}",
             f"labels_used    {d['labels_used']}",
             f"rho_interval   {interval(d['rho_interval'])}",
             f"delta_interval {interval(d['delta_interval'])}"]
    if d.get("needs_label") is not None:
        lines.append(f"needs_label    row {d['needs_label']} (zero-based): label it and rerun")
    if d.get("slices"):
        lines.append("slice          verdict     stop     labels  delta_interval")
        for s in d["slices"]:
            lines.append(f"{s['slice']:<14} {s['verdict']:<11} {s['stopping_time']!s:<8} "
                         f"{s['labels_used']:<7} {interval(s['delta_interval'])}")
    if d.get("windows"):
        lines.append("window         verdict     stop     labels")
        for w in d["windows"]:
            lines.append(f"{w['start']}-{w['end']:<10} {w['verdict']:<11} "
                         f"{w['stopping_time']!s:<8} {w['labels_used']}")
    if d.get("baselines"):
        lines.append("method         verdict     stop     labels")
        for b in d["baselines"]:
            lines.append(f"{b['method']:<14} {b['verdict']:<11} {b['stopping_time']!s:<8} "
                         f"{b['labels_used']}")
    return "\n".join(lines)


def _run_audit(args: argparse.Namespace) -> int:
    from .batch import read_stream

    if args.window is not None and (args.slices or args.record or args.ledger):
        raise ParameterError("`--window` cannot be combined with --slices, --record or --ledger")
    cols = read_stream(args.stream, judge=args.judge, slices=args.slices)
    try:
        return _audit_columns(args, cols)
    except (InvalidValueError, LabelError):
        # a bad cell: named as the Audit page names it (the file's column, the data row
        # counted from 1, the item id), not as the API's parameter at a 0-based row; the
        # cell-by-cell check runs only now, as it takes 4 times the audit's time on a
        # 1M-row stream
        cols.explain()
        raise


def _audit_columns(args: argparse.Namespace, cols: StreamColumns) -> int:
    from .baselines import compare_baselines
    from .core import AuditConfig, make_stream, run_stream
    from .ledger import PromotionLedger
    from .record import make_record, stream_hash, write_record
    from .window import audit_windowed

    delta = args.delta
    ledger = None
    if args.ledger:
        ledger = PromotionLedger.open(args.ledger, args.delta)
        delta = ledger.next_delta()
    common = {"epsilon": args.epsilon, "delta": delta, "seed": args.seed, "pi": args.pi,
              "pi_min": args.pi_min, "judge": cols.judge, "confidence": args.confidence}
    if args.window is not None:
        payload = audit_windowed(cols.incumbent, cols.candidate, cols.labels,
                                 window=args.window, **common).to_dict()
    else:
        cfg = AuditConfig.make(epsilon=args.epsilon, delta=delta, pi=args.pi, pi_min=args.pi_min,
                               judge=cols.judge is not None, seed=args.seed,
                               confidence=args.confidence)
        stream = make_stream(cols.incumbent, cols.candidate, cols.labels, judge=cols.judge,
                             slices=cols.slices)
        result = run_stream(stream, cfg)
        payload = result.to_dict()
        if args.record:
            digest = stream_hash(cols.incumbent, cols.candidate, judge=cols.judge,
                                 slices=cols.slices)
            write_record(args.record, make_record(result, digest, judge_column=args.judge,
                                                  slice_column=args.slices))
            payload["record"] = args.record
        if ledger is not None:
            ledger = ledger.record({"stream": str(args.stream), "verdict": result.verdict,
                                    "tier": result.tier, "stopping_time": result.stopping_time,
                                    "labels_used": result.labels_used})
            ledger.save(args.ledger)
            payload["ledger"] = {"k": ledger.k - 1, "delta_k": delta,
                                 "lifetime_delta": ledger.lifetime_delta, "spent": ledger.spent}
    if args.baselines:
        payload.update(compare_baselines(cols.incumbent, cols.candidate, cols.labels,
                                         **common).to_dict())
    emit(args, payload, _table(payload))
    return 0


def _run_verify(args: argparse.Namespace) -> int:
    from .batch import read_stream
    from .record import read_record, verify_record

    rec = read_record(args.record)
    cfg = rec["config"]
    judge_col = rec.get("judge_column")
    slice_col = rec.get("slice_column")
    cols = read_stream(args.stream, judge=judge_col, slices=slice_col)
    if cfg["routing"]["kind"] == "judge" and cols.judge is None:
        raise ParameterError("the record routes by a judge but names no judge column")
    ver = verify_record(rec, cols.incumbent, cols.candidate, cols.labels, judge=cols.judge,
                        slices=cols.slices)
    table = (f"verified: every interval, the verdict ({ver.recomputed['verdict']}) and the "
             "trace match") if ver.ok else \
        "MISMATCH:\n" + "\n".join(f"  {m}" for m in ver.mismatches)
    emit(args, ver.to_dict(), table)
    if not ver.ok:
        print(f"certlib: verify-audit: {len(ver.mismatches)} mismatch(es) between "
              f"{args.record} and {args.stream}", file=sys.stderr)
    return 0 if ver.ok else 1
