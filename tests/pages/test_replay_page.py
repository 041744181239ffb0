"""The replay page (views/replay.py) under Streamlit's AppTest: it replays the
demo pool step by step and its last step is `certlib.replay`'s answer; an unlabelled
pool gets the number of labels missing (the browser look is done by hand, see the
commit)."""

from __future__ import annotations

from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

import certlib  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "replay.py")


def _page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _status(at) -> str:
    """The status line: st.success once certified, else st.info."""
    (box,) = [*at.success, *at.info]
    return box.value


@pytest.fixture(scope="module")
def demo():
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    return pool, certlib.replay(pool, policy="adaptive-pair-sum")


def test_runs_on_the_demo_pool_at_step_zero(demo):
    pool, rep = demo
    at = _page()
    assert at.slider(key="rp_step").value == 0
    assert _status(at).startswith(f"**After 0 of {rep.labels_read:,} labels:** best guess")
    assert any("No row read yet" in m.value for m in at.markdown)
    assert not at.error and not at.warning


def test_step_reads_the_policys_first_row(demo):
    pool, rep = demo
    at = _page()
    at.button(key="rp_fwd").click().run()
    assert not at.exception, at.exception
    assert at.slider(key="rp_step").value == 1
    assert _status(at).startswith(f"**After 1 of {rep.labels_read:,} labels:**")
    first = rep.order[0]
    assert any(f"row_id {first}" in m.value for m in at.markdown)
    at.button(key="rp_fwd").click().run()
    at.button(key="rp_back").click().run()
    assert at.slider(key="rp_step").value == 1
    at.button(key="rp_reset").click().run()
    assert at.slider(key="rp_step").value == 0


def test_play_advances_and_pause_stops(demo):
    at = _page()
    at.button(key="rp_play").click().run()
    assert not at.exception, at.exception
    assert at.session_state["rp_playing"] and at.slider(key="rp_step").value >= 1
    at.button(key="rp_pause").click().run()
    assert not at.session_state["rp_playing"]
    assert any(b.key == "rp_play" for b in at.button)


def test_last_step_is_the_replay(demo):
    pool, rep = demo
    at = _page()
    at.slider(key="rp_step").set_value(rep.labels_read).run()
    assert not at.exception, at.exception
    assert rep.certified and not at.info
    assert _status(at).startswith(f"**After {rep.labels_read:,} of {rep.labels_read:,} labels:** "
                                  f"{rep.selected} is certified exactly")
    assert any(f"row_id {rep.order[-1]}" in x.value for x in at.markdown)
    assert at.button(key="rp_fwd").disabled
    assert ", ".join(str(x) for x in rep.order) in [t.value for t in at.text]


def test_unlabelled_pool_says_how_many_labels_are_missing():
    at = _page()
    at.selectbox(key="pool_choice").set_value("Breast cancer, unlabelled (annotator)").run()
    assert not at.exception, at.exception
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    missing = pool.n - pool.n_labelled
    assert any("The replay needs every label" in w.value and f"{missing:,} of {pool.n:,}"
               in w.value for w in at.warning)
    assert not at.slider
