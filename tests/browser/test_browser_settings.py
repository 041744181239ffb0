"""Settings across pages in headless Chromium: what a lead chooses on one page is still
there after a visit to another (Streamlit drops a widget's state on a page switch), and
the tolerance, policy, rule and seed are the same on every page that has them, so a
labelling project starts from the plan (ui.state.sticky)."""

from __future__ import annotations

import pytest
from browser_support import idle, launch, require_chromium

sync_api = require_chromium()
pytestmark = pytest.mark.slow

WAIT = 90_000


def _open(browser, server, path, text=None):
    """A new tab on ``path``, once its first run has ended (and ``text`` is shown)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server.url}{path}")
    idle(page, WAIT)
    if text:
        page.get_by_text(text).first.wait_for(timeout=WAIT)
    return page


def _settle(page):
    """Let the run an action started begin, then wait for it to end."""
    page.wait_for_timeout(1000)
    idle(page, WAIT)


def _go(page, name):
    """Switch page through the side navigation (one session, as a user does)."""
    page.locator("[data-testid=stSidebarNav] a", has_text=name).first.click()
    _settle(page)


def _url_has(page, part, present=True):
    """The address holds ``part`` (or, with ``present=False``, no longer does), waiting for
    the run that writes it (Streamlit sends each query-parameter change as it is made)."""
    page.wait_for_function("([p, yes]) => location.href.includes(p) === yes",
                           arg=[part, present], timeout=WAIT)


def _leave_by_link(page, box, url_part, name):
    """Leave ``box``, typed without Enter, by the page link ``name``: the blur reruns the
    page with the typed value, and the link is clicked while that run goes on.  The click
    waits until the run has taken the value (it writes it into the address): a click in
    the same instant as the blur can reach the server before the blur's run has started;
    Streamlit then coalesces the two requests, a page switch carries only the widgets
    that outlive it, and the typed value is lost (seen under load: the box came back at
    0, or at the old read order)."""
    box.evaluate("e => e.blur()")
    _url_has(page, url_part)
    page.locator("[data-testid=stSidebarNav] a", has_text=name).first.click()


def _input(page, label):
    """The input box whose label starts with ``label`` (not its help button)."""
    return page.locator(f'input[aria-label^="{label}"]').first


def _has(page, label, value):
    """The box shows ``value`` (waiting for the run a reload or a switch started)."""
    sync_api.expect(_input(page, label)).to_have_value(value, timeout=WAIT)


def _type(page, label, text):
    box = _input(page, label)
    box.fill(text)
    box.press("Enter")
    _settle(page)


def _box(page, label):
    return page.locator("[data-testid=stSelectbox]").filter(has_text=label).first


def _select(page, label, option):
    # scrolled to first, as a person does: a click in the scroll Playwright starts for it
    # focused a box below the fold without opening its menu (Chromium at 1400 x 1000)
    _box(page, label).scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    _box(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()
    _settle(page)


def _shows(page, label, option):
    """The selectbox shows ``option``."""
    sync_api.expect(_box(page, label).locator("input").first).to_have_value(option,
                                                                          timeout=WAIT)


def test_choices_outlive_a_page_switch_and_are_shared(server):
    with launch(sync_api) as browser:
        page = _open(browser, server, "/?pool=sample:demo", "1. Before labelling")
        _type(page, "AUGRC tolerance tau", "0.002")
        _type(page, "Your labelling budget", "60")
        _select(page, "Policy", "expected-coverage")
        _select(page, "Stopping rule", "separate")

        _go(page, "Replay a policy")
        _has(page, "AUGRC tolerance tau", "0.002")
        _shows(page, "Policy", "expected-coverage")
        _shows(page, "Stopping rule", "separate")
        for _ in range(2):
            page.get_by_role("button", name="Step", exact=True).click()
            _settle(page)
        page.get_by_text("After 2 of").first.wait_for(timeout=WAIT)

        _go(page, "Budget map and forecast")
        _shows(page, "Policy", "expected-coverage")
        _has(page, "Budget (labels", "60")  # the same pool's budget
        _type(page, "Forecast draws", "50")

        _go(page, "Label")
        _has(page, "AUGRC tolerance tau", "0.002")
        _shows(page, "Policy", "expected-coverage")

        _go(page, "Certificate")
        _has(page, "AUGRC tolerance tau", "0.002")
        _type(page, "AUGRC tolerance tau", "0.001")  # changed here: every page follows

        _go(page, "Budget map and forecast")
        _has(page, "Forecast draws", "50")
        _go(page, "Replay a policy")
        _has(page, "AUGRC tolerance tau", "0.001")
        page.get_by_text("After 0 of").first.wait_for(timeout=WAIT)  # new settings: over
        _go(page, "Plan and certify")
        _has(page, "AUGRC tolerance tau", "0.001")
        _has(page, "Your labelling budget", "60")
        _shows(page, "Stopping rule", "separate")
        body = page.inner_text("body")
        assert "Traceback" not in body and "Session State API" not in body


def test_the_replay_step_outlives_a_visit_elsewhere(server):
    with launch(sync_api) as browser:
        page = _open(browser, server, "/replay?pool=sample:demo")
        for _ in range(3):
            page.get_by_role("button", name="Step", exact=True).click()
            _settle(page)
        page.get_by_text("After 3 of").first.wait_for(timeout=WAIT)
        _go(page, "Pool")
        _go(page, "Replay a policy")
        page.get_by_text("After 3 of").first.wait_for(timeout=WAIT)


def _replay_status(page):
    return page.locator("[data-testid=stAlert]").filter(has_text="After").first.inner_text()


def test_a_replay_left_playing_is_paused_on_return(server):
    with launch(sync_api) as browser:
        page = _open(browser, server, "/replay?pool=sample:demo")
        page.get_by_role("button", name="Play", exact=True).click()
        page.get_by_role("button", name="Pause", exact=True).wait_for(timeout=WAIT)
        page.wait_for_timeout(1500)
        # the link is clicked while the replay plays; a click can be dropped: a timer tick
        # the browser sends after it, before the server has started the switch, is
        # coalesced with it and the newer request's page (the replay) wins
        # (streamlit ScriptRequests), so click again, as a user would (the replay needs
        # over 60 s to reach its end, and the test checks below that it did not)
        for _ in range(3):
            page.locator("[data-testid=stSidebarNav] a", has_text="Pool").first.click()
            try:
                page.get_by_text("What the active pool holds").first.wait_for(timeout=10_000)
                break
            except sync_api.TimeoutError:
                pass
        page.get_by_text("What the active pool holds").first.wait_for(timeout=WAIT)
        page.locator("[data-testid=stSidebarNav] a", has_text="Replay a policy").first.click()
        page.locator("[data-testid=stAlert]").filter(has_text="After").first.wait_for(
            timeout=WAIT)
        page.wait_for_timeout(1000)
        step = _replay_status(page)
        page.wait_for_timeout(2000)  # four ticks of a playing replay (125 rows: not done)
        assert _replay_status(page) == step and "After 125 of" not in step
        assert page.get_by_role("button", name="Pause", exact=True).count() == 0
        assert page.get_by_role("button", name="Play", exact=True).count() == 1


def test_audit_settings_outlive_a_page_switch(server):
    with launch(sync_api) as browser:
        page = _open(browser, server, "/audit", "Start an audit")
        _type(page, "Tolerance epsilon", "0.05")
        _type(page, "Window (items", "1000")
        _go(page, "Pool")
        _go(page, "Audit a model update")
        _has(page, "Tolerance epsilon", "0.05")
        _has(page, "Window (items", "1000")


def test_a_reload_or_a_link_keeps_the_shared_settings(server):
    with launch(sync_api) as browser:
        page = _open(browser, server, "/?pool=sample:demo", "1. Before labelling")
        _type(page, "AUGRC tolerance tau", "0.002")
        _select(page, "Policy", "expected-coverage")
        _url_has(page, "tolerance=0.002")
        _url_has(page, "policy=expected-coverage")
        page.reload()
        _settle(page)
        _has(page, "AUGRC tolerance tau", "0.002")
        _shows(page, "Policy", "expected-coverage")
        _go(page, "Pool")  # a page without these settings keeps them in the address
        _url_has(page, "tolerance=0.002")
        page.reload()
        _settle(page)
        _go(page, "Replay a policy")
        _has(page, "AUGRC tolerance tau", "0.002")
        _shows(page, "Policy", "expected-coverage")
        _type(page, "AUGRC tolerance tau", "0")  # back at the default: out of the address
        _url_has(page, "tolerance=", present=False)

        # a hand-edited address: the page's defaults, no traceback
        page.goto(f"{server.url}/replay?pool=sample:demo&tolerance=abc&policy=nope&seed=-3"
                  "&rule=centered")
        _settle(page)
        _has(page, "AUGRC tolerance tau", "0")
        _shows(page, "Policy", "adaptive-pair-sum")
        _has(page, "Seed (random policies)", "0")
        _shows(page, "Stopping rule", "centered")  # the demo pool is binary
        assert "Traceback" not in page.inner_text("body")


def test_boxes_show_the_values_in_use_after_an_ignored_page_switch(server):
    """A value typed without Enter, then a page link: the box loses focus, the page reruns
    with the value, and Streamlit ignores the click.  The boxes must not show their
    defaults (0, the first policy, budget 0) beside results computed from 0.02 and 60."""
    with launch(sync_api) as browser:
        page = _open(browser, server, "/?pool=sample:demo", "1. Before labelling")
        _settle(page)
        _type(page, "Your labelling budget", "60")
        box = _input(page, "AUGRC tolerance tau")
        box.fill("0.02")  # no Enter
        _leave_by_link(page, box, "tolerance=0.02", "Replay a policy")
        page.wait_for_timeout(4000)
        idle(page, WAIT)
        if "/replay" in page.url:  # Streamlit took the click after all
            _has(page, "AUGRC tolerance tau", "0.02")
            return
        _has(page, "AUGRC tolerance tau", "0.02")
        _has(page, "Your labelling budget", "60")
        _shows(page, "Policy", "adaptive-pair-sum")
        main = page.locator("[data-testid=stMain]").inner_text()
        assert "34 labels" in main  # the prelabel bound at tau = 0.02 (47 at 0)
        assert "A budget of 60" in main


def test_teach_pages_keep_their_state_through_a_visit_elsewhere(server):
    """Figure 2's labels, read order and step, and Figure 10's reading order, after a
    visit to another page -- also when the order was typed without Enter just before the
    page link (not empty or at their defaults beside a table computed from the typed
    values, nor at the default order with the old step)."""
    with launch(sync_api) as browser:
        page = _open(browser, server, "/figure2", "Labels and read order")
        _select(page, "y2", "1")
        _type(page, "Read order", "4, 3, 2, 1")
        page.get_by_role("button", name="Step").first.click()
        _settle(page)
        _go(page, "Plan and certify")
        _go(page, "Figure 2")
        _shows(page, "y2", "1")
        _has(page, "Read order", "4, 3, 2, 1")
        assert "After 1 of 4 labels" in page.inner_text("body")

        box = _input(page, "Read order")
        box.fill("1, 2, 3, 4")  # no Enter
        _leave_by_link(page, box, "fig2_order=1%2C+2%2C+3%2C+4", "Plan and certify")
        _settle(page)
        _go(page, "Figure 2")
        _shows(page, "y2", "1")
        _has(page, "Read order", "1, 2, 3, 4")
        _url_has(page, "fig2_order=1%2C+2%2C+3%2C+4")

        _go(page, "Figure 10")
        _select(page, "Reading order", "adaptive-pair-sum")
        _go(page, "Pool")
        _go(page, "Figure 10")
        _shows(page, "Reading order", "adaptive-pair-sum")
        _url_has(page, "fig_policy=adaptive-pair-sum")
