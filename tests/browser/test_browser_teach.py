"""Figure 2 in a real browser: Step reads one row at a time and the interval follows."""

from __future__ import annotations

import pytest

from browser_support import Server, launch, require_chromium

sync_api = require_chromium()
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("store") / "labels.db").start()
    yield srv.url
    srv.stop()


def test_figure2_step_through(server):
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server + "/figure2")
        page.get_by_text("After 0 of 4 labels").first.wait_for(timeout=60_000)
        expected = ["[-2, 6]", "[-2, 2]", "[0, 2]", "[2, 2]"]
        for t, interval in enumerate(expected, 1):
            page.get_by_role("button", name="Step").click()
            page.get_by_text(f"After {t} of 4 labels").first.wait_for(timeout=30_000)
            para = page.locator("p").filter(has_text=f"After {t} of 4 labels").first
            assert f"= {interval}" in para.inner_text()
            if t == 3:
                page.get_by_text("The tie rule at L_AB = 0").first.wait_for(timeout=30_000)
        page.get_by_text("B is certified").first.wait_for(timeout=30_000)
        page.get_by_text("Row 4 was never needed").first.wait_for(timeout=30_000)
        page.get_by_role("button", name="Back").click()
        page.get_by_text("After 3 of 4 labels").first.wait_for(timeout=30_000)
