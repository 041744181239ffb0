"""``certlib plan POOL``: the budget-tolerance map, Figure 8's answer and a forecast
(paper 000 section 6).  Registered by `certlib.cli.build_parser` through `register`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from .cli_output import emit, percent
from .errors import ParameterError

if TYPE_CHECKING:
    from .core.pool import Pool
    from .planning.budget_plan import BudgetMap, Number
    from .planning.label_forecast import Forecast

_T = TypeVar("_T")

__all__ = ["plan_payload", "register"]

MARK: dict[str, str] = {"ruled_out": "x", "certified": "C", "unresolved": "."}


def _numbers(text: str, what: str, cast: Callable[[str], _T]) -> list[_T]:
    try:
        return [cast(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"{what} must be a comma-separated list of numbers; got "
                             f"{text!r}") from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``plan`` command to the command line's subcommands.

    Parameters
    ----------
    sub : argparse subparsers action
        What `argparse.ArgumentParser.add_subparsers` returned in `certlib.cli.build_parser`.
    """
    from .policies import policy_names

    p = sub.add_parser("plan", help="budget-tolerance map, smallest tolerance per budget "
                       "and a label forecast",
                       description="Prelabel bound per tolerance, the budget-tolerance map "
                       "(x = ruled out, C = certified by the policy's replay, every row read, or "
                       "by the labels already known, "
                       ". = unresolved), "
                       "the smallest tolerance each budget certifies (paper Figure 8) and, "
                       "with --forecast, a forecast of the labels the policy will read.")
    p.add_argument("pool", metavar="POOL", help="CSV or Parquet pool file (SPEC section 2)")
    p.add_argument("--classes", help="declare the class set, comma-separated (e.g. 0,1,2)")
    p.add_argument("--tolerances", default=None,
                   help="comma-separated AUGRC tolerances (default 0,0.0005,0.001,0.002,"
                   "0.005,0.01)")
    p.add_argument("--budgets", default=None,
                   help="comma-separated budgets in labels (default floor(b n), b = 0, .1, "
                   "..., 1)")
    p.add_argument("--policy", default="adaptive-pair-sum", choices=list(policy_names()))
    p.add_argument("--forecast", type=int, default=0, metavar="DRAWS",
                   help="forecast the labels read with DRAWS draws of the unread labels "
                   "(0 = no forecast)")
    p.add_argument("--seed", type=int, default=0, help="seed of the forecast (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
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
        Objective tolerances (default `certlib.planning.budget_plan.DEFAULT_TOLERANCES`).
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
    from .planning.budget_plan import DEFAULT_TOLERANCES, budget_map
    from .planning.label_forecast import forecast

    tols = DEFAULT_TOLERANCES if tolerances is None else tolerances
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


def _cmd_plan(args: argparse.Namespace) -> int:
    from .io import load_pool

    classes = None
    if args.classes:
        classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    pool = load_pool(args.pool, classes=classes)
    tols = None if args.tolerances is None else _numbers(args.tolerances, "--tolerances", float)
    buds = None if args.budgets is None else _numbers(args.budgets, "--budgets", int)
    if args.forecast < 0:
        raise ParameterError(f"--forecast must be a number of draws >= 0; got {args.forecast}")
    m, fcs = plan_payload(pool, tolerances=tols, budgets=buds, policy=args.policy,
                          forecast_draws=args.forecast, seed=args.seed)
    payload = {"pool": args.pool, "map": m.to_dict(),
               "forecast": None if fcs is None else [f.to_dict() for f in fcs]}
    if fcs is not None:
        payload["p_certified"] = [[f.p_certified(b) for b in m.budgets] for f in fcs]
    emit(args, payload, _table(args.pool, pool, m, fcs))
    return 0


def _table(name: str, pool: Pool, m: BudgetMap, fcs: list[Forecast] | None) -> str:
    w = max(6, max(len(str(b)) for b in m.budgets) + 1)
    lines = [f"pool      {name}: n = {pool.n} rows, K = {pool.K} candidates, "
             f"{pool.n_labelled} labels known",
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
                  "labels read in total, 10% / 50% / 90%",
                  f"  {fcs[0].label_model_note}"]
        for f in fcs:
            q = f.quantiles
            lines.append(f"  tolerance {float(f.tolerance):>8g}: {q[0.1]:>6} {q[0.5]:>6} "
                         f"{q[0.9]:>6}")
        wp = max(w, 7)  # "100.0%" and a space
        lines += ["", "forecast P(certify within budget):",
                  f"{'tolerance':>10} " + "".join(f"{b:>{wp}}" for b in m.budgets)]
        for f in fcs:
            lines.append(f"{float(f.tolerance):>10g} "
                         + "".join(f"{percent(f.p_certified(b)):>{wp}}" for b in m.budgets))
    return "\n".join(lines)
