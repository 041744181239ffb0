"""Plan page: the budget-tolerance map (paper Figures 7 and 8) and a label forecast.

Thin: every number comes from `certlib.cli_plan.plan_payload` (the function behind
`certlib plan`), so the page shows what the command prints."""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import certlib
from certlib.planning.budget_plan import DEFAULT_TOLERANCES, POOL_SUFFIXES
from certlib.cli_output import percent
from certlib.cli_plan import plan_payload
from certlib.errors import CertlibError
from ui.cache import POOL_HASH, pool_key
from ui.inputs import budget_input, default_budget, number_box, policy_input, seed_input
from ui.known_labels import known_labels
from ui.pool_picker import choose_pool, pool_summary
from ui.state import TOLERANCE, sticky
from ui.text import plain, plot_text
from ui.multi_upload import unpack_pool_uploads

COLOURS = {"ruled_out": "#d9534f", "unresolved": "#f0ad4e", "certified": "#5cb85c"}
WORDS = {"ruled_out": "ruled out", "unresolved": "unresolved", "certified": "certified"}
MAX_CACHED = 32

st.title("Budget map and forecast")
st.caption("Which budgets can never suffice (exact), which the policy certifies within "
           "(exact, when the pool is labelled), and a forecast of the labels it will need "
           "(a forecast, not a guarantee). Paper 000, section 6, Figures 7 and 8.")


@st.cache_resource
def _forecasts() -> dict:
    """Forecasts computed on this server, by pool hash and settings (bounded)."""
    return {}


@st.cache_data(show_spinner="Working out what the budget buys ...", max_entries=64,
               hash_funcs=POOL_HASH)
def _budget_answer(pool, budget: int, policy: str, draws: int, seed: int):
    return certlib.what_budget_buys(pool, budget, policy=policy, draws=draws, seed=seed)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=POOL_HASH)
def _map(pool, tols: tuple, policy: str):
    return plan_payload(pool, tolerances=tols, policy=policy)[0]


def _parse_tols(text: str):
    """(tolerances, None) or (None, the one message saying what is wrong)."""
    usage = "Tolerances must be numbers separated by commas, e.g. 0, 0.001, 0.01."
    try:
        vals = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        return None, usage
    if not vals:
        return None, usage
    bad = next((v for v in vals if not 0 <= v <= 0.5), None)  # NaN fails too
    if bad is not None:
        return None, (f"Tolerance {bad:g} is outside 0 to 0.5 (the range the other pages "
                      "take): an AUGRC gap is at most 0.5, so larger ones say nothing more.")
    return vals, None


def _tol_label(t) -> str:
    return f"{float(t):g}"


def _heatmap(m, fcs, budgets_txt, known: int = 0) -> go.Figure:
    """``known``: labels already in the pool (they count as read)."""
    code = {"ruled_out": 0, "unresolved": 1, "certified": 2}
    z, text, hover = [], [], []
    for i, t in enumerate(m.tolerances):
        zr, tr, hr = [], [], []
        for b, cell in zip(m.budgets, m.cells[i]):
            zr.append(code[cell])
            p = None
            if cell == "unresolved" and fcs is not None:
                p = fcs[i].p_certified(b)
            # no "%" in the cells (the caption says so): 11 columns fit an 800 px screen
            tr.append("" if p is None else percent(p).rstrip("%"))
            if cell == "ruled_out":
                h = (f"tolerance {_tol_label(t)}, budget {b:,}: ruled out. No policy can "
                     f"certify with fewer than {m.prelabel[i]:,} labels, whatever the labels.")
            elif cell == "certified" and not m.labelled and m.known_certifies(i, b):
                h = (f"tolerance {_tol_label(t)}, budget {b:,}: certified. "
                     + (f"The {m.known:,} labels already known certify at this tolerance "
                        "(exact), and they count as read." if m.known else
                        "The choice is certified at this tolerance with no label read "
                        "(exact)."))
            elif cell == "certified" and not m.labelled:
                h = (f"tolerance {_tol_label(t)}, budget {b:,}: certified. With every label "
                     "read the exact test certifies, whatever the labels.")
            elif cell == "certified":
                h = (f"tolerance {_tol_label(t)}, budget {b:,}: certified. The policy "
                     f"certifies after {m.labels_read[i]:,} labels (exact replay).")
            elif m.labelled:
                h = (f"tolerance {_tol_label(t)}, budget {b:,}: unresolved. Not ruled out, "
                     f"but the policy needs {m.labels_read[i]:,} labels.")
            else:
                h = (f"tolerance {_tol_label(t)}, budget {b:,}: unresolved. Not ruled out; "
                     "the labels decide" + ("" if p is None else
                                            f" (forecast: certifies with probability "
                                            f"{percent(p)})")
                     + "." + (f" This budget is below the {known:,} labels already known, "
                              "which count as read." if b < known else ""))
            # lines of at most 56 characters: one line runs past the chart's left edge
            # at 800 px and cuts the tolerance and budget off
            hr.append("<br>".join(textwrap.wrap(h, 56)))
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    scale = [[0, COLOURS["ruled_out"]], [1 / 3, COLOURS["ruled_out"]],
             [1 / 3, COLOURS["unresolved"]], [2 / 3, COLOURS["unresolved"]],
             [2 / 3, COLOURS["certified"]], [1, COLOURS["certified"]]]
    fig = go.Figure(go.Heatmap(
        z=z, x=budgets_txt, y=[_tol_label(t) for t in m.tolerances], zmin=-0.5, zmax=2.5,
        colorscale=scale, text=text, texttemplate="%{text}", textfont={"size": 10},
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>", xgap=2, ygap=2,
        # the colour key below the map: at its side it took a fifth of an 800 px screen
        colorbar=dict(tickvals=[0, 1, 2], ticktext=["ruled out", "unresolved", "certified"],
                      thickness=12, orientation="h", y=-0.02, yanchor="top", len=0.6,
                      xanchor="center", x=0.5, ypad=60),
    ))
    fig.update_layout(height=160 + 40 * len(m.tolerances), margin=dict(l=10, r=10, t=30, b=10),
                      xaxis_title="budget (labels)", yaxis_title="AUGRC tolerance",
                      xaxis_type="category", yaxis_type="category")
    return fig


def _figure7(mm, counts, cols) -> go.Figure:
    """Paper Figure 7: per tolerance (a row of panels), stacked bars over the budgets of
    how many pools each budget rules out, certifies and leaves unresolved."""
    from plotly.subplots import make_subplots

    rows = len(mm.tolerances)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.04,
                        subplot_titles=[f"tolerance {_tol_label(t)}" for t in mm.tolerances])
    for i in range(rows):
        for kind in ("ruled_out", "certified", "unresolved"):
            fig.add_bar(x=cols, y=[c[kind] for c in counts[i]], name=WORDS[kind],
                        marker_color=COLOURS[kind], legendgroup=kind, showlegend=i == 0,
                        hovertemplate=f"%{{x}} of n: %{{y}} {WORDS[kind]}<extra></extra>",
                        row=i + 1, col=1)
    fig.update_layout(barmode="stack", height=130 + 110 * rows, bargap=0.15,
                      margin=dict(l=10, r=10, t=40, b=60),  # the mode bar above the titles
                      legend=dict(orientation="h", yref="container", y=0, yanchor="bottom",
                                  x=0.5, xanchor="center"))
    top = len(mm.maps)  # the axis ends at the number of pools, and says it
    fig.update_yaxes(range=[0, top], tickvals=sorted({0, top // 2, top}))
    fig.update_xaxes(type="category", title_text="budget (% of n)", row=rows, col=1)
    fig.update_annotations(font_size=12)
    return fig


def _histogram(f) -> go.Figure:
    low, high = f.interval
    med = f.quantiles[0.5]
    fig = go.Figure(go.Histogram(x=list(f.labels_read), nbinsx=40, name="draws",
                                 marker_color="#6c8ebf"))
    # above the bars: the low mark's text ends at its line, the high mark's starts there
    # and the median's sits a line higher, so close marks (129 / 135 on an 800 px
    # screen) no longer overprint and no text covers the tallest bars
    for x, name, anchor, lift, dash in ((low, "80% low", "right", 0, "dash"),
                                        (med, "median", "center", 18, "solid"),
                                        (high, "80% high", "left", 0, "dash")):
        fig.add_vline(x=x, line_dash=dash)
        fig.add_annotation(x=x, y=1.0, yref="paper", yanchor="bottom", xanchor=anchor,
                           yshift=lift, text=f"{name}: {x:,}", showarrow=False,
                           xshift={"right": -3, "left": 3}.get(anchor, 0))
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=60, b=10), showlegend=False,
                      xaxis_title="labels read in total (forecast, not a guarantee)",
                      yaxis_title="draws")
    return fig


pool, label = choose_pool()
if pool is None:
    st.stop()
pool, known_from = known_labels(pool)
pool_summary(pool)

tol_text = st.text_input("AUGRC tolerances (comma-separated)",
                         **sticky("plan_tols", ", ".join(f"{t:g}" for t in DEFAULT_TOLERANCES)))
c2, c3, c4 = st.columns([2, 1, 1])
policy = policy_input(c2, "plan_policy")
draws = int(number_box(c3, "Forecast draws", "plan_draws", 200, low=10, high=2000, step=10))
seed = seed_input(c4, "plan_seed", "Seed")
tols, why = _parse_tols(tol_text)
if tols is None:
    st.error(why)
    st.stop()
key = pool_key(pool)
try:
    m = _map(pool, tols, policy)
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()

# ------------------------------------------------------------------- forecast (state)
fkey = (key, tuple(float(t) for t in m.tolerances), policy, draws, seed)
store = _forecasts()
fcs = store.get(fkey)
need_forecast = not pool.fully_labelled

st.header("1. The prelabel bound per tolerance")
pre_df = pd.DataFrame({
    "tolerance": [_tol_label(t) for t in m.tolerances],
    "prelabel bound (labels)": list(m.prelabel),
    "% of n": [round(100 * p / pool.n, 1) for p in m.prelabel],
    "replay (labels)": (list(m.labels_read) if m.labelled
                        else ["needs every label"] * len(m.tolerances)),
})
# one above the other: side by side, the table hid its last columns on an 800 px screen
cA, cB = st.container(), st.container()
cA.dataframe(pre_df, hide_index=True, key="plan_prelabel_table", width="stretch",
             column_config={"% of n": st.column_config.NumberColumn(format="%.1f")})
line = go.Figure(go.Scatter(x=[float(t) for t in m.tolerances], y=list(m.prelabel),
                            mode="lines+markers", name="prelabel bound"))
if m.labelled:
    line.add_trace(go.Scatter(x=[float(t) for t in m.tolerances], y=list(m.labels_read),
                              mode="lines+markers", name=f"{plot_text(policy)} replay"))
line.update_layout(height=300, margin=dict(l=10, r=10, t=40, b=10),
                   xaxis_title="AUGRC tolerance", yaxis_title="labels",
                   legend=dict(orientation="h", y=1.02, yanchor="bottom"))
cB.plotly_chart(line, width="stretch")

st.header("2. The budget-tolerance map")
if need_forecast and fcs is None:
    st.caption("Unresolved cells get the forecast probability of certifying once the "
               "forecast (section 4) has run.")
st.plotly_chart(_heatmap(m, fcs if need_forecast else None,
                         [f"{b:,}" for b in m.budgets], pool.n_labelled), width="stretch")
st.caption("Red: ruled out (below the prelabel bound; exact). Green: "
           + ("the policy certifies within the budget (exact replay)" if m.labelled else
              "certified whatever the unread labels are (exact): the budget reads every row, "
              "or covers labels already known that certify")
           + ". Amber: unresolved"
           + (" (numbers: forecast probability of certifying within the budget, in %)."
              if need_forecast else
              ": not ruled out, but the policy's replay needs more labels than the budget."
              if m.labelled else ": not ruled out; the labels decide."))

st.header("3. What your budget buys")
budget = budget_input(st, f"Budget (labels, at most n = {pool.n:,})", pool.n, default_budget(pool),
                      key=f"plan_budget_{key[:16]}", shared=f"budget_{key[:16]}")
try:
    answer = _budget_answer(pool, budget, policy, draws, int(seed))
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
st.markdown(f"**{answer.text(plain)}**")
best = m.smallest_tolerance(budget)
known = pool.n_labelled
grid = (f"On the map's grid the smallest tolerance certified within {budget:,} labels is "
        f"{float(best):g}" if best is not None else
        f"The map's columns start from the {known:,} labels already known (they count as "
        f"read), so a budget of {budget:,} has no cell of its own"
        if 0 < budget < known < pool.n else
        f"On the map's grid no tolerance is certified within {budget:,} labels"
        if m.labelled or pool.fully_labelled else
        f"On the map's grid no tolerance is certain within {budget:,} labels (the unread "
        "labels decide)")
st.caption(f"{grid}. The sentence names the tolerance itself, off the grid: that of the "
           "policy's run aiming at the exact choice, stopped at the budget (shared rule), "
           "as Plan and certify and `certlib plan --budget` say it"
           + ("" if pool.fully_labelled else
              f", with this page's {draws} draws and seed") + ".")

st.header("4. Forecast: labels the policy will read")
if not need_forecast:
    st.info("Every label is known, so the map above is the policy's exact replay; no "
            "forecast is needed.")
else:
    st.caption(f"{pool.n_labelled:,} labels are known ({known_from}) and count as read. "
               "The unread "
               f"labels are drawn {draws} times from a label model and the policy is replayed "
               "with the exact stopping test on each draw: **a forecast, not a guarantee**. "
               "How far off it was on held-out panel pools (Benchmarks, in the documentation): "
               "the median by 6-10% of the pool on average before any label, by 4-6% once a "
               "quarter was read; the calibrated 80% interval held the realised count on 74% "
               "of 96 fresh pools before any label and on 80% once a quarter was read.")
    b1 = b2 = st.container(horizontal=True)  # columns cut "Run forecast" at 800 px
    run = b1.button("Run forecast", type="primary", disabled=fcs is not None,
                    key="plan_run",
                    help="Already run with these settings: the forecast is below. Another "
                         "policy, seed, number of draws or tolerance grid runs a new one."
                    if fcs is not None else None)
    stop = b2.button("Stop", key="plan_stop", disabled=fcs is not None,
                     help="Stops a running forecast (nothing is kept).")
    if fcs is not None:
        st.caption("The forecast below is for these settings (kept for this pool); change "
                   "a setting above to run another.")
    # a change anywhere on the page (the budget, say) reruns the page and so interrupts a
    # running forecast: with the same settings it starts again; otherwise say so.  Only
    # when the interrupted run was the one just before this (app.py counts every run):
    # after a visit to another page, or a run that stopped early, nothing restarts
    now = st.session_state.get("_run")
    started = st.session_state.pop("plan_running", None)
    interrupted = (started[0] if started is not None and now is not None
                   and started[1] == now - 1 else None)
    if stop and started is None:  # no forecast had started (or it had finished)
        st.info("No forecast was running, so there was nothing to stop.")
    if interrupted is not None and not run and fcs is None:
        if stop:
            st.info("Forecast stopped; nothing was kept.")
        elif interrupted == fkey:
            run = True
            st.caption("The forecast restarted after a change on the page.")
        else:
            st.info("The forecast settings changed while it ran; press *Run forecast* "
                    "for the new ones.")
    elif started is not None and started[0] == fkey and not run and fcs is None:
        st.info("The forecast you started here was interrupted before it finished (another "
                "page or pool was opened meanwhile); nothing was kept. Press *Run forecast* "
                "to start it again.")
    # drawn on every run, so the bar of a running forecast takes this slot and not the
    # place of the next element of the previous run (section 5's heading vanished)
    bar_slot = st.empty()
    if run and fcs is None:
        st.session_state["plan_running"] = (fkey, now)
        bar = bar_slot.progress(0.0, text="Forecasting ...")

        def _progress(frac):
            bar.progress(min(1.0, float(frac)), text=f"Forecasting ... {100 * frac:.0f}%")

        try:
            fcs = plan_payload(pool, tolerances=m.tolerances, policy=policy,
                               forecast_draws=draws, seed=seed, progress=_progress)[1]
        except Exception:  # a failure is not an interruption (those are BaseExceptions)
            st.session_state.pop("plan_running", None)
            raise
        if len(store) >= MAX_CACHED:
            store.pop(next(iter(store)))
        store[fkey] = fcs
        st.session_state.pop("plan_running", None)
        bar.empty()
        st.rerun()
    if fcs is not None:
        with st.expander("How the forecast models the unread labels"):
            st.text("\n".join(fcs[0].label_model_note.split("; ")))
        qdf = pd.DataFrame({
            "tolerance": [_tol_label(f.tolerance) for f in fcs],
            "median": [f.quantiles[0.5] for f in fcs],
            "80% low": [f.interval[0] for f in fcs],
            "80% high": [f.interval[1] for f in fcs],
            f"P(certify within {budget:,})": [percent(f.p_certified(budget)) for f in fcs],
        })
        st.dataframe(qdf, hide_index=True, key="plan_forecast_table")
        shown = [_tol_label(x.tolerance) for x in fcs]
        # first the tolerance chosen on the other pages, when the map has it
        chosen = _tol_label(st.session_state.get("_sticky", {}).get(TOLERANCE, 0.0))
        pick = st.selectbox("Histogram for tolerance", shown, key="plan_hist_tol",
                            index=shown.index(chosen) if chosen in shown else 0)
        f = fcs[shown.index(pick)]
        st.plotly_chart(_histogram(f), width="stretch")

st.header("5. Several pools (Figure 7 counts)")
with st.expander("Upload several pool files or a zip of them"):
    ups = st.file_uploader("Pool files (CSV, Parquet) or a .zip", accept_multiple_files=True,
                           type=["csv", "tsv", "parquet", "pq", "zip"], key="plan_multi")
    if ups:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            unpacked = None
            try:
                unpacked = unpack_pool_uploads([(up.name, up.getvalue()) for up in ups],
                                               folder)
                mm = certlib.budget_map(folder, tols, policy=policy)
            except CertlibError as exc:
                # a file from a zip: say which zip (the library names only the file)
                origin = unpacked.origin_of(str(exc)) if unpacked is not None else None
                st.error(plain(exc) + (f" (the file is {plain(origin)})" if origin else ""))
                mm = None
        if mm is not None:
            if unpacked.skipped:
                shown = ", ".join(plain(n) for n in unpacked.skipped[:8])
                st.caption(f"Skipped {len(unpacked.skipped):,} file(s) that are not pool files "
                           f"({', '.join(POOL_SUFFIXES)}): {shown}"
                           + (", ..." if len(unpacked.skipped) > 8 else "") + ".")
            counts = mm.counts()
            cols = [f"{100 * float(fr):g}%" for fr in mm.fractions]
            table = pd.DataFrame(
                [[f"{c['certified']} C / {c['unresolved']} ? / {c['ruled_out']} x"
                  for c in row] for row in counts],
                index=[_tol_label(t) for t in mm.tolerances], columns=cols)
            many = "" if len(mm.maps) == 1 else "s"
            st.markdown(f"**{len(mm.maps)} pool{many}**, budget as % of each pool's n: how "
                        "many are ruled out, certified and unresolved (paper Figure 7).")
            # bars, as the paper draws it: a table of 11 text columns runs off a 1400 px
            # page; the numbers stay in the table below the chart
            st.plotly_chart(_figure7(mm, counts, cols), width="stretch")
            with st.expander("The counts as a table"):
                st.markdown("Cells: certified (C) / unresolved (?) / ruled out (x).")
                st.dataframe(table, key="plan_multi_counts")
            small = mm.smallest_tolerances()
            st.markdown("**Figure 8:** smallest certified tolerance per budget and pool "
                        "(- = none, or unlabelled rows)")
            st.dataframe(pd.DataFrame(
                [["-" if t is None else f"{float(t):g}" for t in row] for row in small],
                index=[str(n) for n in mm.names], columns=cols), key="plan_multi_fig8")
