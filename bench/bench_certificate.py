"""Benchmark: minimum-certificate enclosure on a K = 8, n = 10,000 pool (SPEC section 7).

Paper 000 (section 6) reports 22-26 ms for the verified LP pipeline at n = 5,706,
K = 8.  This script times `certify` on a seeded synthetic pool and, in the same
run, K argsorts of n floats (the cost of computing the rank weights), so the
ratio is comparable across machines.

The pool is meant to look like real candidates: a latent row difficulty drives
both the errors (about 10-20% per candidate, correlated across candidates) and
the confidences (correlated across candidates, lower on errors).

    python bench/bench_certificate.py [--n 10000] [--K 8] [--repeats 15] [--seed 0]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from certlib.certificates.certificate import certify
from certlib.core.pool import Pool


def make_pool(n: int, K: int, seed: int) -> Pool:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    difficulty = rng.normal(size=n)
    preds, confs = [], []
    for _ in range(K):
        skill = rng.uniform(0.75, 1.25)  # per-candidate error rate ~10-20%
        z = skill - 0.9 * difficulty + 0.5 * rng.normal(size=n)
        wrong = z < 0
        preds.append(np.where(wrong, 1 - y, y))
        # confidence: shared difficulty, own noise, lower on errors
        confs.append(-0.8 * difficulty + 0.6 * rng.normal(size=n) - 0.7 * wrong)
    return Pool.from_arrays(np.array(preds), np.array(confs), labels=y,
                            names=[f"m{j}" for j in range(K)])


def median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--K", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    pool = make_pool(args.n, args.K, args.seed)
    err = (pool.preds != pool.labels[None, :]).mean(axis=1)
    certify(pool, work_limit=0)  # warm up imports (scipy.optimize)

    confs = pool.confs
    t_sort, _ = median_time(lambda: [np.argsort(-confs[j]) for j in range(args.K)],
                            args.repeats)
    t_lp, c_lp = median_time(lambda: certify(pool, work_limit=0), args.repeats)
    t_def, c_def = median_time(lambda: certify(pool), max(3, args.repeats // 3))

    print(f"pool: n = {args.n}, K = {args.K}, seed = {args.seed}, error rates "
          f"{err.min():.3f}-{err.max():.3f}, selected {c_def.selected}")
    print(f"{'run':<34}{'median ms':>11}{'x argsorts':>12}  enclosure")
    print(f"{'K argsorts of n floats':<34}{1e3 * t_sort:>11.2f}{1.0:>12.1f}")
    for label, t, c in (("certify(work_limit=0)  [LP only]", t_lp, c_lp),
                        ("certify()  [default work limit]", t_def, c_def)):
        enc = f"[{c.lower}, {c.upper}] exact={c.exact} lp={c.lp_value:.3f} ({c.method})"
        print(f"{label:<34}{1e3 * t:>11.2f}{t / t_sort:>12.1f}  {enc}")


if __name__ == "__main__":
    main()
