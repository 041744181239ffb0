"""End to end in headless Chromium: the dashboard starts on the sample data, shows
the bound, and rejects a broken upload with one clear message.

Needs Debian's chromium at /usr/bin/chromium (installed by run_tests.sh); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import pytest

from browser_support import ROOT, Server, launch, require_chromium

sync_api = require_chromium()
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("store") / "labels.db").start()
    yield srv.url
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


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
