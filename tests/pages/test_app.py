"""The dashboard pages run on the shipped sample data and show the library's numbers
(Streamlit's AppTest: no browser; the browser test is tests/browser/test_browser.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

import certlib  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / script), default_timeout=120)
    at.run()
    return at


def test_home_page_shows_prelabel_replay_and_certificate():
    at = _run("app.py")
    assert not at.exception, at.exception
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    pre = certlib.prelabel_bound(pool).prelabel_bound
    rep = certlib.replay(pool, policy="adaptive-pair-sum")
    cert = certlib.certify(pool)
    values = [m.value for m in at.metric]
    assert f"{pre:,} labels" in values
    assert f"{rep.labels_read:,}" in values
    assert any(v.startswith(f"{cert.lower:,}") for v in values)


def _budget_box(at):
    return next(b for b in at.number_input if b.label.startswith("Your labelling budget"))


def test_budget_below_prelabel_bound_is_ruled_out():
    at = _run("app.py")
    _budget_box(at).set_value(1).run()
    assert any("A budget of 1 is ruled out" in w.value for w in at.warning)


def test_budget_box_belongs_to_the_pool():
    """A budget typed for one pool never shows, clamped or not, on another."""
    at = _run("app.py")
    _budget_box(at).set_value(150).run()
    at.selectbox(key="pool_choice").set_value("Teaching pool (paper Figure 10 protocol)").run()
    box = _budget_box(at)
    assert box.value == 171 // 2 and "n = 171" in box.label
    assert any(f"A budget of {171 // 2} is" in m.value for m in [*at.success, *at.warning])


def test_unlabelled_pool_shows_the_status_of_the_known_labels():
    at = _run("app.py")
    at.selectbox(key="pool_choice").set_value("Breast cancer, unlabelled (annotator)").run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "From the 0 labels known (the pool file's labels)" in text
    assert "nothing is certified yet" in text


def test_teaching_page_renders_three_rules():
    at = _run("views/teach_figure10.py")
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "shared" in text and "separate" in text and "centered" in text


@pytest.mark.parametrize("label", ["Digits, 3 confidence scores (prob_ columns)",
                                   "Breast cancer, unlabelled (annotator)"])
def test_other_samples_load(label):
    at = _run("app.py")
    at.selectbox(key="pool_choice").set_value(label).run()
    assert not at.exception, at.exception
    assert not at.error


def test_what_the_budget_buys():
    """One sentence, the library's (`certlib.what_budget_buys`, also `certlib plan
    --budget`): the tolerance the budget certifies, exactly on a labelled pool."""
    from ui.text import plain

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    full = certlib.replay(pool, policy="adaptive-pair-sum")
    short = certlib.replay(pool, policy="adaptive-pair-sum", budget=60)
    assert full.certified and not short.certified
    at = _run("app.py")
    for budget in (150, 60):
        _budget_box(at).set_value(budget).run()
        want = certlib.what_budget_buys(pool, budget).text(plain)
        assert f"**What your budget buys.** {want}" in [m.value for m in at.markdown]
    assert f"tolerance {float(short.excess):.4g} on AUGRC" in want
    assert f"certifying the exact choice takes {full.labels_read:,} labels" in want


@pytest.mark.parametrize("text", ["[pwn](https://example.com/x)", "![i](https://e.com/i.png)",
                                  "<img src=x onerror=alert(1)>", "www.example.com", "_a_ *b*",
                                  "`tick`", "$x^2$", "a\nb"])
def test_plain_leaves_no_markdown(text):
    """Names from files are inert: either a bare word or a code span whose fence is
    longer than any backtick run inside."""
    from ui.text import plain

    out = plain(text)
    assert out.startswith("`") and out.endswith("`")
    fence = out[: len(out) - len(out.lstrip("`"))]
    assert fence not in out[len(fence):-len(fence)]
    assert plain("naive_bayes") == "naive_bayes" and plain(7) == "7"


def test_budget_boxes_start_above_the_labels_already_known(tmp_path, monkeypatch):
    """On a partly labelled pool the planning budget starts from the labels known (they
    count as read) plus half the unread rows, not at n / 2, which can be below them."""
    import polars as pl

    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    df = pl.read_csv(ROOT / "sample_data" / "demo_binary.csv")
    lab = [v if i < 120 else None for i, v in enumerate(df["label"].to_list())]
    saved = SavedPools().add("partly.csv", df.with_columns(pl.Series("label", lab))
                             .write_csv().encode())
    for script, label in (("app.py", "Your labelling budget"), ("views/budget.py",
                                                                "Budget (labels")):
        at = AppTest.from_file(str(ROOT / script), default_timeout=120)
        at.query_params["pool"] = f"upload:{saved.digest}"
        at.run()
        assert not at.exception, at.exception
        box = next(b for b in at.number_input if b.label.startswith(label))
        assert box.value == 120 + (171 - 120) // 2
        assert not any("below the 120 labels already known" in m.value
                       for m in [*at.success, *at.caption, *at.markdown])


def test_plan_page_counts_the_labels_of_a_project_on_an_unlabelled_pool(tmp_path, monkeypatch):
    """The planning pages count a labelling project's labels as known, the newest project
    by default; the file's labels are one choice away, and the choice is in the address;
    the Label page's list of projects gives each one's status."""
    from certlib.labelling.store import LabelStore

    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "labels.db"))
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    store = LabelStore()
    pid = store.open_project(pool, "Breast cancer, unlabelled (annotator)")
    while not (p := store.progress(pid, pool)).session.done:
        r = p.next_row
        store.append_label(pid, pool.row_ids[r], truth.classes[int(truth.labels[r])], "ana",
                           pool=pool)
    t = p.session.t
    at = _run("app.py")
    at.selectbox(key="pool_choice").set_value("Breast cancer, unlabelled (annotator)").run()
    assert not at.exception, at.exception
    box = at.selectbox(key="known")
    policy = store.projects(pool)[0].policy
    assert box.value == str(pid)
    assert box.format_func(box.value) == (f"project {pid}: {policy}, tau = 0, {t:,} labels "
                                          "read, certified")
    text = " ".join(m.value for m in at.markdown)
    assert (f"**From the {t:,} labels known (project {pid}'s labels):** "
            f"{p.session.selected} is certified") in text
    assert at.query_params["known"] == str(pid)
    assert f"{t:,}" in [m.value for m in at.metric]  # labels known
    box.set_value("file").run()
    text = " ".join(m.value for m in at.markdown)
    assert "**From the 0 labels known (the pool file's labels):** nothing is certified" in text
    assert at.query_params["known"] == "file"
    # the budget map follows: its map counts the project's labels, certified at tau = 0
    budget = AppTest.from_file(str(ROOT / "views" / "budget.py"), default_timeout=120)
    budget.query_params["pool"] = "sample:unlabelled"
    budget.run()
    assert not budget.exception, budget.exception
    assert budget.selectbox(key="known").value == str(pid)
    assert any(f"the {t:,} labels already known certify" in m.value
               for m in budget.markdown), [m.value for m in budget.markdown]
    budget.query_params["known"] = "file"  # a link with the file's labels
    budget = AppTest.from_file(str(ROOT / "views" / "budget.py"), default_timeout=120)
    budget.query_params.update(pool="sample:unlabelled", known="file")
    budget.run()
    assert budget.selectbox(key="known").value == "file"
    assert not any("labels already known certify" in m.value for m in budget.markdown)
    label = AppTest.from_file(str(ROOT / "views" / "label.py"), default_timeout=120)
    label.query_params["pool"] = "sample:unlabelled"
    label.run()
    assert not label.exception, label.exception
    assert any(f"**Project {pid}**" in m.value and "**certified**" in m.value
               for m in label.markdown), [m.value for m in label.markdown]
