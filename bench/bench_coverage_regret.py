"""The price of expected-coverage's regret guard (issue 13).

    python bench/bench_coverage_regret.py sample_data/holdout [--regrets 0.05,0.1,0.2]

Replays every pool file in the folder with adaptive pair-sum, expected-coverage and
``ExpectedCoverage(regret=r)``; prints per pool the labels read and, per data set and
over data sets (each weighted equally), the mean difference to adaptive pair-sum in
points of n and the worst pool.  Every run must certify the full-pool winner.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from certlib.io import load_pool  # noqa: E402
from certlib.policies.coverage import ExpectedCoverage  # noqa: E402
from certlib.labelling.replay import replay  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--regrets", default="0.05,0.1,0.2")
    args = ap.parse_args(argv)
    regrets = [None] + [float(x) for x in args.regrets.split(",")]
    rows = []
    for f in sorted(Path(args.folder).glob("*.csv")):
        pool = load_pool(f)
        aps = replay(pool, policy="adaptive-pair-sum").labels_read
        reads = []
        for r in regrets:
            res = replay(pool, policy=ExpectedCoverage(regret=r))
            assert res.certified and res.selected == res.full_pool_winner, f
            reads.append(res.labels_read)
        rows.append((f.stem, pool.n, aps, reads))
        print(f"{f.stem:32s} n={pool.n:4d} aps={aps:4d} " +
              " ".join(f"{'off' if r is None else r}:{x}" for r, x in zip(regrets, reads)))
    for i, r in enumerate(regrets):
        per = defaultdict(list)
        for name, n, aps, reads in rows:
            per[name.split("_s")[0]].append(100 * (reads[i] - aps) / n)
        means = {k: float(np.mean(v)) for k, v in per.items()}
        worst = max(100 * (reads[i] - aps) / n for _, n, aps, reads in rows)
        print(f"regret {'off' if r is None else r}: points below adaptive pair-sum "
              f"{-np.mean(list(means.values())):.2f} "
              f"({', '.join(f'{k} {-v:.2f}' for k, v in means.items())}); "
              f"worst pool {worst:+.1f}% of n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
