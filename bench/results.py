"""Write a bench's figures into ``docs/results/NAME.md``, the file the manual includes.

The manual's pages include these files with pymdownx.snippets
(``--8<-- "docs/results/NAME.md"``), so every number they quote is the one the last run
of its bench wrote.  A results file holds Markdown tables and short sentences, then one
line naming the command that regenerates it, the date of the run and the machine (cores,
processor, Python and numpy versions; never a path of the machine).  The date stays out
of the tables, and no test reads these files.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from ._paths import ROOT

RESULTS = ROOT / "docs" / "results"


def command(bench: str, argv: Sequence[str]) -> str:
    """The runner command that repeats a run: ``python -m bench NAME ARGS``."""
    return " ".join(["python -m bench", bench, *(shlex.quote(a) for a in argv)])


def machine() -> str:
    """One line about the machine: system, cores, processor, Python and numpy versions."""
    import numpy as np

    cpu = platform.processor() or platform.machine()
    try:  # platform.processor() is often empty on Linux; the kernel knows the model
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh
                        if ln.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        # the CPUs this process may run on (a container's share), else all of them
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 0
    return (f"{platform.system()} {platform.machine()}, {cores} cores ({cpu}), "
            f"Python {platform.python_version()}, numpy {np.__version__}")


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table; cells are written with ``str``."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _sections(text: str) -> dict[str, str]:
    """The sections of a results file written with ``section=``, by name."""
    found = re.findall(r"<!-- begin (\S+) -->\n(.*?)<!-- end \1 -->", text, re.S)
    return {k: v.strip() for k, v in found}


def write_results(name: str, markdown: str, *, command: str, section: str | None = None,
                  order: Sequence[str] = ()) -> Path:
    """Write ``docs/results/NAME.md``: ``markdown``, then the line that says how to
    regenerate it (``command``), when and on which machine.  Returns the path.

    With ``section``, only that section of the file is replaced (or added), so a bench
    whose parts run separately (counts now, timings on an idle machine later) keeps one
    file; each section ends with its own regenerate line, and sections are kept in
    ``order`` (unknown ones last).
    """
    if not name or "/" in name or name.endswith(".md"):
        raise ValueError(f"a results name is a file stem, not {name!r}")
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    body = (f"{markdown.strip()}\n\n"
            f"*Regenerate with `{command}` (last run {today}, {machine()}).*\n")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.md"
    if section is None:
        text = f"<!-- written by `{command}`: edit the bench, not this file -->\n\n{body}"
    else:
        old = _sections(path.read_text(encoding="utf-8")) if path.exists() else {}
        old[section] = body
        rank = {s: i for i, s in enumerate(order)}
        keys = sorted(old, key=lambda s: rank.get(s, len(rank)))
        bench = command.split()[3] if command.startswith("python -m bench ") else command
        text = (f"<!-- written by `python -m bench {bench}`: edit the bench, not this file -->"
                "\n\n" + "\n".join(f"<!-- begin {k} -->\n\n{old[k].strip()}\n\n"
                                    f"<!-- end {k} -->\n" for k in keys))
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return path
