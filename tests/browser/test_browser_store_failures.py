"""Store failures in a real browser: a label store that runs out of room mid-session
shows one message in the labelling panel (no traceback, no server path of the code),
the page stays usable, and every label saved before is in the store; an exception no
page catches shows no traceback either (the shipped ``.streamlit/config.toml``).

The disk is "full" through the server's file-size limit (``RLIMIT_FSIZE`` set by
``preexec_fn``, inherited by the server process): once the test holds a read
transaction open on the store, SQLite cannot fold the write-ahead log back into the
file, the log grows with each label, and a label that would take it past the limit
fails with EFBIG.  Needs Debian's chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import functools
import resource
import sqlite3
import subprocess
import sys
import time

import pytest

from browser_support import ROOT, Server, idle, launch, panel_message, panel_row, \
    require_chromium, wait_text

from certlib.audit.store import AuditStore
from certlib.labelling.store import LabelStore

sync_api = require_chromium()
pytestmark = pytest.mark.slow

LIMIT = 48 * 1024  # above the 32 KiB -shm file, below a few labels' log
TRACEBACK = ("Traceback", 'File "/', ".py\", line")


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


def _limited(store, monkeypatch) -> Server:
    """A server whose process may not grow any file past `LIMIT` bytes."""
    LabelStore(store)  # the tables exist before the limit applies
    AuditStore(store)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    srv = Server(store)
    with monkeypatch.context() as m:
        m.setattr(subprocess, "Popen", functools.partial(subprocess.Popen, preexec_fn=limit))
        srv.start()
    return srv


def _no_traceback(page) -> None:
    body = page.inner_text("body")
    for text in TRACEBACK:
        assert text not in body, text


def _saved_or_refused(page, count: int, timeout: float = 60.0) -> str:
    """'' once the page says ``count`` labels are read, else the panel's refusal."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        msg = panel_message(page)
        if msg:
            return msg
        if f"{count} of 171" in page.inner_text("body"):
            return ""
        page.wait_for_timeout(200)
    raise AssertionError(f"neither {count} labels nor a message after {timeout} s")


def test_a_full_store_while_labelling_is_one_message_and_loses_nothing(
        browser, tmp_path, monkeypatch):
    store = tmp_path / "labels.db"
    server = _limited(store, monkeypatch)
    reader = None
    try:
        page = browser.new_page(viewport={"width": 1300, "height": 1500})
        page.goto(server.url + "/Label")
        name = page.get_by_label("Your name (annotator)")
        name.wait_for(timeout=60_000)
        name.fill("ana")
        name.press("Enter")
        page.get_by_role("button", name="Start a new project").click()
        wait_text(page, "0 of 171")
        pressed, row = [], None
        for t in range(1, 4):  # saved as usual
            row = panel_row(page, row)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.keyboard.press("1")
            assert _saved_or_refused(page, t) == ""
            pressed.append(row)
        # a reader holds its snapshot: the log cannot be folded back into the file
        reader = sqlite3.connect(store, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM events").fetchone()
        message = ""
        for t in range(4, 30):
            row = panel_row(page, row)
            idle(page)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.keyboard.press("1")
            message = _saved_or_refused(page, t)
            if message:
                break
            pressed.append(row)
        assert message, "the store never ran out of room"
        assert "is full" in message and str(store) in message
        assert "Nothing of this action was saved" in message
        _no_traceback(page)
        assert f"{len(pressed)} of 171" in page.inner_text("body")  # the page still reads
    finally:
        if reader is not None:
            reader.execute("ROLLBACK")
            reader.close()
        server.stop()
    s = LabelStore(store)
    (project,) = s.projects()
    labels = [e for e in s.events(project.id) if e.kind == "label"]
    assert [str(e.row_id) for e in labels] == pressed  # every label saved before is there


def test_an_uncaught_exception_shows_no_traceback(browser, tmp_path):
    """With the shipped config (the server runs in the project folder), an exception no
    page catches shows Streamlit's generic sentence: no type, message or traceback."""
    script = tmp_path / "boom.py"
    script.write_text("import streamlit as st\nst.title('boom page')\n"
                      "raise RuntimeError('secret detail at /srv/certlib/x.py')\n")
    srv = Server(tmp_path / "labels.db")
    port = srv.port
    srv.proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=srv.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import urllib.request

        for _ in range(120):
            try:
                urllib.request.urlopen(srv.url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        page = browser.new_page()
        page.goto(srv.url)
        wait_text(page, "boom page")
        page.get_by_test_id("stException").first.wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert "secret detail" not in body and "RuntimeError" not in body
        _no_traceback(page)
    finally:
        srv.stop()
