"""End to end in headless Chromium: the dashboard starts on the sample data, shows
the bound, and rejects a broken upload with one clear message.

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("streamlit did not start within 60 s")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def test_dashboard_shows_bound_on_sample_data(server, browser, tmp_path):
    import certlib

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    pre = certlib.prelabel_bound(pool).prelabel_bound
    page = browser.new_page(viewport={"width": 1300, "height": 1600})
    page.goto(server)
    page.get_by_text("minimum certificate").first.wait_for(timeout=60_000)
    page.get_by_text(f"{pre:,} labels").first.wait_for(timeout=30_000)
    page.screenshot(path=str(tmp_path / "home.png"), full_page=True)
    page.close()


def test_broken_upload_gives_one_clear_message(server, browser, tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_text("row_id,pred_a,conf_a,pred_b,conf_b\n0,1,0.9,0,0.8\n1,0,nan,1,0.7\n")
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.goto(server)
    page.get_by_text("Upload a file").first.wait_for(timeout=60_000)
    page.get_by_text("Upload a file").first.click()
    page.locator("input[type=file]").first.set_input_files(str(bad))
    msg = page.get_by_text("Could not load broken.csv").first
    msg.wait_for(timeout=30_000)
    text = msg.inner_text()
    assert "conf_a" in text
    assert "Traceback" not in page.inner_text("body")
    page.close()
