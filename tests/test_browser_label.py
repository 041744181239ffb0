"""The labelling page in headless Chromium: label rows with the keyboard shortcuts,
reload the page and restart the server, and find the same progress each time
(the state lives in the SQLite store, not in the browser session).

Needs Debian's chromium at /usr/bin/chromium (installed by run_tests.sh); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} is missing: run_tests.sh installs Debian's chromium")
    pytest.skip("Debian chromium not installed", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow

SCREENSHOT_DIR = os.environ.get("CERTLIB_SCREENSHOTS")  # keep the pictures for a look


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` on a fixed port with its own label store."""

    def __init__(self, store: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, CERTLIB_STORE=str(store))
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(120):
            try:
                urllib.request.urlopen(self.url + "/_stcore/health", timeout=1)
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("streamlit did not start within 60 s")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def server(tmp_path):
    srv = Server(tmp_path / "labels.db")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _wait_text(page, text, timeout=30_000):
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout)


def _next_row_id(page) -> int:
    head = page.get_by_text("Next row: row_id").first
    head.wait_for(timeout=30_000)
    return int(head.inner_text().rsplit(" ", 1)[1])


def _shot(page, tmp_path, name):
    out = Path(SCREENSHOT_DIR or tmp_path) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), full_page=True)
    return out


def test_keyboard_labelling_survives_reload_and_restart(server, browser, tmp_path):
    import certlib

    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")

    def label_of(row_id):
        return str(truth.classes[truth.labels[truth.position(row_id)]])

    page = browser.new_page(viewport={"width": 1300, "height": 1500})
    page.goto(server.url + "/Label")
    name = page.get_by_label("Your name (annotator)")
    name.wait_for(timeout=60_000)
    name.fill("ana")
    name.press("Enter")
    page.get_by_role("button", name="Start / resume labelling").click()
    _wait_text(page, "0 of 171")

    rows = []
    for t in range(1, 6):
        rid = _next_row_id(page)
        rows.append(rid)
        page.evaluate("document.activeElement && document.activeElement.blur()")  # off the inputs
        page.keyboard.press(label_of(rid))
        _wait_text(page, f"{t} of 171")
    page.keyboard.press("U")  # undo the fifth label
    _wait_text(page, "4 of 171")
    assert _next_row_id(page) == rows[4]
    shot = _shot(page, tmp_path, "label_page.png")
    assert shot.stat().st_size > 10_000

    page.reload()
    _wait_text(page, "4 of 171", timeout=60_000)
    assert _next_row_id(page) == rows[4]

    server.stop()
    server.start()
    page.goto(page.url)
    _wait_text(page, "4 of 171", timeout=60_000)
    assert _next_row_id(page) == rows[4]
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(label_of(rows[4]))
    _wait_text(page, "5 of 171")
    assert "Traceback" not in page.inner_text("body")
    _shot(page, tmp_path, "label_page_after_restart.png")
    page.close()

    from certlib.store import LabelStore

    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    assert [e.kind for e in store.events(project.id)] == ["label"] * 5 + ["undo", "label"]
    assert [lab.row_id for lab in store.labels(project.id)] == rows
