"""Figure 2 in a real browser: Step reads one row at a time and the interval follows."""

from __future__ import annotations

import pytest

from browser_support import (Server, bottoms, download, idle, launch, require_chromium,
                             step_keys_ready, wait_text)

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


FOLD = {(1280, 720), (1920, 1080)}
CHART = '[data-testid="stPlotlyChart"], [data-testid="stImage"]'
NUMBERS = ".st-key-teach_numbers"
# the numbers taught: their lines and metrics (a verdict's prose and captions under them
# are smaller, 18 px)
TAUGHT = (f'{NUMBERS} [data-testid="stMarkdown"] p, '
          f'{NUMBERS} [data-testid="stMetricValue"]')
FONT_JS = """(sel) => [...document.querySelectorAll(sel)]
  .filter(e => !e.closest('[data-testid="stCaptionContainer"]'))
  .map(e => parseFloat(getComputedStyle(e).fontSize))"""


def _above_the_fold(page, height):
    """The step's chart (the page's first) and the numbers end within the window:
    nothing to scroll to."""
    for sel, seen in ((CHART, bottoms(page, CHART)[:1]), (NUMBERS, bottoms(page, NUMBERS))):
        assert seen and max(seen) <= height, (sel, seen, height)


@pytest.mark.parametrize("size", sorted(FOLD))
def test_figure2_presentation_mode_steps_with_the_keyboard(server, size):
    """In presentation mode (?present=1), at 1280 x 720 and 1920 x 1080: no sidebar, the
    numbers in at least 24 px and the chart's text in at least 18 px, chart and numbers
    above the fold at every step; → and Space step, ← steps back, Home resets, two quick
    presses are two steps; keys typed into the read-order box stay there."""
    width, height = size
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(server + "/figure2?present=1")
        wait_text(page, "After 0 of 4 labels")
        assert step_keys_ready(page) == "0"
        page.locator('section[data-testid="stSidebar"]').wait_for(state="hidden")
        for t, key in enumerate(["ArrowRight", " ", "ArrowRight", " "], 1):
            page.keyboard.press(key)
            wait_text(page, f"After {t} of 4 labels", timeout=30_000)
            idle(page)
            page.locator(f"{CHART} .xtick text").first.wait_for(timeout=60_000)
            _above_the_fold(page, height)
        assert min(page.evaluate(FONT_JS, TAUGHT)) >= 24
        assert min(page.evaluate(FONT_JS, ".xtick text, .ytick text, .g-xtitle text")) >= 18
        page.get_by_text("B is certified").first.wait_for()
        page.keyboard.press("ArrowLeft")
        wait_text(page, "After 3 of 4 labels", timeout=30_000)
        page.keyboard.press("Home")
        wait_text(page, "After 0 of 4 labels", timeout=30_000)
        idle(page)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")  # the second before the first is drawn
        wait_text(page, "After 2 of 4 labels", timeout=30_000)
        idle(page)
        page.wait_for_timeout(1000)
        assert "After 2 of 4 labels" in page.locator(NUMBERS).inner_text()
        assert "present=1" in page.url and "fig2_t=2" in page.url
        box = page.get_by_label("Read order (rows)", exact=True)
        box.click()
        box.press("End")
        box.press("ArrowLeft")  # the caret moves; the figure does not
        box.press(" ")
        page.wait_for_timeout(1000)
        assert "After 2 of 4 labels" in page.locator(NUMBERS).inner_text()
        page.close()


def test_figure2_exports_the_chart_and_the_numbers(server, tmp_path):
    """The chart's camera button saves a PNG drawn in the browser (no network), named
    after the step; the numbers of the step come as text."""
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        page.goto(server + "/figure2?fig2_t=3")
        wait_text(page, "After 3 of 4 labels")
        idle(page)
        page.locator(CHART).first.hover()
        with page.expect_download(timeout=30_000) as dl:
            page.locator('.modebar-btn[data-title="Download plot as a PNG"]').click()
        png = tmp_path / dl.value.suggested_filename
        dl.value.save_as(png)
        from PIL import Image

        assert png.name == "figure2_step3.png"
        with Image.open(png) as img:  # a PNG three times the chart's size on screen
            assert img.format == "PNG" and img.height == 3 * 300  # the chart: 300 px tall
        text = download(page, "Numbers (text)").path().read_text()
        assert text.splitlines()[:2] == [
            "Figure 2, step 3 of 4 (labels y1 = 1, y2 = 0, y3 = 0, y4 = 0; read order "
            "3, 4, 1, 2)", "[L_AB, H_AB] = [0, 2]"]
        assert "The tie rule at L_AB = 0" in text
        page.close()


@pytest.mark.parametrize("path, steps", [("figure1", True), ("figure3", True),
                                         ("Teaching_figure", True), ("theory", False)])
def test_every_teaching_page_fits_a_projector(server, path, steps):
    """Each Teach page in presentation mode at 1280 x 720: no sidebar, the chart and
    its numbers above the fold in large type; on the pages that step, → changes the
    numbers and ← brings them back, with the chart and numbers still above the fold."""
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{server}/{path}?present=1")
        page.locator(NUMBERS).first.wait_for(timeout=120_000)
        idle(page, timeout=120_000)
        page.locator('section[data-testid="stSidebar"]').wait_for(state="hidden")
        page.locator(CHART).first.wait_for(timeout=60_000)
        _above_the_fold(page, 720)
        assert min(page.evaluate(FONT_JS, TAUGHT)) >= 24
        ticks = ".xtick text, .ytick text"
        if page.locator(ticks).count():  # a plotly chart (Figure 5 is an SVG image)
            assert min(page.evaluate(FONT_JS, ticks)) >= 18
        if steps:
            step_keys_ready(page)
            before = page.locator(NUMBERS).inner_text()
            page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "(b) => document.querySelector('.st-key-teach_numbers').innerText !== b",
                arg=before, timeout=30_000)
            idle(page)
            _above_the_fold(page, 720)
            page.keyboard.press("ArrowLeft")
            page.wait_for_function(
                "(b) => document.querySelector('.st-key-teach_numbers').innerText === b",
                arg=before, timeout=30_000)
        assert "Traceback" not in page.inner_text("body")
        page.close()


def test_keys_step_after_the_toggle_and_a_label_box(server):
    """The presentation toggle and Figure 1's closed label boxes keep the focus after a
    click; → and Space still step the figure (Space must not flip the toggle back), and
    PageDown / PageUp, a clicker's keys, step too."""
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(server + "/figure2")
        wait_text(page, "After 0 of 4 labels")
        step_keys_ready(page)
        page.get_by_text("Presentation mode", exact=True).click()
        page.wait_for_function("location.href.includes('present=1')", timeout=30_000)
        idle(page)
        step_keys_ready(page)
        for t, key in enumerate([" ", "ArrowRight", "PageDown"], 1):
            page.keyboard.press(key)
            wait_text(page, f"After {t} of 4 labels", timeout=30_000)
            idle(page)
        page.keyboard.press("PageUp")
        wait_text(page, "After 2 of 4 labels", timeout=30_000)
        assert "present=1" in page.url  # Space stepped; it did not switch the mode off
        page.goto(server + "/figure1")
        wait_text(page, "After 0 of 2 labels")
        step_keys_ready(page)
        page.get_by_role("combobox", name="y2 (row 2)").click()
        page.get_by_role("option", name="1", exact=True).click()
        idle(page)
        page.keyboard.press("ArrowRight")
        wait_text(page, "After 1 of 2 labels", timeout=30_000)
        page.close()
