"""Command line: ``certlib <command> POOL [options]`` (SPEC section 10).

Every command prints a readable table, or with ``--json`` one JSON object on
stdout with the keys of SPEC section 10 (and a few more).  Exit code 0 on
success, 2 on bad input with a one-line message on stderr (no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .cli_output import emit, percent
from .errors import CertlibError

if TYPE_CHECKING:
    from .core.pool import Pool
    from .labelling.replay import ReplayResult

__all__ = ["build_parser", "main"]


def _pool_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("pool", metavar="POOL", help="CSV or Parquet pool file (SPEC section 2)")
    p.add_argument("--classes", help="declare the class set, comma-separated (e.g. 0,1,2)")
    p.add_argument("--objective", default="augrc", choices=["augrc", "accuracy"],
                   help="objective to compare (default: augrc)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _tolerance_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tolerance", "--tau", dest="tolerance", default="0",
                   help="objective tolerance tau >= 0 (default 0: exact choice)")


def _load(args: argparse.Namespace) -> Pool:
    from .io import load_pool

    classes = None
    if args.classes:
        classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    return load_pool(args.pool, classes=classes, objective=args.objective)


# ------------------------------------------------------------------- prelabel
def _cmd_prelabel(args: argparse.Namespace) -> int:
    from .certificates.prelabel import prelabel_bound

    pool = _load(args)
    r = prelabel_bound(pool, tolerance=args.tolerance)
    lines = [
        f"pool        {args.pool}: n = {r.n} rows, K = {r.K} candidates ({pool.objective})",
        f"tolerance   {float(r.tolerance):g}",
        f"prelabel    {r.prelabel_bound} labels ({percent(r.prelabel_fraction)} of the pool)",
        "",
        (f"Any budget below {r.prelabel_bound} labels is ruled out: no policy can certify "
         "the choice with fewer labels, whatever the labels turn out to be."),
        "",
        f"{'candidate':<20} {'labels needed at least to certify it':>36}",
    ]
    for name, v in zip(r.candidates, r.per_target):
        lines.append(f"{name:<20} {('never' if v is None else str(v)):>36}")
    emit(args, r.to_dict(), "\n".join(lines))
    return 0


# --------------------------------------------------------------------- replay
def _cmd_replay(args: argparse.Namespace) -> int:
    from .labelling.replay import replay

    pool = _load(args)
    r = replay(pool, policy=args.policy, rule=args.rule, tolerance=args.tolerance,
               seed=args.seed, budget=args.budget, label_errors=args.label_errors)
    if r.certified:
        how = "certified exactly" if r.tolerance == 0 else \
            f"certified within tolerance (worst-case gap {float(r.excess):.6g})"
    else:
        how = f"NOT certified: budget exhausted; worst-case gap {float(r.excess):.6g}"
        from .certificates.prelabel import prelabel_bound

        pre = prelabel_bound(pool, tolerance=args.tolerance).prelabel_bound
        if r.budget is not None and r.budget < pre:
            how += f"; a budget below the prelabel bound {pre} is ruled out for every policy"
    first = ", ".join(str(x) for x in r.order[:10]) + (" ..." if len(r.order) > 10 else "")
    lines = [
        f"pool              {args.pool}: n = {r.n} rows, K = {len(r.candidates)} candidates",
        f"policy            {r.policy}   rule {r.rule}   tolerance {float(r.tolerance):g}"
        + (f"   budget {r.budget}" if r.budget is not None else ""),
        f"labels read       {r.labels_read} of {r.n} ({percent(r.labels_fraction)})",
        f"selected          {r.selected} ({how})",
        f"full-pool winner  {r.full_pool_winner}",
        f"first rows read   {first}",
    ]
    if r.label_errors is not None:
        lines += _label_error_lines(r)
    emit(args, r.to_dict(), "\n".join(lines))
    return 0


def _label_error_lines(r: ReplayResult) -> list[str]:
    """The label-error margin at stop and the full-pool fragility: how many wrong labels
    among the rows read, and among all n, the answer survives."""
    m, f = r.margin, r.fragility
    assert m is not None and f is not None  # both set when label_errors was asked
    rows = ", ".join(str(x) for x in m.critical_ids[:12]) + \
        (" ..." if len(m.critical_ids) > 12 else "")
    frag = ("the full-pool choice survives any number of wrong labels" if f.flips is None
            else f"the full-pool choice {f.selected} changes if {f.flips} of the {r.n} "
                 f"labels are wrong (it survives any {f.flips - 1})")
    out = [f"label errors      stop when the answer survives any {r.label_errors} wrong "
           f"label(s) among the rows read; status: {r.status}",
           f"margin at stop    {m.text()}"]
    if m.critical_ids:
        out.append(f"rows to re-check  {rows}")
    out.append(f"fragility         {frag}")
    return out


# ---------------------------------------------------------------- certificate
def _cmd_certificate(args: argparse.Namespace) -> int:
    from .certificates.certificate import certify

    pool = _load(args)
    if args.partial:
        return _partial_certificate(args, pool)
    c = certify(pool, tolerance=args.tolerance, work_limit=args.work_limit,
                time_limit=args.time_limit)
    d = c.to_dict()
    wit = _witness_text(c.witness)
    lp = "n/a" if c.lp_value is None else f"{c.lp_value:.4f}"
    share = f"{percent(c.lower / pool.n)}" + ("" if c.exact else f" to {percent(c.upper / pool.n)}")
    if c.exact:
        size = f"{c.lower} labels (exact; {share} of the pool)"
    elif c.solver_minimum is not None:
        # HiGHS's optimum is a claim, shown apart from what is proved
        size = (f"{c.solver_minimum} by HiGHS, proved [{c.lower}, {c.upper}] "
                f"({share} of the pool)")
    else:
        size = f"{c.lower} to {c.upper} labels (enclosure; {share} of the pool)"
    search = f"{c.work} work units of {args.work_limit}"
    if c.time_limited:
        search += f"; stopped by the {args.time_limit:g} s time limit (machine-dependent)"
    lines = [
        f"pool                 {args.pool}: n = {pool.n} rows, K = {pool.K} candidates",
        f"selected             {c.selected}",
        f"minimum certificate  {size}",
        f"LP relaxation        {lp}",
        f"search               {search}",
        f"witness ({len(c.witness)} rows)  {wit}",
        "",
        ("With these labels known, the witness rows alone fix the selected candidate for "
         "every completion; no smaller set than the lower bound can."),
    ]
    emit(args, d, "\n".join(lines))
    return 0


def _witness_text(witness: Sequence[object]) -> str:
    """The first 12 witness row ids, comma-separated (the certificate tables)."""
    return ", ".join(str(x) for x in witness[:12]) + (" ..." if len(witness) > 12 else "")


def _partial_certificate(args: argparse.Namespace, pool: Pool) -> int:
    """``certificate --partial``: the rows holding a label count as read (a labelling
    run's labels merged into the pool file); the minimum certificate among them is
    enclosed, as the Label page's hindsight does."""
    from .certificates.certificate import certify_partial
    from .labelling.progress import sufficed_text

    c = certify_partial(pool, tolerance=args.tolerance, work_limit=args.work_limit,
                        time_limit=args.time_limit)
    d = {"partial": True, **c.to_dict()}
    if not c.certified:
        size = (f"no certificate yet: the {c.labels_read:,} labels read certify no candidate; "
                f"any certificate needs at least {c.lower:,} labels")
    else:  # the Label and Certificate pages' words
        size = f"of the {c.labels_read:,} labels read, " + sufficed_text(c)
    if c.time_limited:
        size += f"; the search stopped at the {args.time_limit:g} s time limit"
    lines = [
        f"pool                 {args.pool}: n = {pool.n} rows, K = {pool.K} candidates, "
        f"{c.labels_read} labels read (the rows holding a label)",
        f"selected             {c.selected if c.certified else 'none certified'}",
        f"hindsight            {size}",
    ]
    if c.certified:
        lines += [f"witness ({len(c.witness)} rows)  {_witness_text(c.witness)}", "",
                  "The witness rows alone, with their labels, fix the selected candidate for "
                  "every completion of the unread labels."]
    emit(args, d, "\n".join(lines))
    return 0


# ------------------------------------------------------------------ verify-record
def _cmd_verify_record(args: argparse.Namespace) -> int:
    """A labelling project's evidence record (the Label page's download, SPEC section 12)
    recomputed from its labels and the pool file; exit 1 on any mismatch.  Without
    ``--classes`` the pool is read with the record's class set (a declared set can hold a
    class the file never shows); a file that cannot take that set is a mismatch, not bad
    input, as long as it reads on its own."""
    from .io import load_pool
    from .labelling.record import read_record, verify_record
    from .certificates.verification import Verification

    rec = read_record(args.record)
    objective = args.objective or (rec["objective"] if rec.get("objective") in
                                   ("augrc", "accuracy") else "augrc")
    refused = None
    if args.classes is not None:
        pool = load_pool(args.pool, objective=objective,
                         classes=[c.strip() for c in args.classes.split(",") if c.strip()])
    elif isinstance(rec.get("classes"), list) and rec["classes"]:
        named = [str(c) for c in rec["classes"]]
        try:
            pool = load_pool(args.pool, classes=named, objective=objective)
        except CertlibError as exc:  # the file, read on its own, decides what to say
            pool = load_pool(args.pool, objective=objective)
            refused = (f"the pool file does not take the record's class set {named!r}: "
                       f"{exc}")
    else:
        pool = load_pool(args.pool, objective=objective)
    ver = verify_record(rec, pool)
    if refused:
        ver = Verification((refused, *ver.mismatches), ver.recomputed)
    got = ver.recomputed
    table = (f"verified: the record's labels replay to its verdict ({got.get('status')}, "
             f"selected {got.get('selected')!r} after {got.get('labels_read')} labels), "
             "and every bound, setting and event matches") if ver.ok else \
        "MISMATCH:\n" + "\n".join(f"  {m}" for m in ver.mismatches)
    emit(args, {**ver.to_dict(), "recomputed": got}, table)
    if not ver.ok:
        print(f"certlib: verify-record: {len(ver.mismatches)} mismatch(es) between "
              f"{args.record} and {args.pool}", file=sys.stderr)
    return 0 if ver.ok else 1


def build_parser() -> argparse.ArgumentParser:
    """The ``certlib`` command line's parser, with every subcommand registered.

    Returns
    -------
    argparse.ArgumentParser
        ``prelabel``, ``replay``, ``certificate``, ``verify-record``, the audit commands
        (`certlib.audit.cli`) and ``plan`` (`certlib.cli_plan`).
    """
    from .certificates.covering import DEFAULT_TIME_LIMIT, DEFAULT_WORK_LIMIT
    from .policies import policy_names

    parser = argparse.ArgumentParser(
        prog="certlib",
        description="Exact certificates and budgets for selective model choice; "
        "certified no-regression audits for model updates.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("prelabel", help="which labelling budgets can never suffice")
    _pool_args(p)
    _tolerance_arg(p)
    p.set_defaults(func=_cmd_prelabel)

    p = sub.add_parser("replay", help="labels a policy needs on a fully labelled pool")
    _pool_args(p)
    p.add_argument("--policy", default="static-range", choices=list(policy_names()))
    p.add_argument("--rule", default="shared", choices=["shared", "separate", "centered"])
    _tolerance_arg(p)
    p.add_argument("--seed", type=int, default=0, help="seed of random policies (default 0)")
    p.add_argument("--budget", type=int, default=None, help="stop after this many labels")
    p.add_argument("--label-errors", type=int, default=None, metavar="E",
                   help="stop only when the answer survives any E wrong labels among the rows "
                   "read; reports the label-error margin and full-pool fragility")
    p.set_defaults(func=_cmd_replay)

    p = sub.add_parser("certificate", help="hindsight enclosure of the minimum certificate")
    _pool_args(p)
    _tolerance_arg(p)
    p.add_argument("--work-limit", type=int, default=DEFAULT_WORK_LIMIT,
                   help="search nodes spent closing the gap to an exact minimum; the same "
                   f"on every machine (default {DEFAULT_WORK_LIMIT}; 0: LP enclosure only)")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT,
                   help="seconds, a safety net that stops the search on pathological pools "
                   f"(default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--partial", action="store_true",
                   help="the pool holds the labels of a partial run (some rows unlabelled): "
                   "enclose how many of them would have sufficed (the hindsight of the "
                   "Label page)")
    p.set_defaults(func=_cmd_certificate)

    p = sub.add_parser("verify-record",
                       help="recompute a labelling project's evidence record from the pool")
    p.add_argument("record", metavar="RECORD", help="the evidence record (JSON) of a project")
    p.add_argument("pool", metavar="POOL", help="the pool file the project labelled")
    p.add_argument("--classes", default=None,
                   help="the class set, comma-separated (default: the record's)")
    p.add_argument("--objective", default=None, choices=["augrc", "accuracy"],
                   help="(default: the record's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_verify_record)

    from .audit import cli as audit_cli

    audit_cli.register(sub)
    from . import cli_plan

    cli_plan.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line: parse ``argv``, run the command, return its exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 when ``verify-record`` finds a mismatch, 2 on bad input (a
        `CertlibError`, printed as one line on stderr, no traceback).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CertlibError as exc:
        print(f"certlib: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
