"""A lead's own files in headless Chromium: columns named their way, one file per model,
and files that do not join.  The upload waits for its column mapping on the page; the
guess is shown in select boxes; *Load the pool* saves it with the mapping; the same file
uploaded again uses the saved mapping; a refused upload says which file and id and
leaves the active pool as it was."""

from __future__ import annotations

import re

import pytest

from browser_support import Server, idle, launch, require_chromium, wait_text

sync_api = require_chromium()
pytestmark = pytest.mark.slow

N = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("store") / "labels.db").start()
    yield srv.url
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


def _own_file(path, *, label="y_true", labelled_every=1):
    """Columns as an evaluation script writes them: id, y_true, <model>_pred, <model>_score."""
    lines = [f"id,{label},modelA_pred,modelA_score,modelB_pred,modelB_score,note"]
    for i in range(N):
        y = "" if i % labelled_every else str(i % 2)
        a, b = (i * 7) % 2, (i * 5 + 1) % 2
        lines.append(f"r{i},{y},{a},{0.5 + (i * 37 % 50) / 100:.2f},{b},"
                     f"{0.5 + (i * 13 % 50) / 100:.2f},n{i}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _per_model(path, name, ids, seed):
    lines = ["id,prediction,score"]
    for i in ids:
        lines.append(f"{i},{(i * seed) % 2},{0.5 + ((i + seed) * 31 % 50) / 100:.2f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _upload(page, *paths):
    page.locator("section[data-testid=stSidebar] input[type=file]").first.set_input_files(
        [str(p) for p in paths])


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]', has_text=label).first
    box.wait_for(timeout=60_000)
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def _start(browser, server, width=1400):
    page = browser.new_page(viewport={"width": width, "height": 1000})
    page.goto(server + "/pool")
    page.get_by_text("Add a pool file").first.wait_for(timeout=60_000)
    idle(page)
    return page


def test_own_column_names_are_mapped_and_the_labels_kept(server, browser, tmp_path):
    f = _own_file(tmp_path / "eval_outputs.csv", labelled_every=3)
    page = _start(browser, server)
    _upload(page, f)
    wait_text(page, "Which column is which?")
    # the guess, in words, before anything is saved (the code block that holds it is
    # drawn after the rest of the form: wait for its lines, do not read the page once)
    for line in ("label: y_true", "row id: id",
                 "modelA: prediction modelA_pred, confidence modelA_score"):
        wait_text(page, line)
    idle(page)
    body = page.inner_text("body")
    assert "Traceback" not in body
    page.get_by_role("button", name="Load the pool").click()
    wait_text(page, "Column mapping")
    idle(page)
    assert _metric(page, "labelled") == str(len(range(0, N, 3)))
    assert _metric(page, "rows") == str(N)
    assert "1. modelA, 2. modelB" in page.inner_text("body")
    assert re.search(r"pool=upload%3A[0-9a-f]{64}", page.url)
    first = page.url

    # the same file again: no form, the saved mapping
    page2 = _start(browser, server)
    _upload(page2, f)
    wait_text(page2, "read with the column mapping saved with it before")
    idle(page2)
    assert "Which column is which?" not in page2.inner_text("body")
    assert page2.url.split("pool=")[1] == first.split("pool=")[1]
    page.close()
    page2.close()


def test_a_label_column_the_guess_missed_is_chosen_in_the_select_box(server, browser,
                                                                     tmp_path):
    f = _own_file(tmp_path / "answers.csv", label="answer")
    page = _start(browser, server)
    _upload(page, f)
    wait_text(page, "Which column is which?")
    wait_text(page, "label: (none: every row unread)")
    idle(page)
    page.get_by_label("Label column (empty cells: not labelled yet)").click()
    page.get_by_role("option", name="answer", exact=True).click()
    wait_text(page, "label: answer")
    idle(page)
    page.get_by_role("button", name="Load the pool").click()
    wait_text(page, "Column mapping")
    assert _metric(page, "labelled") == str(N)
    page.close()


def test_one_file_per_model_is_joined_in_upload_order(server, browser, tmp_path):
    ids = list(range(40))
    b = _per_model(tmp_path / "bert.csv", "bert", ids[::-1], 3)  # another row order
    a = _per_model(tmp_path / "albert.csv", "albert", ids, 5)
    page = _start(browser, server, width=800)
    _upload(page, b, a)
    wait_text(page, "Which column is which?")
    idle(page)
    wait_text(page, "2 files joined on their id columns")
    page.get_by_role("button", name="Load the pool").click()
    wait_text(page, "Column mapping")
    idle(page)
    assert "1. bert, 2. albert" in page.inner_text("body")
    assert _metric(page, "rows") == "40"
    page.close()


def test_files_whose_ids_do_not_join_are_refused_naming_the_id(server, browser, tmp_path):
    a = _per_model(tmp_path / "one.csv", "one", list(range(30)), 3)
    b = _per_model(tmp_path / "two.csv", "two", list(range(29)) + [99], 5)
    page = _start(browser, server)
    before = page.url
    _upload(page, a, b)
    msg = page.get_by_text("Could not load one.csv + two.csv").first
    msg.wait_for(timeout=60_000)
    text = msg.inner_text()
    assert "29" in text and "two.csv" in text
    assert "the active pool is still" in text
    idle(page)
    assert "Which column is which?" not in page.inner_text("body")
    assert "Traceback" not in page.inner_text("body")
    assert page.url.split("pool=")[1] == before.split("pool=")[1]
    page.close()


def test_a_reload_keeps_the_upload_that_waits_for_its_mapping(server, browser, tmp_path):
    f = _own_file(tmp_path / "waiting.csv", labelled_every=2)
    page = _start(browser, server)
    _upload(page, f)
    wait_text(page, "It will read")
    page.wait_for_function("location.href.includes('pending=')", timeout=30_000)
    page.reload()
    wait_text(page, "still waiting for its column mapping")
    wait_text(page, "It will read")
    idle(page)
    page.get_by_role("button", name="Load the pool").click()
    wait_text(page, "Column mapping")
    idle(page)
    assert _metric(page, "labelled") == str(len(range(0, N, 2)))
    assert "pending=" not in page.url
    page.reload()  # loaded: a reload shows the pool, not the form
    wait_text(page, "Column mapping")
    idle(page)
    assert "Which column is which?" not in page.inner_text("body")
    page.close()
