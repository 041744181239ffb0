"""Benchmark: minimum certificates (SPEC section 7) on the panel pools and at n = 10,000.

    python -m bench certificate                 # the 36 panel pools, then n = 10,000, K = 8
    python -m bench certificate --no-synthetic  # the panel pools only
    python -m bench certificate --n 10000 --K 8 --repeats 15 --seed 0

Part 1: `certify` with its default work limit on every shipped panel pool
(``sample_data/panels``, paper section 6.1): how many minimums it proves (``exact``:
an exact dual bound meets a verified witness), and the median and largest time per pool.

Part 2: paper 000 (section 6) reports 22-26 ms for the verified LP pipeline at
n = 5,706, K = 8.  This times `certify` on a seeded synthetic pool and, in the same run,
K argsorts of n floats (the cost of computing the rank weights), so the ratio is
comparable across machines.  The pool is meant to look like real candidates: a latent
row difficulty drives both the errors (about 10-20% per candidate, correlated across
candidates) and the confidences (correlated across candidates, lower on errors).

Writes ``docs/results/certificate.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from certlib.certificates.certificate import certify
from certlib.core.pool import Pool
from certlib.io import load_pool

from ._paths import ROOT
from .results import command, table, write_results

T = TypeVar("T")


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


def median_time(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    assert out is not None
    return statistics.median(times), out


def _ms(t: float) -> str:
    return f"{1e3 * t:.0f} ms" if t >= 0.1 else f"{1e3 * t:.1f} ms"


def panels() -> str:
    files = sorted((ROOT / "sample_data" / "panels").glob("*.csv"))
    certify(load_pool(files[0]), work_limit=0)  # warm up imports (scipy.optimize)
    rows, times = [], []
    print(f"{'pool':34s} {'n':>4s} {'K':>2s} {'enclosure':>11s} {'exact':>5s} {'ms':>8s}  "
          "method")
    for f in files:
        pool = load_pool(f)
        t = time.perf_counter()
        c = certify(pool)
        dt = time.perf_counter() - t
        times.append(dt)
        rows.append((f.stem, pool.n, c))
        print(f"{f.stem:34s} {pool.n:4d} {pool.K:2d} {f'[{c.lower}, {c.upper}]':>11s} "
              f"{'yes' if c.exact else 'no':>5s} {1e3 * dt:8.1f}  {c.method}")
    proved = sum(c.exact for _, _, c in rows)
    limited = sum(c.time_limited for _, _, c in rows)
    worst = rows[int(np.argmax(times))][0]
    print(f"proved {proved} of {len(rows)} minimums; median {_ms(statistics.median(times))}, "
          f"at most {_ms(max(times))} ({worst})")
    methods: dict[str, int] = {}
    for _, _, c in rows:
        methods[c.method] = methods.get(c.method, 0) + 1
    return (f"On the {len(rows)} shipped panel pools (`sample_data/panels`) `certify()` with "
            f"its default work limit proves **{proved} of {len(rows)}** minimums "
            f"(median {_ms(statistics.median(times))} per pool, at most {_ms(max(times))}); "
            f"the time limit bound on {limited}. What closed the enclosure: "
            + ", ".join(f"{m} {k}" for m, k in sorted(methods.items())) + ".")


def synthetic(n: int, K: int, repeats: int, seed: int) -> str:
    pool = make_pool(n, K, seed)
    err = (pool.preds != pool.labels[None, :]).mean(axis=1)
    certify(pool, work_limit=0)  # warm up imports (scipy.optimize)

    confs = pool.confs
    t_sort, _ = median_time(lambda: [np.argsort(-confs[j]) for j in range(K)], repeats)
    t_lp, c_lp = median_time(lambda: certify(pool, work_limit=0), repeats)
    t_def, c_def = median_time(lambda: certify(pool), max(3, repeats // 3))

    print(f"pool: n = {n}, K = {K}, seed = {seed}, error rates "
          f"{err.min():.3f}-{err.max():.3f}, selected {c_def.selected}")
    print(f"{'run':<34}{'median ms':>11}{'x argsorts':>12}  enclosure")
    print(f"{'K argsorts of n floats':<34}{1e3 * t_sort:>11.2f}{1.0:>12.1f}")
    out = [[f"{K} argsorts of n floats (reference)", _ms(t_sort), "1", ""]]
    for label, t, c, reps in (("`certify(pool, work_limit=0)` (LP only)", t_lp, c_lp, repeats),
                              ("`certify(pool)` (default work limit)", t_def, c_def,
                               max(3, repeats // 3))):
        enc = f"[{c.lower}, {c.upper}] exact={c.exact} lp={c.lp_value:.3f} ({c.method})"
        print(f"{label:<34}{1e3 * t:>11.2f}{t / t_sort:>12.1f}  {enc}")
        out.append([f"{label}, median of {reps}", _ms(t), f"{t / t_sort:.0f}",
                    f"[{c.lower}, {c.upper}]" + (", exact" if c.exact else "")])
    return (f"A seeded synthetic pool, n = {n:,}, K = {K} (error rates "
            f"{err.min():.3f}-{err.max():.3f}, correlated through a latent row difficulty):\n\n"
            + table(["run", "median", "x argsorts", "enclosure"], out))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--K", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-synthetic", action="store_true", help="the panel pools only")
    args = ap.parse_args(argv)
    md = [panels()]
    if not args.no_synthetic:
        md.append(synthetic(args.n, args.K, args.repeats, args.seed))
    write_results("certificate", "\n\n".join(md), command=command("certificate", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
