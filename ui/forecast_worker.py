"""The worker process of the Label page's live forecast (`ui.live_forecast`).

``python -m ui.forecast_worker SERVER_PID``, started by the server with pipes: it reads pickled
jobs ``(pool key, pool or None, label codes, forecast settings)`` from its standard
input, one at a time, and writes each `certlib.forecast` (or the exception it raised)
pickled to its standard output.  A pool is sent once and then named by its key (the
worker keeps the last few).  It runs at the lowest CPU priority and ends with the
server.  A process of its own, started from the command line rather than by
`multiprocessing`: its spawn start re-imports the parent's main module, which in a
server is Streamlit's command line (and in a test run, pytest's).
"""

from __future__ import annotations

import os
import pickle
import sys
from collections import OrderedDict

POOLS = 4  # pools the worker keeps


def _low_priority(parent: int | None = None) -> None:
    """Yield the CPU to the server, and end with it (Linux); ``parent``: the server's
    process id (it may be 1, in a container)."""
    try:
        os.nice(19)
    except OSError:  # pragma: no cover - not allowed here: it runs as it is
        pass
    try:  # the server killed: this process gets SIGKILL too, not an orphan burning a core
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if parent is not None and os.getppid() != parent:  # gone before the line above
            sys.exit(0)
    except (OSError, AttributeError):  # pragma: no cover - another system
        pass


def main() -> int:
    """Serve forecast jobs until the server closes the pipe."""
    _low_priority(int(sys.argv[1]) if len(sys.argv) > 1 else None)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print goes to the log, never into the answers
    import certlib

    pools: OrderedDict[str, object] = OrderedDict()
    while True:
        try:
            # pickle only between the server and the worker it started, over the
            # anonymous pipe of this process's standard input: nobody else writes to it
            key, pool, codes, settings = pickle.load(inp)
        except (EOFError, OSError):
            return 0
        if pool is not None:
            pools[key] = pool
            while len(pools) > POOLS:
                pools.popitem(last=False)
        try:
            base = pools[key]
            pools.move_to_end(key)
            answer: object = certlib.forecast(base.with_labels(codes), **settings)
        except Exception as exc:  # noqa: BLE001 - sent back as the answer, said on the page
            answer = exc
        try:
            data = pickle.dumps(answer)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
            data = pickle.dumps(RuntimeError(str(answer)))
        out.write(data)
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
