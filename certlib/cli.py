"""Command line: ``certlib <command> POOL... [options]`` (SPEC section 10).

Every command prints a readable table, or with ``--json`` one JSON object on
stdout with the keys of SPEC section 10 (and a few more).  Exit code 0 on
success, 2 on bad input with a one-line message on stderr (no traceback).

The pool commands (``prelabel``, ``replay``, ``certificate``, ``plan``) read one file
or several (one per model, joined on their id column; zips are opened) through
`certlib.columns.read_sources`, with a column map from ``--label``, ``--id`` and
``--candidate`` when given (`candidate_columns` reads one ``--candidate``), name the
duplicate candidates (`certlib.core.duplicates`) and, with ``--merge-duplicates``,
leave the later ones out before computing.  While a file is read, a progress bar is
drawn on stderr when it is a terminal (`certlib.cli_progress`; ``--quiet``: none).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_output import emit, percent
from .errors import CertlibError, ParameterError, PoolFileError

if TYPE_CHECKING:
    from .columns import CandidateColumns, ColumnMap
    from .core.pool import Pool
    from .io import Progress
    from .labelling.replay import ReplayResult

__all__ = ["PoolRead", "add_pool_args", "build_parser", "candidate_columns", "main",
           "read_pool_args"]

_PROBA = "proba:"
_NOTE = " " * 12


def add_pool_args(p: argparse.ArgumentParser, *, objective_help: str | None = None) -> None:
    """Add the arguments every pool command takes: the files, the column map, the class
    set, the objective, ``--merge-duplicates``, ``--quiet`` and ``--json``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A pool command's parser.
    objective_help : str, optional
        The help of ``--objective`` (default: "objective to compare (default: augrc)").
    """
    p.add_argument("pools", nargs="+", metavar="POOL",
                   help="CSV or Parquet pool file (SPEC section 2), or several: one per model, "
                   "joined on their id column; zips of them too")
    p.add_argument("--label", metavar="COL", default=None,
                   help="the label column (default: label, y_true, target, ... when there is one)")
    p.add_argument("--id", dest="id_column", metavar="COL", default=None,
                   help="the row id column; several files are joined on it (default: row_id, "
                   "id, ... when there is one)")
    p.add_argument("--candidate", action="append", default=None, metavar="NAME=SPEC",
                   help="a candidate, repeated in tie-priority order: NAME=PRED_COL,CONF_COL, "
                   "NAME=proba:COL_1,...,COL_C (one probability column per class, in the "
                   "order of --classes or 0, 1, ...; CLASS=COL names a column's class), "
                   "NAME=proba:COL (probability of class 1 of a 0/1 task) or "
                   "NAME=PRED_COL,proba:COL (default: guessed from the column names)")
    p.add_argument("--classes", help="declare the class set, comma-separated (e.g. 0,1,2)")
    p.add_argument("--objective", default="augrc", choices=["augrc", "accuracy"],
                   help=objective_help or "objective to compare (default: augrc)")
    p.add_argument("--merge-duplicates", action="store_true",
                   help="leave out the candidates that can never win (the same predictions and "
                   "confidence order as an earlier one) before computing")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar on stderr while the files are read")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _tolerance_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tolerance", "--tau", dest="tolerance", default="0",
                   help="objective tolerance tau >= 0 (default 0: exact choice)")


# ------------------------------------------------------------------- reading
@dataclass(frozen=True)
class PoolRead:
    """What a pool command read: the pool it computes on and what it says about it.

    Parameters
    ----------
    pool : Pool
        The pool, without the duplicates when they were merged.
    name : str
        The files as the table names them (the paths given, joined by " + ").
    payload : dict
        The keys ``--json`` adds: ``files``, ``column_map`` (None for a file that
        follows the file convention), ``duplicates`` (`Duplicates.to_dict`) and
        ``duplicates_merged``.
    notes : tuple of str
        The lines the table ends with (the map used, the duplicates); empty when there
        is nothing to say.
    warnings : tuple of str
        What the reading left out that a person should know (printed on stderr).
    """

    pool: Pool
    name: str
    payload: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def table(self, text: str) -> str:
        """A command's table followed by the notes.

        Parameters
        ----------
        text : str
            The command's table.

        Returns
        -------
        str
            The table, then a blank line and the notes when there are any.
        """
        return text if not self.notes else text.rstrip("\n") + "\n\n" + "\n".join(self.notes)


def _file_bytes(path: str) -> tuple[str, bytes]:
    """A pool file's (or a zip's) name and content, with `certlib.load_pool`'s checks."""
    from .io import DEFAULT_MAX_BYTES

    p = Path(path)
    if not p.exists():
        raise PoolFileError(f"pool file {str(p)!r} does not exist")
    if not p.is_file():
        raise PoolFileError(f"pool file {str(p)!r} is not a regular file")
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".tsv", ".parquet", ".pq", ".zip"):
        raise PoolFileError(f"pool file {p.name!r} has unsupported type "
                            f"{suffix or '(no extension)'!r}; expected .csv, .tsv, .parquet, "
                            ".pq or a .zip of them")
    size = p.stat().st_size
    if size > DEFAULT_MAX_BYTES:
        raise PoolFileError(f"pool file {p.name!r} is {size} bytes; the limit is "
                            f"{DEFAULT_MAX_BYTES}")
    if size == 0:
        raise PoolFileError(f"pool file {p.name!r} is empty; expected a header row and data rows")
    try:
        return p.name, p.read_bytes()
    except OSError as exc:
        raise PoolFileError(f"pool file {p.name!r} cannot be read: {exc.strerror}") from None


def _header(name: str, data: bytes) -> list[str]:
    """A table's column names, read from its header only when that is enough (the map
    is built before `read_sources` reads the whole table)."""
    from .io import read_table_bytes

    if name.lower().endswith((".parquet", ".pq")):
        import io

        import polars as pl

        try:
            return [c.strip() for c in pl.read_parquet_schema(io.BytesIO(data))]
        except Exception:  # any failure: the full read below names what is wrong
            pass
    else:
        end = data.find(b"\n")
        if end > 0:
            try:
                return list(read_table_bytes(name, data[:end + 1]).columns)
            except CertlibError:
                pass
    return list(read_table_bytes(name, data).columns)


def _stem(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def candidate_columns(spec: str, *, classes: Sequence[str] | None = None) -> CandidateColumns:
    """One ``--candidate`` flag as the columns of a candidate.

    Parameters
    ----------
    spec : str
        ``NAME=PRED_COL,CONF_COL``; ``NAME=proba:COL_1,...,COL_C`` (one probability
        column per class: in the order of ``classes``, else of the classes 0, 1, ...;
        ``CLASS=COL`` names a column's class); ``NAME=proba:COL`` (the probability of
        class 1 of a 0/1 task); ``NAME=PRED_COL,proba:COL`` (the prediction from its
        column, the confidence the probability of the class predicted).
    classes : sequence of str, optional
        ``--classes``, the classes of probability columns given without ``CLASS=``.

    Returns
    -------
    CandidateColumns
        The candidate (`certlib.columns.CandidateColumns`), column names as written.

    Raises
    ------
    ParameterError
        A flag of none of these forms, or a number of probability columns that does not
        match ``classes``.

    Examples
    --------
    >>> candidate_columns("lr=lr_pred,lr_score")
    CandidateColumns(name='lr', pred='lr_pred', conf='lr_score', proba=())
    >>> candidate_columns("nb=proba:p_cat,p_dog", classes=["cat", "dog"]).proba
    (('cat', 'p_cat'), ('dog', 'p_dog'))
    >>> candidate_columns("nb=proba:0=p0,1=p1,2=p2").proba
    (('0', 'p0'), ('1', 'p1'), ('2', 'p2'))
    """
    from .columns import CandidateColumns

    form = ("--candidate must be NAME=PRED_COL,CONF_COL, NAME=proba:COL,... or "
            f"NAME=PRED_COL,proba:COL; got {spec!r}")
    name, eq, rest = spec.partition("=")
    name, rest = name.strip(), rest.strip()
    if not eq or not name or not rest:
        raise ParameterError(form)
    if rest.startswith(_PROBA):
        items = [c.strip() for c in rest[len(_PROBA):].split(",")]
        if not all(items) or any(c.startswith(_PROBA) for c in items):
            raise ParameterError(form)
        if len(items) == 1 and "=" not in items[0]:
            return CandidateColumns(name, proba=(("1", items[0]),))
        named = ["=" in c for c in items]
        if all(named):
            pairs = [c.split("=", 1) for c in items]
            return CandidateColumns(name, proba=tuple((k.strip(), v.strip()) for k, v in pairs))
        if any(named):
            raise ParameterError(f"--candidate {spec!r}: give CLASS=COL for every probability "
                                 "column or for none")
        keys = list(classes) if classes else [str(k) for k in range(len(items))]
        if len(keys) != len(items):
            raise ParameterError(f"--candidate {spec!r} gives {len(items)} probability columns "
                                 f"for the {len(keys)} classes of --classes {','.join(keys)}")
        return CandidateColumns(name, proba=tuple(zip(keys, items)))
    parts = [c.strip() for c in rest.split(",", 1)]
    if len(parts) != 2 or not all(parts) or parts[0].startswith(_PROBA):
        raise ParameterError(form)
    pred, second = parts
    if second.startswith(_PROBA):
        col = second[len(_PROBA):].strip()
        if not col or "," in col:
            raise ParameterError(form)
        return CandidateColumns(name, pred=pred, proba=(("1", col),))
    if "," in second:
        raise ParameterError(form)
    return CandidateColumns(name, pred=pred, conf=second)


def _classes(args: argparse.Namespace) -> list[str] | None:
    if not args.classes:
        return None
    return [c.strip() for c in args.classes.split(",") if c.strip()]


def _mapped(args: argparse.Namespace) -> bool:
    return bool(args.label or args.id_column or args.candidate)


def _one_file_map(args: argparse.Namespace, name: str, data: bytes) -> ColumnMap:
    """The column map of one file: the flags, the rest guessed from its header."""
    from .columns import ColumnMap, guess_map
    from .io import file_layout

    columns = _header(name, data)
    if not args.candidate:
        try:
            mode = file_layout(columns).mode
        except CertlibError:
            mode = None
        if mode == "prob":
            raise ParameterError(
                f"{name!r} holds prob_ columns (the file convention): it is read by the "
                "convention, whose label column is 'label' and id column 'row_id'; with "
                "--label or --id name its candidates too (--candidate NAME=proba:...)")
    guess = guess_map(columns, name=name, default_name=_stem(name))
    cands = tuple(candidate_columns(c, classes=_classes(args)) for c in args.candidate or ())
    return ColumnMap(cands or guess.candidates, args.label or guess.label,
                     args.id_column or guess.row_id,
                     ambiguities=() if cands else guess.ambiguities)


def read_pool_args(args: argparse.Namespace, *, progress: Progress | None = None) -> PoolRead:
    """The pool a pool command computes on, read from its arguments (`add_pool_args`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line: ``pools``, ``label``, ``id_column``, ``candidate``,
        ``classes``, ``objective`` and ``merge_duplicates``.
    progress : callable, optional
        A `certlib.io.Progress` callback (`certlib.cli_progress.progress_bar`).

    Returns
    -------
    PoolRead
        The pool (merged when asked), the table's notes and the JSON keys.

    Raises
    ------
    CertlibError
        A file or map that cannot be read (one message naming the file, column and row),
        or a merge that would leave one candidate.
    """
    from .columns import expand_zips, read_sources
    from .core.duplicates import find_duplicates, merge_duplicates

    sources = []
    for path in args.pools:  # a large file takes a while to load: say so from the start
        if progress is not None:
            progress(f"reading {Path(path).name}", 0.0)
        sources.append(_file_bytes(path))
    classes = _classes(args)
    if not _mapped(args):
        got = read_sources(sources, classes=classes, objective=args.objective,
                           progress=progress)
    else:
        files = expand_zips(sources)
        if len(files) == 1:
            cmap = _one_file_map(args, *files[0])
            got = read_sources(files, column_map=cmap, classes=classes,
                               objective=args.objective, progress=progress)
        else:
            cands = None if not args.candidate else [
                candidate_columns(c, classes=classes) for c in args.candidate]
            got = read_sources(files, classes=classes, objective=args.objective,
                               progress=progress, row_id=args.id_column, label=args.label,
                               candidates=cands)
    pool = got.pool
    dup = find_duplicates(pool)
    merged = bool(args.merge_duplicates and dup.found)
    if merged:
        pool = merge_duplicates(pool)
    name = " + ".join(args.pools)
    notes: list[str] = []
    if got.column_map is not None:
        how = ("as given by --label, --id and --candidate (the rest guessed)" if _mapped(args)
               else "guessed from the column names (--label, --id, --candidate set them)")
        notes.append(f"columns     {how}:")
        notes += [_NOTE + line for line in got.column_map.describe()]
    for k, g in enumerate(dup.groups):
        notes.append(("duplicates  " if k == 0 else _NOTE) + g.message())
    if merged:
        left = ", ".join(dup.never_win)
        notes.append(f"{_NOTE}merged before computing (--merge-duplicates): {left} left out, "
                     f"{pool.K} candidates computed")
    elif dup.found:
        notes.append(f"{_NOTE}(--merge-duplicates leaves the later ones out before computing)")
    payload: dict[str, Any] = {
        "files": list(got.files),
        "column_map": None if got.column_map is None else json.loads(got.column_map.to_json()),
        "duplicates": dup.to_dict(),
        "duplicates_merged": merged,
    }
    return PoolRead(pool, name, payload, tuple(notes), tuple(got.warnings))


def _read(args: argparse.Namespace) -> PoolRead:
    """What `main` read for a pool command (`read_pool_args`)."""
    read: PoolRead = args.read
    return read


def _emit(args: argparse.Namespace, payload: dict[str, Any], lines: list[str]) -> None:
    """A pool command's output: its keys and table, with what the reading adds."""
    read = _read(args)
    emit(args, {**payload, **read.payload}, read.table("\n".join(lines)))


# ------------------------------------------------------------------- prelabel
def _cmd_prelabel(args: argparse.Namespace) -> int:
    from .certificates.prelabel import prelabel_bound

    pool = _read(args).pool
    r = prelabel_bound(pool, tolerance=args.tolerance)
    lines = [
        f"pool        {_read(args).name}: n = {r.n} rows, K = {r.K} candidates ({pool.objective})",
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
    _emit(args, r.to_dict(), lines)
    return 0


# --------------------------------------------------------------------- replay
def _cmd_replay(args: argparse.Namespace) -> int:
    from .labelling.replay import replay

    pool = _read(args).pool
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
        f"pool              {_read(args).name}: n = {r.n} rows, K = {len(r.candidates)} candidates",
        f"policy            {r.policy}   rule {r.rule}   tolerance {float(r.tolerance):g}"
        + (f"   budget {r.budget}" if r.budget is not None else ""),
        f"labels read       {r.labels_read} of {r.n} ({percent(r.labels_fraction)})",
        f"selected          {r.selected} ({how})",
        f"full-pool winner  {r.full_pool_winner}",
        f"first rows read   {first}",
    ]
    if r.label_errors is not None:
        lines += _label_error_lines(r)
    _emit(args, r.to_dict(), lines)
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

    pool = _read(args).pool
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
        f"pool                 {_read(args).name}: n = {pool.n} rows, K = {pool.K} candidates",
        f"selected             {c.selected}",
        f"minimum certificate  {size}",
        f"LP relaxation        {lp}",
        f"search               {search}",
        f"witness ({len(c.witness)} rows)  {wit}",
        "",
        ("With these labels known, the witness rows alone fix the selected candidate for "
         "every completion; no smaller set than the lower bound can."),
    ]
    _emit(args, d, lines)
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
        f"pool                 {_read(args).name}: n = {pool.n} rows, K = {pool.K} candidates, "
        f"{c.labels_read} labels read (the rows holding a label)",
        f"selected             {c.selected if c.certified else 'none certified'}",
        f"hindsight            {size}",
    ]
    if c.certified:
        lines += [f"witness ({len(c.witness)} rows)  {_witness_text(c.witness)}", "",
                  "The witness rows alone, with their labels, fix the selected candidate for "
                  "every completion of the unread labels."]
    _emit(args, d, lines)
    return 0


# ------------------------------------------------------------------ verify-record
def _cmd_verify_record(args: argparse.Namespace) -> int:
    """A labelling project's evidence record (the Label page's download, SPEC section 12)
    recomputed from its labels and the pool file; exit 1 on any mismatch.  Without
    ``--classes`` the pool is read with the record's class set (a declared set can hold a
    class the file never shows); a file that cannot take that set is a mismatch, not bad
    input, as long as it reads on its own.  ``--store``: the record's events and head must
    also be the store's hash chain of the project (a missing file is bad input: opening
    one would create an empty store)."""
    from .io import load_pool
    from .labelling.record import read_record, verify_record
    from .certificates.verification import Verification

    store = None
    if args.store is not None:
        from .labelling.store import LabelStore

        if not Path(args.store).is_file():
            raise PoolFileError(f"label store {args.store!r} does not exist")
        store = LabelStore(args.store)
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
    ver = verify_record(rec, pool, store)
    if refused:
        ver = Verification((refused, *ver.mismatches), ver.recomputed, ver.notes)
    got = ver.recomputed
    table = (f"verified: the record's labels replay to its verdict ({got.get('status')}, "
             f"selected {got.get('selected')!r} after {got.get('labels_read')} labels), "
             "and every bound, setting and event matches"
             + (", and its events and head are the store's" if store is not None else "")
             ) if ver.ok else \
        "MISMATCH:\n" + "\n".join(f"  {m}" for m in ver.mismatches)
    table += "".join(f"\nnote: {n}" for n in ver.notes)
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
    add_pool_args(p)
    _tolerance_arg(p)
    p.set_defaults(func=_cmd_prelabel)

    p = sub.add_parser("replay", help="labels a policy needs on a fully labelled pool")
    add_pool_args(p)
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
    add_pool_args(p)
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
    p.add_argument("--store", default=None, metavar="DB",
                   help="the label store the record was exported from: its events and "
                   "hash chain head must be the store's")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_verify_record)

    from .audit import cli as audit_cli

    audit_cli.register(sub)
    from . import cli_plan

    cli_plan.register(sub, pool_args=add_pool_args)
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
    from .cli_progress import progress_bar

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if hasattr(args, "pools"):  # a pool command: read its files, a bar on a terminal
            bar = progress_bar(quiet=args.quiet)
            try:
                args.read = read_pool_args(args, progress=bar)
            finally:
                if bar is not None:
                    bar.close()
            for w in args.read.warnings:
                print(f"certlib: warning: {w}", file=sys.stderr)
        return int(args.func(args) or 0)
    except CertlibError as exc:
        print(f"certlib: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
