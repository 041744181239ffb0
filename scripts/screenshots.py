"""Regenerate the dashboard screenshots of the README and the docs in docs/screenshots/.

Starts `streamlit run app.py` on 127.0.0.1 with a throw-away label store, drives
Debian's chromium (headless, through Playwright) over the workflow a user follows
on the shipped sample data (pool, plan, label a few rows, certificate, Figure 10)
and saves one PNG per page at 1400 px wide.

    python scripts/screenshots.py            # from the project root, in its environment
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _idle(page) -> None:
    """Wait until Streamlit has finished its run (no running indicator)."""
    page.wait_for_timeout(500)
    page.wait_for_function(
        "!document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000)
    page.wait_for_timeout(800)


def _shot(page, name: str) -> Path:
    _idle(page)
    path = OUT / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    print(path.relative_to(ROOT))
    return path


def main() -> int:
    from playwright.sync_api import sync_playwright

    import certlib

    OUT.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="certlib-shots-")
    port = _port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, CERTLIB_STORE=f"{tmp}/labels.db", CERTLIB_DATA=f"{tmp}/data")
    srv = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            pages = [("pool", "pool", "Active pool"), ("plan", "plan", "Active pool"),
                     ("budget", "budget", "Active pool"), ("replay", "replay", "Active pool"),
                     ("certificate", "certificate", "Active pool"),
                     ("Teaching_figure", "figure10", "Active pool"),
                     ("figure2", "figure2", "Labels and read order")]
            for path, name, ready in pages:
                page.goto(f"{url}/{path}?pool=sample:demo")
                page.get_by_text(ready).first.wait_for(timeout=120_000)
                _shot(page, name)
            # the Audit page with an audit started on the shipped stream (labels hidden)
            page.goto(f"{url}/audit")
            page.get_by_role("button", name="Start audit").click()
            page.get_by_text("Labelling queue").first.wait_for(timeout=120_000)
            _shot(page, "audit")
            page.goto(f"{url}/Label?pool=sample:unlabelled")
            box = page.get_by_label("Your name (annotator)")
            box.wait_for(timeout=120_000)
            box.fill("ana")
            box.press("Enter")
            page.get_by_role("button", name="Start a new project").click()
            for t in range(1, 13):
                head = page.get_by_text("Next row: row_id").first
                head.wait_for(timeout=120_000)
                _idle(page)
                rid = int(head.inner_text().split("row_id")[1].split()[0])
                label = truth.classes[truth.labels[truth.position(rid)]]
                page.evaluate("document.activeElement && document.activeElement.blur()")
                page.keyboard.press(str(label))
                page.get_by_text(f"{t} of 171").first.wait_for(timeout=120_000)
            _shot(page, "label")
            browser.close()
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
