"""Speed of a running audit project (issue 12): appending batches, recomputing the
status (what the Audit page does on every run) and committing one label.

    python bench/bench_audit_project.py      # medians; figures in README
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from certlib.audit.project import AuditStore

ROOT = Path(__file__).resolve().parents[1]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    df = pl.read_csv(ROOT / "sample_data" / "audit_stream.csv")
    truth = df["label"].to_list()
    df = df.drop("label")
    with tempfile.TemporaryDirectory() as tmp:
        store = AuditStore(Path(tmp) / "s.db")
        pid = store.create(epsilon=0.02, slice_column="slice")
        appends = [timed(lambda lo=lo: store.append_batch(pid, df[lo:lo + 2500]))[0]
                   for lo in range(0, df.height, 2500)]
        status = [timed(lambda: store.status(pid))[0] for _ in range(7)]
        labels = []
        for _ in range(20):
            q = store.status(pid).queue[0]
            labels.append(timed(lambda q=q: store.label(pid, q.item_id, truth[int(q.item_id)],
                                                        "bench"))[0])
        n = store.status(pid).items
    print(f"append a batch of 2,500 items (up to {n:,} stored): median "
          f"{statistics.median(appends) * 1e3:.0f} ms over {len(appends)}")
    print(f"status at {n:,} items (4 slices): median {statistics.median(status) * 1e3:.0f} ms "
          f"over {len(status)}")
    print(f"commit one label: median {statistics.median(labels) * 1e3:.1f} ms over "
          f"{len(labels)}")


if __name__ == "__main__":
    main()
