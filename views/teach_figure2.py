"""Paper Figure 2, step by step: the exact interval [L_AB, H_AB] as labels are read."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from certlib import certify, prelabel_bound
from certlib.errors import CertlibError
from certlib.teaching.worked_examples import (exact_lp, figure2_pool, minimum_certificates,
                                              pair_trace, reading_order)
from ui.state import url_state, url_widget, write_url_state
from ui.teach import (chart_fonts, light_table, numbers_download, parse_label, parse_step,
                      plot_config, step_controls, teaching_header)

on = teaching_header("Figure 2: the stopping test on four rows", "fig2")
top, bottom = st.container(), st.container()
# in presentation mode the chart and its numbers come first, the settings under them
fig_box, set_box = (top, bottom) if on else (bottom, top)
set_box.markdown(
    "Two candidates, **A** and **B**, four rows. The difference of their scaled risks "
    "r_A − r_B is linear in the labels; its exact range over every completion of the "
    "unread labels is the interval [L_AB, H_AB]. **Step** (→ or Space) reads one row at a "
    "time in the chosen order, **Back** (←) undoes it, **Reset** (Home) starts again. "
    "Ties favour **A** (listed first). Change any label or the read order below: every "
    "number is recomputed.")

DEFAULT_LABELS = (1, 0, 0, 0)
base = figure2_pool()
static = reading_order(base)


def _reset() -> None:
    st.session_state["fig2_t"] = 0


# the labels, the read order and the step are kept in the address (a reload shows them)
# and in the session (a visit to another page keeps them)
URL_KEYS = [f"fig2_y{i + 1}" for i in range(4)] + ["fig2_order", "fig2_t"]
url_state("fig2_t", 0, parse_step)

set_box.subheader("Labels and read order")
cols = set_box.columns(5)
labels = []
for i in range(4):
    labels.append(cols[i].selectbox(
        f"y{i + 1}", [0, 1], on_change=_reset,
        **url_widget(f"fig2_y{i + 1}", DEFAULT_LABELS[i], parse_label, [0, 1])))
order_text = cols[4].text_input(
    "Read order (rows)", on_change=_reset,
    **url_widget("fig2_order", ", ".join(str(r + 1) for r in static)),
    help="All four rows, e.g. 3, 4, 1, 2 (the static range order: decreasing |b_i|, ties by "
    "row index).")
write_url_state(*URL_KEYS)  # a bad order too: a reload shows what was typed
pool = figure2_pool(labels)


def _read_order(text: str, n: int) -> list:
    """The typed rows (1-based, as shown) as row positions; ValueError names the entry."""
    rows = [x for x in text.replace(";", ",").replace(" ", ",").split(",") if x.strip()]
    out = []
    for x in rows:
        if not (x.strip().isascii() and x.strip().isdigit()) or not 1 <= int(x) <= n:
            raise ValueError(f"{x.strip()!r} is not a row; rows are 1 to {n}")
        if int(x) - 1 in out:
            raise ValueError(f"row {int(x)} is listed twice")
        out.append(int(x) - 1)
    if len(out) != n:
        missing = ", ".join(str(r + 1) for r in range(n) if r not in out)
        raise ValueError(f"row {missing} is missing" if len(out) == n - 1
                         else f"rows {missing} are missing")
    return out


try:
    order = _read_order(order_text, pool.n)
    trace = pair_trace(pool, order)
except (ValueError, CertlibError) as exc:
    set_box.error(f"Read order: {exc}. Write the four rows 1-4 once each, e.g. 3, 4, 1, 2.")
    st.stop()

T = len(trace.steps) - 1
read_pos = {row: s for s, row in enumerate(trace.order, 1)}
by_row = {s.row: s for s in trace.steps[1:]}
span = max(max(abs(s.lower), abs(s.upper)) for s in trace.steps) + 1


def _chart(t: int):
    fig = go.Figure()
    for s in trace.steps[: t + 1]:
        now = s.t == t
        # each end's number outside the interval (a 0 end sat under the tie line, unread);
        # a closed interval is one point with one number (it was printed twice)
        point = s.lower == s.upper
        fig.add_scatter(x=[s.lower] if point else [s.lower, s.upper],
                        y=[s.t] * (1 if point else 2), mode="lines+markers+text",
                        line=dict(width=10 if now else 5, color="#4e79a7" if now else "#b6c8dc"),
                        marker=dict(size=12 if now else 8),
                        text=[str(s.lower)] if point else [str(s.lower), str(s.upper)],
                        textposition=["top right"] if point else ["top left", "top right"],
                        showlegend=False, hovertemplate=f"after {s.t} labels: [%{{x}}]")
    fig.add_vline(x=0, line_color="#e15759", line_dash="dash",
                  annotation_text="0: a tie (goes to A)", annotation_position="top")
    fig.update_layout(height=300, margin=dict(t=40, b=40, l=10, r=10),
                      xaxis=dict(range=[-span, span], title="r_A − r_B", dtick=2),
                      yaxis=dict(range=[T + 0.7, -0.7], title="labels read", dtick=1))
    chart_fonts(fig, on, height=300)
    return fig


def _verdict(t: int) -> str:
    """What the step shows, in words (markdown); the same text goes into the export."""
    cur = trace.steps[t]
    if t == 0:
        out = (f"No label read: r_A − r_B can be anything in [{cur.lower}, {cur.upper}], so "
               "either candidate can still win.")
    else:
        prev = trace.steps[t - 1]
        what = (f"raises L_AB from {prev.lower} to {cur.lower}" if cur.gain
                else f"leaves L_AB at {cur.lower} and lowers H_AB from {prev.upper} to "
                     f"{cur.upper}")
        out = (f"Step {t}: read **row {cur.row + 1}**, y = {cur.label}, b = {cur.b}, "
               f"g = {cur.gain}: it {what}.")
    return out


@st.fragment
def _figure() -> None:
    """The step's chart and numbers: a step redraws only this (`st.fragment`)."""
    t = step_controls("fig2_t", T, what="label")
    write_url_state("fig2_t")
    cur = trace.steps[t]
    seq = " → ".join(f"[{s.lower}, {s.upper}]" for s in trace.steps[: t + 1])
    numbers = st.container(key="teach_numbers")
    # on a projector the chart draws the sequence: one line less above it
    numbers.markdown(f"**After {t} of {T} labels:** [L_AB, H_AB] = "
                     f"**[{cur.lower}, {cur.upper}]**"
                     + ("" if on else f"  \nSequence so far: {seq}"))
    numbers.markdown(_verdict(t))
    stop_at = trace.certified_at
    if cur.selected is not None and t > stop_at:
        verdict = (f"**{cur.selected} has been certified since label {stop_at}**: the exact "
                   f"test stops there, so a policy reads {stop_at} labels with this order. "
                   "The steps after it only show the rest of the order, for the hindsight "
                   "view.")
        numbers.success(verdict)
    elif cur.selected is not None:
        verdict = (f"**{cur.selected} is certified** after {t} labels: it wins under every "
                   "completion of the unread labels (tie rule included). The exact test "
                   "stops here" + (f"; step on to see the rest ({T - t} more)." if t < T
                                   else "."))
        numbers.success(verdict)
    elif cur.lower == 0:
        verdict = (
            "**The tie rule at L_AB = 0.** Every completion now gives r_A − r_B ≥ 0: B is "
            "never worse than A. But a completion with r_A = r_B is still possible, and a "
            "tie goes to A, the earlier candidate. So B is **not** certified yet: B needs "
            "L_AB > 0 (paper eq. (5), strict for the later candidate). For A, the earlier "
            "one, 0 would already be enough: A is certified as soon as H_AB ≤ 0.")
        numbers.warning(verdict)
    elif cur.upper == 0:
        verdict = ("H_AB = 0: every completion gives r_A ≤ r_B, and a tie goes to A, so 0 "
                   "already certifies A, the earlier candidate.")
        numbers.success(verdict)
    else:
        verdict = ("Not certified yet: the interval still contains completions where A "
                   "wins (≤ 0) and completions where B wins (> 0).")
        numbers.caption(verdict)
    st.plotly_chart(_chart(t), width="stretch", config=plot_config(f"figure2_step{t}"),
                    key="fig2_chart")
    labels_txt = ", ".join(f"y{i + 1} = {v}" for i, v in enumerate(labels))
    order_txt = ", ".join(str(r + 1) for r in trace.order)
    numbers_download(
        "\n".join([f"Figure 2, step {t} of {T} (labels {labels_txt}; read order {order_txt})",
                    f"[L_AB, H_AB] = [{cur.lower}, {cur.upper}]",
                    f"Sequence so far: {seq}", _verdict(t).replace("**", ""),
                    verdict.replace("**", "")]) + "\n",
        f"figure2_step{t}.txt")
    _table(t)
    _hindsight(t)


def _table(t: int) -> None:
    light_table(
        {"row": [i + 1 for i in range(pool.n)],
         "w_A": [int(pool.weights[0, i]) for i in range(pool.n)],
         "w_B": [int(pool.weights[1, i]) for i in range(pool.n)],
         "ŷ_A": [int(pool.preds[0, i]) for i in range(pool.n)],
         "ŷ_B": [int(pool.preds[1, i]) for i in range(pool.n)],
         "b_i": [by_row[i].b for i in range(pool.n)],
         "y_i": labels,
         "g_i": [by_row[i].gain for i in range(pool.n)],
         # one short column (two were cut at 800 px): the position in the order, ✓ once read
         "read": [f"{read_pos[i]} ✓" if read_pos[i] <= t else str(read_pos[i])
                  for i in range(pool.n)]})
    st.caption("b_i = a_Ai − a_Bi with a_ji = w_ji (1 − 2ŷ_ji), so r_A − r_B = c + Σ b_i y_i; "
               "g_i = b_i y_i − min(0, b_i) is how much reading row i raises L_AB "
               "(shown with hindsight: a policy does not know y_i before reading it). read: "
               "the row's place in the read order, ✓ once it has been read.")


def _hindsight(t: int) -> None:
    st.subheader("Hindsight")
    if t < T:
        st.caption(f"Step to the end ({T - t} more) for the hindsight view: with every "
                   "label known, how many would have sufficed?")
        return
    try:
        pb = prelabel_bound(pool).prelabel_bound
        lp = exact_lp(pool)
        cert = certify(pool)
        mins = minimum_certificates(pool)
    except CertlibError as exc:
        st.error(str(exc))
        return
    stop = trace.certified_at
    read = trace.order[:stop]
    needed = {r for m in mins for r in m}
    never = sorted(r + 1 for r in read if r not in needed)
    c1 = c2 = c3 = c4 = st.container(horizontal=True)  # wraps at 800 px, never truncates
    c1.metric("prelabel bound", pb, width="content")
    c2.metric("LP relaxation", f"{float(lp.value):g}", width="content",
              help=f"exactly {lp.value.numerator}/{lp.value.denominator}")
    c3.metric("minimum certificate C(y)", cert.upper if cert.exact else
              f"{cert.lower}-{cert.upper}", width="content")
    c4.metric("labels this order read", stop, width="content")
    sets = " or ".join("{" + ", ".join(str(r + 1) for r in m) + "}" for m in mins)
    st.markdown(
        f"Before any label, a budget below **{pb}** is ruled out. With all labels known "
        f"the LP relaxation is **{float(lp.value):g}**"
        + ("" if lp.value.denominator == 1 else f" (= {lp.value})") + ", so at least "
        f"{-(-lp.value.numerator // lp.value.denominator)} labels; the minimum certificate "
        f"is **C(y) = {cert.upper}**: rows {sets}. The order read **{stop}** labels to "
        f"certify {cert.selected}.")
    if never:
        rows = ", ".join(str(r) for r in never)
        st.info(f"**Row {rows} was never needed**: no minimum certificate contains it; "
                "the policy read it because it could not know the labels in advance."
                if len(never) == 1 else
                f"**Rows {rows} were never needed**: no minimum certificate contains them.")
    else:
        st.info("Every row this order read belongs to a minimum certificate.")


with fig_box:
    _figure()
