"""Speed of the certificate core, K = 8 candidates.

    python -m bench core                # full run (n = 10,000 and n = 1,000,000)
    python -m bench core --quick        # n = 10,000 only
    python -m bench.bench_core --quick  # the same, without the runner

Each figure is the median of repeated runs, next to the unavoidable work measured
in the same run: K argsorts of n floats (sorting the confidences).  Peak memory
of the n = 1,000,000 runs is measured in a fresh child process (ru_maxrss), and so is
loading a 1,000,000-row pool file (CSV and Parquet).  Writes ``docs/results/core_speed.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from certlib import Pool, Session, certify, load_pool, prelabel_bound, replay

from ._paths import ROOT
from .results import command, table, write_results

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


def write_pool_files(pool: Pool, folder: Path) -> tuple[Path, Path]:
    """The pool as a CSV and a Parquet pool file (SPEC section 2 columns)."""
    import polars as pl

    cols: dict[str, object] = {"row_id": np.arange(pool.n), "label": pool.labels}
    for j, name in enumerate(pool.names):
        cols[f"pred_{name}"] = pool.preds[j]
        cols[f"conf_{name}"] = pool.confs[j]
    df = pl.DataFrame(cols)
    csv, parquet = folder / "pool.csv", folder / "pool.parquet"
    df.write_csv(csv)
    df.write_parquet(parquet)
    return csv, parquet


def median_time(fn: Callable[[], object], repeat: int) -> float:
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


def child(what: str, arg: str) -> None:
    """Run one measurement in this process and print JSON (time, peak RSS)."""
    if what == "load":
        t = time.perf_counter()
        load_pool(arg)
        dt = time.perf_counter() - t
        print(json.dumps({"seconds": dt}))
        return
    pool = make_pool(int(arg))
    fn = {"prelabel": lambda: prelabel_bound(pool),
          "replay": lambda: replay(pool, policy="static-range"),
          "argsort": lambda: [np.argsort(-pool.confs[j]) for j in range(K)]}[what]
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    extra = {}
    if what == "replay":
        extra = {"labels_read": out.labels_read, "certified": out.certified}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB on Linux
    print(json.dumps({"seconds": dt, "peak_mib": rss, **extra}))


def run_child(what: str, arg: object) -> dict:
    out = subprocess.run([sys.executable, "-m", "bench.bench_core", "--child", what, str(arg)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _t(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 10,000 only")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], a.child[1])
        return 0

    rows = []
    n = 10_000
    pool = make_pool(n)
    base = argsort_time(pool, a.repeat)
    enclosure = {}
    for name, fn in [("prelabel bound", lambda: prelabel_bound(pool)),
                     ("static-range replay", lambda: replay(pool, policy="static-range")),
                     ("certificate enclosure (LP, verified witness, exact dual)",
                      lambda: certify(pool, work_limit=0)),
                     ("certificate, closing the gap (default work limit)",
                      lambda: certify(pool))]:
        out = fn()  # warm-up
        if "certificate" in name:
            enclosure[name.split(",")[0].split(" (")[0]] = out
        t = median_time(fn, a.repeat)
        target = "(work limit)" if "closing" in name else "< 100 ms"
        rows.append((f"n = {n:,}", name, t, t / base, "", target))
    rows.append((f"n = {n:,}", f"{K} argsorts (reference)", base, 1.0, "", ""))
    lp, full = enclosure["certificate enclosure"], enclosure["certificate"]

    loads = None
    if not a.quick:
        n = 1_000_000
        ref = [run_child("argsort", n) for _ in range(3)]
        base = statistics.median(r["seconds"] for r in ref)
        for what, label in [("prelabel", "prelabel bound"), ("replay", "static-range replay")]:
            runs = [run_child(what, n) for _ in range(3)]
            t = statistics.median(r["seconds"] for r in runs)
            mem = max(r["peak_mib"] for r in runs)
            if what == "replay":
                label += f" ({runs[0]['labels_read']:,} labels read)"
            rows.append((f"n = {n:,}", label, t, t / base, f"{mem:,.0f} MiB", "< 5 s, < 2 GB"))
        rows.append((f"n = {n:,}", f"{K} argsorts (reference)", base, 1.0, "", ""))
        big = make_pool(n)
        t = one_step_times(big)
        rows.append((f"n = {n:,}", "one `observe` + `next_row` step", t, float("nan"), "",
                     "< 1 ms"))
        with tempfile.TemporaryDirectory(prefix="certlib_bench_") as tmp:
            files = write_pool_files(big, Path(tmp))
            del big
            loads = [statistics.median(run_child("load", f)["seconds"] for _ in range(3))
                     for f in files]

    print(f"{'pool':<14} {'operation':<56} {'median':>11} "
          f"{'x argsorts':>11} {'peak RSS':>10}  target")
    md_rows = []
    for pool_s, name, t, ratio, mem, target in rows:
        rs = "" if ratio != ratio else (f"{ratio:.1f}" if ratio < 100 else f"{ratio:.0f}")
        print(f"{pool_s:<14} {name:<56} {_t(t):>11} {rs:>11} {mem:>10}  {target}")
        md_rows.append([pool_s, name, _t(t), rs, mem, target])
    print(f"enclosure at n = 10,000: LP [{lp.lower}, {lp.upper}], default [{full.lower}, "
          f"{full.upper}] exact={full.exact} ({full.method})")
    md = [f"Medians over {a.repeat} runs (`--repeat`; the n = 1,000,000 rows: 3 runs, each in "
          "a fresh process that also builds the pool; peak RSS is of that process), K = 8 "
          "candidates, a binary pool with correlated confidences and about 15% errors. "
          "\"x argsorts\" is the ratio to the unavoidable work measured in the same run: "
          "K argsorts of n floats.", "",
          table(["pool", "operation", "median", "x argsorts", "peak RSS", "target"], md_rows),
          "",
          f"On the n = 10,000 pool the LP enclosure is [{lp.lower}, {lp.upper}]; the default "
          f"`certify()` gives [{full.lower}, {full.upper}]"
          + (f", proving the minimum {full.lower}" if full.exact else ", not proved")
          + f" (closed by: {full.method}). `certify(pool, work_limit=0)` returns the "
          "enclosure alone."]
    if loads is not None:
        md.append(f"Loading the 1,000,000 x {K} pool file takes {loads[0]:.1f} s from CSV and "
                  f"{loads[1]:.1f} s from Parquet (`load_pool`, median of 3 fresh processes).")
    write_results("core_speed", "\n".join(md), command=command("core", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
