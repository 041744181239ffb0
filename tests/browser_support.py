"""Shared pieces of the headless-Chromium tests: Debian's chromium (installed by
run_tests.sh; Playwright never downloads a browser of its own) and a Streamlit server
on a free loopback port with its own label store."""

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


def require_chromium():
    """Skip the module without chromium, except in CI where its absence is a failure."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            raise RuntimeError(f"{CHROMIUM} is missing: run_tests.sh installs Debian's chromium")
        pytest.skip("Debian chromium not installed", allow_module_level=True)
    return pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` (or ``script``, run in its folder) on a fixed free port with
    its own label store."""

    def __init__(self, store: Path, script: Path | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, CERTLIB_STORE=str(store))
        self.script = ROOT / "app.py" if script is None else Path(script)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(self.script),
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--server.headless", "true", "--server.fileWatcherType", "none"],
            # usage statistics: as .streamlit/config.toml ships them (off), so the test
            # that no request leaves the machine checks the configuration users run
            cwd=self.script.parent, env=self.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for _ in range(120):
            try:
                urllib.request.urlopen(self.url + "/_stcore/health", timeout=1)
                return self
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("streamlit did not start within 60 s")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:  # a loaded machine can take longer than 10 s to shut Streamlit down
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def launch(sync_api):
    """A context manager yielding a headless Debian chromium."""
    from contextlib import contextmanager

    @contextmanager
    def _cm():
        with sync_api.sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                yield b
            finally:
                b.close()
    return _cm()


IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app !== null && app.dataset.testConnectionState === 'CONNECTED'
    && app.dataset.testScriptState === 'notRunning';
}"""


def idle(page, timeout=60_000):
    """Wait until Streamlit has finished the current run: connected, script not running.

    The app root's ``data-test-script-state`` flips as soon as a run starts; Streamlit's
    status widget appears only after 500 ms of running, so a short run, or
    the first half second of any run, looked idle.  (A run an action has asked for but the
    server has not started yet still looks idle: wait for its result, not just for this.)"""
    page.wait_for_function(IDLE_JS, timeout=timeout)


def wait_text(page, text, timeout=60_000):
    """Wait until ``text`` is shown somewhere on the page."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout)


PANEL_JS = """() => [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
  .map(h => h.shadowRoot).find(r => r && r.querySelector('.cl-row'))"""
PANEL_ROW_JS = f"""() => {{
  const root = ({PANEL_JS})();
  const row = root && root.querySelector('.cl-row');
  return row ? row.getAttribute('data-row-id') || '' : '';
}}"""


def panel_row(page, previous=None, timeout=60_000, settle_ms=300) -> str:
    """The row id the labelling panel shows (`ui/label_panel.js`, ``data-row-id``), as
    text; with ``previous``, once it differs from it.  Waits ``settle_ms`` more, so that a
    key pressed next is past the panel's double-press guard (250 ms)."""
    page.wait_for_function(f"(prev) => {{ const r = ({PANEL_ROW_JS})(); "
                           "return r !== '' && r !== prev; }",
                           arg=None if previous is None else str(previous), timeout=timeout)
    page.wait_for_timeout(settle_ms)
    return page.evaluate(PANEL_ROW_JS)


def record_rows_at_keydown(page) -> None:
    """From now on the page records, at each key press and before the panel sees it (a
    listener on the window, capturing), the row the panel shows; `rows_seen` reads them."""
    page.evaluate(f"""() => {{ window.__seen = []; window.__seenAt = [];
        window.addEventListener('keydown', (e) => {{
            window.__seen.push(({PANEL_ROW_JS})()); window.__seenAt.push(e.timeStamp); }},
                                true); }}""")


def rows_seen(page) -> list:
    return list(page.evaluate("window.__seen"))


def key_gaps_ms(page) -> list[float]:
    """The browser's time between successive recorded key presses, in ms: what a test
    asked as a pause can be much longer on a busy machine."""
    at = page.evaluate("window.__seenAt")
    return [b - a for a, b in zip(at, at[1:])]


def panel_message(page) -> str:
    """What the panel says (a refusal, a moved project), '' when nothing."""
    return page.evaluate(f"""() => {{
      const root = ({PANEL_JS})();
      const m = root && root.querySelector('.cl-msg');
      return m ? m.textContent : ''; }}""")


PANEL_COUNTS_JS = f"""() => {{
  const root = ({PANEL_JS})();
  const s = root && root.querySelector('.cl-status');
  return s ? [Number(s.dataset.saved || 0), Number(s.dataset.pending || 0),
              Number(s.dataset.refused || 0)] : [0, 0, 0];
}}"""

# the panel's refusals a person answers by pressing again: the row had been drawn ahead
# of the server's answer to the previous press (no row known to follow it yet)
PRESS_AGAIN = "still being saved"


def press_answer(page, key, tries=20) -> int:
    """Press ``key`` on the labelling panel as a person does: when the panel refuses it
    because the previous answer is still being saved (its message says to press again),
    wait and press again.  Returns the refusals seen; any other refusal fails the test."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    refusals = 0
    for _ in range(tries):
        before = page.evaluate(PANEL_COUNTS_JS)
        page.keyboard.press(key)
        page.wait_for_function(
            f"(b) => {{ const c = ({PANEL_COUNTS_JS})(); "
            "return c[0] > b[0] || c[1] > b[1] || c[2] > b[2]; }", arg=before,
            timeout=30_000)
        after = page.evaluate(PANEL_COUNTS_JS)
        if after[2] == before[2]:
            return refusals
        said = panel_message(page)
        assert PRESS_AGAIN in said, f"the panel refused {key!r}: {said}"
        refusals += 1
        page.wait_for_timeout(500)
    raise AssertionError(f"{key!r} refused {tries} times: {panel_message(page)}")


def click_until(page, button, text, timeout=20_000, tries=3) -> int:
    """Click the Streamlit button ``button`` (a locator) until ``text`` is shown, as a
    person clicks again when nothing happened: a click that lands while the page reruns
    can be dropped by Streamlit (seen on a loaded machine, 1 in 2 tries before the page
    was idle; the app warns when it knows of the press).  Returns the clicks that did
    nothing and prints what the page said after each."""
    from playwright.sync_api import Error as PlaywrightError

    for dropped in range(tries):
        idle(page)
        button.click()
        try:
            wait_text(page, text, timeout=timeout)
            return dropped
        except PlaywrightError:
            warned = page.locator('[data-testid="stAlert"]').all_inner_texts()
            print(f"click {dropped + 1} showed no {text!r} in {timeout} ms; alerts: {warned}")
    raise AssertionError(f"{tries} clicks never showed {text!r}")


STEP_JS = """() => { const e = document.querySelector('[data-step]');
  return e ? e.getAttribute('data-step') : null; }"""
BOTTOM_JS = """(sel) => [...document.querySelectorAll(sel)]
  .map(e => e.getBoundingClientRect()).filter(r => r.height > 0).map(r => r.bottom)"""


def step_keys_ready(page, timeout=60_000) -> str:
    """Wait until a Teach page's step keys listen (`ui/teach.py` marks its element with
    ``data-step`` once mounted: a key pressed before then is not seen) and return the step
    they know."""
    page.wait_for_function(f"() => ({STEP_JS})() !== null", timeout=timeout)
    return page.evaluate(STEP_JS)


def bottoms(page, selector) -> list[float]:
    """The bottom edges (px from the viewport's top) of the visible elements matching
    ``selector``: above the fold when at most the viewport's height."""
    return page.evaluate(BOTTOM_JS, selector)


def download(page, button, timeout=30_000):
    """Click the download button named ``button`` and return Playwright's download; when
    no download comes within ``timeout`` (a click made while the page reran fetches a
    file id the rerun replaced), click once more, as a person would, and say why the
    first gave nothing."""
    from playwright.sync_api import Error as PlaywrightError

    btn = page.get_by_role("button", name=button, exact=True)
    try:
        with page.expect_download(timeout=timeout) as dl:
            btn.click()
        return dl.value
    except PlaywrightError as exc:
        shown = page.locator('[data-testid="stDownloadButtonError"]').all_inner_texts()
        print(f"no download from {button!r} after one click ({exc.__class__.__name__}; "
              f"the button said {shown})")
    idle(page)
    with page.expect_download(timeout=timeout) as dl:
        btn.click()
    return dl.value

