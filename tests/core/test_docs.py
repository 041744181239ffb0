"""The README and the documentation say what the code does.

* The README is a front door: at most about 150 lines, the two set-up commands (the
  ones CI and a newcomer run), the address to open, and a Python example that runs
  (as a doctest, from the repository's root).
* Every command-line transcript in the docs (a ``$ certlib ...`` line followed by its
  output, in a ``text`` block) prints exactly that output today, for the commands whose
  files ship with the repository.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_readme_is_a_front_door():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    bash_blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert [b.strip() for b in bash_blocks] == ["bash run_app.sh", "bash run_tests.sh"]
    assert "http://127.0.0.1:8501" in text
    assert "bash run_tests.sh" in (ROOT / ".ci" / "run").read_text()
    assert not re.search(r"\bissue \d+", text, flags=re.I)


def test_readme_python_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5
    assert result.failed == 0


def _transcripts():
    """(page, command, expected output) for each ``$ certlib`` line of a text block."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```text\n(.*?)```", page.read_text(), flags=re.S):
            chunks = re.split(r"^\$ ", block, flags=re.M)
            for chunk in chunks[1:]:
                command, _, output = chunk.partition("\n")
                command = command.split("  #")[0].strip()
                if command.startswith("certlib "):
                    yield page.name, command, output.rstrip("\n")


def _runnable(command: str) -> bool:
    files = [a for a in shlex.split(command)[1:] if re.search(r"\.(csv|parquet|json)$", a)]
    return bool(files) and all((ROOT / f).exists() for f in files) and "--record" not in command


TRANSCRIPTS = [t for t in _transcripts() if _runnable(t[1])]


def test_the_docs_hold_transcripts():
    assert len(TRANSCRIPTS) >= 5, TRANSCRIPTS


@pytest.mark.parametrize("page,command,expected", TRANSCRIPTS,
                         ids=[f"{p}:{c}" for p, c, _ in TRANSCRIPTS])
def test_cli_transcript_in_the_docs_is_current(page, command, expected):
    argv = [sys.executable, "-m", "certlib", *shlex.split(command)[1:]]
    env = {**os.environ, "COLUMNS": "100"}
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    printed = (out.stdout + out.stderr).rstrip("\n")
    assert printed == expected, f"{page}: `{command}` prints\n{printed}"
