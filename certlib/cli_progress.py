"""A progress bar on stderr for the command line, drawn only on a terminal.

`certlib.io.load_pool` and `certlib.columns.read_sources` report what they are doing
through a `certlib.io.Progress` callback: ``progress(what, fraction)``, the fraction in
[0, 1], non-decreasing, 1.0 at the last call.  `ProgressBar` is such a callback: it
draws one line, ``reading scores.csv (190 MB) [#######.......]  48%``, on stderr, over
itself (a carriage return, no escape codes), and erases it when the fraction reaches
1.0 or when it is closed, so the table printed next starts on a clean line.  It never
writes to stdout (``--json`` stays one JSON object) and draws nothing when stderr is
not a terminal (a pipe, a file, a CI log) or with ``--quiet``.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar:
    """A one-line progress bar on a terminal stream (a `certlib.io.Progress` callback).

    Parameters
    ----------
    stream : text stream, optional
        Where to draw (default: ``sys.stderr`` when the bar is first drawn).
    interval : float, default 0.1
        Seconds between redraws of the same stage; a new stage and the end are drawn at
        once.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar(out, interval=0)
    >>> bar("reading a.csv", 0.5)
    >>> "reading a.csv" in out.getvalue() and "50%" in out.getvalue()
    True
    >>> bar("reading a.csv", 1.0)   # the end: the line is erased
    >>> out.getvalue().endswith("\\r")
    True
    """

    def __init__(self, stream: TextIO | None = None, *, interval: float = 0.1) -> None:
        self._stream = stream
        self._interval = interval
        self._shown = 0  # characters on the line now (0: nothing drawn)
        self._last_what: str | None = None
        self._last_line = ""
        self._last_time = 0.0

    @property
    def stream(self) -> TextIO:
        """The stream the bar draws on."""
        return self._stream if self._stream is not None else sys.stderr

    def __call__(self, what: str, fraction: float) -> None:
        """Draw the bar for a stage and the fraction done.

        Parameters
        ----------
        what : str
            What is being done, in words.
        fraction : float
            The fraction done, in [0, 1]; at 1.0 the line is erased.
        """
        f = min(max(float(fraction), 0.0), 1.0)
        if f >= 1.0:
            self.close()
            self._last_what = None
            return
        now = time.monotonic()
        if what == self._last_what and now - self._last_time < self._interval:
            return
        line = self._line(what, f)
        if line == self._last_line:
            return
        self._draw(line)
        self._last_what, self._last_time = what, now

    def _line(self, what: str, f: float) -> str:
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        tail = f" {100 * f:3.0f}%"
        cells = max(10, min(30, width // 4))
        done = int(f * cells)
        bar = " [" + "#" * done + "." * (cells - done) + "]"
        what = "".join(c if c.isprintable() else "?" for c in what)  # names from files
        room = width - len(bar) - len(tail)
        if len(what) > room:
            what = what[:max(0, room - 3)] + "..."
        return (what + bar + tail)[:width]

    def _draw(self, line: str) -> None:
        pad = " " * max(0, self._shown - len(line))
        try:
            self.stream.write("\r" + line + pad)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal: drawing is a courtesy
            return
        self._shown, self._last_line = len(line), line

    def close(self) -> None:
        """Erase the bar if it is drawn (idempotent)."""
        if self._shown:
            try:
                self.stream.write("\r" + " " * self._shown + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self._shown, self._last_line = 0, ""


def progress_bar(*, quiet: bool = False, stream: TextIO | None = None) -> ProgressBar | None:
    """The command line's progress bar: one when the stream is a terminal and not quiet.

    Parameters
    ----------
    quiet : bool, default False
        ``--quiet``: no bar.
    stream : text stream, optional
        Where to draw (default ``sys.stderr``).

    Returns
    -------
    ProgressBar or None
        None when ``quiet`` or when the stream is not a terminal.

    Examples
    --------
    >>> import io
    >>> progress_bar(stream=io.StringIO()) is None   # not a terminal
    True
    """
    s = sys.stderr if stream is None else stream
    if quiet:
        return None
    try:
        tty = s.isatty()
    except (AttributeError, ValueError):
        tty = False
    return ProgressBar(s) if tty else None
