"""The labelling page (views/label.py) under Streamlit's AppTest: an annotator labels
the unlabelled sample with the hidden truth until the exact test certifies, and the
store holds every label (the browser test is tests/browser/test_browser_label.py)."""

from __future__ import annotations

import json

import numpy as np
from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

import certlib  # noqa: E402
from certlib.labelling.store import LabelStore, verify_record  # noqa: E402
from page_support import panel_data, panel_press, panel_result, panel_row, press_twice, view_button  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "label.py")


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "labels.db"
    monkeypatch.setenv("CERTLIB_STORE", str(path))
    return path


@pytest.fixture(scope="module")
def pools():
    return (certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv"),
            certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv"))


def _start(annotator="ana", **settings) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.text_input(key="annotator").set_value(annotator)
    for key, value in settings.items():
        at.number_input(key=key).set_value(value)
    view_button(at, "start").click().run()
    assert not at.exception, at.exception
    return at


def _next_row_id(at):
    row = panel_row(at)
    return None if row is None else int(row)


def _truth_of(truth, row_id):
    return int(truth.classes[truth.labels[truth.position(row_id)]])


def test_page_waits_for_start(store_path):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("Start a new project" in i.value for i in at.info)
    assert not store_path.exists() or LabelStore(store_path).projects() == ()


def test_label_until_certified(store_path, pools):
    pool, truth = pools
    at = _start()
    rep = certlib.replay(truth, policy="adaptive-pair-sum")
    clicks = 0
    while (rid := _next_row_id(at)) is not None:
        panel_press(at, f"c{_truth_of(truth, rid)}")
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        clicks += 1
        assert clicks <= pool.n
    assert clicks == rep.labels_read
    assert any("Certified after" in s.value and rep.selected in s.value for s in at.success)
    assert f"{rep.labels_read:,} of {pool.n:,}" in [m.value for m in at.metric]
    downloads = at.get("download_button")  # the evidence record and the labels CSV
    assert len(downloads) == 2 and all(d.proto.ignore_rerun for d in downloads)  # no rerun
    hs = [m.value for m in at.markdown if m.value.startswith("**Hindsight.**")]
    assert hs and f"You read {rep.labels_read:,} labels; " in hs[0]
    assert "would have sufficed in hindsight" in hs[0]

    store = LabelStore(store_path)
    (project,) = store.projects()
    labels = store.labels(project.id)
    assert [lab.row_id for lab in labels] == list(rep.order)
    assert all(lab.annotator == "ana" for lab in labels)
    rec = store.export_record(project.id, pool)
    assert rec["guarantee"]["kind"] == "exact" and rec["selected"] == rep.selected
    assert verify_record(json.loads(json.dumps(rec)), truth).ok


def test_undo_reload_and_stale_click(store_path, pools):
    pool, truth = pools
    at = _start(label_budget=20)
    first = _next_row_id(at)
    panel_press(at, f"c{_truth_of(truth, first)}")
    second = _next_row_id(at)
    panel_press(at, "c0")
    # the label Undo takes back is named before the press (as on the Audit page)
    assert f"Undo takes back your newest label: row_id {second} = 0 (event 2)" in \
        panel_data(at)["undo"]["note"]
    panel_press(at, "undo")
    assert not at.exception
    assert f"Undo takes back your newest label: row_id {first} = " in \
        panel_data(at)["undo"]["note"]
    assert _next_row_id(at) == second
    assert "1 of 171" in [m.value for m in at.metric]

    # a new browser session on the same URL resumes from the store
    again = AppTest.from_file(PAGE, default_timeout=60)
    again.query_params["project"] = at.query_params["project"]
    again.query_params["annotator"] = "bob"
    again.run()
    assert not again.exception, again.exception
    assert "1 of 171" in [m.value for m in again.metric]
    assert "20 labels" in [m.value for m in again.metric]
    assert _next_row_id(again) == second

    # bob labels the row; ana's view is now stale and her click is refused, not lost
    panel_press(again, f"c{_truth_of(truth, second)}")
    late = panel_press(at, "c1")
    text = panel_result(at, late)["text"]
    assert "Someone else (bob) changed this project since the page was drawn" in text
    assert "nothing was saved" in text
    store = LabelStore(store_path)
    (project,) = store.projects()
    assert [e.kind for e in store.events(project.id)] == ["label", "label", "undo", "label"]
    assert [lab.annotator for lab in store.labels(project.id)] == ["ana", "bob"]
    assert "2 of 171" in [m.value for m in at.metric]  # the refused click redrew the page


def test_chart_reference_survives_a_reload(store_path, pools):
    """The bounds chart's reference is fixed per project: a reload (a new session on the
    same address) draws against the same candidate, whatever the best guess is now."""
    pool, truth = pools
    at = _start()
    names = list(pool.names)
    ref_key = f"label_ref_{at.query_params['project'][0]}" \
        if isinstance(at.query_params["project"], list) else \
        f"label_ref_{at.query_params['project']}"
    other = next(c for c in names if c != at.selectbox(key=ref_key).value)
    at.selectbox(key=ref_key).set_value(other).run()
    assert at.query_params["ref"] in (other, [other])
    again = AppTest.from_file(PAGE, default_timeout=60)
    for k in ("project", "ref", "pool"):
        if k in at.query_params:
            again.query_params[k] = at.query_params[k]
    again.run()
    assert not again.exception, again.exception
    assert again.selectbox(key=ref_key).value == other


def test_budget_exhausted_is_reported(store_path, pools):
    pool, truth = pools
    at = _start(label_budget=3)
    for _ in range(3):
        panel_press(at, f"c{_truth_of(truth, _next_row_id(at))}")
    assert _next_row_id(at) is None
    assert any("Budget exhausted after 3 labels" in w.value for w in at.warning)
    assert at.get("download_button")


def test_extend_an_exhausted_budget_and_certify(store_path, pools):
    pool, truth = pools
    rep = certlib.replay(truth, policy="adaptive-pair-sum")
    assert rep.labels_read > 60
    at = _start(label_budget=60)
    while (rid := _next_row_id(at)) is not None:
        panel_press(at, f"c{_truth_of(truth, rid)}")
    assert any("Budget exhausted after 60 labels" in w.value and "Extend budget" in w.value
               for w in at.warning), [w.value for w in at.warning]
    at.number_input(key="extend_budget_to_61").set_value(200)
    press_twice(at, view_button(at, "extend_budget"))  # a double click extends once
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [] or all(
        "Your previous press was saved" in e.value for e in at.error), at.error
    pid = LabelStore(store_path).projects()[0].id
    assert [e.label for e in LabelStore(store_path).events(pid) if e.kind == "budget"] == [200]
    assert "200 labels" in [m.value for m in at.metric]
    assert any("budget 200 labels (extended from 60)" in m.value for m in at.sidebar.markdown)
    clicks = 60
    while (rid := _next_row_id(at)) is not None:  # the same project goes on
        panel_press(at, f"c{_truth_of(truth, rid)}")
        assert not at.exception and not at.error, [e.value for e in at.error]
        clicks += 1
        assert clicks <= pool.n
    assert clicks == rep.labels_read
    assert any("Certified after" in s.value and rep.selected in s.value for s in at.success)

    store = LabelStore(store_path)
    (project,) = store.projects()  # no new project was opened
    assert [lab.row_id for lab in store.labels(project.id)] == list(rep.order)
    budget_events = [e for e in store.events(project.id) if e.kind == "budget"]
    assert [(e.label, e.annotator) for e in budget_events] == [(200, "ana")]
    rec = store.export_record(project.id, pool)
    assert rec["budget"] == 60 and rec["budget_in_force"] == 200
    assert verify_record(json.loads(json.dumps(rec)), truth).ok


def test_remove_the_budget(store_path, pools):
    pool, truth = pools
    at = _start(label_budget=3)
    for _ in range(3):
        panel_press(at, f"c{_truth_of(truth, _next_row_id(at))}")
    assert _next_row_id(at) is None
    at.checkbox(key="remove_budget").check().run()
    view_button(at, "extend_budget").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "none" in [m.value for m in at.metric]
    assert _next_row_id(at) is not None
    assert not [n for n in at.number_input if n.key.startswith("extend_budget_to_")]


def test_a_budget_outside_the_pool_is_shown_not_started_and_a_low_extension_refused(
        store_path, pools):
    """Typed and Start pressed in one go: the box shows the number it brought into 0..n,
    and nothing starts until Start is pressed again (with Streamlit's bounds the box was
    red and Start used the last valid number).  An extension below the minimum extends
    nothing and says so in words (the store's message named its parameter, new_budget);
    the box brings the number up to the minimum, and says so, as every number box does."""
    pool, truth = pools
    for typed, used in ((-5, 0), (100_000, pool.n)):
        at = _start(label_budget=typed)
        assert LabelStore(store_path).projects() == ()
        assert at.number_input(key="label_budget").value == used
        assert any("Nothing was started: a number was outside what its box allows"
                   in w.value for w in at.warning)
        view_button(at, "start").click().run()  # seen, then Start again: the number shown
        (project,) = LabelStore(store_path).projects()
        assert project.budget == (used or None)
        LabelStore(store_path).path.unlink()
    at = _start(label_budget=3)
    (project,) = LabelStore(store_path).projects()
    assert project.budget == 3
    for _ in range(3):
        panel_press(at, f"c{_truth_of(truth, _next_row_id(at))}")
    at.number_input(key="extend_budget_to_4").set_value(2)
    view_button(at, "extend_budget").click().run()  # typed and pressed in one go
    assert any("Nothing was extended: a budget can only grow, to 4 labels or more (the box "
               "held 2)" in e.value for e in at.error), [e.value for e in at.error]
    assert not any("new_budget" in e.value for e in at.error)
    assert [e.kind for e in LabelStore(store_path).events(project.id)] == ["label"] * 3
    assert at.number_input(key="extend_budget_to_4").value == 4  # brought in, and said
    assert any("The new budget: 2 is below the smallest value allowed, so 4 is used"
               in w.value for w in at.sidebar.warning), [w.value for w in at.sidebar.warning]
    view_button(at, "extend_budget").click().run()  # the number shown: extended
    assert [e.kind for e in LabelStore(store_path).events(project.id)] == ["label"] * 3 + \
        ["budget"]
    assert LabelStore(store_path).events(project.id)[-1].label == 4


def test_a_stale_resend_is_refused_and_said(store_path, pools):
    """A press on a view older than the store's (a second tab, or the browser one answer
    behind) saves nothing, and the panel is told that the annotator's own previous press
    made it stale (the browser's own guard refuses a quick double press before it is
    sent: tests/browser/test_browser_label.py)."""
    pool, truth = pools
    at = _start(label_budget=20)
    first = _next_row_id(at)
    panel_press(at, f"c{_truth_of(truth, first)}")
    late = panel_press(at, f"c{1 - _truth_of(truth, first)}", seq=0, row=str(first))
    assert not at.exception, at.exception
    (project,) = LabelStore(store_path).projects()
    assert [lab.row_id for lab in LabelStore(store_path).labels(project.id)] == [first]
    res = panel_result(at, late)
    assert not res["ok"] and "Your previous press was saved" in res["text"], res
    assert "1 of 171" in [m.value for m in at.metric]


def test_answers_resent_with_the_outbox_are_taken_once(store_path, pools):
    """The browser sends every unacknowledged answer with each trigger (Streamlit may drop
    a trigger that arrives while the script runs): an answer already taken is not taken
    again, and the next one is; after a server restart (a fresh session, no memory of
    the presses) an answer already in the store is acknowledged as saved, not refused
    and not saved twice."""
    pool, truth = pools
    at = _start()
    first = _next_row_id(at)
    p1 = panel_press(at, f"c{_truth_of(truth, first)}")
    second = _next_row_id(at)
    p2 = panel_press(at, f"c{_truth_of(truth, second)}", also=[p1])
    assert panel_result(at, p1)["ok"] and panel_result(at, p2)["ok"]
    (project,) = LabelStore(store_path).projects()
    assert [lab.row_id for lab in LabelStore(store_path).labels(project.id)] == [first, second]
    fresh = AppTest.from_file(PAGE, default_timeout=60)
    fresh.query_params["project"] = at.query_params["project"]
    fresh.query_params["annotator"] = "ana"
    fresh.run()
    third = _next_row_id(fresh)
    p3 = panel_press(fresh, f"c{_truth_of(truth, third)}", client="apptest",
                     also=[p2 | {"id": "apptest:resent"}])
    assert panel_result(fresh, {"id": "apptest:resent"})["ok"]
    assert panel_result(fresh, p3)["ok"]
    assert [lab.row_id for lab in LabelStore(store_path).labels(project.id)] == \
        [first, second, third]
    # an answer to a row that is not the one to label is refused, whatever its seq
    bad = panel_press(fresh, "c0", row="999999")
    assert not panel_result(fresh, bad)["ok"]
    assert "not the row to label now" in panel_result(fresh, bad)["text"]


def test_the_panel_sends_the_next_row_of_every_answer(store_path, pools):
    """The speculative rows: for each class and Skip, the row `Session.observe(...)
    .next_row()` gives, as the panel will draw it after that key."""
    pool, truth = pools
    at = _start()
    data = panel_data(at)
    store = LabelStore(store_path)
    (project,) = store.projects()
    prog = store.progress(project.id, pool)
    r = prog.next_row
    assert data["row"]["key"] == str(pool.row_ids[r]) and data["row"]["title"] == \
        f"row_id {pool.row_ids[r]}"
    for i, c in enumerate(pool.classes):
        want = prog.session.observe(r, c).next_row()
        assert data["next"][f"c{i}"]["row"]["key"] == str(pool.row_ids[want])
    want = prog.session.next_row(skip=[r])
    assert data["next"]["skip"]["row"]["key"] == str(pool.row_ids[want])
    assert [a["key"] for a in data["answers"]] == ["0", "1", "S"]
    assert data["undo"]["key"] == "U" and not data["undo"]["enabled"]
    assert data["guard_ms"] == 250


def test_label_buttons_need_an_annotator(store_path):
    at = _start(annotator="")
    assert any("Enter your name" in w.value for w in at.warning)
    assert all(b.disabled for b in at.button if str(b.key).startswith("cls_"))


def test_url_with_unknown_project_or_another_pool_is_refused(store_path):
    for bad in ("99", "abc"):
        at = AppTest.from_file(PAGE, default_timeout=60)
        at.query_params["project"] = bad
        at.run()
        assert not at.exception, at.exception
        assert any(f"project_id {bad}" in w.value.replace("'", "")
                   and "is not in the label store" in w.value and "Start a new project" in w.value
                   for w in at.warning), [w.value for w in at.warning]
        assert not at.get("metric")
        # said once: a visit elsewhere and back forgets the id, with no other note
        _switch_away(at)
        at.run()
        assert not at.exception, at.exception
        assert "project" not in at.query_params and not at.warning
        assert not [i.value for i in at.info if "open when you left" in i.value]
    other = certlib.load_pool(ROOT / "sample_data" / "teaching_k4.csv")
    pid = LabelStore(store_path).open_project(other, "teaching_k4.csv")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["project"] = str(pid)
    at.run()
    assert not at.exception, at.exception
    assert any(f"Project {pid} (`teaching_k4.csv`) was started on another pool file" in w.value
               and "Choose the pool it was started on" in w.value
               and f"(Its pool hash begins {certlib.pool_hash(other)[:12]}.)" in w.value
               and certlib.pool_hash(other) not in w.value  # no 64-character hashes
               for w in at.warning), [w.value for w in at.warning]
    assert not at.get("metric")


def test_a_class_set_declared_after_the_start_is_named_as_the_cause(store_path, tmp_path,
                                                                      monkeypatch, pools):
    """A class set declared on the Pool page changes the pool a project is tied to: the
    page says so in words (not two pool hashes) and how to get the project back."""
    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    pool, _ = pools
    pid = LabelStore(store_path).open_project(pool, "Breast cancer, unlabelled")
    SavedPools().save_class_settings("sample:unlabelled", declared=["1", "0"], names={},
                                     found=[0, 1])
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["project"] = str(pid)
    at.query_params["pool"] = "sample:unlabelled"
    at.run()
    assert not at.exception, at.exception
    assert any("was started on this pool before its class set was declared as 1, 0" in w.value
               and "Clear the declared class set there to resume it" in w.value
               for w in at.warning), [w.value for w in at.warning]
    SavedPools().save_class_settings("sample:unlabelled", declared=None, names={}, found=[0, 1])
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["project"] = str(pid)
    at.query_params["pool"] = "sample:unlabelled"
    at.run()
    assert not at.exception, at.exception
    assert not [w.value for w in at.warning if "was started" in w.value]
    assert at.get("metric")  # the project is open again


def test_skip_moves_on_and_revisit_brings_the_row_back(store_path, pools):
    pool, truth = pools
    at = _start()
    first = _next_row_id(at)
    panel_press(at, "skip")
    assert not at.exception and not at.error, [e.value for e in at.error]
    second = _next_row_id(at)
    assert second not in (None, first)
    assert any("1 skipped row(s)" in c.value for c in at.caption)
    panel_press(at, f"c{_truth_of(truth, second)}")
    store = LabelStore(store_path)
    (project,) = store.projects()
    assert [e.kind for e in store.events(project.id)] == ["skip", "label"]
    view_button(at, "unskip").click().run()
    assert not at.exception and not at.error
    assert _next_row_id(at) == first
    assert [e.kind for e in store.events(project.id)] == ["skip", "label", "unskip"]
    assert verify_record(store.export_record(project.id, pool), pool).ok


def test_extra_columns_by_type_and_images_only_inside_the_pool_folder(tmp_path):
    from ui.label_panel import image_in_folder, split_extra

    folder = tmp_path / "pool"
    (folder / "img").mkdir(parents=True)
    (folder / "img" / "a.png").write_bytes(b"\x89PNG")
    (tmp_path / "outside.png").write_bytes(b"\x89PNG")
    (folder / "link.png").symlink_to(tmp_path / "outside.png")
    assert image_in_folder("img/a.png", folder) == (folder / "img" / "a.png").resolve()
    assert image_in_folder(" img/A.png ".replace("A", "a"), folder) is not None
    for bad in ("../outside.png", "img/../../outside.png", str(tmp_path / "outside.png"),
                "http://example.com/a.png", "file:img/a.png", "C:\\pool\\a.png",
                "img\\..\\..\\outside.png", "link.png", "img/missing.png", "img/a.txt", 3):
        assert image_in_folder(bad, folder) is None, bad
    pool = certlib.Pool.from_arrays(
        [[0, 1], [1, 0]], [[2, 1], [1, 2]], names=["A", "B"],
        extra={"size": [1.5, 2], "note": ["**bold** [x](http://x)", None],
               "picture": ["img/a.png", "../outside.png"]})
    assert split_extra(pool, 0, folder) == (
        {"size": 1.5}, {"picture": (folder / "img" / "a.png").resolve()},
        {"note": "**bold** [x](http://x)"})
    assert split_extra(pool, 1, folder) == ({"size": 2}, {}, {"picture": "../outside.png"})


def _partly_labelled(tmp_path, monkeypatch, known=60):
    """The demo pool with its first ``known`` labels kept, saved as an upload."""
    import polars as pl

    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    df = pl.read_csv(ROOT / "sample_data" / "demo_binary.csv")
    lab = [v if i < known else None for i, v in enumerate(df["label"].to_list())]
    data = df.with_columns(pl.Series("label", lab)).write_csv().encode()
    saved = SavedPools().add("partly.csv", data)
    return f"upload:{saved.digest}", certlib.load_pool(saved.path)


def test_a_partly_labelled_file_starts_from_its_labels(store_path, tmp_path, monkeypatch,
                                                         pools):
    """The file's labels count as read (as on the planning pages): the policy asks only
    for unlabelled rows, and the evidence record, which lists them, verifies."""
    _, truth = pools
    ref, pool = _partly_labelled(tmp_path, monkeypatch)
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["pool"] = ref
    at.run()
    assert at.checkbox(key="label_from_file").value  # on by default
    at.text_input(key="annotator").set_value("ana")
    view_button(at, "start").click().run()
    assert not at.exception, at.exception
    assert "60 of 171" in [m.value for m in at.metric]
    assert any("60 of the labels read come from the pool file" in c.value for c in at.caption)
    asked = []
    while (rid := _next_row_id(at)) is not None:
        asked.append(rid)
        panel_press(at, f"c{_truth_of(truth, rid)}")
        assert not at.exception and not at.error, [e.value for e in at.error]
    assert asked and all(pool.labels[pool.position(r)] < 0 for r in asked)
    store = LabelStore(store_path)
    (project,) = store.projects()
    rec = store.export_record(project.id, pool)
    assert [lab["annotator"] for lab in rec["labels"]][:60] == ["(pool file)"] * 60
    assert rec["labels_read"] == 60 + len(asked)
    assert verify_record(json.loads(json.dumps(rec)), pool).ok
    assert verify_record(json.loads(json.dumps(rec)), truth).ok
    panel_press(at, "undo")  # the newest label is ana's: it goes
    assert len(store.labels(project.id)) == 60 + len(asked) - 1


def test_a_budget_within_the_files_labels_is_refused_before_start(store_path, tmp_path,
                                                                    monkeypatch):
    ref, _ = _partly_labelled(tmp_path, monkeypatch)
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["pool"] = ref
    at.run()
    at.text_input(key="annotator").set_value("ana")
    at.number_input(key="label_budget").set_value(50).run()
    assert any("does not exceed the 60 labels in the file" in w.value for w in at.warning)
    view_button(at, "start").click().run()
    assert any("does not exceed the 60 labels" in e.value for e in at.error)
    assert LabelStore(store_path).projects() == ()
    at.checkbox(key="label_from_file").uncheck().run()  # from scratch: 50 is a budget
    view_button(at, "start").click().run()
    assert not at.error, [e.value for e in at.error]
    assert "0 of 171" in [m.value for m in at.metric]


def test_existing_projects_are_listed_and_a_changed_file_is_named(store_path, tmp_path,
                                                                    monkeypatch, pools):
    """Projects on the pool are listed with an Open button (one started from nothing on
    a partly labelled file is not resumed by the ticked box); a project whose file labels
    changed since it started says so."""
    _, truth = pools
    ref, pool = _partly_labelled(tmp_path, monkeypatch)
    store = LabelStore(store_path)
    old = store.open_project(pool, "partly.csv")  # started from nothing, one label
    r = store.session(old, pool).next_row()
    store.append_label(old, pool.row_ids[r], _truth_of(truth, pool.row_ids[r]), "ana",
                       pool=pool)
    seeded = store.open_project(truth.with_labels(np.where(np.arange(truth.n) < 50,
                                                           truth.labels, -1)),
                                "partly.csv", from_file=True)  # 50 labels, not the 60
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["pool"] = ref
    at.run()
    text = " ".join(m.value for m in at.markdown)
    assert f"**Project {old}** on `partly.csv`" in text and "none; 1 label" in text
    assert f"**Project {seeded}**" in text and "50 labels (50 from the pool file)" in text
    at.button(key=f"open_project_{seeded}").click().run()
    assert not at.exception, at.exception
    assert at.query_params["project"] == str(seeded)
    assert "50 of 171" in [m.value for m in at.metric]
    assert any("started from 50 labels of the pool file; the file now holds 60, and 10 "
               "row(s) differ" in w.value for w in at.warning), [w.value for w in at.warning]


def _switch_away(at):
    """What a visit to another page and back does to this page: Streamlit empties the
    address (the pool comes back from the session, as every page writes it)."""
    pool = at.query_params.get("pool")
    for k in list(at.query_params):
        del at.query_params[k]
    if pool is not None:
        at.query_params["pool"] = pool


def test_a_visit_elsewhere_keeps_the_open_project(store_path, pools):
    at = _start()
    pid = at.query_params["project"]
    panel_press(at, "c0")
    assert "1 of 171" in at.get("metric")[0].proto.body
    _switch_away(at)
    assert "project" not in at.query_params
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["project"] == pid  # back from the session, into the address
    assert at.get("metric")
    assert not [i.value for i in at.info if "open when you left" in i.value]
    at.button(key="new_project").click().run()  # closed: a visit elsewhere keeps it closed
    _switch_away(at)
    at.run()
    assert "project" not in at.query_params and not at.get("metric")


def test_a_project_kept_for_a_visit_closes_when_the_pool_changed(store_path, pools):
    at = _start()
    pid = at.query_params["project"]
    _switch_away(at)
    at.session_state["pool_ref"] = "sample:teaching"  # another pool chosen on another page
    at.run()
    assert not at.exception, at.exception
    assert "project" not in at.query_params and not at.get("metric")
    assert any(f"Project {pid}, open when you left this page, was started on another pool"
               in i.value for i in at.info), [i.value for i in at.info]
    assert not at.warning  # not the mismatch warning of an address naming the project


def test_a_press_on_a_view_your_own_press_made_stale_is_not_blamed_on_someone_else(
        store_path, pools):
    """A quick second key press, or a second tab of the same annotator: the first press
    was saved, the second one is refused, and the page says it was the annotator's own
    previous press (it said "someone else" after a double press)."""
    pool, truth = pools
    at = _start()
    other_tab = AppTest.from_file(PAGE, default_timeout=60)
    other_tab.query_params["project"] = at.query_params["project"]
    other_tab.query_params["annotator"] = "Ana "  # the same annotator, typed otherwise
    other_tab.run()
    first = _next_row_id(other_tab)
    panel_press(other_tab, f"c{_truth_of(truth, first)}")
    late = panel_press(at, f"c{1 - _truth_of(truth, first)}")
    shown = [panel_result(at, late)["text"]]
    assert any("Your previous press was saved" in v and "saved nothing" in v for v in shown)
    assert not any("Someone else" in v for v in shown), shown
    (project,) = LabelStore(store_path).projects()
    assert [lab.row_id for lab in LabelStore(store_path).labels(project.id)] == [first]


def test_a_stray_class_is_named_before_a_project_starts(store_path, tmp_path, monkeypatch):
    """A label 0.5 in a 0/1 pool (a typo) would be a class button of its own: the page
    names it, its row and column before Start."""
    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    text = (ROOT / "sample_data" / "demo_binary.csv").read_text().splitlines()
    head = text[0].split(",")
    cells = text[3].split(",")
    cells[head.index("label")] = "0.5"
    text[3] = ",".join(cells)
    saved = SavedPools(tmp_path / "data").add("typo.csv", "\n".join(text).encode())
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["pool"] = f"upload:{saved.digest}"
    at.run()
    assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith(f"Class 0.5 appears on only 1 of 171 rows (0.58%): the label of "
                              f"row_id {cells[head.index('row_id')]}, predicted by no "
                              "candidate."), warning


def test_new_project_always_starts_one_and_resume_names_the_project(store_path, pools):
    """After *New project*, *Start a new project* with the same settings starts another
    project; the project those settings match has its own button, which names it, says
    where it stands and opens it (that one, whatever was started meanwhile)."""
    at = _start()
    panel_press(at, "c1")
    (first,) = LabelStore(store_path).projects()
    at.button(key="new_project").click().run()
    resume = view_button(at, "resume_project")
    assert resume.label == f"Resume project {first.id} (1 label read, running)"
    view_button(at, "start").click().run()
    assert not at.exception, at.exception
    store = LabelStore(store_path)
    second = store.projects()[-1]
    assert [p.id for p in store.projects()] == [first.id, second.id]
    assert at.query_params["project"] == str(second.id)
    assert "0 of 171" in [m.value for m in at.metric]
    at.button(key="new_project").click().run()
    # the newest project with these settings is the one offered
    assert view_button(at, "resume_project").label.startswith(f"Resume project {second.id} ")
    at.number_input(key="label_seed").set_value(7).run()  # other settings: nothing to resume
    assert not [b for b in at.button if str(b.key).startswith("resume_project")]
    at.number_input(key="label_seed").set_value(0).run()
    resume = view_button(at, "resume_project")
    # someone starts another project with these settings before the press arrives: the
    # press opens the project its button named
    third = store.create_project(pools[0], "other", budget=None)
    resume.click().run()
    assert at.query_params["project"] == str(second.id)
    assert [p.id for p in store.projects()] == [first.id, second.id, third]


def test_a_double_press_on_start_starts_one_project(store_path):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.text_input(key="annotator").set_value("ana").run()
    press_twice(at, view_button(at, "start"))
    assert not at.exception, at.exception
    assert len(LabelStore(store_path).projects()) == 1


def _forecast_caption(at, tries=600):
    """The live forecast's caption once a finished forecast is shown (it is made in a
    worker process at the lowest priority: on a busy machine it waits its turn)."""
    import time

    for _ in range(tries):
        found = [c.value for c in at.caption if c.value.startswith("Forecast: about")]
        if found and "being computed" not in found[0]:
            return found[0]
        time.sleep(0.2)
        at.run()
    raise AssertionError([c.value for c in at.caption])


def test_the_label_page_forecasts_the_labels_left_as_the_planning_pages_do(store_path, pools):
    """After each label the page shows how many more the policy is forecast to read,
    from the labels read so far: the forecast `certlib.forecast` makes of the pool with
    the project's labels (the planning pages' and `certlib plan --project`'s)."""
    pool, truth = pools
    at = _start()
    for _ in range(5):
        rid = _next_row_id(at)
        panel_press(at, f"c{_truth_of(truth, rid)}")
    text = _forecast_caption(at)
    store = LabelStore(store_path)
    (project,) = store.projects()
    prog = store.progress(project.id, pool)
    f = certlib.forecast(pool.with_labels(prog.session.label_codes), policy=project.policy,
                         tolerance=project.tolerance, draws=200, seed=project.seed)
    lo, hi = f.interval
    med = f.quantiles[0.5]
    assert text.startswith(f"Forecast: about {med - 5:,} more labels (80% between "
                           f"{lo - 5:,} and {hi - 5:,} more; {med:,} in total)"), text
