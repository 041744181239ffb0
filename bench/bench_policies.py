"""Benchmark: expected-coverage versus adaptive pair-sum (issue 4).

    python bench/bench_policies.py            # all 36 panel pools, certificates, cost
    python bench/bench_policies.py --quick    # same pools, short certificate time limit,
                                              # fewer cost repetitions

For every paper-protocol panel pool in ``sample_data/panels`` (paper section
6.1: Breast Cancer, Wine, Digits; K = 4 and 8; trees and logistic regression;
three splits) it prints the prelabel bound (Theorem 3), the minimum-certificate
enclosure (Theorem 2, `certlib.certificates.certificate.certify`), and the labels read by
adaptive pair-sum and by expected-coverage under the shared exact test; each
run is checked to certify the full-pool winner.  Then the mean label fraction
per data set and over data sets (each weighted equally), the worst pool of
expected-coverage relative to adaptive pair-sum, and the cost figures: one
step (observe a label, pick the next row) at n = 100,000, K = 8, and a full
replay at n = 10,000, K = 8, on a seeded synthetic binary pool whose
confidences are probabilities of the candidate's own prediction.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from certlib.core.pool import Pool  # noqa: E402
from certlib.certificates.prelabel import prelabel_bound  # noqa: E402
from certlib.labelling.replay import replay  # noqa: E402
from certlib.labelling.session import Session  # noqa: E402

try:  # the loader and the certificate module are separate work items
    from certlib.io import load_pool  # noqa: E402
except ImportError:  # pragma: no cover
    load_pool = None
try:
    from certlib.certificates.certificate import certify  # noqa: E402
except ImportError:  # pragma: no cover
    certify = None

POLICIES = ("adaptive-pair-sum", "expected-coverage")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def read_pool(path: str) -> Pool:
    if load_pool is not None:
        return load_pool(path)
    import polars as pl  # fallback while certlib.io is not available

    df = pl.read_csv(path)
    names = [c[5:] for c in df.columns if c.startswith("pred_")]
    preds = np.stack([df[f"pred_{nm}"].to_numpy() for nm in names])
    confs = np.stack([df[f"conf_{nm}"].to_numpy() for nm in names])
    return Pool.from_arrays(preds, confs, labels=df["label"].to_numpy(), names=names,
                            row_ids=df["row_id"].to_numpy())


def synthetic_pool(n: int, K: int = 8, seed: int = 0) -> Pool:
    """Binary pool: K noisy views of one latent score, confidence = max class probability."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.normal(size=n)
    preds, confs = [], []
    for j in range(K):
        s = x + rng.normal(scale=0.5 + 0.1 * j, size=n)
        p1 = 1 / (1 + np.exp(-(2 * y - 1) * 1.5 - 0.3 * s))
        p1 = np.clip(p1 + rng.normal(scale=0.1, size=n), 0.01, 0.99)
        preds.append((p1 > 0.5).astype(np.int64))
        confs.append(np.round(np.maximum(p1, 1 - p1), 3))
    return Pool.from_arrays(np.array(preds), np.array(confs), labels=y)


def run_pools(quick: bool):
    files = sorted(glob.glob(os.path.join(ROOT, "sample_data", "panels", "*.csv")))
    rows = []
    print(f"{'pool':34s} {'n':>4s} {'K':>2s} {'prelabel':>8s} {'min cert':>9s} "
          f"{'adapt.pair-sum':>14s} {'exp.-coverage':>13s}  winner ok")
    for f in files:
        pool = read_pool(f)
        name = os.path.basename(f)[:-4]
        pre = prelabel_bound(pool).prelabel_bound
        if certify is not None:
            c = certify(pool, work_limit=100) if quick else certify(pool)
            cert = (c.lower, c.upper)
        else:
            cert = None
        got = {}
        ok = True
        for pol in POLICIES:
            r = replay(pool, pol)
            ok &= r.certified and r.selected == r.full_pool_winner
            got[pol] = r.labels_read
        n = pool.n
        ctext = "n/a" if cert is None else (f"{cert[0]}" if cert[0] == cert[1]
                                            else f"{cert[0]}-{cert[1]}")
        print(f"{name:34s} {n:4d} {pool.K:2d} {pre:8d} {ctext:>9s} "
              f"{got[POLICIES[0]]:5d} ({got[POLICIES[0]] / n:5.1%}) "
              f"{got[POLICIES[1]]:4d} ({got[POLICIES[1]] / n:5.1%})  {'yes' if ok else 'NO'}")
        rows.append(dict(name=name, dataset=name.split("_s")[0], n=n, K=pool.K, prelabel=pre,
                         cert=cert, aps=got[POLICIES[0]], ec=got[POLICIES[1]], ok=ok))
    return rows


def summarise(rows):
    by = defaultdict(list)
    for r in rows:
        by[r["dataset"]].append(r)

    def frac(key, rs):
        return float(np.mean([r[key] / r["n"] for r in rs]))

    print("\nMean labels read (% of pool), each data set weighted equally:")
    print(f"{'data set':16s} {'prelabel':>8s} {'min cert':>15s} {'adapt.pair-sum':>14s} "
          f"{'exp.-coverage':>13s} {'saving':>7s}")
    agg = defaultdict(list)
    for ds, rs in sorted(by.items()):
        vals = dict(pre=frac("prelabel", rs), aps=frac("aps", rs), ec=frac("ec", rs))
        if all(r["cert"] is not None for r in rs):
            vals["cl"] = float(np.mean([r["cert"][0] / r["n"] for r in rs]))
            vals["cu"] = float(np.mean([r["cert"][1] / r["n"] for r in rs]))
            ctext = f"{vals['cl']:6.1%}-{vals['cu']:6.1%}"
        else:
            ctext = "n/a"
        for k, v in vals.items():
            agg[k].append(v)
        print(f"{ds:16s} {vals['pre']:8.1%} {ctext:>15s} {vals['aps']:14.1%} {vals['ec']:13.1%} "
              f"{100 * (vals['aps'] - vals['ec']):6.1f}pp")
    m = {k: float(np.mean(v)) for k, v in agg.items()}
    ctext = f"{m['cl']:6.1%}-{m['cu']:6.1%}" if "cl" in m and len(agg["cl"]) == len(by) else "n/a"
    print(f"{'mean':16s} {m['pre']:8.1%} {ctext:>15s} {m['aps']:14.1%} {m['ec']:13.1%} "
          f"{100 * (m['aps'] - m['ec']):6.1f}pp")
    worst = max(rows, key=lambda r: (r["ec"] - r["aps"]) / r["n"])
    d = (worst["ec"] - worst["aps"]) / worst["n"]
    better = sum(r["ec"] < r["aps"] for r in rows)
    equal = sum(r["ec"] == r["aps"] for r in rows)
    print(f"\nexpected-coverage reads fewer labels on {better}/{len(rows)} pools, as many on "
          f"{equal}, more on {len(rows) - better - equal}")
    print(f"worst pool vs adaptive pair-sum: {worst['name']} ({worst['ec']} vs {worst['aps']} "
          f"labels, {100 * d:+.1f}% of n)")
    print(f"every run certified the full-pool winner: {all(r['ok'] for r in rows)}")
    return m, d


def cost(quick: bool):
    reps = 3 if quick else 5
    print("\nCost (expected-coverage, K = 8, synthetic binary pool):")
    big = synthetic_pool(100_000, 8, seed=0)
    t0 = time.perf_counter()
    s = Session.start(big, "expected-coverage")
    start = time.perf_counter() - t0
    steps = []
    for _ in range(100 if quick else 300):
        row = s.next_row()
        t0 = time.perf_counter()
        s = s.observe(row, big.classes[big.labels[row]])  # update the bounds and the policy
        s.next_row()  # and pick the next row
        steps.append(time.perf_counter() - t0)
    # a step that re-ranks every row (the policy does this lazily; this is its worst case)
    from certlib.policies.coverage import ExpectedCoverage

    s2 = Session.start(big, ExpectedCoverage(refresh=0.0))
    full = []
    for _ in range(10 if quick else 30):
        row = s2.next_row()
        t0 = time.perf_counter()
        s2 = s2.observe(row, big.classes[big.labels[row]])
        s2.next_row()
        full.append(time.perf_counter() - t0)
    print(f"  n = 100,000: start {start * 1e3:.0f} ms; "
          f"one step median {np.median(steps) * 1e3:.2f} ms, "
          f"99th percentile {np.quantile(steps, 0.99) * 1e3:.1f} ms; a step with a full "
          f"re-ranking median {np.median(full) * 1e3:.1f} ms (max {max(full) * 1e3:.1f} ms)")
    mid = synthetic_pool(10_000, 8, seed=1)
    times, reads = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        r = replay(mid, "expected-coverage")
        times.append(time.perf_counter() - t0)
        reads = (r.labels_read, r.certified, r.selected == r.full_pool_winner)
    print(f"  n = 10,000: full replay median {statistics.median(times):.2f} s over {reps} runs "
          f"({reads[0]} labels read, certified {reads[1]}, winner ok {reads[2]})")
    return float(np.median(steps)), float(np.median(full)), statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="short certificate time limit and fewer cost repetitions")
    ap.add_argument("--no-cost", action="store_true", help="skip the cost figures")
    args = ap.parse_args(argv)
    if certify is None:
        print("certlib.certificates.certificate is not available: "
              "the minimum certificate is not reported")
    rows = run_pools(args.quick)
    summarise(rows)
    if not args.no_cost:
        cost(args.quick)


if __name__ == "__main__":
    main()
