"""Settings across pages in headless Chromium: what a lead chooses on one page is still
there after a visit to another (Streamlit drops a widget's state on a page switch), and
the tolerance, policy, rule and seed are the same on every page that has them, so a
labelling project starts from the plan (ui.common.sticky)."""

from __future__ import annotations

import pytest
from browser_support import Server, idle, launch, require_chromium

sync_api = require_chromium()
pytestmark = pytest.mark.slow

WAIT = 90_000


@pytest.fixture
def server(tmp_path):
    srv = Server(tmp_path / "labels.db")
    srv.start()
    yield srv
    srv.stop()


def _settle(page):
    """Let the run an action started begin, then wait for it to end."""
    page.wait_for_timeout(1000)
    idle(page, WAIT)


def _go(page, name):
    """Switch page through the side navigation (one session, as a user does)."""
    page.locator("[data-testid=stSidebarNav] a", has_text=name).first.click()
    _settle(page)


def _input(page, label):
    """The input box whose label starts with ``label`` (not its help button)."""
    return page.locator(f'input[aria-label^="{label}"]').first


def _value(page, label):
    return _input(page, label).input_value()


def _type(page, label, text):
    box = _input(page, label)
    box.fill(text)
    box.press("Enter")
    _settle(page)


def _box(page, label):
    return page.locator("[data-testid=stSelectbox]").filter(has_text=label).first


def _select(page, label, option):
    _box(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()
    _settle(page)


def _selected(page, label):
    """The shown choice of a selectbox."""
    return _box(page, label).locator("input").first.input_value()


def test_choices_outlive_a_page_switch_and_are_shared(server):
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/?pool=sample:demo")
        idle(page, WAIT)
        page.get_by_text("1. Before labelling").first.wait_for(timeout=WAIT)
        _type(page, "AUGRC tolerance tau", "0.002")
        _type(page, "Your labelling budget", "60")
        _select(page, "Policy", "expected-coverage")
        _select(page, "Stopping rule", "separate")

        _go(page, "Replay a policy")
        assert _value(page, "AUGRC tolerance tau") == "0.002"
        assert _selected(page, "Policy") == "expected-coverage"
        assert _selected(page, "Stopping rule") == "separate"
        for _ in range(2):
            page.get_by_role("button", name="Step", exact=True).click()
            _settle(page)
        page.get_by_text("After 2 of").first.wait_for(timeout=WAIT)

        _go(page, "Budget map and forecast")
        assert _selected(page, "Policy") == "expected-coverage"
        assert _value(page, "Budget (labels") == "60"  # the same pool's budget
        _type(page, "Forecast draws", "50")

        _go(page, "Label")
        assert _value(page, "AUGRC tolerance tau") == "0.002"
        assert _selected(page, "Policy") == "expected-coverage"

        _go(page, "Certificate")
        assert _value(page, "AUGRC tolerance tau") == "0.002"
        _type(page, "AUGRC tolerance tau", "0.001")  # changed here: every page follows

        _go(page, "Budget map and forecast")
        assert _value(page, "Forecast draws") == "50"
        _go(page, "Replay a policy")
        assert _value(page, "AUGRC tolerance tau") == "0.001"
        page.get_by_text("After 0 of").first.wait_for(timeout=WAIT)  # new settings: over
        _go(page, "Plan and certify")
        assert _value(page, "AUGRC tolerance tau") == "0.001"
        assert _value(page, "Your labelling budget") == "60"
        assert _selected(page, "Stopping rule") == "separate"
        body = page.inner_text("body")
        assert "Traceback" not in body and "Session State API" not in body


def test_the_replay_step_outlives_a_visit_elsewhere(server):
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/replay?pool=sample:demo")
        idle(page, WAIT)
        for _ in range(3):
            page.get_by_role("button", name="Step", exact=True).click()
            _settle(page)
        page.get_by_text("After 3 of").first.wait_for(timeout=WAIT)
        _go(page, "Pool")
        _go(page, "Replay a policy")
        page.get_by_text("After 3 of").first.wait_for(timeout=WAIT)


def test_audit_settings_outlive_a_page_switch(server):
    with launch(sync_api) as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/audit")
        idle(page, WAIT)
        page.get_by_text("Start an audit").first.wait_for(timeout=WAIT)
        _type(page, "Tolerance epsilon", "0.05")
        _type(page, "Window (items", "1000")
        _go(page, "Pool")
        _go(page, "Audit a model update")
        assert _value(page, "Tolerance epsilon") == "0.05"
        assert _value(page, "Window (items") == "1000"
