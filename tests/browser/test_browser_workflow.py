"""One user's whole workflow in headless Chromium: upload an unlabelled pool, label it
on the Label page with the keyboard until the choice is certified (through a reload
and a server restart), download the labels and the evidence record, and read the
hindsight number on the Certificate page.

The labels typed are the hidden truth of sample_data/demo_binary.csv, so the run must
match `certlib.replay` on the labelled pool label for label.

Needs Debian's chromium at /usr/bin/chromium (installed by run_tests.sh); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import csv
import json
import re
from functools import partial

import pytest

from browser_support import ROOT, Server, idle, launch, panel_row, require_chromium, wait_text

sync_api = require_chromium()
pytestmark = pytest.mark.slow

WAIT = 90_000  # ms; the CI machine is slow and loaded
MAX_PRESSES = 200  # every key press of the labelling loop, retries included
POLICY = "adaptive-pair-sum"
SAMPLE = ROOT / "sample_data" / "demo_binary.csv"


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


def _blind_copy(path):
    """sample_data/demo_binary.csv with every label cell emptied."""
    with open(SAMPLE, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({**r, "label": ""})
    return path


def _upload(page, path):
    page.locator("section[data-testid=stSidebar] input[type=file]").first.set_input_files(str(path))






_idle = partial(idle, timeout=WAIT)
_wait_text = partial(wait_text, timeout=WAIT)


# the "labels read" metric, "t of n", as a number (None while it is not drawn)
_COUNT_JS = """(n) => {
  const v = [...document.querySelectorAll('[data-testid=stMetricValue]')]
    .map(e => e.innerText.trim()).find(t => t.endsWith(' of ' + n));
  return v === undefined ? null : parseInt(v.split(' ')[0].replace(/,/g, ''), 10);
}"""


def _count(page, n):
    return page.evaluate(_COUNT_JS, f"{n:,}")


def _wait_count(page, n, t, timeout=WAIT):
    page.wait_for_function(f"(n) => ({_COUNT_JS})(n) === {t}", arg=f"{n:,}", timeout=timeout)


def _next_row_id(page, previous=None) -> int:
    """The row the labelling panel shows; with ``previous``, once it has changed."""
    return int(panel_row(page, previous, timeout=WAIT))


def _certified(page) -> bool:
    return page.get_by_text("Certified after").count() > 0


def _hindsight_number(page) -> int:
    sentence = page.get_by_text("would have sufficed in hindsight").first
    sentence.wait_for(timeout=120_000)
    m = re.search(r"([\d,]+) of them would have sufficed in hindsight", sentence.inner_text())
    assert m, sentence.inner_text()
    return int(m.group(1).replace(",", ""))


def _download(page, button, tmp_path):
    with page.expect_download(timeout=WAIT) as d:
        page.get_by_role("button", name=button).click()
    out = tmp_path / d.value.suggested_filename
    d.value.save_as(str(out))
    return out


def test_upload_label_to_certified_download_and_certificate(browser, tmp_path):
    import certlib
    from certlib.labelling.store import verify_record

    truth = certlib.load_pool(SAMPLE)
    expected = certlib.replay(truth, policy=POLICY)
    blind_file = _blind_copy(tmp_path / "blind_demo.csv")
    blind = certlib.load_pool(blind_file)
    n = blind.n
    assert n == 171 and blind.n_labelled == 0

    def label_of(row_id):
        return str(truth.classes[truth.labels[truth.position(row_id)]])

    (tmp_path / "store").mkdir()
    srv = Server(tmp_path / "store" / "labels.db")
    srv.start()
    try:
        page = browser.new_page(viewport={"width": 1300, "height": 1500})

        # 1. upload the unlabelled copy on the first page
        page.goto(srv.url)
        _wait_text(page, "Add a pool file")
        _upload(page, blind_file)
        page.wait_for_function("location.href.includes('pool=upload%3A')", timeout=WAIT)
        _wait_text(page, f"at most n = {n:,}")
        _idle(page)
        assert "pool=upload%3A" in page.evaluate("location.href")
        assert "Traceback" not in page.inner_text("body")

        # 2. the Label page: name, start, then the truth key by key
        page.get_by_role("link", name="Label").first.click()
        name = page.get_by_label("Your name (annotator)")
        name.wait_for(timeout=WAIT)
        _idle(page)
        assert "pool=upload%3A" in page.evaluate("location.href")  # the upload stays active
        name.fill("ana")
        name.press("Enter")
        _idle(page)
        page.get_by_role("button", name="Start a new project").click()
        _wait_count(page, n, 0)
        _wait_text(page, "Project 1 on blind_demo.csv")

        labelled, presses, t, lost = [], 0, 0, []
        while not _certified(page):
            assert t < n, "labelled every row without a certificate"
            if t == 20:  # a reload keeps the count
                page.reload()
                _wait_count(page, n, t)
            if t == 40:  # so does a server restart
                url = page.evaluate("location.href")
                srv.stop()
                srv.start()
                page.goto(url)
                _wait_count(page, n, t)
            rid = _next_row_id(page, labelled[-1] if labelled else None)
            key = label_of(rid)
            for _attempt in range(3):  # a key press lost during a rerun is pressed again
                presses += 1
                assert presses <= MAX_PRESSES, f"{presses} key presses for {t} labels"
                _idle(page)
                page.evaluate("document.activeElement && document.activeElement.blur()")
                page.keyboard.press(key)
                try:
                    _wait_count(page, n, t + 1, timeout=60_000)
                    break
                except sync_api.TimeoutError:
                    _idle(page)
                    if _count(page, n) == t + 1:
                        break
                    # still the same row and count: the press was lost
                    lost.append((t, rid, page.locator("[data-testid=stAlert]").all_inner_texts()))
                    assert _count(page, n) == t, f"count {_count(page, n)} after {t} labels"
                    assert _next_row_id(page) == rid
            else:
                raise AssertionError(f"row_id {rid}: the count stayed {t} after 3 presses")
            labelled.append(rid)
            t += 1
            _idle(page)

        # 3. the end: the run equals the library's replay of the labelled pool
        assert t == _count(page, n) == expected.labels_read == 125
        assert labelled == list(expected.order)
        verdict = page.locator("[data-testid=stAlert]").filter(has_text="Certified after")
        verdict = verdict.first.inner_text()
        assert f"Certified after {expected.labels_read:,} labels" in verdict
        assert expected.selected in verdict
        label_hindsight = _hindsight_number(page)
        assert label_hindsight <= expected.labels_read
        assert "Traceback" not in page.inner_text("body")

        labels_file = _download(page, "Download the labels (CSV)", tmp_path)
        with open(labels_file, newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == expected.labels_read
        assert [r["row_id"] for r in rows] == [str(r) for r in expected.order]
        assert [r["label"] for r in rows] == [label_of(r) for r in expected.order]
        assert {r["annotator"] for r in rows} == {"ana"}

        record_file = _download(page, "Download the evidence record (JSON)", tmp_path)
        record = json.loads(record_file.read_text())
        check = verify_record(record, blind)
        assert check.ok, check
        assert record["labels_read"] == expected.labels_read
        assert record["selected"] == expected.selected and record["certified"] is True

        # 4. the Certificate page on the project (the Label page's button chooses it as
        # the label source): the same hindsight number
        page.get_by_role("button", name="Open on the Certificate page").click()
        source = page.locator("[data-testid=stSelectbox]").filter(has_text="Labels from")
        source.wait_for(timeout=WAIT)
        _wait_text(page, "The rows the project read", timeout=120_000)
        assert re.fullmatch(rf"project \d+: {POLICY}", source.locator("input").input_value())
        assert _hindsight_number(page) == label_hindsight
        page.reload()  # the project is in the address
        _wait_text(page, "The rows the project read", timeout=120_000)
        assert _hindsight_number(page) == label_hindsight
        assert "Traceback" not in page.inner_text("body")
        print(f"{t} labels, {presses} key presses, {label_hindsight} would have sufficed; "
              f"presses lost (t, row_id, alerts): {lost}")
        page.close()
    finally:
        srv.stop()
