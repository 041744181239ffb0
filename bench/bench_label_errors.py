"""Label errors on the shipped panel pools (issue 14).

    python bench/bench_label_errors.py            # table and summary
    python bench/bench_label_errors.py --json     # one JSON object

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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from certlib.io import load_pool  # noqa: E402
from certlib.labelling.label_errors import full_pool_fragility  # noqa: E402
from certlib.labelling.replay import replay  # noqa: E402

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default=os.path.join(os.path.dirname(__file__), "..",
                                                     "sample_data", "panels"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = run(args.folder)
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
