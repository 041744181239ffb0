"""The Audit page (views/audit.py) under Streamlit's AppTest: start an audit on the
shipped sample with its labels hidden, label the queue with the held-back truth until a
verdict, and check the numbers shown against `certlib.audit.audit` (the browser test is
tests/browser/test_browser_audit.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

from certlib.audit import audit  # noqa: E402
from certlib.audit.store import AuditStore  # noqa: E402
from certlib.audit.record import verify_record  # noqa: E402
from certlib.labelling.store import StoreError  # noqa: E402
from page_support import panel_data, panel_press, panel_result, panel_row  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "audit.py")
SAMPLE = pl.read_csv(ROOT / "sample_data" / "audit_stream.csv")


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "labels.db"
    monkeypatch.setenv("CERTLIB_STORE", str(path))
    return path


def _start(annotator="ana", **settings) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.text_input(key="audit_annotator").set_value(annotator)
    for key, value in settings.items():
        for kind in ("number_input", "selectbox", "checkbox", "text_input"):
            found = [w for w in at.get(kind) if w.key == key]
            if found:
                found[0].set_value(value)
                break
        else:
            raise KeyError(key)
    at.button(key="audit_start").click().run()
    assert not at.exception, at.exception
    return at


def _next_item(at):
    row = panel_row(at, "audit_panel")
    return None if row is None else int(row)


def _undo(at) -> dict:
    return panel_data(at, "audit_panel")["undo"]


def _answer(at, value) -> str:
    """The panel's answer id for the class ``value`` (the classes are the stream's)."""
    return next(a["id"] for a in panel_data(at, "audit_panel")["answers"]
                if a["value"] == str(value))


def _metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def test_page_waits_for_start_with_the_form_in_the_main_area(store_path):
    """No audit open: the start form is the main area (in the sidebar it sat below the
    fold beside an empty page); the sidebar keeps the annotator's name."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("Start an audit on the shipped sample" in i.value for i in at.main.info)
    assert AuditStore(store_path).projects() == ()
    main = {w.key for kind in ("button", "radio", "number_input", "selectbox", "checkbox",
                               "text_input") for w in at.main.get(kind)}
    assert {"audit_start", "audit_src", "audit_eps", "audit_delta", "audit_pi",
            "audit_judge", "audit_slices", "audit_first", "audit_hide"} <= main, main
    side = [w.key for kind in ("button", "radio", "number_input", "selectbox", "checkbox")
            for w in at.sidebar.get(kind)]
    assert not side, side
    assert [t.key for t in at.sidebar.text_input] == ["audit_annotator"]
    # a running audit is opened from the main area too
    store = AuditStore(store_path)
    pid = store.create(epsilon=0.03, name="nightly")
    store.append_batch(pid, SAMPLE[:100].drop("label"), who="pipeline")
    at.run()
    assert [b.key for b in at.main.button] == ["audit_open", "audit_start"]


def test_a_project_on_the_betting_cs_says_so(store_path):
    """The page starts audits on PrPl-EB (the betting CS recomputes too slowly for a page
    run per key press); a project made in Python with it opens and says which it runs."""
    store = AuditStore(store_path)
    pid = store.create(epsilon=0.03, confidence="betting")
    store.append_batch(pid, SAMPLE[:600].drop("label"), who="pipeline")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["audit"] = str(pid)
    at.run()
    assert not at.exception, at.exception
    assert any("Tier 1 on the betting CS" in c.value for c in at.caption)
    assert store.status(pid).result.config.confidence == "betting"


def test_label_the_hidden_sample_until_safe(store_path):
    at = _start()
    truth = SAMPLE["label"].to_list()
    store = AuditStore(store_path)
    (project,) = store.projects()
    assert [b.n_items for b in store.batches(project.id)] == [2500]
    clicks = 0
    while True:
        item = _next_item(at)
        if item is None:
            if any("Safe by Tier 1" in s.value for s in at.success):
                break
            at.button(key="audit_next").click().run()  # append the next sample items
            assert not at.exception, at.exception
            continue
        if clicks == 0:
            _check_content(panel_data(at, "audit_panel")["row"], item)
        panel_press(at, _answer(at, truth[item]), panel="audit_panel")
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        clicks += 1
        last = item
        assert clicks < 200
    n = store.status(project.id).items
    ref = audit(SAMPLE["pred_incumbent"].to_numpy()[:n], SAMPLE["pred_candidate"].to_numpy()[:n],
                SAMPLE["label"].to_numpy()[:n], epsilon=0.03)
    assert ref.verdict == "safe" and ref.tier == 1 and clicks == ref.labels_used
    assert _metric(at, "labels used") == f"{ref.labels_used:,}"
    assert _metric(at, "items seen") == f"{ref.stopping_time:,} of {n:,}"
    banner = next(s.value for s in at.success if "Safe by Tier 1" in s.value)
    assert f"at item {ref.stopping_time:,} after {ref.labels_used} labels" in banner
    # the upper end is rounded up, with decimals enough to read below epsilon
    shown = float(re.search(r"Delta <= ([0-9.]+) < epsilon = 0.03", banner).group(1))
    assert ref.delta_interval[1] <= shown < 0.03 and shown - ref.delta_interval[1] < 1e-4
    # both intervals as numbers, each enclosing the library's (what `certlib audit` prints)
    (said,) = [c.value for c in at.caption if c.value.startswith("At item ")]
    ends = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", said.split("probability")[0])]
    (r_lo, r_hi), (d_lo, d_hi) = ref.rho_interval, ref.delta_interval
    assert ends[0] <= r_lo <= r_hi <= ends[1] and ends[1] - ends[0] < r_hi - r_lo + 2e-4, said
    assert ends[2] <= d_lo <= d_hi <= ends[3] and ends[3] - ends[2] < d_hi - d_lo + 2e-4, said
    assert f"At item {ref.stopping_time:,}: rho" in said and "at least 0.95" in said
    # baselines on the same items, with the sample's held-back labels
    base = next(d.value for d in at.dataframe if "method" in d.value.columns)
    uniform = base.set_index("method").loc["uniform labelling"]
    assert uniform["verdict"] in ("safe", "continue") and uniform["labels"] > ref.labels_used
    downloads = at.get("download_button")
    # a download click must not rerun the page: the rerun renews the deferred file ids,
    # and a second download clicked during it got nothing (CI failure, stop 22)
    assert len(downloads) == 2 and all(d.proto.ignore_rerun for d in downloads)
    rec = store.record(project.id)
    f, g, y, _, _, _ = store.stream(project.id)
    assert verify_record(rec, f, g, y).ok and rec["labels_used"] == ref.labels_used
    # undo: the label that gave the verdict goes back to the head of the queue
    panel_press(at, "undo", panel="audit_panel")
    assert not at.exception, at.exception
    assert any("Continue" in i.value for i in at.info)
    assert _next_item(at) == last and _metric(at, "labels used") == f"{ref.labels_used - 1}"


def _check_content(row, item):
    """A queued sample item shows its content as the Label page shows a row's: the
    digit's image (from sample_data/), the other columns as text and numbers; the
    routing lines below; never the label."""
    import base64

    png = (ROOT / "sample_data" / SAMPLE["image"][item]).read_bytes()
    assert row["images"] == [["image", "data:image/png;base64,"
                              + base64.b64encode(png).decode()]]
    fields = dict(row["fields"])
    assert fields == {"judge": f"{SAMPLE['judge'][item]:,.6g}", "slice": SAMPLE["slice"][item]}
    (meta,) = row["meta"]  # the item's place in the stream, not its id, said as such
    assert meta[0] == "position" and meta[1].startswith(f"item {item + 1:,} of the stream")
    assert "label" not in fields and row["table"]["rows"] == [
        ["incumbent", str(SAMPLE["pred_incumbent"][item])],
        ["candidate", str(SAMPLE["pred_candidate"][item])]]


def test_an_uploaded_items_content_is_shown_text_and_image(store_path, tmp_path, monkeypatch):
    """An uploaded stream's other columns are the item's content: a text column as text,
    a number as a number, a relative image path inside the saved-pools folder (where the
    Label page looks for an uploaded pool's images) as the image; a path outside it as
    text."""
    import base64

    data = tmp_path / "data"
    monkeypatch.setenv("CERTLIB_DATA", str(data))
    (data / "shots").mkdir(parents=True)
    png = (ROOT / "sample_data" / "digits_images" / "0.png").read_bytes()
    (data / "shots" / "a.png").write_bytes(png)
    n = 40
    csv = pl.DataFrame({
        "item_id": list(range(n)), "pred_incumbent": [i % 2 for i in range(n)],
        "pred_candidate": [0] * n,
        "review": [f"text of item {i}" for i in range(n)],
        "stars": [i / 8 for i in range(n)],
        "photo": ["shots/a.png"] * n,
        "elsewhere": ["../shots/a.png"] * n,  # leaves the folder: never read
    }).write_csv().encode()
    at = _upload_start(csv)
    data = panel_data(at, "audit_panel")
    views = [data["row"]] + [v["row"] for v in data["next"].values() if v["row"] is not None]
    assert len(views) > 1  # the items drawn ahead carry their content too
    for row in views:
        i = int(row["key"])
        fields = dict(row["fields"])
        assert fields == {"stars": f"{i / 8:,.6g}", "review": f"text of item {i}",
                          "elsewhere": "../shots/a.png"}, fields
        assert row["images"] == [["photo", "data:image/png;base64,"
                                  + base64.b64encode(png).decode()]]
        assert row["meta"][0][0] == "position"


def test_slices_windows_and_chain_on_the_labelled_sample(store_path):
    at = _start(audit_hide=False, audit_slices="slice", audit_window=1000,
                audit_chain="ranker", audit_first=6000)
    store = AuditStore(store_path)
    (project,) = store.projects()
    assert project.chain_k == 1 and project.window == 1000
    ref = audit(SAMPLE["pred_incumbent"].to_numpy()[:6000],
                SAMPLE["pred_candidate"].to_numpy()[:6000], SAMPLE["label"].to_numpy()[:6000],
                epsilon=0.03, delta=0.05 * 6 / np.pi ** 2, slices=SAMPLE["slice"].to_numpy()[:6000])
    frames = {tuple(d.value.columns)[0]: d.value for d in at.dataframe}
    sl = frames["slice"]
    assert list(sl["slice"]) == [s.slice for s in ref.slices]
    assert list(sl["verdict"]) == [s.verdict for s in ref.slices]
    assert list(sl["labels"]) == [s.labels_used for s in ref.slices]
    # the shown intervals hold the true ones and keep each verdict's side of 0 and
    # epsilon (rounded to nearest, 0.0299982 showed as +0.0300 beside "safe")
    for shown, s in zip(sl["Delta interval"], ref.slices):
        lo, hi = (float(x) for x in shown.strip("[]").split(","))
        assert lo <= s.delta_interval[0] and hi >= s.delta_interval[1], (shown, s)
        assert s.verdict != "safe" or hi < 0.03, (shown, s)
        assert s.verdict != "regression" or lo > 0, (shown, s)
    assert any("simultaneous coverage" in c.value for c in at.caption)
    assert len(frames["items"]) == 6  # windows of 1,000 items
    assert list(frames["k"]["verdict"]) == [ref.verdict]
    assert _metric(at, "queue") == "0"   # every needed label came with the stream
    # the banner counts the labels paid by the verdict item; the slices paid the rest
    # later (it gave the total as if the verdict had needed them all)
    assert ref.slices and ref.verdict != "continue"
    by = sum(e.t <= ref.stopping_time for e in ref.trace)
    assert by < ref.labels_used
    banner = " ".join(m.value for m in list(at.success) + list(at.error))
    assert f"at item {ref.stopping_time:,} after {by:,} labels" in banner, banner
    assert f"({ref.labels_used - by:,} more were paid after it" in banner, banner


def test_second_annotator_is_refused_not_double_counted(store_path):
    at = _start()
    item = _next_item(at)
    other = AuditStore(store_path)
    truth = SAMPLE["label"].to_list()
    other.label(1, item, truth[item], "bo")  # bo was first, ana's view is stale
    late = panel_press(at, _answer(at, (truth[item] + 1) % 10), panel="audit_panel")
    assert not at.exception, at.exception
    # ana's press was made on the view before bo's label: refused as stale, naming bo
    text = panel_result(at, late, "audit_panel")["text"]
    assert "Someone else (bo) changed this project" in text and "check the item" in text
    events = other.events(1)
    assert [(e.kind, e.annotator) for e in events] == [("label", "bo")]
    assert json.dumps(events[0].label) == str(truth[item])


def _upload(csv: bytes, name="traffic.csv") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.text_input(key="audit_annotator").set_value("ana")
    at.radio(key="audit_src").set_value("Upload a stream").run()
    at.file_uploader(key="audit_upload").set_value((name, csv, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def _upload_start(csv: bytes, name="traffic.csv") -> AppTest:
    at = _upload(csv, name)
    at.button(key="audit_start").click().run()
    assert not at.exception, at.exception
    return at


def test_malformed_upload_is_refused_whole_and_leaves_no_project(store_path):
    """The whole check runs on upload: one message, and Start stays disabled (it was
    enabled, and pressing it showed the message twice)."""
    bad = b"item_id,pred_incumbent,pred_candidate\n1,0,1\n2,0,\n3,1,1\n"
    at = _upload(bad)
    assert at.button(key="audit_start").disabled

    def once_each_side():  # once, by the uploader in the main area (in sight)
        side, main = [e.value for e in at.sidebar.error], [e.value for e in at.main.error]
        assert not side and len(main) == 1, (side, main)
        assert main[0].startswith("The uploaded stream cannot start an audit: "), main
        return main[0]

    assert "column `pred_candidate`, data row 2 (item_id 2)" in once_each_side()
    for data, message in ((b"\x89PNG\r\n\x1a\n\x00\x00", "traffic.csv"),
                          (b"item_id,pred_incumbent,pred_candidate\n1,0,1\n1,0,0\n",
                           "repeats the id '1' of data row 1")):
        at.file_uploader(key="audit_upload").set_value(("traffic.csv", data, "text/csv")).run()
        assert message in once_each_side()
        assert at.button(key="audit_start").disabled
    at.file_uploader(key="audit_upload").set_value(
        ("traffic.csv", SAMPLE[:50].write_csv().encode(), "text/csv")).run()
    assert not at.error and not at.button(key="audit_start").disabled
    assert AuditStore(store_path).projects() == ()


def test_upload_then_repeated_batch_refused_then_record_verifies(store_path, tmp_path):
    head = SAMPLE[:3000]
    at = _upload_start(head.write_csv().encode())
    store = AuditStore(store_path)
    (project,) = store.projects()
    assert store.status(project.id).items == 3000  # the whole upload is the first batch
    at.file_uploader(key="audit_batch_1").set_value(
        ("again.csv", head[:100].write_csv().encode(), "text/csv")).run()
    at.button(key="audit_append").click().run()
    assert not at.exception, at.exception
    assert any("item_id 0 (data row 1) is already in audit project 1" in e.value for e in at.error)
    assert [b.n_items for b in store.batches(project.id)] == [3000]
    store.export(project.id, tmp_path / "r.json", tmp_path / "s.csv")
    at.file_uploader(key="audit_vrec").set_value(
        ("r.json", (tmp_path / "r.json").read_bytes(), "application/json"))
    at.file_uploader(key="audit_vstream").set_value(
        ("s.csv", (tmp_path / "s.csv").read_bytes(), "text/csv")).run()
    assert not at.exception, at.exception
    verdict = store.status(project.id).result.verdict
    assert any(f"Verified: every interval, the verdict ({verdict})" in s.value
               for s in at.success)
    # errors name the uploaded files, not the temporary copies the page reads
    at.file_uploader(key="audit_vrec").set_value(
        ("rec_bad.json", b'{"not": "a record"}', "application/json")).run()
    assert "record file 'rec_bad.json' is not a certlib audit record (expected \"kind\": " \
        '"certlib-audit")' in at.error[-1].value and "tmp" not in at.error[-1].value
    at.file_uploader(key="audit_vrec").set_value(
        ("r.json", (tmp_path / "r.json").read_bytes(), "application/json"))
    at.file_uploader(key="audit_vstream").set_value(
        ("my stream.csv", b"item_id,pred_incumbent\n1,0\n", "text/csv")).run()
    assert "stream file 'my stream.csv' lacks the column `pred_candidate`" in at.error[-1].value
    # a stricter epsilon written into the record is a mismatch, not "Verified"
    rec = json.loads((tmp_path / "r.json").read_text())
    rec["epsilon"] = 0.01
    at.file_uploader(key="audit_vrec").set_value(
        ("r.json", json.dumps(rec).encode(), "application/json"))
    at.file_uploader(key="audit_vstream").set_value(
        ("s.csv", (tmp_path / "s.csv").read_bytes(), "text/csv")).run()
    assert not any("Verified" in s.value for s in at.success)
    assert "`epsilon`: record says 0.01, recomputed 0.03" in at.error[-1].value


def test_open_a_running_audit_from_the_list(store_path):
    store = AuditStore(store_path)
    pid = store.create(epsilon=0.03, name="nightly")
    store.append_batch(pid, SAMPLE[:3000].drop("label"), who="pipeline")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert at.selectbox(key="audit_pick").value == pid
    at.button(key="audit_open").click().run()
    assert not at.exception, at.exception
    shown = at.query_params["audit"]  # AppTest before streamlit 1.67 gives a list
    assert (shown[-1] if isinstance(shown, list) else shown) == str(pid)  # a reload reopens it
    s = store.status(pid)
    assert _metric(at, "queue") == f"{len(s.queue):,}" and _next_item(at) == s.queue[0].pos
    assert _metric(at, "items seen") == f"{s.result.items_seen:,} of 3,000"


def test_a_setting_outside_its_range_is_shown_and_nothing_starts(store_path):
    """epsilon 5 typed and Start pressed at once: the box holds 1, nothing starts; Start
    again starts with the epsilon shown (Streamlit's bound used the last valid one)."""
    at = _start(audit_eps=5.0)
    assert AuditStore(store_path).projects() == ()
    assert at.number_input(key="audit_eps").value == 1.0
    assert any("epsilon: 5 is above the largest value allowed, so 1 is used" in w.value
               for w in at.main.warning)  # by its box
    assert any("Nothing was started" in w.value for w in at.main.warning)  # in sight
    at.button(key="audit_start").click().run()
    assert not at.exception, at.exception
    (project,) = AuditStore(store_path).projects()
    assert project.config.epsilon == 1.0
    # the same for the items of a sample batch: 0 typed, Append pressed at once
    at.number_input(key="audit_step").set_value(0)
    at.button(key="audit_next").click().run()
    assert not at.exception, at.exception
    assert at.number_input(key="audit_step").value == 1
    assert any("Nothing was appended" in w.value for w in at.warning)
    assert [b.n_items for b in AuditStore(store_path).batches(project.id)] == [2500]


def test_a_label_no_model_predicts_is_named_on_the_page(store_path):
    store = AuditStore(store_path)
    pid = store.create(epsilon=0.03)
    batch = SAMPLE[:300].with_columns(
        pl.when(pl.col("row_id") == 17).then(10).otherwise(pl.col("label")).alias("label"))
    store.append_batch(pid, batch, who="pipeline")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["audit"] = str(pid)
    at.run()
    assert not at.exception, at.exception
    assert any("Label 10 is on 1 item (first: item_id 17) but neither model predicts it"
               in w.value for w in at.warning), [w.value for w in at.warning]


def test_a_visit_elsewhere_keeps_the_open_audit_and_close_forgets_it(store_path):
    """Streamlit empties the address on a page switch; the open audit comes back from the
    session (and a closed one stays closed)."""
    store = AuditStore(store_path)
    pid = store.create(epsilon=0.03)
    store.append_batch(pid, SAMPLE[:3000].drop("label"), who="pipeline")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.button(key="audit_open").click().run()
    assert not at.exception, at.exception
    for k in list(at.query_params):  # a visit to another page, and back
        del at.query_params[k]
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["audit"] == str(pid)
    s = store.status(pid)
    assert _metric(at, "items seen") == f"{s.result.items_seen:,} of 3,000"
    assert _next_item(at) == s.queue[0].pos
    at.button(key="audit_close").click().run()
    for k in list(at.query_params):
        del at.query_params[k]
    at.run()
    assert "audit" not in at.query_params and at.button(key="audit_open")


def test_outward_interval_holds_the_interval_and_keeps_each_side_of_the_marks():
    from hypothesis import given, settings
    from hypothesis import strategies as hs

    from ui.text import outward_end, outward_interval

    # a slice: rounded to nearest it read +0.0300 beside "safe" at 0.03
    assert outward_interval(-0.0578, 0.0299982, marks=(0.0, 0.03)) == "[-0.057800, +0.029999]"
    assert outward_interval(0.01, 0.02) == "[+0.0100, +0.0200]"
    # one end, as the verdict banner shows it (the banner had its own copy of the rule)
    assert outward_end(0.0299105, "upper", (0.03,)) == "0.02992"
    assert outward_end(0.0012, "lower", (0.0,)) == "0.0012"
    assert outward_end(-8.4e-05, "upper", (0.0188,)) == "0.0000"  # never "-0.0000"

    @settings(max_examples=300, deadline=None)
    @given(hs.floats(-1, 1), hs.floats(0, 1), hs.floats(0.001, 0.5))
    def prop(lo, width, eps):
        hi = lo + width
        shown = outward_interval(lo, hi, marks=(0.0, eps))
        low, high = (float(x) for x in shown.strip("[]").split(","))
        assert low <= lo and high >= hi
        for m in (0.0, eps):  # a side more than 1e-8 away is kept
            assert not (lo > m + 1e-8 and low <= m), (shown, lo, m)
            assert not (hi < m - 1e-8 and high >= m), (shown, hi, m)

    prop()


def test_the_label_undo_takes_back_is_named(store_path):
    at = _start()
    item = _next_item(at)
    truth = SAMPLE["label"].to_list()
    panel_press(at, _answer(at, truth[item]), panel="audit_panel")
    assert not at.exception, at.exception
    assert f"item_id {item} = {truth[item]} (ana, event 1)" in _undo(at)["note"]
    panel_press(at, "undo", panel="audit_panel")
    assert not _undo(at)["note"]
    assert not _undo(at)["enabled"]  # nothing in force to take back


def test_nobody_undoes_a_colleagues_label(store_path):
    """Only the annotator who gave the newest label may undo it, as on the Label page (bob's
    U must not take back alice's label and let him label the item himself)."""
    at = _start("alice")
    item = _next_item(at)
    truth = SAMPLE["label"].to_list()
    panel_press(at, _answer(at, truth[item]), panel="audit_panel")
    bob = AppTest.from_file(PAGE, default_timeout=60)
    bob.query_params["audit"] = at.query_params["audit"]
    bob.query_params["annotator"] = "bob"
    bob.run()
    assert not bob.exception, bob.exception
    assert not _undo(bob)["enabled"]
    assert _undo(bob)["note"].endswith("; only alice can undo it."), _undo(bob)
    assert "is alice's; only they can undo it" in _undo(bob)["help"]
    with pytest.raises(StoreError, match="given by 'alice'; only they can undo it"):
        AuditStore(store_path).undo(1, "bob")
    assert _undo(at)["enabled"]  # alice may
    panel_press(at, "undo", panel="audit_panel")
    assert [(e.kind, e.annotator) for e in AuditStore(store_path).events(1)] == [
        ("label", "alice"), ("undo", "alice")]


def test_the_panel_sends_the_next_item_of_every_answer_and_takes_a_resend_once(store_path):
    """The speculative items: for each class, the queue's first item after that label, as
    the store computes it once the label is given; an answer sent again (the browser's
    outbox) is taken once; one for another item than the queue's first is refused."""
    at = _start()
    store = AuditStore(store_path)
    (project,) = store.projects()
    truth = SAMPLE["label"].to_list()
    data = panel_data(at, "audit_panel")
    item = _next_item(at)
    for c in (0, 1):
        copy = store_path.with_name(f"copy{c}.db")
        copy.write_bytes(store_path.read_bytes())
        other = AuditStore(copy)
        other.label(project.id, item, c, "ana")
        after = other.status(project.id)
        want = str(after.queue[0].item_id) if after.queue else None
        got = data["next"][_answer(at, c)]["row"]
        assert (got and got["key"]) == want
    p1 = panel_press(at, _answer(at, truth[item]), panel="audit_panel")
    second = _next_item(at)
    p2 = panel_press(at, _answer(at, truth[second]), panel="audit_panel", also=[p1])
    assert panel_result(at, p1, "audit_panel")["ok"] and panel_result(at, p2, "audit_panel")["ok"]
    assert [str(e.item_id) for e in store.events(project.id)] == [str(item), str(second)]
    bad = panel_press(at, "c0", panel="audit_panel", row="no-such-item")
    assert "not the item to label now" in panel_result(at, bad, "audit_panel")["text"]



def test_an_answer_names_its_class_and_a_changed_class_list_refuses_it(store_path):
    """A batch adds classes but no event (the view's seq stands): an answer made before
    names its class by value, so a class list that moved under it refuses the answer
    instead of storing another class in that place."""
    from certlib.audit.batch import read_batch

    at = _start()
    store = AuditStore(store_path)
    (project,) = store.projects()
    item = _next_item(at)
    data = panel_data(at, "audit_panel")
    assert [a["value"] for a in data["answers"]] == [str(d) for d in range(10)]  # digits
    n = store.status(project.id).items
    extra = SAMPLE[n:n + 5].drop("label").with_columns(
        pl.Series("pred_candidate", [-1] * 5))  # a new class -1, sorted first
    store.append_batch(project.id, read_batch(extra, name="more.csv"), who="bob")
    assert list(store.status(project.id).classes)[:1] == [-1]
    press = panel_press(at, "c0", panel="audit_panel", seq=data["seq"], row=str(item))
    # (the helper sent the answer c0 with the value the page drew: 0)
    res = panel_result(at, press, "audit_panel")
    assert not res["ok"] and "The classes changed since that item was drawn" in res["text"], res
    assert store.status(project.id).newest_label is None
