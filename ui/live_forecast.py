"""The Label page's live forecast: how many more labels the project's policy will read.

A forecast replays the policy on many label draws (`certlib.forecast`); on a large pool
that takes a minute, and a key press must not wait for it, nor share a CPU with it on
equal terms.  So forecasts run in one worker *process* (`ui.forecast_worker`) at the
lowest CPU priority (a thread at low priority would hold Python's interpreter lock while the
operating system keeps it waiting, and a key press would wait with it: measured, see
``bench/bench_live_forecast.py``).  The page asks for the forecast of the labels read now
and shows the newest one that has finished, saying after how many labels it was made;
only the newest state of a project waits for the worker (on a large pool labels arrive
faster than forecasts).  The Label page draws it in a fragment of its own that looks
again every few seconds, so the panel is never redrawn for it.  Results are kept per
project and labels read (the log only grows, so a state's forecast never changes).
"""

from __future__ import annotations

import os
import pickle
import select
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import streamlit as st

from ui.forecast_worker import POOLS

DRAWS = 200
_KEEP = 256  # finished forecasts kept (a few hundred numbers each)
ROOT = Path(__file__).resolve().parents[1]  # where `python -m ui.forecast_worker` runs


class WorkerStopped(RuntimeError):
    """The worker died, timed out or garbled a message: asked again, the state is retried."""


class _Worker:
    """The worker process (`ui.forecast_worker`), started on the first job and again
    after it died; a job is ``(pool key, pool, label codes, forecast settings)``."""

    timeout: float = 300.0  # seconds one forecast may take

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._sent: OrderedDict[str, None] = OrderedDict()  # pools the worker holds

    def __call__(self, job: tuple):
        pool_key, pool, codes, settings = job
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "ui.forecast_worker", str(os.getpid())], cwd=ROOT,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self._sent.clear()
        fresh = pool_key not in self._sent
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            pickle.dump((pool_key, pool if fresh else None, codes, settings), proc.stdin)
            proc.stdin.flush()
            # a forecast slower than this is dropped, not waited for (a policy that steps
            # one session per draw, on a large pool): the other projects' forecasts wait
            if not select.select([proc.stdout], [], [], self.timeout)[0]:
                raise TimeoutError(f"a forecast took longer than {self.timeout:.0f} s")
            out = pickle.load(proc.stdout)  # the worker's own pipe: nobody else writes
        except Exception as exc:  # noqa: BLE001 - any failure: the pipe may be mid-message
            proc.kill()
            proc.wait()
            self._proc = None
            return WorkerStopped(f"the forecast's worker process stopped ({exc})")
        self._sent[pool_key] = None
        self._sent.move_to_end(pool_key)
        while len(self._sent) > POOLS:
            self._sent.popitem(last=False)
        return out


class _Forecasts:
    """The forecasts wanted and made, by key (``project + state``), computed one at a
    time by ``compute`` in a thread of the server that only waits for it."""

    def __init__(self, compute: Callable[[tuple], object] | None = None) -> None:
        self._compute = _Worker() if compute is None else compute
        self._cond = threading.Condition()
        self._done: OrderedDict[tuple, object] = OrderedDict()
        self._wanted: OrderedDict[tuple, tuple] = OrderedDict()  # project -> (key, job)
        self._busy: tuple | None = None
        threading.Thread(target=self._run, daemon=True, name="certlib-forecasts").start()

    def ask(self, key: tuple, job: tuple, project: tuple) -> None:
        """Want the forecast ``job`` of ``key`` (a state of ``project``) unless it is done
        or being made; it replaces the project's forecast still waiting, if any: only the
        newest state is worth computing."""
        with self._cond:
            if key == self._busy or (key in self._done
                                     and not isinstance(self._done[key], WorkerStopped)):
                return
            self._wanted[project] = (key, job)
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._wanted:
                    self._cond.wait()
                _, (key, job) = self._wanted.popitem(last=False)
                self._busy = key
            try:
                out = self._compute(job)
            except Exception as exc:  # noqa: BLE001 - kept as the answer, said on the page
                out = exc
            with self._cond:
                self._done[key] = out
                self._busy = None
                while len(self._done) > _KEEP:
                    self._done.popitem(last=False)

    def newest(self, project: tuple) -> tuple[int, object] | None:
        """(labels read, forecast or exception) of the finished forecast of a project's
        newest state (keys ``project + (labels read, newest event)``: after an undo the
        newest state has fewer labels), or None."""
        with self._cond:
            found = [(k[-1], k[-2], v) for k, v in self._done.items()
                     if k[:len(project)] == project]
        if not found:
            return None
        _, t, v = max(found, key=lambda kv: kv[0])
        return t, v


@st.cache_resource
def _forecasts() -> _Forecasts:
    return _Forecasts()


def forecast_text(f, t: int, budget: int | None) -> str:
    """The forecast in one sentence: "about M more labels (80% between A and B more)",
    from a forecast made after ``t`` labels."""
    lo, hi = f.interval
    med = f.quantiles[0.5]
    more = max(0, med - t)
    text = (f"Forecast: about {more:,} more label{'' if more == 1 else 's'} "
            f"(80% between {max(0, lo - t):,} and {max(0, hi - t):,} more; "
            f"{med:,} in total)")
    if budget is not None and hi > budget:
        text += (f"; the budget of {budget:,} runs out first in "
                 f"{100 * (1 - f.p_certified(budget)):.0f}% of the draws")
    return text + "."


def live_forecast(store, prog, pool) -> None:
    """Ask for the forecast of the project's labels read now and show the newest one
    that has finished (a caption); nothing when the session is done."""
    from ui.cache import pool_key

    s, pr = prog.session, prog.project
    if s.done:
        return
    project = (str(store.path), pr.id)
    key = project + (s.t, prog.last_seq)
    settings = {"policy": pr.policy, "tolerance": pr.tolerance, "draws": DRAWS,
                "seed": pr.seed}
    work = _forecasts()
    work.ask(key, (pool_key(pool), pool, np.asarray(s.label_codes), settings), project)
    got = work.newest(project)
    if got is None:
        st.caption("Forecast of the labels still to read: computing ...")
    elif isinstance(got[1], Exception):
        st.caption(f"No forecast: {got[1]}")
    else:
        t0, f = got
        st.caption(forecast_text(f, t0, prog.budget)
                   + ("" if t0 == s.t else
                      f" (made after {t0:,} labels; the next one is being computed)")
                   + " A forecast, not a guarantee: the label model's guess, replayed "
                   f"{f.draws} times"
                   + ("." if pr.policy == "adaptive-pair-sum" and pr.tolerance == 0 else
                      "; its interval is calibrated for adaptive-pair-sum at tau = 0 only."))
