"""Speed of the certificate core (issue 2 targets), K = 8 candidates.

    python bench/bench_core.py            # full run (n = 10,000 and n = 1,000,000)
    python bench/bench_core.py --quick    # n = 10,000 only

Each figure is the median of repeated runs, next to the unavoidable work measured
in the same run: K argsorts of n floats (sorting the confidences).  Peak memory
of the n = 1,000,000 runs is measured in a fresh child process (ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from certlib import Pool, Session, certify, prelabel_bound, replay  # noqa: E402

K = 8


def make_pool(n: int, seed: int = 0) -> Pool:
    """Binary pool: K candidates with correlated confidences and ~15% errors that are
    more likely where confidence is low (a realistic, not adversarial, pool)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int64)
    hard = rng.random(n)
    preds = np.empty((K, n), dtype=np.int64)
    confs = np.empty((K, n))
    for j in range(K):
        noise = rng.random(n)
        wrong = noise < 0.05 + 0.2 * hard
        preds[j] = np.where(wrong, 1 - y, y)
        confs[j] = np.round(0.5 + 0.5 * (1 - hard) * (0.6 + 0.4 * rng.random(n)), 3)
    return Pool.from_arrays(preds, confs, labels=y, names=[f"m{j}" for j in range(K)])


def median_time(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def argsort_time(pool: Pool, repeat: int) -> float:
    confs = pool.confs
    return median_time(lambda: [np.argsort(-confs[j]) for j in range(pool.K)], repeat)


def one_step_times(pool: Pool, steps: int = 300) -> float:
    s = Session.start(pool, policy="static-range")
    ts = []
    for _ in range(steps):
        t = time.perf_counter()
        r = s.next_row()
        s = s.observe(r, pool.classes[pool.labels[r]])
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def child(what: str, n: int) -> None:
    """Run one measurement in this process and print JSON (time, peak RSS)."""
    pool = make_pool(n)
    fn = {"prelabel": lambda: prelabel_bound(pool),
          "replay": lambda: replay(pool, "static-range"),
          "argsort": lambda: [np.argsort(-pool.confs[j]) for j in range(K)]}[what]
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    extra = {}
    if what == "replay":
        extra = {"labels_read": out.labels_read, "certified": out.certified}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB on Linux
    print(json.dumps({"seconds": dt, "peak_mib": rss, **extra}))


def run_child(what: str, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", what, str(n)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], int(a.child[1]))
        return

    rows = []
    n = 10_000
    pool = make_pool(n)
    base = argsort_time(pool, a.repeat)
    for name, fn in [("prelabel", lambda: prelabel_bound(pool)),
                     ("static-range replay", lambda: replay(pool, "static-range")),
                     ("certificate enclosure (LP)", lambda: certify(pool, work_limit=0)),
                     ("certificate, closing the gap", lambda: certify(pool))]:
        fn()  # warm-up
        t = median_time(fn, a.repeat)
        target = "(work limit)" if "closing" in name else "< 100 ms"
        rows.append((f"n = {n:,}", name, t, t / base, "", target))
    rows.append((f"n = {n:,}", f"{K} argsorts (reference)", base, 1.0, "", ""))

    if not a.quick:
        n = 1_000_000
        ref = [run_child("argsort", n) for _ in range(3)]
        base = statistics.median(r["seconds"] for r in ref)
        for what, label in [("prelabel", "prelabel"), ("replay", "static-range replay")]:
            runs = [run_child(what, n) for _ in range(3)]
            t = statistics.median(r["seconds"] for r in runs)
            mem = max(r["peak_mib"] for r in runs)
            rows.append((f"n = {n:,}", label, t, t / base, f"{mem:,.0f} MiB", "< 5 s, < 2 GB"))
        rows.append((f"n = {n:,}", f"{K} argsorts (reference)", base, 1.0, "", ""))
        big = make_pool(n)
        t = one_step_times(big)
        rows.append((f"n = {n:,}", "one observe + next-row step", t, float("nan"), "", "< 1 ms"))

    print(f"{'pool':<14} {'operation':<30} {'median':>11} "
          f"{'x argsorts':>11} {'peak RSS':>10}  target")
    for pool_s, name, t, ratio, mem, target in rows:
        ts = f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"
        rs = "" if ratio != ratio else f"{ratio:.1f}"
        print(f"{pool_s:<14} {name:<30} {ts:>11} {rs:>11} {mem:>10}  {target}")


if __name__ == "__main__":
    main()
