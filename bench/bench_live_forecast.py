"""The Label page's live forecast: what it costs a key press, and how old it is.

    python -m bench live_forecast                 # n = 1,000 and 100,000
    python -m bench live_forecast --n 1000 --presses 20

A key press costs the server one label appended to the SQLite store and the project
replayed from its previous state (`LabelStore.append_label`, `LabelStore.resume` with
``since``): the work between a press arriving and its answer being acknowledged. The
page's forecast (`ui.live_forecast`) runs beside it in one worker process at the lowest
CPU priority (not a thread: beside two CPU-burning processes a low-priority thread
held the interpreter lock while it waited for the CPU, and 40 presses at
n = 1,000 did not finish in 15 minutes). For each n (a synthetic binary pool, K =
8, no labels, seeded; `bench.bench_core.make_pool`), the press cost is timed
``--presses`` times with no forecast running (the reference, same run) and with a
200-draw forecast running in the worker process, first with the machine otherwise idle,
then with two CPU-burning processes (both cores). Reported: the median and 95th
percentile of the press cost and their ratio to the reference, and the time one forecast
takes (how many labels old the shown forecast can be). Not a test: timings depend on the
machine. Writes ``docs/results/live_forecast.md``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import certlib
from certlib.labelling.store import LabelStore

from .bench_core import make_pool
from .results import command, table, write_results


def _burn(stop) -> None:  # a CPU-burning process
    while not stop.is_set():
        sum(range(10_000))


class _Presses:
    """A project on ``pool`` labelled with its hidden labels, one press at a time."""

    def __init__(self, pool, truth, folder: Path) -> None:
        self.pool, self.truth = pool, truth
        self.store = LabelStore(folder / "labels.db")
        self.pid = self.store.open_project(pool, "bench")
        self.prog = self.store.resume(self.pid, pool)

    def press(self) -> float:
        t = time.perf_counter()
        r = self.prog.next_row
        self.store.append_label(self.pid, self.pool.row_ids[r],
                                self.truth.classes[int(self.truth.labels[r])], "ana",
                                pool=self.pool)
        self.prog = self.store.resume(self.pid, self.pool, since=self.prog)
        return time.perf_counter() - t


def _p95(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(0.95 * len(xs)))]


def _measure(presses: _Presses, count: int, background: bool) -> list[float]:
    """Press costs, with the page's forecast worker process busy if ``background``."""
    from ui.cache import pool_key
    from ui.live_forecast import _Worker

    stop = threading.Event()
    worker = _Worker()
    job = (pool_key(presses.pool), presses.pool, np.full(presses.pool.n, -1),
           {"policy": "adaptive-pair-sum", "tolerance": 0, "draws": 200, "seed": 0})

    def forecasts() -> None:  # one forecast after another, as labels arrive
        while not stop.is_set():
            worker(job)

    th = threading.Thread(target=forecasts, daemon=True)
    if background:
        th.start()
        time.sleep(3.0)  # the worker started and busy
    out = [presses.press() for _ in range(count)]
    stop.set()
    if background:
        worker._proc.kill()  # the forecast under way is not waited for
        th.join()
        worker._proc = None
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1_000, 100_000])
    ap.add_argument("--presses", type=int, default=40)
    a = ap.parse_args(argv)
    rows = []
    for n in a.n:
        truth = make_pool(n)
        pool = truth.with_labels(np.full(n, -1))
        t = time.perf_counter()
        certlib.forecast(pool, draws=200, seed=0)
        one = time.perf_counter() - t
        print(f"n = {n:,}: one forecast (200 draws) {one:.2f} s")
        for load in ("idle", "busy"):
            stop = multiprocessing.Event()
            burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True)
                       for _ in range(2 if load == "busy" else 0)]
            for b in burners:
                b.start()
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    presses = _Presses(pool, truth, Path(tmp))
                    for _ in range(5):  # warm: the first replays build their caches
                        presses.press()
                    ref = _measure(presses, a.presses, background=False)
                    bg = _measure(presses, a.presses, background=True)
            finally:
                stop.set()
                for b in burners:
                    b.join()
            m0, m1 = statistics.median(ref), statistics.median(bg)
            q0, q1 = _p95(ref), _p95(bg)
            print(f"  {load}: press {1000 * m0:.1f} / {1000 * q0:.1f} ms without, "
                  f"{1000 * m1:.1f} / {1000 * q1:.1f} ms with a forecast running "
                  f"(x{m1 / m0:.2f} / x{q1 / q0:.2f})")
            rows.append([f"{n:,}", load, f"{one:.2f} s",
                         f"{1000 * m0:.1f} / {1000 * q0:.1f} ms",
                         f"{1000 * m1:.1f} / {1000 * q1:.1f} ms",
                         f"x{m1 / m0:.2f} / x{q1 / q0:.2f}"])
    md = ("A key press's server work (label appended, project replayed from its previous "
          f"state), {a.presses} presses per cell, without and with the Label page's "
          "forecast running in its low-priority worker process; \"busy\" = two "
          "CPU-burning processes beside it. Pools `bench.bench_core.make_pool` (K = 8), "
          "every label hidden. One forecast's time is how long the page may show a "
          "forecast made a few labels earlier.\n\n"
          + table(["n", "machine", "one forecast", "press median / p95, no forecast",
                   "with a forecast running", "ratio"], rows))
    write_results("live_forecast", md, command=command("live_forecast", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
