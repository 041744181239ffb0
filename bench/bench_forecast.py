"""Speed of `certlib.forecast` (issue 10 target: < 10 s at n = 10,000, K = 8, 200 draws).

    python bench/bench_forecast.py            # 5 runs per case, medians
    python bench/bench_forecast.py --repeat 3

Pools: `bench_core.make_pool` (binary, K = 8, correlated confidences, about 15%
errors), with every label hidden (the forecast then samples all n labels).  Also
times the budget map (default grids, static-range) on the labelled pool.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import certlib  # noqa: E402
from bench_core import make_pool  # noqa: E402


def timed(fn, repeat):
    ts, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n", type=int, default=10_000)
    a = ap.parse_args()
    pool = make_pool(a.n)
    hidden = pool.with_labels(np.full(pool.n, -1))
    print(f"n = {pool.n:,}, K = {pool.K}, 200 draws, {a.repeat} runs, medians")
    for policy in ("adaptive-pair-sum", "static-range"):
        for tol in (0.0, 0.005):
            t, f = timed(lambda p=policy, t=tol: certlib.forecast(
                hidden, policy=p, tolerance=t, draws=200, seed=0), a.repeat)
            print(f"forecast {policy:<18} tau={tol:<6} {t:6.2f} s   quantiles {f.quantiles}")
    real = certlib.replay(pool, policy="adaptive-pair-sum").labels_read
    print(f"(realised adaptive-pair-sum count on the labelled pool: {real})")
    t, m = timed(lambda: certlib.budget_map(pool), a.repeat)
    print(f"budget map (6 tolerances x 11 budgets, static-range): {t:6.2f} s")


if __name__ == "__main__":
    main()
