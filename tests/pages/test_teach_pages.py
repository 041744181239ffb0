"""The Teach pages (AppTest, no browser): every number shown is the library's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing import v1 as st_testing

from certlib import certify, load_pool
from certlib.cli import main
from certlib.teaching.bound_traces import teaching_figure
from certlib.teaching.theory import LIMITS, random_orders

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, **query) -> st_testing.AppTest:
    at = st_testing.AppTest.from_file(str(ROOT / "views" / script), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def _text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_figure1_page():
    at = _run("teach_figure1.py")
    assert not at.exception, at.exception
    assert "**After 0 of 2 labels**" in _text(at)
    assert any("either candidate can still win" in w.value and "(1, 0) favours B" in w.value
               and "(0, 1) favours A" in w.value for w in at.warning)
    assert "Accuracy ties in every completion" in _text(at)
    # after reading y1 = 1, A can still win, but only through the tie (1, 1): the page
    # says how
    at.selectbox(key="fig1_y1").set_value(1).run()
    at.button(key="fig1_t_step").click().run()
    assert "**After 1 of 2 labels** (y1 = 1; y2 unread)" in _text(at)
    assert any("(1, 0) favours B" in w.value and "(1, 1) is a tie, which goes to A" in w.value
               for w in at.warning)
    at.selectbox(key="fig1_y1").set_value(0).run()  # the label read, changed: kept read
    assert any("every completion picks A" in s.value for s in at.success)
    at.selectbox(key="fig1_y2").set_value(1).run()
    at.button(key="fig1_t_step").click().run()
    assert "AUGRC A = 1/8, B = 3/8; the winner is **A**" in _text(at)
    at.button(key="fig1_t_back").click().run()
    assert "**After 1 of 2 labels** (y1 = 0; y2 unread)" in _text(at)
    at.button(key="fig1_t_reset").click().run()
    assert "**After 0 of 2 labels**" in _text(at)
    assert any("either candidate can still win" in w.value for w in at.warning)


def test_figure1_page_default_labels_and_presentation_mode():
    """The boxes start at y = (1, 0): after y1 either candidate can still win, after y2
    B wins; in presentation mode the numbers come before the tables."""
    at = _run("teach_figure1.py", present="1")
    assert not at.exception, at.exception
    assert at.toggle(key="fig1_present").value
    for _ in range(2):
        at.button(key="fig1_t_step").click().run()
    assert "AUGRC A = 3/8, B = 1/8; the winner is **B**" in _text(at)
    assert any("every completion picks B" in s.value
               and "certified by the stopping test: B" in s.value for s in at.success)
    assert at.markdown[1].value.startswith("**With y = (1, 0):**")  # under the title
    assert at.button(key="fig1_t_step").disabled


def test_figure2_page_steps_through_the_interval_sequence():
    at = _run("teach_figure2.py")
    assert not at.exception, at.exception
    seen = []
    for t in range(5):
        text = _text(at)
        assert f"**After {t} of 4 labels:**" in text
        seen.append(text.split("= **")[1].split("**")[0])
        if t == 3:  # L = 0: the tie rule holds B back
            assert any("tie rule at L_AB = 0" in w.value for w in at.warning)
        if t < 4:
            at.button(key="fig2_t_step").click().run()
    assert seen == ["[-6, 6]", "[-2, 6]", "[-2, 2]", "[0, 2]", "[2, 2]"]
    assert "[-6, 6] → [-2, 6] → [-2, 2] → [0, 2] → [2, 2]" in _text(at)
    assert any("B is certified" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"prelabel bound": "2", "LP relaxation": "2.5",
                       "minimum certificate C(y)": "3", "labels this order read": "4"}
    assert any("Row 4 was never needed" in i.value for i in at.info)
    at.button(key="fig2_t_back").click().run()
    assert "**After 3 of 4 labels:**" in _text(at)
    at.button(key="fig2_t_reset").click().run()
    assert "**After 0 of 4 labels:**" in _text(at)


def test_figure2_page_follows_labels_and_order():
    """A student's change: y4 = 1 and the order 1, 2, 3, 4; the numbers are the library's."""
    from certlib.teaching.worked_examples import figure2_pool, pair_trace

    at = _run("teach_figure2.py")
    at.selectbox(key="fig2_y4").set_value(1).run()
    at.text_input(key="fig2_order").set_value("1, 2, 3, 4").run()
    tr = pair_trace(figure2_pool((1, 0, 0, 1)), [0, 1, 2, 3])
    for _ in range(4):
        at.button(key="fig2_t_step").click().run()
    assert " → ".join(f"[{lo}, {hi}]" for lo, hi in tr.intervals) in _text(at)
    c = certify(figure2_pool((1, 0, 0, 1)))
    assert {m.label: m.value for m in at.metric}["minimum certificate C(y)"] == str(c.upper)


@pytest.mark.parametrize("typed, message", [
    ("1, 1, 2, 3", "row 1 is listed twice"),
    ("0, 1, 2, 3", "'0' is not a row; rows are 1 to 4"),
    ("1, 2, 3", "row 4 is missing"),
    ("2, 3", "rows 1, 4 are missing"),
    ("1, 2, x, 4", "'x' is not a row"),
    ("1, 2, 3, 5", "'5' is not a row"),
    ("1, 2, 3, ²", "'²' is not a row"),
])
def test_figure2_page_bad_order_names_the_typed_row(typed, message):
    at = _run("teach_figure2.py")
    at.text_input(key="fig2_order").set_value(typed).run()
    assert not at.exception and len(at.error) == 1
    err = at.error[0].value
    assert err.startswith("Read order: ") and message in err
    assert "-1" not in err and "0..3" not in err  # never the internal 0-based positions


def test_figure2_page_says_when_the_test_stopped():
    """Stepping past the stop: the page says since when B is certified, as the
    hindsight metric does, instead of 'certified after 4 labels'."""
    from certlib.teaching.worked_examples import figure2_pool, pair_trace

    at = _run("teach_figure2.py")
    at.text_input(key="fig2_order").set_value("1, 2, 3, 4").run()
    stop = pair_trace(figure2_pool(), [0, 1, 2, 3]).certified_at
    assert stop == 3
    for t in range(1, 5):
        at.button(key="fig2_t_step").click().run()
        ok = [x.value for x in at.success if "certified" in x.value]
        if t < stop:
            assert not ok
        elif t == stop:
            assert ok and f"is certified** after {stop} labels" in ok[0]
        else:
            assert ok and f"has been certified since label {stop}**" in ok[0]
            assert "after 4 labels" not in ok[0]
    assert {m.label: m.value for m in at.metric}["labels this order read"] == str(stop)


def test_figure3_page():
    at = _run("teach_figure3.py")
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["risks (r_A, r_B, r_C)"] == "(8, 15, 13)"
    assert metrics["lower bounds against A"] == "(-13, -15)"
    text = _text(at)
    assert "supplies gains (16, 12)" in text and "supply (16, 20)" in text
    assert "x = (3/8, 1, 0, 0) with value **11/8**" in text
    assert "**C(y) = 2**" in text and "stops after **3 labels**" in text
    assert "reads rows 2, 3, 1, 4" in text
    table = at.dataframe[0].value  # one column per row of the pool, one line per quantity
    assert list(table.columns) == ["", "row 1", "row 2", "row 3", "row 4"]
    lines = {r[""]: [int(v) for v in r[1:]] for _, r in table.iterrows()}
    assert lines["gain vs B"] == [4, 12, 4, 0] and lines["gain vs C"] == [8, 12, 0, 0]
    assert [lines[f"w_{c}"] for c in "ABC"] == [[1, 7, 3, 5], [3, 5, 7, 1], [7, 5, 3, 1]]
    assert lines["y"] == [1, 0, 0, 1]


def _fig3_numbers(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**After "))


def test_figure3_page_steps_through_the_static_range_order():
    """Each step reads the next row of the static range order (2, 3, 1, 4): the gains
    each rival has received, against its deficit, and the exact test's answer, which
    certifies A exactly when `replay` stops (3 labels)."""
    from certlib import replay
    from certlib.teaching.worked_examples import figure3_pool

    at = _run("teach_figure3.py")
    assert not at.exception, at.exception
    stop = replay(figure3_pool(), policy="static-range").labels_read
    assert stop == 3
    expected = [  # (gains vs B, covered, L_BA), (gains vs C, covered, L_CA)
        ("gains 0 < deficit 13: **not covered** (13 short); L_BA = -13",
         "gains 0 < deficit 15: **not covered** (15 short); L_CA = -15"),
        ("gains 12 < deficit 13: **not covered** (1 short); L_BA = -1",
         "gains 12 < deficit 15: **not covered** (3 short); L_CA = -3"),
        ("gains 12 + 4 = 16 ≥ deficit 13: **covered**; L_BA = 3",
         "gains 12 + 0 = 12 < deficit 15: **not covered** (3 short); L_CA = -3"),
        ("gains 12 + 4 + 4 = 20 ≥ deficit 13: **covered**; L_BA = 7",
         "gains 12 + 0 + 8 = 20 ≥ deficit 15: **covered**; L_CA = 5"),
        ("gains 12 + 4 + 4 + 0 = 20 ≥ deficit 13: **covered**; L_BA = 7",
         "gains 12 + 0 + 8 + 0 = 20 ≥ deficit 15: **covered**; L_CA = 5"),
    ]
    rows = ["none", "2", "2, 3", "2, 3, 1", "2, 3, 1, 4"]
    for t in range(5):
        numbers = _fig3_numbers(at)
        assert numbers.startswith(f"**After {t} of 4 labels** (rows read: {rows[t]};")
        assert f"vs **B**: {expected[t][0]}" in numbers
        assert f"vs **C**: {expected[t][1]}" in numbers
        ok = [s.value for s in at.success if "certified" in s.value]
        if t < stop:
            assert not ok and any("Not certified yet" in c.value for c in at.caption)
        elif t == stop:
            assert ok and "**A is certified** by the exact test after 3 labels" in ok[0]
        else:
            assert ok and "**A has been certified since label 3**" in ok[0]
        # the numbers the page showed before stepping are still there
        assert "stops after **3 labels**" in _text(at)
        if t < 4:
            at.button(key="fig3_t_step").click().run()
    assert at.button(key="fig3_t_step").disabled
    at.button(key="fig3_t_back").click().run()
    assert _fig3_numbers(at).startswith("**After 3 of 4 labels**")
    at.button(key="fig3_t_reset").click().run()
    assert _fig3_numbers(at).startswith("**After 0 of 4 labels**")


def test_figure3_page_presentation_mode():
    """?present=1: the step's numbers come first (right under the title), the settings
    and tables after them; every number of the page is still shown."""
    at = _run("teach_figure3.py", present="1", fig3_t="2")
    assert not at.exception, at.exception
    assert at.toggle(key="fig3_present").value
    assert at.markdown[1].value.startswith("**After 2 of 4 labels** (rows read: 2, 3;")
    text = _text(at)
    assert text.index("**After 2 of 4 labels**") < text.index("**LP relaxation**") \
        < text.index("Three candidates")
    assert "x = (3/8, 1, 0, 0) with value **11/8**" in text and "supply (16, 20)" in text
    assert {m.label: m.value for m in at.metric}["deficits to cover"] == "(13, 15)"


@pytest.mark.parametrize("sample,zero", [("teaching", None), ("figure2", 3)])
def test_figure10_stops_equal_cli_replay(sample, zero, capsys):
    """The three stopping counts shown equal `certlib replay --rule ...` on the same pool;
    the tie-rule moment shows when it occurs (Figure 2's pool: after 3 labels)."""
    from ui.pool_picker import SAMPLES

    path = SAMPLES[sample][1]
    at = _run("teach_figure10.py", pool=f"sample:{sample}")
    assert not at.exception, at.exception
    text = _text(at)
    stops = {}
    for rule in ("shared", "centered", "separate"):
        main(["replay", str(path), "--rule", rule, "--json"])
        stops[rule] = json.loads(capsys.readouterr().out)["labels_read"]
    assert f"shared {stops['shared']}, centered {stops['centered']}, " \
           f"separate {stops['separate']}" in text
    tie = [i.value for i in at.info if "Tie rule" in i.value]
    if zero is None:
        assert not tie
    else:
        assert tie and f"After {zero} labels" in tie[0]
    # the cursor: at the shared stop, shared is certified and the others are not yet
    at.slider(key="fig_cursor_slider").set_value(stops["shared"]).run()
    caps = [c.value for c in at.caption]
    assert f"certified (stops at {stops['shared']})" in caps
    c = certify(load_pool(path))
    assert f"In hindsight {c.lower}" in _text(at)



def _cursor_metrics(at) -> dict:
    return {m.label.split(",")[0]: (m.label, m.value) for m in at.metric}


def test_figure10_step_back_reset_move_the_cursor():
    """Step, Back and Reset move the cursor one label at a time (0..n); the slider, the
    three metrics, their certified captions and the export follow it."""
    f = teaching_figure(load_pool(ROOT / "sample_data" / "figure2.csv"))
    at = _run("teach_figure10.py", pool="sample:figure2")
    assert not at.exception, at.exception
    stop = f.paths["shared"].stop
    assert at.slider(key="fig_cursor_slider").value == stop  # the default: the shared stop

    def shown(t):
        assert at.slider(key="fig_cursor_slider").value == t
        assert at.query_params["fig_cursor"] in (str(t), [str(t)])
        got = _cursor_metrics(at)
        for rule, path in f.paths.items():
            assert got[rule] == (f"{rule}, {t} labels", f"{path.lower_objective[t]:.5f}")
        caps = [c.value for c in at.caption]
        ok = f"certified (stops at {stop})" in caps
        assert ok == (t >= stop)

    at.button(key="fig_cursor_reset").click().run()
    shown(0)
    assert at.button(key="fig_cursor_back").disabled
    for t in range(1, f.n + 1):
        at.button(key="fig_cursor_step").click().run()
        shown(t)
    assert at.button(key="fig_cursor_step").disabled  # n labels: the end
    at.button(key="fig_cursor_back").click().run()
    shown(f.n - 1)
    # the slider jumps, and the buttons step on from where it left the cursor
    at.slider(key="fig_cursor_slider").set_value(1).run()
    shown(1)
    at.button(key="fig_cursor_step").click().run()
    shown(2)
    at.button(key="fig_cursor_reset").click().run()
    shown(0)
    # one state behind the slider and the buttons: no warning about a widget given both
    # a value and a Session State value
    assert not at.exception and not at.warning, (at.exception, at.warning)


def test_figure10_cursor_from_the_address_and_out_of_range():
    """The cursor in the address opens the page there; one beyond the pool (an edited
    address) gives way to the shared stop."""
    f = teaching_figure(load_pool(ROOT / "sample_data" / "teaching_k4.csv"))
    at = _run("teach_figure10.py", fig_cursor="5")
    assert not at.exception, at.exception
    assert _cursor_metrics(at)["shared"][0] == "shared, 5 labels"
    at.button(key="fig_cursor_step").click().run()
    assert _cursor_metrics(at)["shared"][0] == "shared, 6 labels"
    for bad in ("9999", "-1", "x"):
        at = _run("teach_figure10.py", fig_cursor=bad)
        assert not at.exception, at.exception
        stop = f.paths["shared"].stop
        assert _cursor_metrics(at)["shared"][0] == f"shared, {stop} labels"


def test_figure10_presentation_mode_names_its_data_in_one_line():
    """?present=1: one short line says which data is shown (and that it is not the
    paper's), above the chart; the full statement and the settings follow the chart."""
    at = _run("teach_figure10.py", present="1")
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    short = ("**Data:** Breast Cancer, split 1, trees (`teaching_k4.csv`, n = 171, K = 4); "
             "the paper's Figure 10 is Ionosphere, n = 106.")
    assert short in texts
    full = next(i for i, v in enumerate(texts) if v.startswith("**Data shown:**"))
    assert texts.index(short) < full
    assert at.toggle(key="fig10_present").value
    # the chart and its numbers come before the settings in the page's order
    order = [getattr(e, "key", None) for e in at.main]
    assert order.index("fig_chart") < order.index("fig_cursor_step") < order.index("fig_policy")
    got = _cursor_metrics(at)
    assert set(got) == {"shared", "centered", "separate"}
    at.button(key="fig_cursor_step").click().run()
    assert not at.exception, at.exception
    assert short in [m.value for m in at.markdown]

    at = _run("teach_figure10.py")  # normal mode: the full statement, no short line
    texts = [m.value for m in at.markdown]
    assert texts[0].startswith("**Data shown:**")  # under the title
    assert not any(v.startswith("**Data:**") for v in texts)
    order = [getattr(e, "key", None) for e in at.main]
    assert order.index("fig_policy") < order.index("fig_cursor_step") < order.index("fig_chart")


def test_figure10_exports_the_cursors_numbers(monkeypatch):
    """The download holds the cursor's numbers as text: each rule's exact lower bound,
    certified or not, the stops, prelabel and the minimum certificate."""
    from fractions import Fraction

    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    saved = {}  # the files the page hands to Streamlit, by their download name
    keep = MemoryMediaFileStorage.load_and_get_id

    def record(self, data, mimetype, kind, filename=None):
        saved[filename] = data
        return keep(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    pool = load_pool(ROOT / "sample_data" / "teaching_k4.csv")
    f = teaching_figure(pool)
    at = _run("teach_figure10.py", fig_cursor="150")
    assert not at.exception, at.exception
    assert [b.label for b in at.get("download_button")] == ["Numbers (text)"]
    text = saved["figure10_teaching_static-range_t150.txt"].decode()
    assert "cursor at 150 of 171 labels" in text and "Reading order: static-range" in text
    assert "n = 171, K = 4" in text
    for rule, path in f.paths.items():
        exact = Fraction(int(path.lower[150]), path.unit * path.scale)
        state = "not certified" if path.stop > 150 else "certified"
        assert f"  {rule}: {exact} = {float(exact):.6f}, {state} (stops at {path.stop})" in text
    assert "Stops: shared 140 (82%), centered 158 (92%), separate 171 (100%)" in text
    assert f"Prelabel bound: {f.prelabel}" in text
    assert f"Minimum certificate: {certify(pool).upper}" in text
    at.button(key="fig_cursor_step").click().run()
    assert "cursor at 151 of 171" in saved["figure10_teaching_static-range_t151.txt"].decode()

def test_theory_page_defaults():
    """At the default n (10,000) the page shows the library's simulation, within the
    stated tolerances of the limits
    (tests/core/test_teaching.py::test_random_orders_default_limits)."""
    at = _run("teach_theory.py")
    assert not at.exception, at.exception
    r = random_orders(ns=(10000,), K=2, q=0.3, seeds=5, policy="adaptive-pair-sum")
    text = _text(at)
    assert (f"prelabel/n = **{r.prelabel[0]:.3f}** (limit {LIMITS['prelabel']})" in text)
    assert f"C(y)/n = **{r.cert_upper[0]:.3f}**" in text
    assert f"reads **{r.policy_read[0]:.3f}** n" in text
    assert abs(r.prelabel[0] - 0.25) <= 0.01 and 0.40 <= r.cert_upper[0] <= 0.5
    assert 0.80 <= r.policy_read[0] <= 1
    assert "probability **1/4** but carries **1/2**" in text
    assert "prelabel = **90** (= s)" in text


def test_theory_page_presentation_mode():
    """?present=1: Figure 5 and the "At n = ..." numbers come first, one number a line,
    the settings under them; the SVG export is the image shown."""
    at = _run("teach_theory.py", present="1")
    assert not at.exception, at.exception
    assert at.toggle(key="th_present").value
    r = random_orders(ns=(10000,), K=2, q=0.3, seeds=5, policy="adaptive-pair-sum")
    first = at.markdown[1].value  # right under the title
    assert first.startswith("At **n = 10,000** (K = 2, q = 0.3, mean of 5 pools):")
    assert f"- prelabel/n = **{r.prelabel[0]:.3f}** (limit {LIMITS['prelabel']})" in first
    assert f"- C(y)/n = **{r.cert_upper[0]:.3f}** (limit {LIMITS['certificate']})" in first
    assert f"- adaptive-pair-sum reads **{r.policy_read[0]:.3f}** n" in first
    assert _text(at).index("At **n = 10,000**") < _text(at).index("Candidates that")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Figure 5 (SVG)", "Numbers (text)", "Figure 4 (SVG)"]


def test_theory_page_draws_figure_4_without_plotly():
    """Figure 4 is an SVG drawn with the page's text (the page waits for no plotly.js):
    the quarter's triangles and one dot per sampled point, far ones red."""
    from certlib.teaching.theory import sample_square
    from ui.svg_chart import unit_square

    at = _run("teach_theory.py")
    assert not at.exception, at.exception
    assert not at.get("plotly_chart")
    sq = sample_square(2000, seed=0)
    svg = unit_square([(sq["u"][sq["far"]], sq["v"][sq["far"]], "far", "#e15759"),
                       (sq["u"][~sq["far"]], sq["v"][~sq["far"]], "near", "#bab0ac")],
                      regions=[([(0.5, 0), (1, 0), (1, 0.5)], "", "red")])
    dots = [ln for ln in svg.splitlines() if ln.startswith("<circle")]
    assert len(dots) == 2000
    assert sum("fill='#e15759'" in d for d in dots) == int(sq["far"].sum())
    assert svg.count("<polygon") == 1 and ">far</text>" in svg


def test_figure10_names_its_data_beside_the_papers():
    """The page says which file it draws (n, K, candidates) and sets its numbers beside the
    paper's Ionosphere condition; another pool in the picker changes every number."""
    at = _run("teach_figure10.py")
    assert not at.exception, at.exception
    text = _text(at)
    assert "**Data shown:** `sample_data/teaching_k4.csv`" in text
    assert "n = 171 rows, K = 4 candidates" in text
    assert "Ionosphere (UCI), split 731, trees, n = 106" in text
    assert "stop at 73 / 77 / 106 labels" in text and "Here they stop at 140 / 158 / 171" in text
    assert "| minimum certificate | 49–50 (46–47%) | 121 (71%) |" in text
    assert "| prelabel bound | 16 (15%) | 55 (32%) |" in text
    assert "Ionosphere is not shipped here" in text

    at.selectbox(key="pool_choice").set_value("Breast cancer, 4 models (demo)").run()
    assert not at.exception, at.exception
    text = _text(at)
    assert "**Data shown:** `sample_data/demo_binary.csv`" in text
    assert "teaching_k4" not in text
    f = teaching_figure(load_pool(ROOT / "sample_data" / "demo_binary.csv"))
    stops = " / ".join(str(f.paths[r].stop) for r in ("shared", "centered", "separate"))
    assert stops != "140 / 158 / 171" and f"Here they stop at {stops}" in text
    assert f"| prelabel bound | 16 (15%) | {f.prelabel} (" in text


def test_figure10_uploaded_pool_and_unsuitable_pool(tmp_path, monkeypatch):
    """An upload is drawn under its own name; a partly labelled pool gets one message."""
    import polars as pl

    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path))
    df = pl.read_csv(ROOT / "sample_data" / "panels" / "wine_s2_tree_k4.csv")
    full = SavedPools().add("wine_s2.csv", df.write_csv().encode())
    at = _run("teach_figure10.py", pool=f"upload:{full.digest}")
    assert not at.exception, at.exception
    text = _text(at)
    assert "**Data shown:** the uploaded file" in text and "wine_s2.csv" in text
    assert "n = 54 rows, K = 4 candidates" in text
    assert "this pool keeps them" in text  # eps040 = eps120 in this file

    lab = [v if i < 20 else None for i, v in enumerate(df["label"].to_list())]
    partly = SavedPools().add("partly.csv", df.with_columns(pl.Series("label", lab))
                              .write_csv().encode())
    at = _run("teach_figure10.py", pool=f"upload:{partly.digest}")
    assert not at.exception, at.exception
    msgs = [*at.error, *at.warning, *at.info]
    assert len(msgs) == 1 and "not fully labelled (34 of 54 rows have no label)" in msgs[0].value
    assert not at.markdown or "Data shown" not in _text(at)


def test_figure10_runs_on_a_shipped_panel_pool():
    """The page offers every file of sample_data/panels/; choosing one makes it the active
    pool (in the picker too), names it, and runs the same protocol: the shared stop equals
    certlib's replay on that file."""
    import certlib
    from ui.pool_picker import panels

    at = _run("teach_figure10.py")
    assert not at.exception, at.exception
    box = at.selectbox(key="fig10_panel")
    assert len(box.options) == 36 and box.value is None
    box.set_value("panel:wine_s2_tree_k4").run()
    assert not at.exception, at.exception
    text = _text(at)
    assert "`sample_data/panels/wine_s2_tree_k4.csv`, a shipped panel pool" in text
    assert "Wine (scikit-learn), evaluation split 2; the candidates are trees" in text
    assert at.session_state["pool_ref"] == "panel:wine_s2_tree_k4"
    assert at.selectbox(key="pool_choice").value == panels()["panel:wine_s2_tree_k4"]
    pool = certlib.load_pool(ROOT / "sample_data" / "panels" / "wine_s2_tree_k4.csv")
    stop = certlib.replay(pool, policy="static-range").labels_read
    assert f"shared {stop}" in text


def test_a_panel_name_outside_the_listing_is_refused():
    """A hand-edited panel reference names only files of the listing: nothing outside
    sample_data/panels/ is read."""
    from certlib.errors import CertlibError
    from ui.pool_picker import load_ref

    with pytest.raises(CertlibError, match="no shipped panel pool"):
        load_ref("panel:../demo_binary")


def test_figure10_panel_box_follows_the_sidebar(monkeypatch):
    """After a panel pool, a pool chosen in the sidebar empties the panel box, so the same
    panel can be chosen again; a panel's exports are named after it."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    saved = []  # the download names the page hands to Streamlit
    keep = MemoryMediaFileStorage.load_and_get_id

    def record(self, data, mimetype, kind, filename=None):
        saved.append(filename)
        return keep(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    at = _run("teach_figure10.py")
    at.selectbox(key="fig10_panel").set_value("panel:wine_s0_tree_k4").run()
    assert at.session_state["pool_ref"] == "panel:wine_s0_tree_k4"
    at.selectbox(key="pool_choice").set_value(
        "Teaching pool (paper Figure 10 protocol)").run()
    assert not at.exception, at.exception
    assert at.session_state["pool_ref"] == "sample:teaching"
    assert at.selectbox(key="fig10_panel").value is None
    at.selectbox(key="fig10_panel").set_value("panel:wine_s0_tree_k4").run()
    assert at.session_state["pool_ref"] == "panel:wine_s0_tree_k4"
    assert "`sample_data/panels/wine_s0_tree_k4.csv`" in _text(at)
    assert saved[-1].startswith("figure10_wine_s0_tree_k4_static-range_t"), saved
