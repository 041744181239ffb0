"""The Audit page in headless Chromium: start an audit on the shipped stream with its
labels hidden, label the queued items with the keyboard until a verdict, reload the page
and restart the server in between, then download the evidence record and the stream and
verify them (with the page's own verifier and with `certlib verify-audit`).

eps = 0.03 (the page's default); the first batch is FIRST items, so that the verdict
(where and after how many labels: computed by `certlib.audit.audit` on the same items,
`_expected`) comes after the page has appended more sample items. Each queued item shows
its digit's image, which the test checks is drawn.

Needs Debian's chromium at /usr/bin/chromium; Playwright never downloads a browser.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from browser_support import (PANEL_JS, PANEL_ROW_JS, ROOT, download, idle, key_gaps_ms,
                             launch, panel_message, record_rows_at_keydown, require_chromium,
                             rows_seen, wait_text)

PANEL_TEXT_JS = f"() => {{ const r = ({PANEL_JS})(); return r ? r.textContent : ''; }}"

sync_api = require_chromium()
pytestmark = pytest.mark.slow

SCREENSHOT_DIR = os.environ.get("CERTLIB_SCREENSHOTS")
SAMPLE = pl.read_csv(ROOT / "sample_data" / "audit_stream.csv")
TRUTH = SAMPLE["label"].to_list()
FIRST, STEP = 1000, 2500  # the first batch typed on the page; the page's append step


def _expected():
    """The audit the page reaches when its queue is labelled with the held-back labels
    and STEP more items are appended whenever the queue is empty without a verdict:
    (its result on the items appended by then, the number of items, the batches)."""
    from certlib.audit import audit

    f, g, y = (SAMPLE[c].to_numpy() for c in ("pred_incumbent", "pred_candidate", "label"))
    batches = [FIRST]
    while True:
        n = sum(batches)
        ref = audit(f[:n], g[:n], y[:n], epsilon=0.03)
        if ref.verdict != "continue" or n >= len(y):
            return ref, n, batches
        batches.append(min(STEP, len(y) - n))


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b






FRESH = '[data-testid="stElementContainer"][data-stale="false"]'  # drawn by this run


def _fresh(page, text):
    return page.locator(FRESH).filter(has_text=text)


def _metric(page, label) -> str:
    box = _fresh(page, label).locator('[data-testid="stMetric"]').first
    return box.locator('[data-testid="stMetricValue"]').inner_text(timeout=2000)


def _labels_used(page) -> int:
    return int(_metric(page, "labels used").replace(",", ""))


def _state(page, used, not_item=None, timeout_s=60):
    """Wait until the page shows ``used`` labels and its panel an item (other than
    ``not_item``) past the double-press guard: returns the item id, or None when the
    panel says there is nothing to label."""
    for _ in range(timeout_s * 10):
        try:
            if _labels_used(page) == used:
                row = page.evaluate(PANEL_ROW_JS)
                if row and int(row) != not_item:
                    page.wait_for_timeout(300)  # past the panel's 250 ms guard
                    return int(row)
                if not row and "Nothing to label" in page.evaluate(PANEL_TEXT_JS):
                    return None
        except (ValueError, sync_api.Error):
            pass  # the page is being redrawn
        page.wait_for_timeout(100)
    raise AssertionError(f"the page did not settle on {used} labels")


def _shot(page, tmp_path, name):
    out = Path(SCREENSHOT_DIR or tmp_path) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), full_page=True)
    return out


def _press(page, key):
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


def _press_taken(page, key, used, item, wait_s=15, tries=3):
    """Press ``key`` for ``item`` until the page counts ``used + 1`` labels or shows the
    verdict, pressing again while the panel still shows ``item``, as a person presses
    again when nothing happened: a press in the first seconds after a reload, before the
    panel's key listener is back, was lost once in a loaded CI run.  A second answer for
    an item already labelled is refused by the store, so a press taken late is not
    counted twice."""
    for _ in range(tries):
        _press(page, key)
        for _ in range(wait_s * 10):
            try:
                if _labels_used(page) > used or _verdict_shown(page):
                    return
                row = page.evaluate(PANEL_ROW_JS)
                if row and str(row) != str(item):
                    return  # the panel moved on: the press was taken
            except (ValueError, sync_api.Error):
                pass  # the page is being redrawn
            page.wait_for_timeout(100)
        print(f"press {key!r} for item {item} not taken in {wait_s} s; pressing again")


def _verdict_shown(page) -> bool:
    return page.get_by_text("Safe by Tier 1").count() > 0


def _start_audit(browser, server, width, height, first=None):
    """A page on Audit with "ana" typed as the annotator and the sample audit started
    (with ``first`` items in the first batch, else the page's default)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server.url + "/audit")
    name = page.get_by_label("Your name (annotator)")
    name.wait_for(timeout=60_000)
    name.fill("ana")
    name.press("Enter")
    idle(page)
    if first is not None:
        box = page.get_by_role("spinbutton", name="Sample items in the first batch")
        box.fill(str(first))
        box.press("Enter")
        idle(page)
    page.get_by_role("button", name="Start audit").click()
    page.wait_for_function(f"() => ({PANEL_ROW_JS})() !== ''", timeout=60_000)
    return page


def _image_drawn(page) -> bool:
    """Whether the panel shows its item's image, loaded (a digit, 32 pixels wide)."""
    return page.evaluate(f"""() => {{
        const r = ({PANEL_JS})(); const img = r && r.querySelector('img.cl-img');
        return !!img && img.complete && img.naturalWidth === 32; }}""")


def test_keyboard_audit_survives_reload_and_restart_then_verifies(server, browser, tmp_path):
    ref, n, batches = _expected()
    labels = ref.labels_used
    # the reload and the restarts below happen at labels 3, 10 and 12
    assert ref.verdict == "safe" and ref.tier == 1 and labels >= 14, ref
    page = _start_audit(browser, server, 1400, 1600, first=FIRST)
    labelled = []
    appended = 0
    undone = False

    def shown(item):
        """The item on the panel, appending the next sample items while the queue is
        empty without a verdict (so that the steps below always have an item)."""
        nonlocal appended
        while item is None and not _verdict_shown(page):
            assert appended < len(batches) - 1, f"no verdict after {n:,} items"
            lo = sum(batches[:appended + 1])
            hi = lo + batches[appended + 1]
            page.get_by_role("button", name=f"Append sample items {lo + 1:,}-{hi:,}").click()
            wait_text(page, f"of {hi:,}")
            appended += 1
            item = _state(page, len(labelled))
        return item

    item = shown(_state(page, 0))
    assert _image_drawn(page)
    while not _verdict_shown(page):
        _press_taken(page, str(TRUTH[item]), len(labelled), item)
        labelled.append(item)
        if len(labelled) == labels:
            wait_text(page, "Safe by Tier 1")
            break
        item = shown(_state(page, len(labelled), not_item=item))
        if len(labelled) == 2 and not undone:  # undo by keyboard: the item comes back
            undone = True
            _press(page, "U")
            item = _state(page, 1, not_item=item)
            assert item == labelled.pop()
        if len(labelled) == 3:
            page.reload()
            assert _state(page, 3) == item
        if len(labelled) == 10:
            server.stop()
            server.start()
            page.goto(page.url)
            assert _state(page, 10) == item
            _shot(page, tmp_path, "audit_running_1400.png")
        if len(labelled) == 12:  # a restart without a reload: a fresh session
            server.stop()
            page.wait_for_function("() => document.querySelector('[data-testid=stApp]')"
                                   "?.dataset.testConnectionState !== 'CONNECTED'",
                                   timeout=60_000)
            server.start()
            # the panel keeps its item; the answer is sent again until the fresh session
            # takes it (it wakes the whole page when its triggers go unanswered)
            _press(page, str(TRUTH[item]))
            labelled.append(item)
            item = shown(_state(page, 13, not_item=item))
        assert len(labelled) < labels
    assert appended == len(batches) - 1 and len(labelled) == labels
    wait_text(page, "Safe by Tier 1")
    assert (f"item {ref.stopping_time:,} after {labels} labels"
            in _fresh(page, "Safe by Tier 1").first.inner_text())
    assert "Traceback" not in page.inner_text("body")
    shot = _shot(page, tmp_path, "audit_verdict_1400.png")
    assert shot.stat().st_size > 10_000
    page.set_viewport_size({"width": 800, "height": 1600})
    idle(page)
    _shot(page, tmp_path, "audit_verdict_800.png")
    page.set_viewport_size({"width": 1400, "height": 1600})
    idle(page)

    record = tmp_path / "record.json"
    download(page, "Download the evidence record (JSON)").save_as(record)
    stream = tmp_path / "stream.csv"
    download(page, "Download the stream (CSV)").save_as(stream)
    out = subprocess.run([sys.executable, "-m", "certlib", "verify-audit", str(record),
                          str(stream)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.startswith("verified"), out

    page.get_by_text("Verify a record against its stream").click()
    # one file at a time, each once the page shows it: the second upload made while the
    # first one's run went on was lost once under load (a clean-clone CI run)
    for nth, path in ((-2, record), (-1, stream)):
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(nth).set_input_files(
            str(path))
        wait_text(page, path.name)
        idle(page)
    said = page.get_by_text("Verified: every interval, the verdict (safe)").first
    said.wait_for(state="attached", timeout=60_000)
    if not said.is_visible():  # once in a loaded full run the expander was shut again
        page.get_by_text("Verify a record against its stream").click()
    said.wait_for(timeout=60_000)
    page.close()

    from certlib.audit.store import AuditStore

    store = AuditStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    kinds = [e.kind for e in store.events(project.id)]
    assert kinds == ["label"] * 2 + ["undo"] + ["label"] * (labels - 1)
    assert [b.n_items for b in store.batches(project.id)] == batches


@pytest.mark.parametrize("gap_ms", [30, 150])
def test_a_quick_double_press_labels_only_items_shown(server, browser, gap_ms):
    """As on the Label page: a key pressed twice quickly labelled the next queued item,
    which the page had not shown (item 2397 saved with the wrong class).
    The panel draws the next item at the first press and refuses, and says, the second:
    its item was painted under 250 ms before.  The gap is measured in the browser (a
    pause asked of a busy machine can last longer): a second press 250 ms or more after
    the first may count, and then only for the item it was pressed on."""
    from certlib.audit.store import AuditStore

    from ui.label_panel import GUARD_MS

    page = _start_audit(browser, server, 800, 1200)
    first = _state(page, 0)
    record_rows_at_keydown(page)
    _press(page, "0")
    page.wait_for_timeout(gap_ms)
    page.keyboard.press("0")
    said = panel_message(page)
    (gap,) = key_gaps_ms(page)
    page.wait_for_timeout(1500)  # a second save, if any, has landed by now
    seen = [int(r) for r in rows_seen(page)]
    store = AuditStore(server.env["CERTLIB_STORE"])
    (project,) = store.projects()
    labelled = [int(e.item_id) for e in store.events(project.id) if e.kind == "label"]
    assert seen[0] == first and seen[1] != first, seen
    if gap < GUARD_MS:  # the item drawn by the first press was on screen under the guard
        assert "Too quick" in said, (gap, said)
        assert labelled == [first], (gap, labelled)
        assert _state(page, 1, not_item=first) == seen[1]
    else:
        assert labelled in ([first], [first, seen[1]]), (gap, seen, labelled)
    page.close()
