"""Label errors on the pages (AppTest): the Label page's label-error margin, review queue,
disagreement and correction; the fragility sentence and the e = 0, 1, 2 table on the
Certificate and Plan and certify pages equal the library's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

import certlib  # noqa: E402
from certlib.labelling.reviews import review_items  # noqa: E402
from certlib.labelling.store import LabelStore  # noqa: E402
from page_support import panel_data, panel_press, panel_result, press_twice, view_button  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def private_store(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "labels.db"))
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    return tmp_path / "labels.db"


@pytest.fixture(scope="module")
def pools():
    return (certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv"),
            certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv"))


def _page(name, **params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "views" / name), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _table(at, first_column):
    return next(d.value for d in at.dataframe if d.value.columns[0] == first_column)


def _check_fragility(at, truth, policy="adaptive-pair-sum"):
    f = certlib.full_pool_fragility(truth)
    assert any(m.value.startswith("**Fragility of the choice itself:**")
               and f"if {f.flips:,} of the {truth.n:,} labels are wrong" in m.value
               for m in at.markdown)
    t = _table(at, "wrong labels survived (e)")
    runs = [certlib.replay(truth, policy=policy, label_errors=e) for e in (0, 1, 2)]
    assert t["labels read"].tolist() == [f"{r.labels_read:,}" for r in runs]
    assert t["margin at stop"].tolist() == [f"{r.margin.flips:,}" for r in runs]
    assert t["status"].tolist() == [r.status for r in runs]
    assert runs[1].labels_read > runs[0].labels_read


def test_certificate_page_fragility_and_table(pools):
    _check_fragility(_page("certificate.py"), pools[1])


def test_plan_page_fragility_and_table(pools):
    at = _page("plan_certify.py")
    assert any(h.value.startswith("4. If some labels are wrong") for h in at.header)
    _check_fragility(at, pools[1])


def _certified(path, pool, truth):
    """A project on ``pool`` labelled by ana with the true labels until it certifies:
    (store, project id, its progress)."""
    store = LabelStore(path)
    pid = store.open_project(pool, "Breast cancer, unlabelled (annotator)")
    while not (p := store.progress(pid, pool)).session.done:
        r = p.next_row
        store.append_label(pid, pool.row_ids[r], truth.classes[int(truth.labels[r])], "ana",
                           pool=pool)
    return store, pid, p


def test_label_page_margin_review_and_correction(private_store, pools):
    pool, truth = pools
    store, pid, p = _certified(private_store, pool, truth)
    m = p.session.label_error_margin()
    at = _page("label.py", project=str(pid), annotator="lead", pool="sample:unlabelled")
    warn = [w.value for w in at.warning if w.value.startswith("**Label errors:**")]
    assert warn and (f"one wrong label among these {len(m.critical_ids):,} of the "
                     f"{m.labels_read:,} rows read would undo the certificate") in warn[0]
    assert "row_id: " + ", ".join(str(r) for r in m.critical_ids) in [t.value for t in at.text]
    # the review action queues exactly those rows
    view_button(at, "queue_review").click().run()
    assert not at.exception, at.exception
    items = review_items(store.events(pid))
    assert [i.row_id for i in items] == list(m.critical_ids)
    assert {i.status for i in items} == {"waiting"}
    # a second annotator answers the first queued row with the other class
    at.text_input(key="annotator").set_value("bob").run()
    first = items[0]
    wrong = truth.classes[1 - truth.class_code(first.label)]
    # the row under review is shown blind (no first label, no model's prediction), with
    # the next row waiting after each answer; a second, stale press (a view the first
    # answer made old) reviews nothing and says so (a quick double press is refused in
    # the browser before it is sent: tests/browser/test_browser_label_errors.py)
    data = panel_data(at, "review_panel")
    assert data["row"]["key"] == str(first.row_id) and data["row"]["table"] is None
    assert data["next"][f"c{pool.class_code(wrong)}"]["row"]["key"] == str(items[1].row_id)
    ok = panel_press(at, f"c{pool.class_code(wrong)}", panel="review_panel")
    assert panel_result(at, ok, "review_panel")["ok"]
    late = panel_press(at, f"c{pool.class_code(wrong)}", panel="review_panel",
                       seq=ok["seq"], row=str(items[1].row_id))
    assert not at.exception, at.exception
    assert [e.row_id for e in store.events(pid) if e.kind == "review"] == [first.row_id]
    assert "Your previous press was saved" in panel_result(at, late, "review_panel")["text"]
    assert any(f"Row_id {first.row_id}: labelled {first.label} by ana, reviewed {wrong} by bob"
               in w.value for w in at.warning)
    # bob can neither adopt his own review nor undo ana's label; the rows still waiting
    # for him keep their labels hidden in the log; reviewed rows are not offered again
    assert view_button(at, f"correct_{first.row_id}").disabled
    # his undo says why it is off (the panel's button title, shown on a press)
    undo = panel_data(at)["undo"]
    assert not undo["enabled"] and "You have no label in force to undo" in undo["help"]
    assert "ana" not in undo["help"]  # nobody else's name: it is not the name to type
    log = _table(at, "seq")
    waiting = {i.row_id for i in items[1:]}
    rows = log["row_id"].map(lambda v: v == v and v is not None and int(v) in waiting)
    shown = log[rows]["label"].astype(str)
    assert len(shown) >= 2 * len(waiting) and set(shown) == {"(hidden)"}
    # the downloads hold the first labels too: hidden while bob has rows to review
    assert not at.get("download_button")
    assert any("downloads are hidden while" in c.value for c in at.caption)
    assert not [b for b in at.button if str(b.key).startswith("queue_review@")]
    assert "Every one of these rows is queued for review or reviewed." in [
        c.value for c in at.caption]
    # ana (who labelled) may undo her own newest label and download the files; she may
    # not keep her own label against the review (someone else decides), bob may
    at.text_input(key="annotator").set_value("ana").run()
    assert view_button(at, f"keep_{first.row_id}").disabled
    assert not view_button(at, f"correct_{first.row_id}").disabled
    assert panel_data(at)["undo"]["enabled"]
    assert len(at.get("download_button")) == 2
    # the lead accepts it: the session replays with the corrected label
    at.text_input(key="annotator").set_value("lead").run()
    view_button(at, f"correct_{first.row_id}").click().run()
    assert not at.exception, at.exception
    prog = store.progress(pid, pool)
    assert prog.events[-1].kind == "correct" and not prog.session.certified
    assert "running" in [mm.value for mm in at.metric]
    assert _table(at, "row_id")["status"].tolist()[0] == "agrees (corrected)"


def test_keep_button_decides_a_disagreement_for_the_label(private_store, pools):
    """The lead keeps the first label against a review: a keep event, the status reads
    "kept", the certificate stands (nothing moved)."""
    pool, truth = pools
    store, pid, p = _certified(private_store, pool, truth)
    rid = p.session.label_error_margin().critical_ids[0]
    store.queue_review(pid, [rid], "ana", pool=pool)
    label = {e.row_id: e.label for e in store.labels(pid)}[rid]
    store.append_review(pid, rid, 1 - label, "bob", pool=pool)
    at = _page("label.py", project=str(pid), annotator="lead", pool="sample:unlabelled")
    assert any(f"Row_id {rid}: labelled {label} by ana, reviewed {1 - label} by bob" in w.value
               for w in at.warning)
    view_button(at, f"keep_{rid}").click().run()
    assert not at.exception, at.exception
    prog = store.progress(pid, pool)
    assert prog.events[-1].kind == "keep" and prog.session.certified
    assert _table(at, "row_id")["status"].tolist() == ["kept"]
    assert not [w for w in at.warning if w.value.startswith(f"Row_id {rid}:")]
    assert any("decided for the label in force (kept): row_id " + str(rid) in c.value
               for c in at.caption)
