"""The price of expected-coverage's regret guard ``ExpectedCoverage(regret=r)``.

    python -m bench coverage_regret                      # shipped held-out files and panels
    python -m bench coverage_regret sample_data/holdout [--regrets 0.05,0.1,0.2]
    python -m bench coverage_regret --model mixture      # the first default's label model

Replays every pool file in each folder with adaptive pair-sum, expected-coverage and
``ExpectedCoverage(regret=r)``; prints per pool the labels read and, per data set and
over data sets (each weighted equally), the mean difference to adaptive pair-sum in
points of n and the worst pool.  Every run must certify the full-pool winner.  Writes
``docs/results/coverage_regret.md`` (``coverage_regret_mixture.md`` with ``--model``).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from certlib.io import load_pool
from certlib.labelling.replay import replay
from certlib.policies.coverage import ExpectedCoverage

from ._paths import ROOT
from .results import command, table, write_results

LABELS = {"holdout": "shipped held-out files (split seed 3)",
          "panels": "shipped panels (split seeds 0-2, in-sample)"}


def run_folder(folder: Path, regrets: list[float | None], model: str | None) -> list[str]:
    """One Markdown row for the folder: per regret, points below adaptive pair-sum and
    the worst pool."""
    kw = {} if model is None else {"model": model}
    rows = []
    for f in sorted(folder.glob("*.csv")):
        pool = load_pool(f)
        aps = replay(pool, policy="adaptive-pair-sum").labels_read
        reads = []
        for r in regrets:
            res = replay(pool, policy=ExpectedCoverage(regret=r, **kw))
            assert res.certified and res.selected == res.full_pool_winner, f
            reads.append(res.labels_read)
        rows.append((f.stem, pool.n, aps, reads))
        print(f"{f.stem:32s} n={pool.n:4d} aps={aps:4d} " +
              " ".join(f"{'off' if r is None else r}:{x}" for r, x in zip(regrets, reads)))
    cells = []
    for i, r in enumerate(regrets):
        per = defaultdict(list)
        for name, n, aps, reads in rows:
            per[name.split("_s")[0]].append(100 * (reads[i] - aps) / n)
        means = {k: float(np.mean(v)) for k, v in per.items()}
        worst = max(100 * (reads[i] - aps) / n for _, n, aps, reads in rows)
        pts = -float(np.mean(list(means.values())))
        print(f"regret {'off' if r is None else r}: points below adaptive pair-sum "
              f"{pts:.2f} ({', '.join(f'{k} {-v:.2f}' for k, v in means.items())}); "
              f"worst pool {worst:+.1f}% of n")
        cells.append(f"{pts:.1f}, worst {worst:+.1f}".replace("+0.0", "0"))
    label = LABELS.get(folder.name, f"`{folder.name}`")
    return [f"{len(rows)} {label}", *cells]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", type=Path,
                    default=[ROOT / "sample_data" / "holdout", ROOT / "sample_data" / "panels"])
    ap.add_argument("--regrets", default="0.05,0.1,0.2")
    ap.add_argument("--model", default=None, help="label model, e.g. mixture (default: the "
                    "policy's default)")
    args = ap.parse_args(argv)
    regrets: list[float | None] = [None, *(float(x) for x in args.regrets.split(","))]
    out = [run_folder(Path(d), regrets, args.model) for d in args.folders]
    md = (table(["pools", "unguarded", *(f"r = {r:.2f}" for r in regrets[1:])], out)
          + "\n\nPoints of n below adaptive pair-sum (each data set weighted equally), and "
          "the worst pool in % of n above it; "
          + ("the default label model." if args.model is None else
             f"label model `{args.model}`.")
          + " Every run certified the full-pool winner.")
    name = "coverage_regret" + ("" if args.model is None else f"_{args.model}")
    write_results(name, md, command=command("coverage_regret", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
