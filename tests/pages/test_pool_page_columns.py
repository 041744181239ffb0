"""The Pool page for a lead's own files (AppTest): the mapping an upload was saved with
is shown with its warnings, the mapping form reopens on the saved files, a pending
upload's form checks the mapping as it is edited and saves nothing until *Load*, and
duplicate candidates are named and can be merged."""

from __future__ import annotations

from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

from certlib.columns import guess_map  # noqa: E402
from certlib.labelling.saved_pools import SavedPools  # noqa: E402
from ui.column_map import PENDING, plan_upload  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "pool.py")


def _own(n=30, *, dup=False) -> bytes:
    head = "id,y_true,modelA_pred,modelA_score,modelB_pred,modelB_score,target"
    if dup:
        head += ",copy_pred,copy_score"
    lines = [head]
    for i in range(n):
        a, s = i % 2, 0.5 + (i * 37 % 50) / 100
        row = f"r{i},{'' if i % 3 else i % 2},{a},{s:.2f},{(i + 1) % 2},{0.5 + i / 100:.2f},t{i}"
        if dup:
            row += f",{a},{s / 2:.3f}"  # same predictions, same order: a duplicate of A
        lines.append(row)
    return ("\n".join(lines) + "\n").encode()


def _run(ref=None, pending=None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    if ref:
        at.session_state["pool_ref"] = ref
    if pending:
        at.session_state[PENDING] = pending
    at.run()
    assert not at.exception, at.exception
    return at


def _text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.code]
    parts += [w.value for w in at.warning] + [e.value for e in at.error]
    parts += [str(m.value) for m in at.metric]
    return "\n".join(parts)


def test_the_saved_mapping_is_shown_with_its_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    data = _own()
    saved = SavedPools(tmp_path).add("eval.csv", data)
    assert saved.column_map is not None and saved.column_map.label == "y_true"
    at = _run(f"upload:{saved.digest}")
    text = _text(at)
    assert "Column mapping" in [h.value for h in at.subheader]
    assert "label: y_true" in text and "modelB: prediction modelB_pred" in text
    assert "'target'" in text and "looks like labels" in text  # unused, named
    assert [m.value for m in at.metric][3] == "10"  # labelled: every third row
    # Change the mapping reopens the form on the saved files with the saved map
    next(b for b in at.button if b.label == "Change the mapping").click().run()
    assert not at.exception
    assert "Which column is which?" in [h.value for h in at.subheader]
    assert at.session_state[PENDING]["files"] == [("eval.csv", data)]


def test_a_pending_upload_saves_nothing_until_load(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    data = _own()
    pending = plan_upload([("eval.csv", data)])
    assert pending is not None
    at = _run(pending=pending)
    assert "Which column is which?" in [h.value for h in at.subheader]
    assert not any(tmp_path.iterdir())  # nothing saved yet
    assert at.metric == [] or "Column mapping" not in [h.value for h in at.subheader]
    # the label box set to nothing: the check still passes, the map says so
    label_box = next(s for s in at.selectbox if s.label.startswith("Label column"))
    label_box.set_value("(none: every row unread)").run()
    assert "label: (none: every row unread)" in _text(at)
    label_box = next(s for s in at.selectbox if s.label.startswith("Label column"))
    # a label column that is also a candidate's column: refused, the button disabled
    label_box.set_value("modelA_pred").run()
    assert any("mapped twice" in e.value or "two parts" in e.value for e in at.error), \
        _text(at)
    load = next(b for b in at.button if b.label == "Load the pool")
    assert load.disabled
    label_box = next(s for s in at.selectbox if s.label.startswith("Label column"))
    label_box.set_value("y_true").run()
    next(b for b in at.button if b.label == "Load the pool").click().run()
    assert not at.exception
    assert PENDING not in at.session_state
    ref = at.session_state["pool_ref"]
    assert ref == f"upload:{SavedPools.digest_of([('eval.csv', data)])}"
    assert SavedPools(tmp_path).column_map(ref.split(":")[1]).label == "y_true"


def test_cancel_forgets_the_upload(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    at = _run(pending=plan_upload([("eval.csv", _own())]))
    next(b for b in at.button if b.label == "Cancel this upload").click().run()
    assert PENDING not in at.session_state
    assert not any(tmp_path.iterdir())
    assert "Which column is which?" not in [h.value for h in at.subheader]


def test_duplicates_are_named_and_merged(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    data = _own(dup=True)
    cmap = guess_map(["id", "y_true", "modelA_pred", "modelA_score", "modelB_pred",
                      "modelB_score", "target", "copy_pred", "copy_score"])
    assert [c.name for c in cmap.candidates] == ["modelA", "modelB", "copy"]
    saved = SavedPools(tmp_path).add("dup.csv", data, column_map=cmap)
    at = _run(f"upload:{saved.digest}")
    (dup,) = [w.value for w in at.warning if "can never win" in w.value]
    assert "modelA" in dup and "copy" in dup
    next(b for b in at.button if b.label == "Merge the duplicates").click().run()
    assert not at.exception
    text = _text(at)
    assert "1. modelA, 2. modelB" in text and "copy" not in text.split("Candidates in")[1][:60]
    assert not any("can never win" in w.value for w in at.warning)


def _per_model(ids, seed, batch=False) -> bytes:
    lines = ["sample,prediction,score,ref" + (",batch" if batch else "")]
    for i in ids:
        lines.append(f"s{i},{(i * seed) % 2},{0.5 + ((i + seed) * 31 % 50) / 100:.2f},q{i}"
                     + (f",{i % 3}" if batch else ""))
    return ("\n".join(lines) + "\n").encode()


def test_files_without_an_id_name_are_joined_on_a_shared_column_the_lead_can_change(
        tmp_path, monkeypatch):
    """Two files per model whose id column is called 'sample' (no name the guess knows):
    joined on the first shared column that is a unique id in each; the lead picks
    another shared column ('ref') in the form; a column that is no id ('batch') is
    refused with one message and the files stay joined as they were."""
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    files = [("m1.csv", _per_model(range(20), 3, batch=True)),
             ("m2.csv", _per_model(range(19, -1, -1), 5, batch=True))]
    pending = plan_upload(files)
    assert pending["join_on"] == "sample" and pending["join_options"] == [
        "sample", "ref", "batch"]
    at = _run(pending=pending)
    join = next(s for s in at.selectbox if s.label.startswith("Join the files on"))
    join.set_value("batch").run()
    assert not at.exception
    assert any("Could not join the files on batch" in e.value for e in at.error), _text(at)
    assert at.session_state[PENDING]["join_on"] == "sample"
    join = next(s for s in at.selectbox if s.label.startswith("Join the files on"))
    join.set_value("ref").run()
    assert not at.exception
    assert at.session_state[PENDING]["join_on"] == "ref"
    next(b for b in at.button if b.label == "Load the pool").click().run()
    assert not at.exception and PENDING not in at.session_state
    digest = at.session_state["pool_ref"].split(":")[1]
    pool = SavedPools(tmp_path).load(digest)
    assert pool.row_ids[:2] == ("q0", "q1") and pool.names == ("m1", "m2")
