"""The Label page's live forecast thread (ui.live_forecast): only the newest state of a
project waits for the thread, and a failure is kept as a message, never raised."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from ui.live_forecast import WorkerStopped, _Forecasts, forecast_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _wait(work, project, t, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = work.newest(project)
        if got is not None and got[0] == t:
            return got
        time.sleep(0.01)
    raise AssertionError(work.newest(project))


def test_only_the_newest_state_waits_for_the_worker():
    gate = threading.Event()
    ran = []

    def compute(job):
        if job == 0:
            gate.wait(30)
        ran.append(job)
        return f"forecast {job}"

    work = _Forecasts(compute)
    project = ("store.db", 1)
    for t in range(6):  # six labels while the first forecast runs
        work.ask(project + (t, 10 + t), t, project)
        time.sleep(0.05)
    work.ask(("store.db", 2, 0, 1), 100, ("store.db", 2))  # another project waits too
    gate.set()
    assert _wait(work, project, 5) == (5, "forecast 5")
    _wait(work, ("store.db", 2), 0)
    assert ran == [0, 5, 100]  # 1 to 4 were replaced before they started
    work.ask(project + (5, 15), 5, project)  # done: not computed again
    time.sleep(0.1)
    assert ran == [0, 5, 100]
    work.ask(project + (4, 16), 4, project)  # an undo: the newest state has fewer labels
    assert _wait(work, project, 4) == (4, "forecast 4")


def test_a_failed_forecast_is_kept_as_its_error():
    def boom(job):
        raise ValueError("no label model")

    work = _Forecasts(boom)
    work.ask(("s", 1, 3, 7), None, ("s", 1))
    t, got = _wait(work, ("s", 1), 3)
    assert isinstance(got, ValueError)


def test_the_worker_process_gives_the_forecast_the_library_gives():
    """The worker process (low priority) is sent the pool once and then only the labels;
    its forecasts are `certlib.forecast`'s, and so are its errors."""
    import certlib
    import numpy as np

    from ui.live_forecast import _Worker

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    worker = _Worker()
    settings = {"policy": "adaptive-pair-sum", "tolerance": 0, "draws": 50, "seed": 3}
    for known in (0, 40):
        codes = np.where(np.arange(pool.n) < known, truth.labels, -1)
        got = worker(("demo", pool, codes, settings))
        want = certlib.forecast(pool.with_labels(codes), **settings)
        assert got == want
    assert list(worker._sent) == ["demo"]
    worker._proc.kill()  # a dead worker is started again on the next job
    worker._proc.wait()
    assert worker(("demo", pool, codes, settings)) == want
    bad = worker(("demo", None, codes, {**settings, "draws": 0}))
    assert type(bad).__name__ == "ParameterError" and "draws" in str(bad)
    worker._proc.stdin.close()  # the server gone: the worker ends
    assert worker._proc.wait(timeout=30) == 0


def test_a_stopped_worker_is_asked_again_and_a_slow_forecast_dropped():
    """A forecast the worker could not finish (it died, or took too long) is tried again
    when the page asks again; a certlib error is an answer and is kept."""
    import certlib
    import numpy as np

    from ui.live_forecast import _Worker

    answers = iter([WorkerStopped("gone"), "forecast"])
    work = _Forecasts(lambda job: next(answers))
    project = ("s", 1)
    work.ask(project + (3, 7), None, project)
    assert isinstance(_wait(work, project, 3)[1], WorkerStopped)
    work.ask(project + (3, 7), None, project)
    end = time.monotonic() + 30
    while work.newest(project)[1] != "forecast" and time.monotonic() < end:
        time.sleep(0.01)
    assert work.newest(project) == (3, "forecast")

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    worker = _Worker()
    worker.timeout = 1.0  # model-selector steps a session per draw: about 20 s here
    slow = {"policy": "model-selector", "tolerance": 0, "draws": 200, "seed": 0}
    got = worker(("demo", pool, np.full(pool.n, -1), slow))
    assert isinstance(got, WorkerStopped) and "longer than 1 s" in str(got)
    assert worker._proc is None  # killed, not left computing
    quick = {"policy": "adaptive-pair-sum", "tolerance": 0, "draws": 20, "seed": 0}
    worker.timeout = 120.0
    assert worker(("demo", pool, np.full(pool.n, -1), quick)) == certlib.forecast(pool,
                                                                                 **quick)


def test_the_sentence_counts_from_the_labels_read():
    import certlib

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    f = certlib.forecast(pool, draws=50)
    lo, hi = f.interval
    med = f.quantiles[0.5]
    text = forecast_text(f, 0, None)
    assert text == (f"Forecast: about {med:,} more labels (80% between {lo:,} and {hi:,} "
                    f"more; {med:,} in total).")
    short = forecast_text(f, 0, lo)  # a budget below the interval's end runs out first
    assert short.endswith(f"the budget of {lo:,} runs out first in "
                          f"{100 * (1 - f.p_certified(lo)):.0f}% of the draws.")
