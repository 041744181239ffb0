"""The dashboard pages run on the shipped sample data and show the library's numbers
(Streamlit's AppTest: no browser; the browser test is tests/test_browser.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

import certlib  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, **state) -> "AppTest":
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


def test_budget_below_prelabel_bound_is_ruled_out():
    at = _run("app.py")
    at.number_input(key="budget").set_value(1).run()
    assert any("ruled out" in w.value for w in at.warning)


def test_teaching_page_renders_three_rules():
    at = _run("pages/1_Teaching_figure.py")
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
