"""The Label page's review action in headless Chromium: after a certificate the
page names the rows that, if mislabelled, would undo it; one click queues exactly those
rows for a second annotator (review events in the store), who answers with the keyboard;
the undo key cannot take back the first annotator's label."""

from __future__ import annotations

import os

import pytest

import certlib
from browser_support import ROOT, Server, idle, launch, require_chromium, wait_text
from certlib.labelling.reviews import review_items
from certlib.labelling.store import LabelStore

sync_api = require_chromium()
pytestmark = pytest.mark.slow

SCREENSHOT_DIR = os.environ.get("CERTLIB_SCREENSHOTS")


def test_queue_the_critical_rows_for_review(tmp_path):
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    store = LabelStore(tmp_path / "labels.db")
    pid = store.open_project(pool, "Breast cancer, unlabelled (annotator)")
    while not (p := store.progress(pid, pool)).session.done:
        r = p.next_row
        store.append_label(pid, pool.row_ids[r], truth.classes[int(truth.labels[r])], "ana",
                           pool=pool)
    m = p.session.label_error_margin()
    srv = Server(tmp_path / "labels.db").start()
    try:
        with launch(sync_api) as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{srv.url}/Label?project={pid}&annotator=lead&pool=sample:unlabelled")
            page.get_by_text(f"one wrong label among these {len(m.critical_ids):,} of the "
                             f"{m.labels_read:,} rows read", exact=False).first.wait_for(
                timeout=60_000)
            page.get_by_role("button",
                             name=f"Queue these {len(m.critical_ids):,} rows for review").click()
            page.get_by_text(f"Review: {len(m.critical_ids):,} row(s) queued",
                             exact=False).first.wait_for(timeout=60_000)
            if SCREENSHOT_DIR:
                page.screenshot(path=os.path.join(SCREENSHOT_DIR, "label_review.png"),
                                full_page=True)
            items = review_items(store.events(pid))
            assert [i.row_id for i in items] == list(m.critical_ids)
            assert all(i.status == "waiting" and i.queued_by == "lead" for i in items)
            # bob reviews by keyboard; U (undo) must not cancel ana's label
            page.goto(f"{srv.url}/Label?project={pid}&annotator=bob&pool=sample:unlabelled")
            wait_text(page, "Your review")
            wait_text(page, f"({len(items):,} waiting)")
            first = items[0]
            # the review panel shows the row (blind) and takes the class keys once it
            # has been on screen 250 ms
            page.locator(f'.cl-row[data-row-id="{first.row_id}"]').first.wait_for(
                timeout=60_000)
            idle(page)
            page.wait_for_timeout(500)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.keyboard.press(str(first.label))
            wait_text(page, f"({len(items) - 1:,} waiting)")
            idle(page)
            page.keyboard.press("U")
            idle(page)
            page.wait_for_timeout(1_000)
            assert "Traceback" not in page.inner_text("body")
    finally:
        srv.stop()
    events = store.events(pid)
    assert [e.kind for e in events[-len(items) - 1:]] == ["review_request"] * len(items) + [
        "review"]
    reviewed = review_items(events)[0]
    assert reviewed.status == "agrees" and reviewed.reviews[-1][1] == "bob"
