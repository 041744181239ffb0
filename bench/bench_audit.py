"""Benchmark and economics report for certlib.audit (README numbers).

    python bench/bench_audit.py            # timing of a 1,000,000-item audit (median of 7)
    python bench/bench_audit.py --economics  # labels vs rho, ratio to uniform, pi sweep
"""

import sys
import time

import numpy as np

from certlib.audit import audit, prpl_eb
from certlib.audit.baselines import compare_baselines
from certlib.audit.synthetic import synthetic_stream


gen = synthetic_stream


def timing(repeats=7):
    n = 1_000_000
    f, g, y = gen(n, 0.05, 0.0, 0)
    x = np.random.default_rng(1).random(n)
    cs_t, au_t = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        prpl_eb(x)
        cs_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        # epsilon tiny: no verdict, so both tiers run over all 1,000,000 items
        r = audit(f, g, y, epsilon=1e-4, run_to_end=True)
        au_t.append(time.perf_counter() - t0)
    print(f"prpl_eb, 1,000,000 points: median {np.median(cs_t):.3f} s over {repeats} runs")
    print(f"audit, 1,000,000 items (both tiers to the end, {r.labels_used} labels): "
          f"median {np.median(au_t):.3f} s over {repeats} runs")


def economics(streams=40):
    eps = 0.02
    rhos = np.array([0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12])
    med, ratio, uni = [], [], []
    for i, rho in enumerate(rhos):
        lab, u = [], []
        for s in range(streams):
            f, g, y = gen(200_000, rho, 0.0, 500 + 1000 * i + s)
            c = compare_baselines(f, g, y, epsilon=eps, seed=s).by_method()
            lab.append(c["discern"].labels_used)
            u.append(c["uniform"].labels_used)
        med.append(np.median(lab))
        uni.append(np.median(u))
        ratio.append(np.median(np.array(lab) / np.array(u)))
        print(f"rho={rho:.2f}  discern median labels {med[-1]:7.1f}  uniform {uni[-1]:7.1f}  "
              f"median per-stream ratio {ratio[-1]:.3f}", flush=True)
    for x, name in ((rhos, "rho"), (rhos ** 2, "rho^2")):
        b, a = np.polyfit(x, med, 1)
        r2 = 1 - np.sum((med - (a + b * x)) ** 2) / np.sum((med - np.mean(med)) ** 2)
        print(f"labels ~ {a:.1f} + {b:.1f} * {name}:  R^2 = {r2:.4f}")
    b, a = np.polyfit(rhos, ratio, 1)
    r2 = 1 - np.sum((ratio - (a + b * rhos)) ** 2) / np.sum((ratio - np.mean(ratio)) ** 2)
    print(f"ratio to uniform ~ {a:.4f} + {b:.3f} * rho:  R^2 = {r2:.4f}")
    for rho, eps_, n in ((0.3, 0.05, 40_000), (0.08, 0.02, 100_000)):
        for pi in (0.1, 0.25, 0.5, 1.0):
            lab, items = [], []
            for s in range(streams):
                f, g, y = gen(n, rho, 0.0, 1000 + s)
                r = audit(f, g, y, epsilon=eps_, pi=pi, seed=s)
                lab.append(r.labels_used)
                items.append(r.stopping_time or n)
            print(f"rho={rho} eps={eps_} pi={pi}: median labels {np.median(lab):.1f} "
                  f"(mean {np.mean(lab):.1f}), median items {np.median(items):.0f}", flush=True)


if __name__ == "__main__":
    timing()
    if "--economics" in sys.argv:
        economics()
