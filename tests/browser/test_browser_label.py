"""The labelling page in headless Chromium: label rows with the keyboard shortcuts,
reload the page and restart the server, and find the same progress each time
(the state lives in the SQLite store, not in the browser session).

Needs Debian's chromium at /usr/bin/chromium (installed by run_tests.sh); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser_support import (PANEL_ROW_JS, ROOT, click_until, idle, key_gaps_ms, launch,
                             panel_message, panel_row, press_answer, record_rows_at_keydown,
                             require_chromium, rows_seen, wait_text)

sync_api = require_chromium()
pytestmark = pytest.mark.slow

SCREENSHOT_DIR = os.environ.get("CERTLIB_SCREENSHOTS")  # keep the pictures for a look


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b






def _next_row_id(page, previous=None) -> int:
    """The row the labelling panel shows; with ``previous``, once it has changed (then a
    key pressed next is past the panel's double-press guard)."""
    return int(panel_row(page, previous))


def _record_rows_at_keydown(page) -> None:
    record_rows_at_keydown(page)


def _rows_seen(page) -> list:
    return [int(r) for r in rows_seen(page)]


def _shot(page, tmp_path, name):
    out = Path(SCREENSHOT_DIR or tmp_path) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), full_page=True)
    return out


def _start_project(browser, server, who, width):
    """A page on Label with ``who`` typed as the annotator and a project started on the
    default (unlabelled, 171-row) pool."""
    page = browser.new_page(viewport={"width": width, "height": 1500 if width > 1000 else 1200})
    page.goto(server.url + "/Label")
    name = page.get_by_label("Your name (annotator)")
    name.wait_for(timeout=60_000)
    name.fill(who)
    name.press("Enter")
    page.get_by_role("button", name="Start a new project").click()
    wait_text(page, "0 of 171")
    return page


def test_keyboard_labelling_survives_reload_and_restart(server, browser, tmp_path):
    import certlib

    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")

    def label_of(row_id):
        return str(truth.classes[truth.labels[truth.position(row_id)]])

    page = _start_project(browser, server, "ana", 1300)

    rows = []
    for t in range(1, 6):
        rid = _next_row_id(page, rows[-1] if rows else None)
        rows.append(rid)
        page.evaluate("document.activeElement && document.activeElement.blur()")  # off the inputs
        page.keyboard.press(label_of(rid))
        wait_text(page, f"{t} of 171")
    sixth = _next_row_id(page, rows[-1])  # asked for after five labels
    idle(page)
    page.keyboard.press("U")  # undo the fifth label
    wait_text(page, "4 of 171")
    # the count is drawn before the next row: wait until the row asked for has changed
    assert _next_row_id(page, sixth) == rows[4]
    shot = _shot(page, tmp_path, "label_page.png")
    assert shot.stat().st_size > 10_000

    page.reload()
    wait_text(page, "4 of 171", timeout=60_000)
    assert _next_row_id(page) == rows[4]

    server.stop()
    server.start()
    page.goto(page.url)
    wait_text(page, "4 of 171", timeout=60_000)
    assert _next_row_id(page) == rows[4]
    idle(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(label_of(rows[4]))
    wait_text(page, "5 of 171")
    assert "Traceback" not in page.inner_text("body")
    _shot(page, tmp_path, "label_page_after_restart.png")
    rows.append(_next_row_id(page, rows[-1]))

    # a restart without a reload: the browser reconnects to a fresh session; the panel
    # keeps its row, and an answer pressed once it is back is saved (it is sent again
    # until the server acknowledges it)
    server.stop()
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')"
                           "?.dataset.testConnectionState !== 'CONNECTED'", timeout=60_000)
    server.start()
    idle(page)
    assert _next_row_id(page) == rows[-1]
    page.keyboard.press(label_of(rows[-1]))
    wait_text(page, "6 of 171")
    page.close()

    from certlib.labelling.store import LabelStore

    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    assert [e.kind for e in store.events(project.id)] == ["label"] * 5 + ["undo"] + \
        ["label"] * 2
    assert [lab.row_id for lab in store.labels(project.id)] == rows


def test_a_visit_to_another_page_keeps_the_project_and_the_name(server, browser):
    """Streamlit empties the address on a page switch: the open project and the
    annotator's name come back from the session, not typed and opened again."""
    page = _start_project(browser, server, "bo", 800)
    first = _next_row_id(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("0")
    wait_text(page, "1 of 171")
    asked = _next_row_id(page, first)
    for other in ("Certificate", "Pool"):
        page.locator("[data-testid=stSidebarNav] a", has_text=other).first.click()
        page.wait_for_function("o => !location.pathname.endsWith('/Label')", arg=other,
                               timeout=60_000)
        idle(page)
        page.locator("[data-testid=stSidebarNav] a", has_text="Label").first.click()
        wait_text(page, "1 of 171", timeout=60_000)
        assert _next_row_id(page) == asked
        sync_api.expect(page.get_by_label("Your name (annotator)")).to_have_value(
            "bo", timeout=30_000)
        page.wait_for_function("() => location.href.includes('project=')", timeout=30_000)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("1")  # the name is in force: the label is saved under it
    wait_text(page, "2 of 171")
    page.close()

    from certlib.labelling.store import LabelStore

    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    assert [e.annotator for e in store.events(project.id)] == ["bo", "bo"]


@pytest.mark.parametrize("gap_ms", [30, 120, 200])
def test_a_quick_double_press_labels_only_rows_shown(server, browser, gap_ms):
    """A key pressed twice quickly must not label a row the person has not read (a
    double presses 150-300 ms apart once saved the second on the next row).
    The panel draws the next row at the first press and refuses, and says, a press on a
    row painted under 250 ms before: on the browser's clock, whatever the server does.
    The gap is the browser's (a pause asked of a busy machine can last longer than
    asked): a second press 250 ms or more after the first may count, for its own row."""
    from certlib.labelling.store import LabelStore

    from ui.label_panel import GUARD_MS

    page = _start_project(browser, server, "ana", 800)
    first = _next_row_id(page)
    _record_rows_at_keydown(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("0")
    page.wait_for_timeout(gap_ms)
    page.keyboard.press("0")
    said = panel_message(page)
    (gap,) = key_gaps_ms(page)
    page.wait_for_timeout(1500)  # a second save, if any, has landed by now
    seen = _rows_seen(page)
    assert seen[0] == first and seen[1] != first, seen
    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    if gap >= GUARD_MS:  # not a double press on the browser's clock
        assert [lab.row_id for lab in store.labels(project.id)] in ([first], [first, seen[1]])
        page.close()
        return
    assert "Too quick" in said, (gap, said)
    wait_text(page, "1 of 171")
    assert [lab.row_id for lab in store.labels(project.id)] == [first]
    second = _next_row_id(page)
    assert second == seen[1]
    page.keyboard.press("1")  # the row shown, read: saved
    wait_text(page, "2 of 171")
    assert [lab.row_id for lab in store.labels(project.id)] == [first, second]
    page.close()


def test_a_press_across_a_restart_while_someone_else_labelled_is_said(server, browser):
    """The server restarts while the page is open, and another annotator labels the row it
    shows before the annotator presses a key.  A press on the row still shown is refused
    by the store (stale) and said; once the panel has the server's state it shows the
    next row.  No row the page did not show is labelled and bob's label stands."""
    import certlib
    from certlib.labelling.store import LabelStore

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    page = _start_project(browser, server, "ana", 1300)
    first = _next_row_id(page)
    _record_rows_at_keydown(page)
    server.stop()
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')"
                           "?.dataset.testConnectionState !== 'CONNECTED'", timeout=60_000)
    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    store.append_label(project.id, first, 1, "bob", pool=pool, expect_seq=0)
    server.start()
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("0")
    page.wait_for_function("() => document.body.innerText.includes('1 of 171')",
                           timeout=60_000)
    second = _next_row_id(page, first)
    page.wait_for_timeout(1500)
    seen = _rows_seen(page)
    saved = [(lab.row_id, lab.annotator) for lab in store.labels(project.id)]
    if seen[0] == first:  # the press answered the row shown before the restart
        assert saved == [(first, "bob")], (seen, saved)
        assert "Someone else (bob) changed this project" in panel_message(page)
    else:  # the panel had the server's state first: the press labelled the row then shown
        assert saved == [(first, "bob"), (seen[0], "ana")], (seen, saved)
    assert second != first
    page.close()


def test_the_next_row_and_the_guard_need_no_server(server, browser):
    """With the server stopped (SIGSTOP: as slow as a server gets), a key press still draws
    the next row at once, a second press 60 ms later is refused and said, and a press on
    that row before the server has acknowledged the first answer waits; once the server
    runs again, only the first answer is in the store."""
    import signal

    from certlib.labelling.store import LabelStore

    page = _start_project(browser, server, "ana", 1300)
    first = _next_row_id(page)
    _record_rows_at_keydown(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        page.keyboard.press("0")
        drawn = page.evaluate(PANEL_ROW_JS)  # drawn by the press itself, no server
        page.wait_for_timeout(60)
        page.keyboard.press("1")
        assert "Too quick" in panel_message(page)
        page.wait_for_timeout(400)
        page.keyboard.press("1")  # past the guard, but the first answer is not saved yet
        assert "still being saved" in panel_message(page)
        assert drawn != str(first)
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
    wait_text(page, "1 of 171")
    page.wait_for_timeout(1500)
    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    assert [(lab.row_id, lab.label) for lab in store.labels(project.id)] == [(first, 0)]
    assert _next_row_id(page) == int(drawn)  # the row the press drew is the store's next
    seen = _rows_seen(page)
    assert seen[0] == first and seen[1] == seen[2] == int(drawn), seen
    page.close()


def test_n_presses_give_n_answers_each_for_the_row_shown(server, browser):
    """A paced annotator (a press every 320 ms), with whole-page reruns in between (the
    chart's reference changed): every press is one answer, for the row on screen when the
    key went down, with the key pressed (a first trial of this design, whose panel added
    a key listener at every render, sent 55 answers for 10 presses).  On a busy machine the
    server can be a press behind: a press on the drawn row before the previous answer is
    saved is refused and said, and is no answer."""
    import random

    from certlib.labelling.store import LabelStore

    page = _start_project(browser, server, "ana", 1300)
    _next_row_id(page)
    _record_rows_at_keydown(page)
    rng = random.Random(29)
    keys, refused = [], []
    for i in range(16):
        if i in (5, 11):  # a whole-page rerun: the panel is drawn again with new data
            box = page.get_by_role("combobox", name="Draw every bound against")
            box.click()
            page.get_by_role("option").nth(i % 3).click()
            idle(page)
            _next_row_id(page)
            # the closed select box keeps the focus: the keys still go to the panel
        keys.append(rng.choice("01"))
        page.keyboard.press(keys[-1])
        said = panel_message(page)  # the press's own word: the panel answers at once
        assert "Too quick" not in said, (i, said)  # 320 ms apart: never a double press
        refused.append("still being saved" in said)
        page.wait_for_timeout(320)
    answers = 16 - sum(refused)
    assert answers >= 8, refused  # the pace is a person's: most presses are answers
    wait_text(page, f"{answers} of 171")
    page.wait_for_timeout(1500)
    store = LabelStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    seen = _rows_seen(page)
    assert len(seen) == 16
    given = [(int(r), k) for r, k, no in zip(seen, keys, refused) if not no]
    assert [(lab.row_id, str(lab.label)) for lab in store.labels(project.id)] == given
    assert len(store.events(project.id)) == answers
    page.close()


def test_project_buttons_do_what_they_say_and_the_forecast_follows(server, browser):
    """Start a new project always starts one; Resume names the project with these
    settings and opens it; the list opens any project; while labelling, the page shows
    the forecast of the labels left, made after the answers were saved."""
    import certlib
    from certlib.labelling.store import LabelStore

    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    page = _start_project(browser, server, "ana", 1300)
    rid = None
    for t in (1, 2):
        rid = _next_row_id(page, rid)
        press_answer(page, str(truth.classes[truth.labels[truth.position(rid)]]))
        wait_text(page, f"{t} of 171")
    wait_text(page, "Forecast: about")
    store = LabelStore(server.env["CERTLIB_STORE"])
    (first,) = store.projects()
    page.get_by_role("button", name="Close project", exact=True).click()
    resume = page.get_by_role("button", name=f"Resume project {first.id} (2 labels read, "
                                               "running)")
    resume.wait_for(timeout=60_000)
    page.get_by_role("button", name="Start a new project").click()
    wait_text(page, "0 of 171")
    first_, second = store.projects()
    assert first_.id == first.id and f"project={second.id}" in page.url
    page.get_by_role("button", name="Close project", exact=True).click()
    page.get_by_role("button", name=f"Resume project {second.id} (0 labels read, "
                                     "running)").click()
    wait_text(page, "0 of 171")
    assert f"project={second.id}" in page.url
    page.get_by_role("button", name="Close project", exact=True).click()
    # the list is drawn before the run ends; a press on it before then is dropped by
    # Streamlit, so wait for the run and press again when nothing happened, as a person does
    page.get_by_role("button", name="Open", exact=True).last.wait_for()
    click_until(page, page.get_by_role("button", name="Open", exact=True).last,  # newest first
                "2 of 171")
    assert f"project={first.id}" in page.url
    assert len(store.projects()) == 2
    assert "Traceback" not in page.inner_text("body")
