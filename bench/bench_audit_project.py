"""A running audit project: speed of appending batches, recomputing the status (what the
Audit page does on every run) and committing one label; the shipped stream's verdicts.

    python -m bench audit_project      # medians, and the sample stream's verdicts

Speed: the shipped sample stream (``sample_data/audit_stream.csv``, labels held back, 4
slices) appended in batches of 2,500 items to a fresh store at eps = 0.02, the status
recomputed 7 times at the end, then 20 queued items labelled one by one; the recompute
again for a project whose Tier 1 runs the betting confidence sequence.  Verdicts: the
same stream audited with every label (what the Audit page reaches once its queue is
labelled) at eps = 0.03 (the page's default), 0.02 and 0.05, and with slices, with
PrPl-EB and with the betting CS.  Writes ``docs/results/audit_project.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import polars as pl

from certlib.audit import audit
from certlib.audit.store import AuditStore

from ._paths import ROOT
from .results import command, table, write_results

T = TypeVar("T")
STREAM = ROOT / "sample_data" / "audit_stream.csv"


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def speed() -> str:
    df = pl.read_csv(STREAM)
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
                                                        who="bench"))[0])
        n = store.status(pid).items
        bet = store.create(epsilon=0.02, slice_column="slice", confidence="betting")
        for lo in range(0, df.height, 2500):
            store.append_batch(bet, df[lo:lo + 2500])
        betting = [timed(lambda: store.status(bet))[0] for _ in range(7)]
    a, s, lab, b = (statistics.median(x) for x in (appends, status, labels, betting))
    print(f"append a batch of 2,500 items (up to {n:,} stored): median {a * 1e3:.0f} ms over "
          f"{len(appends)}")
    print(f"status at {n:,} items (4 slices): median {s * 1e3:.0f} ms over {len(status)}")
    print(f"commit one label: median {lab * 1e3:.1f} ms over {len(labels)}")
    print(f"status with the betting CS: median {b * 1e3:.0f} ms over {len(betting)}")
    return (f"Appending a batch of 2,500 items: median {a * 1e3:.0f} ms (over {len(appends)} "
            f"batches); recomputing a {n:,}-item project with 4 slices (what the page does on "
            f"every run): median {s * 1e3:.0f} ms, {b * 1e3:.0f} ms when Tier 1 runs the "
            f"betting confidence sequence; committing one label: median {lab * 1e3:.1f} ms.")


def verdicts() -> str:
    df = pl.read_csv(STREAM)
    f, g, y = (df[c].to_numpy() for c in ("pred_incumbent", "pred_candidate", "label"))
    rows = []
    for eps, slices in ((0.03, False), (0.02, False), (0.05, False), (0.03, True)):
        for cs in ("prpl-eb", "betting"):
            r = audit(f, g, y, epsilon=eps, slices=df["slice"].to_numpy() if slices else None,
                      confidence=cs)
            where = "never" if r.stopping_time is None else f"item {r.stopping_time:,}"
            t1 = "never" if r.tier1_start is None else f"item {r.tier1_start:,}"
            verdict = r.verdict + ("" if r.tier is None else f" (tier {r.tier})")
            print(f"eps={eps} slices={slices} {cs}: {verdict} at {where}, {r.labels_used} "
                  f"labels, Tier 1 from {t1}")
            rows.append([f"{eps:g}" + (", with slices" if slices else ""), cs, verdict, where,
                         r.labels_used, t1])
    with tempfile.TemporaryDirectory() as tmp:
        store = AuditStore(Path(tmp) / "s.db")
        pid = store.create(epsilon=0.03)
        store.append_batch(pid, df.drop("label")[:2500])
        queued = len(store.status(pid).queue)
    print(f"eps=0.03: the first batch of 2,500 unlabelled items queues {queued} items")
    return (f"The shipped stream ({df.height:,} items, `sample_data/audit_stream.csv`), audited "
            "with every label, pi = 0.5, delta = 0.05, seed 0 (the Audit page's settings; "
            "the page reaches these once its queue is labelled):\n\n"
            + table(["epsilon", "Tier 1 CS", "verdict", "decided at", "labels",
                     "Tier 1 starts"], rows)
            + f"\n\nAt eps = 0.03 the first batch of 2,500 items, labels held back, queues "
            f"{queued} items for labelling.")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    md = speed() + "\n\n" + verdicts()
    write_results("audit_project", md, command=command("audit_project", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
