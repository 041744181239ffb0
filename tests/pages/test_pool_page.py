"""The Pool page runs on the shipped samples and shows `pool_stats`'s numbers
(Streamlit's AppTest: no browser)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

import certlib  # noqa: E402
from certlib.core.pool_stats import pool_stats  # noqa: E402
from certlib.labelling.saved_pools import SavedPools  # noqa: E402
from page_support import panel_data, view_button  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "pool.py")
SAMPLES = {"sample:demo": "demo_binary.csv", "sample:digits": "digits_probs.csv",
           "sample:unlabelled": "demo_unlabelled.csv"}


def _run(ref: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["pool_ref"] = ref
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    return at


def _heat_maps(at):
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


@pytest.mark.parametrize("ref", list(SAMPLES))
def test_page_shows_the_pool_stats(ref):
    pool = certlib.load_pool(ROOT / "sample_data" / SAMPLES[ref])
    s = pool_stats(pool)
    at = _run(ref)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"rows": f"{s.n:,}", "models": f"{s.K:,}",
                       "classes": f"{len(s.classes):,}", "labelled": f"{s.n_labelled:,}"}
    classes, candidates, rows = (d.value for d in at.dataframe)
    assert classes["class"].tolist() == [str(c) for c in s.classes]
    assert classes["labelled"].tolist() == [c.labelled for c in s.class_counts]
    assert classes["predicted (rows)"].tolist() == [c.rows_predicted for c in s.class_counts]
    assert candidates["candidate"].tolist() == list(s.candidates)
    # a column shows only when it has values
    assert ("error rate" in candidates) == (s.n_labelled > 0)
    assert ("AUGRC (full pool)" in candidates) == s.fully_labelled
    if s.n_labelled:
        assert candidates["errors"].tolist() == list(s.errors)
        assert candidates["error rate"].tolist() == list(s.error_rate)
    if s.fully_labelled:
        assert candidates["AUGRC (full pool)"].tolist() == list(s.augrc)
    assert len(rows) == min(50, s.n)
    assert [f"{n}: confidence" for n in s.candidates] == \
        [c for c in rows.columns if c.endswith(": confidence")]
    for name in pool.extra:
        assert rows[name].tolist()[:3] == list(pool.extra[name][:3])
    assert rows["row id"].tolist() == list(pool.row_ids[:50])
    *dis, spear = _heat_maps(at)
    if pool.shared_prediction:  # one shared prediction: no disagreement map, a note
        assert not dis and any("never disagree" in i.value for i in at.info)
    else:
        np.testing.assert_allclose(np.array(dis[0]["data"][0]["z"], dtype=float),
                                   s.disagreement)
    np.testing.assert_allclose(np.array(spear["data"][0]["z"], dtype=float), s.spearman)
    text = " ".join(m.value for m in at.markdown)
    assert ", ".join(f"{j + 1}. {n}" for j, n in enumerate(s.candidates)) in text
    assert not at.warning  # no stray class in the samples


def test_unlabelled_pool_says_why_no_rates():
    at = _run("sample:unlabelled")
    assert any("No row has a label yet" in c.value for c in at.caption)
    first = next(d for d in at.dataframe if d.value.columns[0] == "row id")
    assert set(first.value["label"]) == {"(unread)"}  # never "None"
    # sized to show it whole (the grid sized the column to its header: "(unreac")
    assert json.loads(first.proto.columns)["label"]["width"] >= 8 * len("(unread)") + 24


def test_stray_class_is_warned_and_names_are_inert(tmp_path, monkeypatch):
    """A 7 predicted once in a binary pool of 150 rows: one warning naming it and its
    count.  A candidate named like a link or HTML shows as typed."""
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    rng = np.random.default_rng(3)
    n, evil = 150, "[x](https://e.com)<b>y</b>"
    lines = [f"row_id,label,pred_a,conf_a,pred_{evil},conf_{evil}"]
    for i in range(n):
        p = 7 if i == 5 else int(rng.integers(2))
        lines.append(f"{i},{int(rng.integers(2))},{int(rng.integers(2))},{rng.random():.3f},"
                     f"{p},{rng.random():.3f}")
    saved = SavedPools(tmp_path).add("stray.csv", "\n".join(lines).encode())
    at = _run(f"upload:{saved.digest}")
    (warning,) = at.warning
    assert "Class 7 appears on only 1 of 150 rows" in warning.value
    assert "https://e.com" in warning.value and "](" in warning.value  # in a code span
    assert f"`{evil}`" in warning.value
    text = " ".join(m.value for m in at.markdown)
    assert f"2. `{evil}`" in text
    for fig in _heat_maps(at):
        assert fig["data"][0]["x"][1] == "[x](https://e.com)&lt;b&gt;y&lt;/b&gt;"
        assert fig["layout"]["xaxis"]["ticktext"][1] == "[x](https://e.c…"  # cut on axes


def _names_tag(ref):
    return ref.replace(":", "_")


def test_declared_names_reach_the_label_page(tmp_path, monkeypatch):
    """Display names declared on the Pool page label the Label page's buttons; the
    keyboard keys stay the class values."""
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "labels.db"))
    at = _run("sample:demo")
    assert any("Classes found in the file:** 0, 1" in m.value for m in at.markdown)
    tag = _names_tag("sample:demo")
    at.text_input(key=f"class_name_{tag}_0").set_value("malignant")
    at.text_input(key=f"class_name_{tag}_1").set_value("benign")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert SavedPools(tmp_path / "data").class_settings("sample:demo").names == \
        {0: "malignant", 1: "benign"}
    assert at.text_input(key=f"class_name_{tag}_0").value == "malignant"
    assert any(s.value.startswith("Saved: classes as found in the file; display names for 2")
               for s in at.success), [s.value for s in at.success]  # it said nothing
    # a declared set with a class the file lacks: the list is the declared set's
    at.text_input(key=f"declared_{tag}").set_value("0, 1, 2")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Classes of the pool (the declared set):** 0, 1, 2" in m.value
               for m in at.markdown), [m.value for m in at.markdown]
    assert not any("found in the file:** 0, 1, 2" in m.value for m in at.markdown)
    at.text_input(key=f"declared_{tag}").set_value("")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    assert any("Classes found in the file:** 0, 1" in m.value for m in at.markdown)

    label = AppTest.from_file(str(ROOT / "views" / "label.py"), default_timeout=120)
    label.session_state["pool_ref"] = "sample:demo"
    label.run()
    label.text_input(key="annotator").set_value("ana")
    view_button(label, "start").click().run()
    assert not label.exception, label.exception
    data = panel_data(label)  # the labelling panel's buttons, keys and candidates' table
    assert [a["label"] for a in data["answers"][:2]] == ["malignant", "benign"]
    assert [a["key"] for a in data["answers"][:2]] == ["0", "1"]
    # the keyboard hint and the candidates' predictions use the names too
    assert any("`0` = malignant, `1` = benign" in m.value for m in label.markdown)
    assert {r[1] for r in data["row"]["table"]["rows"]} <= {"malignant", "benign"}


def test_declared_set_turns_a_stray_class_into_one_error(tmp_path, monkeypatch):
    """A declared set {0, 1} on a pool with a stray 7: one error naming the column and
    row; the class form stays, and clearing the set loads the pool again."""
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    data = (b"row_id,label,pred_a,conf_a,pred_b,conf_b\n"
            b"1,0,0,.9,1,.8\n2,1,7,.7,1,.6\n3,1,1,.5,0,.4\n")
    saved = SavedPools(tmp_path).add("stray.csv", data)
    ref = f"upload:{saved.digest}"
    SavedPools(tmp_path).save_class_settings(ref, declared=["0", "1"], names={0: "no"})
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["pool_ref"] = ref
    at.run()
    assert not at.exception, at.exception
    (error,) = at.error
    assert "pred_a" in error.value and "row_id 2" in error.value and "7" in error.value
    assert not at.metric
    assert any("Classes found in the file:** 0, 1, 7" in m.value for m in at.markdown)
    tag = _names_tag(ref)
    box = at.text_input(key=f"declared_{tag}")
    assert box.value == "0, 1"
    box.set_value("")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert SavedPools(tmp_path).class_settings(ref).declared is None
    assert {m.label: m.value for m in at.metric}["classes"] == "3"


def test_a_bad_class_set_is_refused_with_the_librarys_message(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    at = _run("sample:demo")
    tag = _names_tag("sample:demo")
    at.text_input(key=f"declared_{tag}").set_value("0, 0, 1")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    (error,) = at.error
    assert "repeats" in error.value
    assert SavedPools(tmp_path).class_settings("sample:demo").declared is None


def test_a_class_set_change_that_strands_a_labelling_project_says_so(tmp_path, monkeypatch):
    """A labelling project is tied to the pool with its class set: saving a new set says
    that the project will open again only with the old one (and display names alone,
    which do not change the pool, say nothing)."""
    from certlib.labelling.store import LabelStore

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "labels.db"))
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    LabelStore(tmp_path / "labels.db").open_project(pool, "demo")
    at = _run("sample:unlabelled")
    tag = _names_tag("sample:unlabelled")
    at.text_input(key=f"class_name_{tag}_0").set_value("malignant")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    assert not at.exception, at.exception
    assert not [w for w in at.warning if "labelling project" in w.value]
    at.text_input(key=f"declared_{tag}").set_value("1, 0")
    at.button(key=f"FormSubmitter:class_set_{tag}-Save").click().run()
    assert not at.exception, at.exception
    assert any("1 labelling project(s) were started on this pool with the previous class set"
               in w.value for w in at.warning), [w.value for w in at.warning]


@pytest.mark.parametrize("ref", ["garbage", "sample:nope"])
def test_an_unknown_pool_in_the_address_is_named(ref):
    """A hand-edited address falls back to the demo pool and says so (it did so silently
    for these, and with a warning only for an unknown upload)."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["pool"] = ref
    at.run()
    assert not at.exception, at.exception
    (w,) = [w.value for w in at.sidebar.warning]
    assert w.startswith("The pool in the address, ") and ref in w and \
        "is not one this server knows" in w
    assert "sample:demo" in w and at.query_params["pool"] in ("sample:demo", ["sample:demo"])
