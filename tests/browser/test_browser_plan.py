"""The Plan page in headless Chromium: on the unlabelled sample, Run forecast shows the
progress, then the quantile table and the histogram, and the heat map's unresolved
cells get the forecast probabilities."""

from __future__ import annotations

import os

import pytest
from browser_support import idle, launch, require_chromium

sync_api = require_chromium()
pytestmark = pytest.mark.slow


def _multi_uploader(page):
    """The uploader inside the "several pools" expander: waits until the run has drawn it
    (``input[type=file]`` ``.last`` could still be the sidebar's pool uploader)."""
    return page.locator("[data-testid=stExpander]").filter(
        has_text="Upload several pool files or a zip of them").locator("input[type=file]")


def test_run_forecast_on_the_unlabelled_pool(server):
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/budget?pool=sample:unlabelled")
        page.get_by_text("The budget-tolerance map").first.wait_for(timeout=90_000)
        # drawn just after the heading, maybe in a later batch: wait for it, do not count
        page.get_by_text("once the forecast (section 4) has run").first.wait_for(timeout=30_000)
        page.get_by_role("button", name="Run forecast").click()
        page.get_by_text("Histogram for tolerance").first.wait_for(timeout=120_000)
        assert page.get_by_text("a forecast, not a guarantee").count() >= 1
        # the heat map now writes probabilities in the unresolved cells
        # (Plotly redraws the chart after Streamlit has drawn the run: poll, do not sleep)
        page.wait_for_function(
            "() => document.querySelector('.js-plotly-plot .textpoint') !== null || [...document"
            ".querySelectorAll('.js-plotly-plot text')].some(e => e.textContent.includes('0.'))",
            timeout=60_000)
        assert page.get_by_role("button", name="Run forecast").is_disabled()


def test_several_pools_from_a_zip(server, tmp_path):
    import zipfile

    from browser_support import ROOT

    files = sorted((ROOT / "sample_data" / "panels").glob("wine_s0_*.csv"))
    zpath = tmp_path / "pools.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for f in files:
            zf.write(f, f"pools/{f.name}")
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/budget?pool=sample:demo")
        page.get_by_text("Upload several pool files or a zip of them").first.click()
        _multi_uploader(page).set_input_files(str(zpath))
        page.get_by_text(f"{len(files)} pools, budget as").first.wait_for(timeout=90_000)
        # the tables are drawn on a canvas; their numbers are budget_map_many's
        # (tests/core/test_budget_plan.py)
        page.get_by_text("smallest certified tolerance per budget and pool").first.wait_for(
            timeout=30_000)
        idle(page)
        # Figure 7 as the paper draws it: per tolerance, bars stacking every pool
        import certlib

        mm = certlib.budget_map(files, policy="adaptive-pair-sum")
        bars = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
            .map(p => p.data).filter(d => d.length && d.every(t => t.type === 'bar'))
            .map(d => d.map(t => [t.name, t.y]))""")
        (traces,) = bars
        want = {"ruled out": "ruled_out", "certified": "certified", "unresolved": "unresolved"}
        assert [[name, y] for name, y in traces] == [
            [w, [c[k] for c in row]] for row in mm.counts()
            for w, k in want.items()]
        if os.environ.get("CERTLIB_SCREENSHOTS"):
            page.get_by_text("The counts as a table").first.scroll_into_view_if_needed()
            page.screenshot(path=os.environ["CERTLIB_SCREENSHOTS"] + "/figure7_1400.png")


def test_a_broken_zip_gives_one_message(server, tmp_path):
    """A file named .zip that is not one: one message naming it, no traceback."""
    bad = tmp_path / "pools.zip"
    bad.write_text("row_id,pred_a,conf_a\n1,0,0.5\n")
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/budget?pool=sample:demo")
        page.get_by_text("Upload several pool files or a zip of them").first.click()
        _multi_uploader(page).set_input_files(str(bad))
        page.get_by_text("is not a readable zip file").first.wait_for(timeout=90_000)
        assert "Traceback" not in page.inner_text("body")
        assert page.get_by_text("pools.zip").count() >= 1


def test_a_budget_change_during_the_forecast_restarts_it(server):
    """Typing a budget reruns the page, which interrupts a running forecast; with the
    same settings it starts again (never vanishes without a word), and Stop says so."""
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/budget?pool=sample:unlabelled")
        page.get_by_text("The budget-tolerance map").first.wait_for(timeout=90_000)
        draws = page.get_by_label("Forecast draws")
        draws.fill("2000")
        draws.press("Enter")
        idle(page)
        page.get_by_role("button", name="Run forecast").click()
        page.get_by_text("Forecasting ...").first.wait_for(timeout=60_000)
        budget = page.get_by_label("Budget (labels, at most n =")
        budget.fill("100")
        budget.press("Enter")
        page.get_by_text("The forecast restarted after a change on the page").first.wait_for(
            timeout=60_000)
        page.get_by_text("Forecasting ...").first.wait_for(timeout=60_000)
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop").click()
        page.get_by_text("Forecast stopped; nothing was kept.").first.wait_for(timeout=60_000)
        assert page.get_by_role("button", name="Run forecast").is_enabled()
        assert page.get_by_text("Histogram for tolerance").count() == 0
        # leaving the page while it runs, then coming back: nothing restarts unasked
        page.get_by_role("button", name="Run forecast").click()
        page.get_by_text("Forecasting ...").first.wait_for(timeout=60_000)
        page.get_by_role("link", name="Pool").first.click()
        page.get_by_text("What the active pool holds").first.wait_for(timeout=60_000)
        page.get_by_role("link", name="Budget map and forecast").first.click()
        page.get_by_text("The budget-tolerance map").first.wait_for(timeout=90_000)
        idle(page)
        body = page.inner_text("body")
        assert "restarted" not in body and "settings changed" not in body
        assert "Forecasting ..." not in body
        # ... but the page says what became of it (the draws box kept its 2000)
        assert "interrupted before it finished" in body
        assert page.get_by_label("Forecast draws").input_value() == "2000"
