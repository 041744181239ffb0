"""Label errors on the shipped panel pools.

    python -m bench label_errors            # table and summary
    python -m bench label_errors --json     # one JSON object

For every paper-protocol panel pool in ``sample_data/panels`` and the policies
adaptive-pair-sum and static-range it reports, all exact (`certlib.labelling.label_errors`):

* the label-error margin at the plain stop (``replay(..., label_errors=0)``): how many
  wrong labels among the rows read would undo the certificate;
* the full-pool fragility: how many wrong labels among all n change the full-pool winner;
* the labels read by the stopping rule that survives one and two wrong labels
  (``label_errors=1, 2``) and its status ("certified", or "certified but fragile" when
  the full-pool choice itself cannot survive them), and the extra labels over the plain stop;
* the median time of one robust replay (e = 1) per pool, as a cost figure.

JSON keys: ``pools`` (per pool: ``pool``, ``n``, ``K``, ``fragility``, and per policy
``plain_labels``, ``margin_at_stop``, ``e1_labels``, ``e1_status``, ``e1_margin``,
``e2_labels``, ``e2_status``), ``summary`` (per policy: ``margin_at_stop_counts``,
``e1_robust``, ``e1_fragile``, ``e1_extra_labels_median``, ``e1_extra_fraction_mean``,
``e2_robust``), ``fragility_counts``, ``robust_replay_seconds_median``.

Writes ``docs/results/label_errors.md``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import time
from collections import Counter

from certlib.io import load_pool
from certlib.labelling.label_errors import full_pool_fragility
from certlib.labelling.replay import replay

from ._paths import ROOT
from .results import command, table, write_results

POLICIES = ("adaptive-pair-sum", "static-range")
ROBUST = ("certified", "certified within tolerance")


def _flips(m):
    return "any" if m.flips is None else m.flips


def run(folder: str) -> dict:
    rows, times = [], []
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        pool = load_pool(path)
        f = full_pool_fragility(pool)
        row = {"pool": os.path.basename(path), "n": pool.n, "K": pool.K,
               "fragility": _flips(f)}
        for pol in POLICIES:
            r0 = replay(pool, policy=pol, label_errors=0)
            t = time.perf_counter()
            r1 = replay(pool, policy=pol, label_errors=1)
            times.append(time.perf_counter() - t)
            r2 = replay(pool, policy=pol, label_errors=2)
            row[pol] = {"plain_labels": r0.labels_read, "margin_at_stop": _flips(r0.margin),
                        "e1_labels": r1.labels_read, "e1_status": r1.status,
                        "e1_margin": _flips(r1.margin), "e2_labels": r2.labels_read,
                        "e2_status": r2.status}
        rows.append(row)
    summary = {}
    for pol in POLICIES:
        rs = [r[pol] for r in rows]
        extra = [r["e1_labels"] - r["plain_labels"] for r in rs]
        frac = [(r["e1_labels"] - r["plain_labels"]) / p["n"] for r, p in zip(rs, rows)]
        summary[pol] = {
            "margin_at_stop_counts": dict(Counter(str(r["margin_at_stop"]) for r in rs)),
            "e1_robust": sum(r["e1_status"] in ROBUST for r in rs),
            "e1_fragile": sum(r["e1_status"] == "certified but fragile" for r in rs),
            "e1_extra_labels_median": statistics.median(extra),
            "e1_extra_fraction_mean": statistics.fmean(frac),
            "e1_extra_labels_robust_median": statistics.median(
                [x for x, r in zip(extra, rs) if r["e1_status"] in ROBUST] or [0]),
            "e2_robust": sum(r["e2_status"] in ROBUST for r in rs),
        }
    return {"pools": rows, "summary": summary,
            "fragility_counts": dict(Counter(str(r["fragility"]) for r in rows)),
            "robust_replay_seconds_median": statistics.median(times)}


DATASETS = {"breast_cancer": "Breast Cancer", "digits": "Digits", "wine": "Wine"}


def markdown(out: dict) -> str:
    """The summary as the manual shows it."""
    rows, sm = out["pools"], out["summary"]
    n = len(rows)

    def per(f):
        return [f(sm[p]) for p in POLICIES]

    def margins(s):
        c = s["margin_at_stop_counts"]
        return (f"{next(iter(c))} on all {n} pools" if len(c) == 1 else
                ", ".join(f"{k}: {v} pools" for k, v in sorted(c.items())))

    body = table(["", *POLICIES], [
        ["margin at the plain stop", *per(margins)],
        ["e = 1: answer survives one wrong label",
         *per(lambda s: f"{s['e1_robust']} pools ({s['e1_fragile']} \"certified but fragile\")")],
        ["extra labels for e = 1 where reachable (median)",
         *per(lambda s: f"{s['e1_extra_labels_robust_median']:g}")],
        [f"extra labels for e = 1, mean over all {n} (fraction of n)",
         *per(lambda s: f"{100 * s['e1_extra_fraction_mean']:.1f}%")],
        ["e = 2: answer survives two wrong labels", *per(lambda s: f"{s['e2_robust']} pools")],
    ])
    frag = out["fragility_counts"]
    ones = [r for r in rows if r["fragility"] == 1]
    by_ds = Counter(r["pool"].split("_s")[0] for r in rows)
    one_ds = Counter(r["pool"].split("_s")[0] for r in ones)
    survive1 = sum(1 for r in rows if r["fragility"] == "any" or r["fragility"] > 1)
    survive2 = sum(1 for r in rows if r["fragility"] == "any" or r["fragility"] > 2)
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(
        frag.items(), key=lambda kv: (kv[0] == "any", int(kv[0]) if kv[0] != "any" else 0)))
    return (body + "\n\n"
            f"Full-pool fragility (policy-free): the winner changes with **one** wrong label "
            f"on {len(ones)} of the {n} pools ("
            + ", ".join(f"{one_ds[d]} of {by_ds[d]} {DATASETS.get(d, d)}" for d in sorted(by_ds))
            + f"), survives one on {survive1} and two on {survive2} (fragility {counts}). "
            f"One robust replay (e = 1) takes a median "
            f"{1e3 * out['robust_replay_seconds_median']:.0f} ms per pool.")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default=str(ROOT / "sample_data" / "panels"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = run(args.folder)
    write_results("label_errors", markdown(out), command=command("label_errors", argv))
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{'pool':<32} {'n':>4} {'frag':>4} | " + " | ".join(
        f"{p[:12]:>12}: plain m  e1 (status) e2" for p in POLICIES))
    for r in out["pools"]:
        cells = []
        for p in POLICIES:
            x = r[p]
            st = "ok" if x["e1_status"] in ROBUST else "fragile"
            st2 = "ok" if x["e2_status"] in ROBUST else "fragile"
            cells.append(f"{x['plain_labels']:>17} {x['margin_at_stop']!s:>2} "
                         f"{x['e1_labels']:>4} ({st:>7}) {x['e2_labels']:>4} {st2}")
        print(f"{r['pool']:<32} {r['n']:>4} {r['fragility']!s:>4} | " + " | ".join(cells))
    print("\nfull-pool fragility counts:", out["fragility_counts"])
    for p, s in out["summary"].items():
        print(p, json.dumps(s))
    print(f"robust replay (e = 1) median {out['robust_replay_seconds_median'] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
