"""The Plan page (views/budget.py) under AppTest: its numbers equal
`certlib plan --json` on the same pool (prelabel bounds, replays, Figure 8, forecast
quantiles and P(certify))."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

from certlib.cli import main  # noqa: E402
from certlib.cli_output import percent  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "budget.py")


def _cli(*args) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["plan", *args, "--json"]) == 0
    return json.loads(buf.getvalue())


def _page(sample: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.query_params["pool"] = f"sample:{sample}"
    at.run()
    assert not at.exception, at.exception
    return at


def _df(at, column):
    """The page's table holding ``column``."""
    (df,) = [d.value for d in at.dataframe if column in d.value.columns]
    return df


def test_labelled_demo_equals_the_cli():
    cli = _cli(str(ROOT / "sample_data/demo_binary.csv"))["map"]
    at = _page("demo")
    df = _df(at, "prelabel bound (labels)")
    assert list(df["prelabel bound (labels)"]) == cli["prelabel"]
    assert list(df["replay (labels)"]) == cli["labels_read"]
    # what the budget buys (the CLI's --budget sentence) and Figure 8's grid answer, for
    # the default budget n // 2 and for a typed budget
    n = cli["n"]

    def said(budget):
        sentence = _cli(str(ROOT / "sample_data/demo_binary.csv"), "--budget",
                        str(budget))["budget_answer"]["text"]
        assert f"**{sentence}**" in [m.value for m in at.markdown]
        want = cli["smallest_tolerance"].get(str(budget))
        grid = " ".join(c.value for c in at.caption)
        assert (f"the smallest tolerance certified within {budget:,} labels is {want:g}"
                if want is not None else
                f"no tolerance is certified within {budget:,} labels") in grid

    said(n // 2)
    (box,) = [b for b in at.number_input if str(b.key).startswith("plan_budget_")]
    box.set_value(n).run()
    said(n)
    # a number outside 0..n says what is used instead of keeping a stale answer
    box.set_value(10 * n).run()
    assert any(f"so a budget of {10 * n:,} buys no more than {n:,}" in i.value for i in at.info)
    said(n)
    box.set_value(-3).run()
    assert any("-3 is below 0, so 0 is used" in w.value for w in at.warning)
    assert any("A budget of 0 labels" in m.value for m in at.markdown)
    assert any("Every label is known" in i.value for i in at.info)


def test_unlabelled_demo_forecast_equals_the_cli():
    cli = _cli(str(ROOT / "sample_data/demo_unlabelled.csv"), "--forecast", "200")
    at = _page("unlabelled")
    assert list(_df(at, "prelabel bound (labels)")["prelabel bound (labels)"]) \
        == cli["map"]["prelabel"]
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    q = _df(at, "median")
    for i, f in enumerate(cli["forecast"]):
        assert q["median"][i] == f["quantiles"]["0.5"]
        assert [q["80% low"][i], q["80% high"][i]] == f["interval"]
    # P(certify) within the default budget n // 2 equals the CLI's column for that budget
    n = cli["map"]["n"]
    col = [c for c in q.columns if c.startswith("P(certify")][0]
    assert str(n // 2) in col.replace(",", "")
    from certlib.planning.budget_plan import default_budgets
    if n // 2 in default_budgets(n):
        b = cli["map"]["budgets"].index(n // 2)
        assert [percent(p[b]) for p in cli["p_certified"]] == list(q[col])
    assert any("forecast, not a guarantee" in m.value for m in at.caption)
    # the map: the CLI's cells; hover text in lines short enough for an 800 px chart, the
    # cell named first; budget n certified whatever the labels (every row read)
    (hm,) = [t for e in at.get("plotly_chart") for t in json.loads(e.proto.spec)["data"]
             if t["type"] == "heatmap"]
    code = {"ruled_out": 0, "unresolved": 1, "certified": 2}
    assert hm["z"] == [[code[c] for c in row] for row in cli["map"]["cells"]]
    for row in hm["customdata"]:
        for b, h in zip(cli["map"]["budgets"], row):
            lines = h.split("<br>")
            assert max(map(len, lines)) <= 56 and lines[0].startswith("tolerance "), h
            assert f"budget {b:,}:" in " ".join(lines), h
    assert "certified. With every label read" in hm["customdata"][0][-1].replace("<br>", " ")
    # and how far off it has been, so nobody reads the median as a promise
    assert any("held-out panel pools" in m.value for m in at.caption)
    assert not at.error


def test_bad_tolerances_get_one_message():
    at = _page("demo")
    at.text_input(key="plan_tols").set_value("0, abc").run()
    assert at.error and "Tolerances must be numbers" in at.error[0].value
    for text, shown in (("0, 1e9", "1e+09"), ("-1", "-1"), ("0.6", "0.6"), ("nan", "nan")):
        at.text_input(key="plan_tols").set_value(text).run()
        assert len(at.error) == 1 and f"Tolerance {shown} is outside 0 to 0.5" in \
            at.error[0].value, text
    at.text_input(key="plan_tols").set_value("0, 0.5").run()
    assert not at.error


def test_stop_keeps_no_forecast_and_the_page_stands():
    import streamlit as st

    st.cache_resource.clear()  # forecasts are kept per server: start from none
    at = _page("unlabelled")
    at.button(key="plan_stop").click().run()
    assert not at.exception, at.exception
    assert not [d for d in at.dataframe if "median" in d.value.columns]
    assert at.button(key="plan_run").disabled is False
    # nothing ran: the press is answered, not ignored without a word
    assert any("No forecast was running" in i.value for i in at.info)


def test_the_histogram_starts_at_the_tolerance_chosen_elsewhere():
    from ui.state import TOLERANCE

    for chosen, shown in ((0.001, "0.001"), (0.003, "0")):  # 0.003: not on the grid
        at = AppTest.from_file(PAGE, default_timeout=180)
        at.query_params["pool"] = "sample:unlabelled"
        at.session_state["_sticky"] = {TOLERANCE: chosen}  # as Plan and certify keeps it
        at.run()
        if not at.button(key="plan_run").disabled:  # else kept from an earlier run
            at.button(key="plan_run").click().run()
        assert not at.exception, at.exception
        assert at.selectbox(key="plan_hist_tol").value == shown
        assert at.button(key="plan_stop").disabled  # nothing left to stop
        # the greyed Run button says why, in sight
        assert "Already run with these settings" in at.button(key="plan_run").help
        assert any("The forecast below is for these settings" in c.value for c in at.caption)


def test_known_labels_that_certify_are_said_on_the_page(tmp_path, monkeypatch):
    """An upload with one of 171 labels hidden: the 170 known certify, so a budget of 170
    is certified (green, exact) and section 3 says the known labels certify it, as
    `certlib plan` does (amber cells with a forecast of 100%)."""
    import pandas as pd

    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    df = pd.read_csv(ROOT / "sample_data/demo_binary.csv")
    df.loc[5, "label"] = None
    path = tmp_path / "near_full.csv"
    df.to_csv(path, index=False)
    saved = SavedPools().add("near_full.csv", path.read_bytes())
    cli = _cli(str(path), "--budgets", "170")["map"]
    assert cli["smallest_tolerance"]["170"] == 0.0 and cli["known"] == 170
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.query_params["pool"] = f"upload:{saved.digest}"
    at.run()
    assert not at.exception, at.exception
    (box,) = [b for b in at.number_input if str(b.key).startswith("plan_budget_")]
    box.set_value(170).run()
    assert not at.exception, at.exception
    assert any("A budget of 170 labels buys tolerance 0, the exact choice, for sure: the 170 "
               "labels already known certify" in m.value for m in at.markdown), \
        [m.value for m in at.markdown]
    assert any("the smallest tolerance certified within 170 labels is 0" in c.value
               for c in at.caption)


def test_pages_and_the_cli_agree_on_a_partly_labelled_project(tmp_path, monkeypatch):
    """A project that has read 30 labels: `certlib plan --store --project`, the Budget map,
    Plan and certify and the Label page give the same forecast of the labels it will read
    and the same sentence for what a budget buys."""
    import time

    import certlib
    from certlib.labelling.store import LabelStore

    db = tmp_path / "labels.db"
    monkeypatch.setenv("CERTLIB_STORE", str(db))
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    store = LabelStore(db)
    pid = store.open_project(pool, "Breast cancer, unlabelled (annotator)")
    for _ in range(30):
        r = store.progress(pid, pool).next_row
        store.append_label(pid, pool.row_ids[r], truth.classes[int(truth.labels[r])], "ana",
                           pool=pool)
    budget = 80
    cli = _cli(str(ROOT / "sample_data/demo_unlabelled.csv"), "--store", str(db), "--project",
               str(pid), "--tolerances", "0", "--forecast", "200", "--budget", str(budget))
    f = cli["forecast"][0]
    low, high = f["interval"]
    med = f["quantiles"]["0.5"]
    sentence = cli["budget_answer"]["text"]
    assert cli["map"]["known"] == 30 and low >= 30

    at = _page("unlabelled")  # the newest project's labels by default
    assert at.selectbox(key="known").value == str(pid)
    at.text_input(key="plan_tols").set_value("0").run()
    (box,) = [b for b in at.number_input if str(b.key).startswith("plan_budget_")]
    box.set_value(budget).run()
    assert f"**{sentence}**" in [m.value for m in at.markdown]
    at.button(key="plan_run").click().run()
    q = _df(at, "median")
    assert (q["median"][0], q["80% low"][0], q["80% high"][0]) == (med, low, high)

    home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    home.query_params["pool"] = "sample:unlabelled"
    home.run()
    (hbox,) = [b for b in home.number_input if str(b.key).startswith("budget_")]
    hbox.set_value(budget).run()
    assert f"**What your budget buys.** {sentence}" in [m.value for m in home.markdown]

    label = AppTest.from_file(str(ROOT / "views" / "label.py"), default_timeout=180)
    label.query_params.update(pool="sample:unlabelled", project=str(pid))
    for _ in range(600):  # the forecast is made in a worker process, at low priority
        label.run()
        shown = [c.value for c in label.caption if c.value.startswith("Forecast: about")]
        if shown and "being computed" not in shown[0]:
            break
        time.sleep(0.2)
    assert shown[0].startswith(f"Forecast: about {med - 30:,} more labels (80% between "
                               f"{low - 30:,} and {high - 30:,} more; {med:,} in total)")
