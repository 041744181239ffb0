"""Many candidates: the prelabel bound and every policy's replay at K = 64 and K = 8,
each as a ratio to the sort limit measured in the same run (K argsorts of n floats).

    python -m bench scale                  # K = 64 at n = 100,000; K = 8 at n = 1,000,000
    python -m bench scale --quick          # K = 64 at n = 10,000 only
    python -m bench scale --no-steps       # without the one-label steps at n = 1,000,000

Targets (the many-candidates issue): the prelabel bound and every replay within 10x of
the sort limit at K = 64, n = 100,000, and no worse than 2-5x at K = 8, n = 1,000,000.
The pool is `bench_core.make_pool` with K candidates.  ``model-selector`` and
``expected-coverage`` choose each row by scoring every unread row (O(n) a label, O(n^2)
a run), so they are timed over their first ``--labels`` labels and their whole run is
extrapolated at that rate (said so in the table).  One run each; a figure is the median
of ``--repeat`` runs for the sorts.  Then one label + next row at n = 1,000,000,
K = 64 for every policy (target: under 1 ms, the worst step under 50 ms).  Writes
``docs/results/scale.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from certlib import Session, policy_names, prelabel_bound, replay

from . import bench_core
from .results import command, table, write_results

PER_LABEL = ("model-selector", "expected-coverage")  # every unread row scored a label


def sort_limit(pool, repeat: int = 3) -> float:
    """Seconds for K stable argsorts of n floats (the confidences), median of ``repeat``."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for j in range(pool.K):
            np.argsort(-pool.confs[j], kind="stable")
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def per_label(pool, policy: str, labels: int) -> tuple[float, int]:
    """Seconds a label (observe + next row) over the first ``labels`` labels of a stepped
    session, and the labels a whole run reads (from the vectorised replay when it has
    one, else the labels of the stepped run, capped)."""
    s = Session.start(pool, policy=policy)
    t = time.perf_counter()
    done = 0
    while not s.done and done < labels:
        row = s.next_row()
        s.observe(row, int(pool.labels[row]))
        done += 1
    return (time.perf_counter() - t) / max(done, 1), done


def step_times(pool, policy: str, steps: int | None) -> tuple[float, np.ndarray, list[float]]:
    """Seconds for `Session.start`, then each label + next row over the first ``steps``
    labels (the whole run when None), and the steps at which a candidate was eliminated."""
    t = time.perf_counter()
    s = Session.start(pool, policy=policy)
    row = s.next_row()
    start = time.perf_counter() - t
    times, elim = [], []
    while row is not None and (steps is None or len(times) < steps):
        out = len(s.eliminated)
        t = time.perf_counter()
        s = s.observe(row, int(pool.labels[row]))
        row = s.next_row()
        dt = time.perf_counter() - t
        times.append(dt)
        if len(s.eliminated) != out:
            elim.append(dt)
    return start, np.array(times), elim


def steps_table(n: int, K: int, first: int, whole: tuple[str, ...],
                per_label: int) -> list[list[str]]:
    """One label + next row at n, K: the first ``first`` steps of every policy, the whole
    stepped run of the ``whole`` policies (their worst step is an elimination), and
    ``per_label`` steps of the policies that score every unread row a label."""
    bench_core.K = K
    pool = bench_core.make_pool(n)
    rows = []
    for policy in policy_names():
        if policy == "expected-coverage" and 8 * K * K * n > 8e9:
            # its state keeps each ordered pair's expected gain and variance on every row
            rows.append([f"{n:,}", str(K), policy, "not run", "", "", "", "",
                         f"needs K^2 x n x 8 bytes ({8 * K * K * n / 1e9:.0f} GB)", ""])
            print(f"    step {policy}: not run ({8 * K * K * n / 1e9:.0f} GB)", flush=True)
            continue
        count = per_label if policy in PER_LABEL else (None if policy in whole else first)
        start, times, elim = step_times(pool, policy, count)
        what = "whole run" if count is None else f"first {times.size}"
        worst_elim = f"{1000 * max(elim):.1f}" if elim else "-"
        med, worst = 1000 * float(np.median(times)), 1000 * float(times.max())
        rows.append([f"{n:,}", str(K), policy, what, f"{start:.1f}", f"{med:.3f}",
                     f"{worst:.1f}", f"{len(elim)}, worst {worst_elim}",
                     "yes" if med < 1 else "**no**", "yes" if worst < 50 else "**no**"])
        print(f"    step {policy}: {what}, median {med:.3f} ms, worst {worst:.1f} ms, "
              f"eliminations {len(elim)} (worst {worst_elim} ms)", flush=True)
    return rows


def run(n: int, K: int, labels: int) -> list[list[str]]:
    bench_core.K = K
    pool = bench_core.make_pool(n)
    ref = sort_limit(pool)
    rows = [[f"{n:,}", str(K), "sort limit (K argsorts)", f"{ref:.3f}", "1.0", ""]]
    t = time.perf_counter()
    pb = prelabel_bound(pool)
    dt = time.perf_counter() - t
    rows.append([f"{n:,}", str(K), "prelabel bound", f"{dt:.3f}", f"{dt / ref:.1f}",
                 f"bound {pb.prelabel_bound:,}"])
    print(f"  n={n:,} K={K}: sorts {ref:.3f} s, prelabel {dt:.3f} s", flush=True)
    for policy in policy_names():
        if policy in PER_LABEL:
            sec, done = per_label(pool, policy, labels)
            est = sec * n
            rows.append([f"{n:,}", str(K), f"replay {policy}", f"~{est:,.0f} (est.)",
                         f"~{est / ref:,.0f}", f"{1000 * sec:.1f} ms a label over the first "
                         f"{done} labels; a run reads most of n"])
        else:
            t = time.perf_counter()
            r = replay(pool, policy=policy)
            dt = time.perf_counter() - t
            rows.append([f"{n:,}", str(K), f"replay {policy}", f"{dt:.3f}",
                         f"{dt / ref:.1f}", f"{r.labels_read:,} labels"])
        print(f"    {rows[-1][2]}: {rows[-1][3]} s ({rows[-1][4]}x)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="K = 64 at n = 10,000 only")
    ap.add_argument("--labels", type=int, default=20,
                    help="labels timed for the policies that score every row a label")
    ap.add_argument("--no-steps", action="store_true",
                    help="skip the one-label steps at n = 1,000,000, K = 64")
    args = ap.parse_args(argv)
    sizes = [(10_000, 64)] if args.quick else [(100_000, 64), (1_000_000, 8)]
    rows = []
    for n, K in sizes:
        rows += run(n, K, args.labels)
    md = ("Seconds and the ratio to the sort limit of the same pool, measured in the same "
          "run (targets: 10x at K = 64, n = 100,000; 2-5x at K = 8, n = 1,000,000).\n\n"
          + table(["n", "K", "what", "seconds", "x sort limit", "note"], rows))
    if not args.no_steps:
        n_steps = 10_000 if args.quick else 1_000_000
        print(f"  steps at n={n_steps:,} K=64", flush=True)
        srows = steps_table(n_steps, 64, first=200,
                            whole=("adaptive-range", "adaptive-pair-sum"), per_label=5)
        md += ("\n\nOne label + next row (`Session.observe` then `next_row`), in ms "
               "(targets: under 1 ms, worst step under 50 ms). The adaptive orders are "
               "stepped through a whole run, so their worst step includes every "
               "elimination (the order remade for the unread rows); the others over their "
               "first labels. Start = `Session.start`, once per session.\n\n"
               + table(["n", "K", "policy", "steps", "start s", "median ms", "worst ms",
                        "eliminations, worst ms", "median < 1 ms", "worst < 50 ms"], srows))
    print(md)
    write_results("scale", md, command=command("scale", sys.argv[1:] if argv is None
                                               else argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
