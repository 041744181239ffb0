"""The forecast's calibrated 80% interval: fit its margins, evaluate them once.

    python -m bench forecast_calibration                   # fit on the calibration seeds,
                                                           # evaluate on split seeds 150-157
    python -m bench forecast_calibration --evaluate 170-177 # the second fresh set
    python -m bench forecast_calibration --evaluate none   # the fit only (printed)
    python -m bench forecast_calibration --cache DIR       # keep the per-pool forecasts

Pools: paper 000 section 6.1 panel pools built as `bench_forecast_holdout` builds them
(its `panel_files`), 12 per split seed.  On every pool the realised count is adaptive
pair-sum's replay with every label (tau = 0); a forecast (200 draws, seed 0) is made
after the policy has read ``floor(f n)`` rows, their labels kept and the rest hidden,
for the shares f = 0, 1/8, 1/4, 1/2 and 3/4 ("before any label" is f = 0 and "after a
quarter" f = 1/4, as in `bench_forecast_holdout`); pools the policy certifies within
``floor(f n)`` rows are left out at that share (their forecast is exact).

Two ways to calibrate, per stratum of `certlib.planning.forecast_calibration.STRATA`
(f = 0, and f > 0 pooled): *symmetric*, one margin for both sides (the conformal
quantile at 0.8 of ``max(q10 - y, y - q90) / s``), and *asymmetric*, a margin per side
(the conformal quantiles at 0.9 of ``(q10 - y) / s`` and of ``(y - q90) / s``).

*Calibration*: split seeds 0-7, 40-43, 60-63, 90-93, 110-113 and 130-137 (384 pools),
all seen before while the label model was tuned or checked (bench/EXPERIMENTS.md).  The
method and the unit ``s`` of the scores are chosen on them only, by cross-fitting (four
folds of split seeds: fit the margins on three, measure on the fourth).  For each method
the unit is the one with the narrowest intervals (mean width over the strata, pools
weighted equally) among those covering at least 75% in every stratum.  Asymmetric is
chosen only if it covers at least 75% in every stratum, at least as much as symmetric
before any label, and with intervals no wider (same mean width); otherwise symmetric.
The chosen method's margins, fitted on all the calibration pools, are the constants of
`certlib/planning/forecast_calibration.py` (symmetric: asymmetric was wider).  Coverage
reported on these pools is in-sample.

*Evaluation*: split seeds 150-157 (96 pools), chosen before the first evaluation and
**evaluated once**, with the constants as shipped in the module (not the ones this run
fits: the bench says so when they differ); a rerun reproduces the same figures.  The
asymmetric column on them uses this run's fit; it was computed after the method had been
chosen on the calibration pools and played no part in the choice.  Reported side by side
for the raw, the symmetric and the asymmetric interval: coverage (share of pools whose
realised count is inside), mean width in % of n and the misses below and above, before
any label and after a quarter.  A second fresh set, split seeds 170-177, was chosen after
the first had been evaluated and evaluated once with the same shipped constants
(``--evaluate 170-177``); nothing was changed between the two.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

import certlib
from certlib.io import load_pool
from certlib.planning import forecast_calibration as fc

from .bench_forecast_holdout import POLICY, panel_files, parse_splits
from .results import command, table, write_results

CALIBRATE = "0-7,40-43,60-63,90-93,110-113,130-137"
EVALUATE = "150-157"  # evaluated once
METHODS = ("symmetric", "asymmetric")
SIDE_LEVEL = 0.9  # each side of the asymmetric interval: 1 - (1 - 0.8) / 2
FOLDS = 4
# the shares of the pool read before a forecast, by name
SHARES: dict[str, Fraction] = {"none": Fraction(0), "early": Fraction(1, 8),
                               "quarter": Fraction(1, 4), "half": Fraction(1, 2),
                               "late": Fraction(3, 4)}
SETTINGS = (("before any label", "none"), ("after a quarter", "quarter"))


def seen_after(pool, budget: int):
    """The pool with the labels of the policy's first ``budget`` rows kept (as
    `bench_forecast_holdout.evaluate` does), or None when the policy certifies within."""
    n = pool.n
    if budget == 0:
        return pool.with_labels(np.full(n, -1))
    r = certlib.replay(pool, policy=POLICY, budget=budget)
    if r.certified:
        return None
    lab = np.full(n, -1)
    rows = [pool.position(i) for i in r.order]
    lab[rows] = pool.labels[rows]
    return pool.with_labels(lab)


def pool_records(stem: str, pool, shares, draws: int) -> list[dict]:
    """One record per share: the realised count and the forecast's counts per draw."""
    n = pool.n
    real = certlib.replay(pool, policy=POLICY).labels_read
    out = []
    for name in shares:
        b = int(SHARES[name] * n)
        p = seen_after(pool, b)
        if p is None:
            continue
        f = certlib.forecast(p, policy=POLICY, draws=draws, seed=0)
        out.append({"pool": stem, "share": name, "n": n, "known": f.known,
                    "real": int(real), "draws": list(f.labels_read)})
    return out


def split_records(splits, shares, draws: int, cache: Path | None, log) -> list[dict]:
    """Records of every pool of the split seeds (read from / written to ``cache``)."""
    out = []
    for s in splits:
        path = None if cache is None else cache / f"s{s}_d{draws}_{'-'.join(shares)}.json"
        if path is not None and path.exists():
            out += json.loads(path.read_text(encoding="utf-8"))
            continue
        t0 = time.perf_counter()
        tmp, files = panel_files((s,))
        recs = []
        for f in files:
            recs += pool_records(f.stem, load_pool(f), shares, draws)
        tmp.cleanup()
        log(f"  split seed {s}: {len(files)} pools, {time.perf_counter() - t0:.1f} s")
        if path is not None:
            path.write_text(json.dumps(recs), encoding="utf-8")
        out += recs
    return out


def split_of(stem: str) -> int:
    return int(re.search(r"_s(\d+)_", stem).group(1))


def stratum_of(r) -> str:
    return fc.stratum(r["known"], r["n"])


def fit(records, unit: str, method: str) -> dict:
    """Margins per stratum: one number (symmetric) or a pair (low, high) (asymmetric);
    ``inf`` where a stratum has too few pools."""
    out: dict = {}
    for name, _ in fc.STRATA:
        rs = [r for r in records if stratum_of(r) == name]
        sides = [fc.side_scores(r["real"], r["draws"], r["known"], r["n"], unit=unit)
                 for r in rs]
        if method == "symmetric":
            out[name] = fc.conformal_quantile([max(e) for e in sides]) if sides else np.inf
        else:
            out[name] = tuple(fc.conformal_quantile([e[i] for e in sides], SIDE_LEVEL)
                              if sides else np.inf for i in (0, 1))
    return out


def rounded(margins: dict) -> dict:
    """Each margin rounded up to 4 decimals (a margin rounded up never covers less)."""
    def up(x):
        return float(np.ceil(x * 1e4 - 1e-6) / 1e4) + 0.0  # + 0.0: no -0.0
    return {k: tuple(up(x) for x in v) if isinstance(v, tuple) else up(v)
            for k, v in margins.items()}


def measure(records, margins=None, unit=fc.UNIT) -> dict:
    """Coverage (%), mean width (% of n) and misses below / above of ``records``, for the
    raw interval and the calibrated one (``margins`` None: the module's constants)."""
    hit = {"raw": [], "cal": []}
    width = {"raw": [], "cal": []}
    below = {"raw": 0, "cal": 0}
    above = {"raw": 0, "cal": 0}
    for r in records:
        q10, _, q90 = fc.raw_interval(r["draws"])
        lo, hi = fc.calibrated_interval(
            r["draws"], r["known"], r["n"],
            qhat=None if margins is None else margins[stratum_of(r)], unit=unit)
        for key, (a, b) in (("raw", (q10, q90)), ("cal", (lo, hi))):
            hit[key].append(a <= r["real"] <= b)
            width[key].append((b - a) / r["n"])
            below[key] += r["real"] < a
            above[key] += r["real"] > b
    m = len(records)
    if not m:
        return {"pools": 0}
    return {"pools": m, **{f"{k}_cov": 100 * np.mean(v) for k, v in hit.items()},
            **{f"{k}_w": 100 * np.mean(v) for k, v in width.items()},
            **{f"{k}_below": v for k, v in below.items()},
            **{f"{k}_above": v for k, v in above.items()}}


def cross_fit(records, unit: str, method: str) -> dict[str, dict]:
    """Per stratum: coverage, width and misses of margins fitted on the other folds of
    split seeds."""
    seeds = sorted({split_of(r["pool"]) for r in records})
    fold = {s: i % FOLDS for i, s in enumerate(seeds)}
    out = {}
    for name, _ in fc.STRATA:
        rs = [r for r in records if stratum_of(r) == name]
        hits = widths = below = above = 0.0
        for k in range(FOLDS):
            train = [r for r in rs if fold[split_of(r["pool"])] != k]
            test = [r for r in rs if fold[split_of(r["pool"])] == k]
            got = measure(test, fit(train, unit, method), unit)
            if got["pools"]:
                hits += got["cal_cov"] * got["pools"]
                widths += got["cal_w"] * got["pools"]
                below += got["cal_below"]
                above += got["cal_above"]
        m = max(len(rs), 1)
        out[name] = {"pools": len(rs), "cov": hits / m, "w": widths / m,
                     "below": int(below), "above": int(above)}
    return out


def mean_width(cells: dict) -> float:
    """Mean width over the strata, pools weighted equally."""
    return sum(v["w"] * v["pools"] for v in cells.values()) / sum(
        v["pools"] for v in cells.values())


def choose(crossed: dict) -> tuple[dict[str, str], str]:
    """The unit per method, then the method (the rules of the module docstring)."""
    unit = {}
    for method in METHODS:
        ok = [u for u in fc.UNITS if all(v["cov"] >= 75 for v in crossed[method, u].values())]
        unit[method] = min(ok or list(fc.UNITS),
                           key=lambda u: (mean_width(crossed[method, u]), fc.UNITS.index(u)))
    sym = crossed["symmetric", unit["symmetric"]]
    asym = crossed["asymmetric", unit["asymmetric"]]
    adopt = (all(v["cov"] >= 75 for v in asym.values())
             and asym["none"]["cov"] >= sym["none"]["cov"]
             and mean_width(asym) <= mean_width(sym))
    return unit, "asymmetric" if adopt else "symmetric"


def by_share(records, name):
    return [r for r in records if r["share"] == name]


def margin_text(v) -> str:
    return " / ".join(f"{x:+.4f}" for x in v) if isinstance(v, tuple) else f"{v:+.4f}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibrate", default=CALIBRATE, help="calibration split seeds")
    ap.add_argument("--evaluate", default=EVALUATE,
                    help="fresh split seeds, evaluated once ('none': skip)")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--cache", default=None, help="keep per-seed forecasts in this folder")
    a = ap.parse_args(argv)
    cache = None
    if a.cache:
        cache = Path(a.cache)
        cache.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    strata = [name for name, _ in fc.STRATA]
    shares = list(SHARES)
    print(f"calibration: split seeds {a.calibrate}, policy {POLICY}, {a.draws} draws")
    cal = split_records(parse_splits(a.calibrate), shares, a.draws, cache, print)

    crossed = {}
    for method in METHODS:
        for unit in fc.UNITS:
            crossed[method, unit] = cross_fit(cal, unit, method)
            cells = "  ".join(f"{k} {v['cov']:5.1f}% {v['w']:5.2f}%n {v['below']}/{v['above']}"
                              for k, v in crossed[method, unit].items())
            print(f"cross-fitted, {method:<10} unit {unit:<6}: {cells}")
    unit, chosen = choose(crossed)
    fits = {m: rounded(fit(cal, unit[m], m)) for m in METHODS}
    print(f"units {unit}; chosen method {chosen!r}; fitted margins {fits}")
    shipped = "symmetric"  # the module's default: one margin, fc.QHAT
    same = (chosen == shipped and unit[shipped] == fc.UNIT
            and all(abs(fits[shipped][k] - fc.QHAT[k]) < 1e-12 for k in strata))
    if not same:
        print(f"NOTE: the module's constants ({shipped}, unit {fc.UNIT!r}, {fc.QHAT}) differ "
              "from this fit; the shipped method's columns below use the module's")
    # the shipped method: the module's constants; the other: this run's fit
    margins = {m: None if m == shipped else fits[m] for m in METHODS}
    units = {m: fc.UNIT if m == shipped else unit[m] for m in METHODS}

    results, misses = [], []

    def add(setname, records, settings):
        for label, name in settings:
            rs = by_share(records, name)
            got = {m: measure(rs, margins[m], units[m]) for m in METHODS}
            if not rs:
                continue
            s, t = got["symmetric"], got["asymmetric"]
            print(f"{setname:<40} {label:<17} pools {s['pools']:3d}  coverage raw "
                  f"{s['raw_cov']:5.1f}% sym {s['cal_cov']:5.1f}% asym {t['cal_cov']:5.1f}%  "
                  f"width raw {s['raw_w']:5.2f}% sym {s['cal_w']:5.2f}% asym "
                  f"{t['cal_w']:5.2f}%  below/above raw {s['raw_below']}/{s['raw_above']} "
                  f"sym {s['cal_below']}/{s['cal_above']} asym {t['cal_below']}/{t['cal_above']}")
            results.append([setname, label, s["pools"], f"{s['raw_cov']:.1f}%",
                            f"{s['cal_cov']:.1f}%", f"{t['cal_cov']:.1f}%",
                            f"{s['raw_w']:.1f}%", f"{s['cal_w']:.1f}%", f"{t['cal_w']:.1f}%"])
            misses.append([setname, label, s["pools"], f"{s['raw_below']} / {s['raw_above']}",
                           f"{s['cal_below']} / {s['cal_above']}",
                           f"{t['cal_below']} / {t['cal_above']}"])

    add(f"calibration {a.calibrate} (in-sample)", cal, SETTINGS)
    add(f"calibration {a.calibrate} (in-sample)", cal,
        [(f"after {SHARES[k]}", k) for k in shares if k not in dict(SETTINGS).values()])
    fresh = a.evaluate.lower() != "none"
    if fresh:
        print(f"evaluation: split seeds {a.evaluate} (once)")
        ev = split_records(parse_splits(a.evaluate), ["none", "quarter"], a.draws, cache, print)
        add(f"fresh {a.evaluate} (evaluated once)", ev, SETTINGS)
    seconds = time.perf_counter() - t0
    print(f"{seconds / 60:.1f} min")

    unit_name = {"n": "the pool size n", "unread": "the rows still unread",
                 "width": "the raw interval's width"}
    rows_m = [[k, sum(stratum_of(r) == k for r in cal), margin_text(fits["symmetric"][k]),
               margin_text(fits["asymmetric"][k])] for k in strata]
    rows_x = [[m, u] + [f"{v['cov']:.1f}% / {v['w']:.1f}% / {v['below']} / {v['above']}"
                        for v in crossed[m, u].values()]
              for m in METHODS for u in fc.UNITS]
    label = {m: m + (" (shipped)" if m == shipped else "") for m in METHODS}
    md = ("Calibrated 80% interval of the label forecast (conformalized quantile regression, "
          "`certlib.planning.forecast_calibration`) on panel pools, adaptive pair-sum, tau = 0, "
          f"{a.draws} draws; realised = the replay with every label. Symmetric: one margin "
          "for both sides (conformal quantile at 0.8 of the larger side's score); asymmetric: "
          "a margin per side (each side's conformal quantile at 0.9). Coverage = share of "
          "pools whose realised count is inside the interval (target 75-90%); width = mean "
          "interval width in % of n. Pools certified within the rows already read are left "
          "out (their forecast is exact).\n\n"
          + table(["split seeds", "setting", "pools", "raw coverage",
                   f"{label['symmetric']} coverage", f"{label['asymmetric']} coverage",
                   "raw width", "symmetric width", "asymmetric width"], results)
          + ("" if not fresh else f"\n\nOn the fresh split seeds {a.evaluate} the shipped "
             "interval is the one evaluated once; the other method's column was computed "
             "after the choice, made on the calibration pools only, and played no part in it.")
          + "\n\nRealised counts below / above the interval, same pools:\n\n"
          + table(["split seeds", "setting", "pools", "raw", "symmetric", "asymmetric"], misses)
          + "\n\nMargins fitted on the calibration pools (negative: inside the raw "
          "interval); asymmetric: below q10 / above q90. Symmetric in units of "
          f"{unit_name[units['symmetric']]}, asymmetric in units of "
          f"{unit_name[units['asymmetric']]} (each method's unit chosen below):\n\n"
          + table(["stratum", "calibration pools", "symmetric", "asymmetric"], rows_m)
          + "\n\nChoice of the method and unit, cross-fitted on the calibration pools (four "
          "folds of split seeds): coverage / mean width (% of n) / misses below / above, per "
          f"stratum. Chosen: **{chosen}**, unit {unit[chosen]!r}.\n\n"
          + table(["method", "unit", *strata], rows_x)
          + ("" if same else "\n\n**The module's constants differ from this run's fit.**")
          + f"\n\nThe run took {seconds / 60:.1f} min.")
    if not fresh:
        return 0  # the fit only: printed, not written
    name = "forecast_calibration" if a.calibrate == CALIBRATE and a.evaluate == EVALUATE else (
        "forecast_calibration_" + re.sub(r"[^0-9-]+", "_", a.calibrate + "_" + a.evaluate))
    write_results(name, md, command=command("forecast_calibration", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
