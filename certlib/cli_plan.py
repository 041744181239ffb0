"""``certlib plan POOL``: the budget-tolerance map, Figure 8's answer, a forecast, what a
budget buys (``--budget``) and the labels the accuracy choice needs beside AUGRC's (paper
000 section 6), from the file's labels or a labelling project's (``--store --project``).
Registered by `certlib.cli.build_parser` through `register`."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .cli_output import emit, percent
from .errors import ParameterError

if TYPE_CHECKING:
    from .certificates.certificate import Certificate
    from .core.pool import Pool
    from .labelling.events import Project
    from .planning.accuracy_plan import AccuracyPlan
    from .planning.budget_plan import BudgetMap, Number
    from .planning.label_forecast import Forecast

_T = TypeVar("_T")

__all__ = ["BUDGET_DRAWS", "accuracy_section", "plan_payload", "project_pool", "register"]

#: Draws of ``--budget``'s forecast when ``--forecast`` sets none (`what_budget_buys`'s
#: default, so the page and the command line give the same sentence).
BUDGET_DRAWS = 200

MARK: dict[str, str] = {"ruled_out": "x", "certified": "C", "unresolved": "."}


def _numbers(text: str, what: str, cast: Callable[[str], _T]) -> list[_T]:
    try:
        return [cast(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"{what} must be a comma-separated list of numbers; got "
                             f"{text!r}") from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], *,
             pool_args: Callable[..., None]) -> None:
    """Add the ``plan`` command to the command line's subcommands.

    Parameters
    ----------
    sub : argparse subparsers action
        What `argparse.ArgumentParser.add_subparsers` returned in `certlib.cli.build_parser`.
    pool_args : callable
        `certlib.cli.add_pool_args`, which adds the files, the column map, the class set,
        the objective, ``--merge-duplicates``, ``--quiet`` and ``--json``; the command
        line reads the pool before ``plan`` runs (`certlib.cli.read_pool_args`).
    """
    from .policies import policy_names

    p = sub.add_parser("plan", help="budget-tolerance map, smallest tolerance per budget "
                       "and a label forecast",
                       description="Prelabel bound per tolerance, the budget-tolerance map "
                       "(x = ruled out, C = certified by the policy's replay, every row read, or "
                       "by the labels already known, "
                       ". = unresolved), "
                       "the smallest tolerance each budget certifies (paper Figure 8), "
                       "with --forecast a forecast of the labels the policy will read, with "
                       "--budget what a budget buys in one sentence, and "
                       "the labels the accuracy choice needs beside AUGRC's (paper section "
                       "6.2); with --project from a labelling project's labels.")
    pool_args(p, objective_help="objective of the map, the replays and the forecast "
              "(default: augrc)")
    p.add_argument("--tolerances", default=None,
                   help="comma-separated objective tolerances (default 0,0.0005,0.001,0.002,"
                   "0.005,0.01 for AUGRC; 0,0.005,0.01,0.02,0.05 on the error rate for "
                   "accuracy)")
    p.add_argument("--budgets", default=None,
                   help="comma-separated budgets in labels (default floor(b n), b = 0, .1, "
                   "..., 1)")
    p.add_argument("--policy", default=None, choices=list(policy_names()),
                   help="the policy replayed and forecast (default: the project's with "
                   "--project, else adaptive-pair-sum)")
    p.add_argument("--forecast", type=int, default=0, metavar="DRAWS",
                   help="forecast the labels read with DRAWS draws of the unread labels "
                   "(0 = no forecast)")
    p.add_argument("--seed", type=int, default=0, help="seed of the forecast (default 0)")
    p.add_argument("--budget", type=int, default=None, metavar="B",
                   help="what a budget of B labels buys, in one sentence: the tolerance it "
                   "certifies for sure and, with unread rows, with 80%% probability "
                   f"(forecast with --forecast draws, else {BUDGET_DRAWS})")
    p.add_argument("--project", default=None, metavar="N",
                   help="plan from the labels of labelling project N in the label store "
                   "instead of the file's labels")
    p.add_argument("--store", default=None, metavar="DB",
                   help="the label store of --project (default $CERTLIB_STORE or "
                   "./certlib_labels.db)")
    p.set_defaults(func=_cmd_plan)


def plan_payload(pool: Pool, *, tolerances: Sequence[Number] | None = None,
                 budgets: Sequence[int] | None = None, policy: str = "adaptive-pair-sum",
                 forecast_draws: int = 0, seed: int = 0,
                 progress: Callable[[float], object] | None = None
                 ) -> tuple[BudgetMap, list[Forecast] | None]:
    """The budget map and the forecasts, as ``certlib plan`` and the Plan page compute them.

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far.
    tolerances : sequence of numbers, optional
        Objective tolerances (default `certlib.planning.budget_plan.DEFAULT_TOLERANCES`
        for AUGRC, ``DEFAULT_ACCURACY_TOLERANCES`` for a pool whose objective is accuracy).
    budgets : sequence of int, optional
        Label counts (default floor(b n), b = 0, .1, ..., 1).
    policy : str, default "adaptive-pair-sum"
        The policy replayed and forecast.
    forecast_draws : int, default 0
        Label draws per forecast (0: no forecast).
    seed : int, default 0
        Seed of the forecasts.
    progress : callable, optional
        Called with the fraction of the forecasts done in [0, 1].

    Returns
    -------
    map : BudgetMap
        The budget-tolerance map.
    forecasts : list of Forecast or None
        One forecast per tolerance of the map; None when ``forecast_draws`` is 0 or every
        label is known (the replay is then exact and a forecast would only repeat n).

    Raises
    ------
    ParameterError
        On a bad tolerance, budget, policy or number of draws.
    """
    from .planning.budget_plan import DEFAULT_ACCURACY_TOLERANCES, DEFAULT_TOLERANCES, budget_map
    from .planning.label_forecast import forecast

    tols: Sequence[Number] = tolerances if tolerances is not None else (
        DEFAULT_ACCURACY_TOLERANCES if pool.objective == "accuracy" else DEFAULT_TOLERANCES)
    m = budget_map(pool, tols, budgets=budgets, policy=policy)
    fcs: list[Forecast] | None = None
    if forecast_draws and not pool.fully_labelled:
        fcs = []
        for i, t in enumerate(m.tolerances):
            sub = None if progress is None else (
                lambda f, i=i: progress((i + f) / len(m.tolerances)))
            fcs.append(forecast(pool, policy=policy, tolerance=t, draws=forecast_draws,
                                seed=seed, progress=sub))
    return m, fcs


def project_pool(pool: Pool, project_id: object, store: str | Path | None = None
                 ) -> tuple[Pool, Project]:
    """The pool holding a labelling project's labels in force instead of its own, as
    ``certlib plan --project N [--store DB]`` plans from it.

    Parameters
    ----------
    pool : Pool
        The pool the project was started on (its file's labels are replaced).
    project_id : int or str
        The project's id (its decimal text too).
    store : str or Path, optional
        The label store (default `certlib.labelling.store.default_store_path`:
        ``$CERTLIB_STORE`` or ``./certlib_labels.db``); it must exist and is opened
        read-only.

    Returns
    -------
    pool : Pool
        `LabelStore.pool_with_labels`: the project's labels, every other row unread.
    project : Project
        The project's settings.

    Raises
    ------
    StoreError
        No label store at that path, no such project (`UnknownProjectError`), a
        project about the other objective, or a project on another pool
        (`PoolMismatchError`).
    """
    from .labelling.store import LabelStore, StoreError, default_store_path

    path = Path(store) if store is not None else default_store_path()
    if not path.is_file():
        where = "" if store is not None else (
            " (the default: $CERTLIB_STORE or ./certlib_labels.db; name one with --store DB)")
        raise StoreError(f"label store {str(path)!r} does not exist{where}")
    db = LabelStore(path, read_only=True)
    pid = _project_id(path, project_id)
    project = db.project(pid)
    if project.objective != pool.objective:
        raise StoreError(f"project {pid} ({project.pool_name!r}) is about "
                         f"{project.objective}; plan it with --objective {project.objective}")
    return db.pool_with_labels(pid, pool), project


def _project_id(path: Path, project_id: object) -> int:
    from .labelling.store import UnknownProjectError

    text = str(project_id).strip()
    if isinstance(project_id, bool) or not text.isdecimal():
        raise UnknownProjectError(
            f"project_id {project_id!r} is not in the label store {str(path)!r}: a project "
            "id is a positive whole number (1, 2, ...)")
    return int(text)


def _cmd_plan(args: argparse.Namespace) -> int:
    from .planning.accuracy_plan import accuracy_labels
    from .planning.budget_answer import what_budget_buys

    # read by the command line before the command (certlib.cli.PoolRead)
    read = args.read
    pool: Pool = read.pool
    project = None
    if args.project is not None:
        pool, project = project_pool(pool, args.project, args.store)
    elif args.store is not None:
        raise ParameterError("--store names the label store of a project: say which "
                             "project's labels to plan from with --project N")
    policy = args.policy or (project.policy if project is not None else "adaptive-pair-sum")
    tols = None if args.tolerances is None else _numbers(args.tolerances, "--tolerances", float)
    buds = None if args.budgets is None else _numbers(args.budgets, "--budgets", int)
    if args.forecast < 0:
        raise ParameterError(f"--forecast must be a number of draws >= 0; got {args.forecast}")
    if args.budget is not None and args.budget < 0:
        raise ParameterError(f"--budget must be a number of labels >= 0; got {args.budget}")
    m, fcs = plan_payload(pool, tolerances=tols, budgets=buds, policy=policy,
                          forecast_draws=args.forecast, seed=args.seed)
    ans = None if args.budget is None else what_budget_buys(
        pool, args.budget, policy=policy, draws=args.forecast or BUDGET_DRAWS, seed=args.seed)
    acc = accuracy_labels(pool, policy=policy, seed=args.seed)
    payload = {"pool": read.name, "objective": pool.objective, "map": m.to_dict(),
               "forecast": None if fcs is None else [f.to_dict() for f in fcs]}
    if project is not None:
        payload["project"] = {"id": project.id, "name": project.pool_name,
                              "policy": project.policy, "labels": int(pool.n_labelled)}
    if fcs is not None:
        payload["p_certified"] = [[f.p_certified(b) for b in m.budgets] for f in fcs]
    if ans is not None:
        payload["budget_answer"] = ans.to_dict()
    payload["accuracy"] = acc.to_dict()
    text = _table(read.name, pool, m, fcs)
    if project is not None:
        first, rest = text.split("\n", 1)
        text = (f"{first}\nlabels    project {project.id} ({project.pool_name}): its "
                f"{pool.n_labelled:,} labels in force replace the file's\n{rest}")
    if ans is not None:
        text += "\n\nwhat the budget buys:\n" + "\n".join(
            textwrap.wrap(ans.text(), 90, initial_indent="  ", subsequent_indent="  ",
                          break_on_hyphens=False, break_long_words=False))
    emit(args, {**payload, **read.payload},
         read.table(text + "\n\n" + accuracy_section(acc)))
    return 0


_SCALE = {"augrc": "AUGRC", "accuracy": "the error rate"}


def _table(name: str, pool: Pool, m: BudgetMap, fcs: list[Forecast] | None) -> str:
    w = max(6, max(len(str(b)) for b in m.budgets) + 1)
    lines = [f"pool      {name}: n = {pool.n} rows, K = {pool.K} candidates, "
             f"{pool.n_labelled} labels known",
             f"objective {pool.objective} (tolerances on {_SCALE[pool.objective]})",
             f"policy    {m.policy} (rule {m.rule})", "",
             f"{'tolerance':>10} {'prelabel':>9} {'replay':>7}"]
    for i, t in enumerate(m.tolerances):
        rep = "-" if m.labels_read is None else str(m.labels_read[i])
        lines.append(f"{float(t):>10g} {m.prelabel[i]:>9} {rep:>7}")
    lines += ["", "map (x = ruled out, C = certified, . = unresolved); budgets in labels:",
              f"{'tolerance':>10} " + "".join(f"{b:>{w}}" for b in m.budgets)]
    for i, t in enumerate(m.tolerances):
        lines.append(f"{float(t):>10g} " + "".join(f"{MARK[c]:>{w}}" for c in m.cells[i]))
    lines += ["", "smallest tolerance certified within each budget (Figure 8):"]
    for b in m.budgets:
        st = m.smallest_tolerance(b)
        if st is not None and m.known_certifies(list(m.tolerances).index(st), b):
            txt = f"{float(st):g} (" + (f"the {m.known:,} labels already known certify it)"
                                        if m.known else "certified with no label read)")
        elif st is not None and not m.labelled and b < m.n:
            txt = (f"{float(st):g} (whatever the labels: the policy reads only "
                   f"disagreement rows, {m.certain_from:,} at most)")
        elif st is not None:
            txt = f"{float(st):g}"
        elif m.labelled:
            txt = "none on the grid"
        else:
            op = m.smallest_open_tolerance(b)
            txt = ("unknown (unlabelled rows); ruled out at every tolerance" if op is None else
                   f"unknown (unlabelled rows); not ruled out from {float(op):g}")
        lines.append(f"  budget {b:>{w}}: {txt}")
    if fcs is None and pool.fully_labelled:
        lines += ["", "forecast: not needed, every label is known (the replay column is exact)"]
    if fcs:
        lines += ["", f"forecast ({fcs[0].draws} draws; a forecast, not a guarantee): "
                  "labels read in total, median and calibrated 80% interval",
                  f"  {fcs[0].label_model_note}"]
        for f in fcs:
            low, high = f.interval
            lines.append(f"  tolerance {float(f.tolerance):>8g}: {f.quantiles[0.5]:>6} "
                         f"[{low}, {high}]")
        wp = max(w, 7)  # "100.0%" and a space
        lines += ["", "forecast P(certify within budget):",
                  f"{'tolerance':>10} " + "".join(f"{b:>{wp}}" for b in m.budgets)]
        for f in fcs:
            lines.append(f"{float(f.tolerance):>10g} "
                         + "".join(f"{percent(f.p_certified(b)):>{wp}}" for b in m.budgets))
    return "\n".join(lines)


def accuracy_section(plan: AccuracyPlan) -> str:
    """The plan's text section on the accuracy choice beside AUGRC's (paper 000 section 6.2).

    Parameters
    ----------
    plan : AccuracyPlan
        What `certlib.planning.accuracy_plan.accuracy_labels` returned.

    Returns
    -------
    str
        A table of the labels each objective needs at least (prelabel bound), at most
        (the rows whose labels can change a comparison), by the policy's replay and in
        hindsight (minimum certificate; "-" unless every label is known), and a few
        lines saying what they mean.
    """
    win = plan.accuracy_winner is not None
    lines = ["accuracy beside AUGRC, exact choice (paper 000 section 6.2), in labels:",
             f"  {'':9} {'at least':>9} {'at most':>8} {'replay':>7} {'hindsight':>10}"
             + ("  winner" if win else "")]
    for label, pre, most, rep, cert, winner in (
            ("accuracy", plan.accuracy_prelabel, plan.disagreement, plan.accuracy_replay,
             plan.accuracy_certificate, plan.accuracy_winner),
            ("AUGRC", plan.augrc_prelabel, plan.augrc_movable, plan.augrc_replay,
             plan.augrc_certificate, plan.augrc_winner)):
        lines.append(f"  {label:9} {pre:>9} {most:>8} {_count(rep):>7} {_enclosure(cert):>10}"
                     + (f"  {winner}" if win else ""))
    lines += ["",
              "  at least   the prelabel bound: no policy certifies with fewer, whatever the "
              "labels",
              "  at most    the rows whose labels can change a comparison: reading them all "
              "certifies",
              f"  replay     the labels {plan.policy} reads (every label known)",
              "  hindsight  the minimum certificate (every label known)", ""]
    for note in (_accuracy_note(plan), _augrc_note(plan)):
        lines += textwrap.wrap(note, 90, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _enclosure(cert: Certificate | None) -> str:
    if cert is None:
        return "-"
    return str(cert.upper) if cert.exact else f"[{cert.lower}, {cert.upper}]"


def _accuracy_note(plan: AccuracyPlan) -> str:
    d = plan.disagreement
    if d == 0:
        return ("Every candidate predicts the same class on every row: accuracy ties them all, "
                f"so {plan.candidates[0]} (first in priority) wins it with no label; accuracy "
                "cannot tell them apart, AUGRC can through their confidence orders.")
    out = (f"The {d:,} rows where the candidates disagree ({100 * d / plan.n:.1f}% of the pool) "
           "settle the accuracy choice whatever the other labels are: on the rest every "
           "candidate is right or wrong together.")
    if plan.policy_within_disagreement:
        out += f" Under accuracy {plan.policy} reads only those rows, whatever their labels."
    return out


def _augrc_note(plan: AccuracyPlan) -> str:
    d, pre = plan.disagreement, plan.augrc_prelabel
    out = ("AUGRC weighs each error by the candidate's confidence rank, so agreement rows "
           "count too: ")
    if plan.augrc_needs_more:
        out += (f"its prelabel bound, {pre:,}, is above {d:,}, so it needs more labels than "
                "accuracy whatever the labels are")
    else:
        out += (f"its prelabel bound, {pre:,}, does not exceed {d:,}, so it does not prove that "
                "AUGRC needs more labels than accuracy")
    rows = f"the {d:,} disagreement rows"
    if d == 0:  # no row to read: the prelabel bound has said it all
        pass
    elif plan.augrc_never_settled_by_disagreement:
        out += f"; {rows} alone can never settle it"
    elif plan.augrc_settled_by_disagreement is True:
        out += f"; here the labels of {rows} settle it too"
    elif plan.augrc_settled_by_disagreement is False:
        out += f"; here the labels of {rows} leave it open"
    return out + "."
