"""Paper Figure 1: the same predictions do not settle a selective comparison."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from certlib import Session
from certlib.teaching.worked_examples import completions, figure1_pool
from ui.state import url_state, url_widget, write_url_state
from ui.teach import (chart_fonts, light_table, numbers_download, parse_label, parse_step,
                      plot_config, step_controls, teaching_header)

on = teaching_header("Figure 1: same predictions, different confidence orders", "fig1")
top, bottom = st.container(), st.container()
# in presentation mode the step (chart and numbers) comes first, the explanation under it
intro_box, step_box = (bottom, top) if on else (top, bottom)
intro_box.markdown(
    "Two rows. Candidates **A** and **B** both predict 0 on both rows, so their accuracy "
    "is always equal. But A accepts row 1 first and B accepts row 2 first, and AUGRC "
    "counts an error accepted early more. Ties favour **A** (listed first). Choose the two "
    "labels, then **Step** (→ or Space) reads row 1, then row 2; **Back** (←) and "
    "**Reset** (Home) undo. The table lists every completion of the labels not read yet.")

UNREAD = "not read"
DEFAULT_LABELS = (1, 0)  # y1 = 1 leaves both candidates a way to win; y2 = 0 then picks B
T = 2


url_state("fig1_t", 0, parse_step)  # a reload shows the same step


def _chart(comps_all, left):
    """AUGRC of A and B in every completion of the two labels; the completions the
    labels read so far rule out are faint."""
    fig = go.Figure()
    xs = [f"({a}, {b})" for a, b in (c.labels for c in comps_all)]
    alive = [c.labels in left for c in comps_all]
    for j, (name, col) in enumerate((("A", "#4e79a7"), ("B", "#f28e2b"))):
        fig.add_bar(x=xs, y=[float(c.augrc[j]) for c in comps_all], name=name,
                    text=[str(c.augrc[j]) for c in comps_all], textposition="outside",
                    marker=dict(color=col, opacity=[1 if a else 0.2 for a in alive]),
                    hovertemplate=f"{name}: AUGRC %{{text}}<extra></extra>")
    for x, c, a in zip(xs, comps_all, alive):
        win = c.winner if c.risks[0] != c.risks[1] else f"tie → {c.winner}"
        fig.add_annotation(x=x, y=0.66, text=f"<b>{win}</b>" if a else "ruled out",
                           showarrow=False, font=dict(color="black" if a else "#999"))
    fig.update_layout(height=300, barmode="group", margin=dict(t=20, b=20, l=10, r=10),
                      xaxis=dict(title="completion (y1, y2)"),
                      yaxis=dict(title="AUGRC (lower wins)", range=[0, 0.72]),
                      legend=dict(orientation="h", y=1.02, x=1, xanchor="right",
                                  yanchor="bottom"))
    chart_fonts(fig, on, height=300)
    return fig


@st.fragment
def _figure() -> None:
    """The labels, the step and everything they decide: a step redraws only this."""
    # the labels to be read, kept in the address and the session (a reload or a visit
    # elsewhere keeps them); the boxes sit with the buttons, so a projector shows both
    row = st.container(horizontal=True, vertical_alignment="bottom")
    y_all = tuple(row.selectbox(f"y{i + 1} (row {i + 1})", [0, 1], width=100,
                                **url_widget(f"fig1_y{i + 1}", DEFAULT_LABELS[i], parse_label,
                                             [0, 1]))
                  for i in range(2))
    with row.container():  # the buttons beside the boxes, not pushed to the far side
        t = step_controls("fig1_t", T, what="label")
    write_url_state("fig1_y1", "fig1_y2", "fig1_t")
    labels = tuple(v if i < t else None for i, v in enumerate(y_all))
    pool = figure1_pool(labels)
    comps = completions(pool)
    comps_all = completions(figure1_pool())
    winners = sorted({c.winner for c in comps})
    acc_ties = all(c.errors[0] == c.errors[1] for c in comps)
    s = Session.from_pool_labels(pool)

    # presentation: the numbers, the chart, then the tables; a screen keeps the page's
    # reading order: the tables, what they imply, then the chart
    slots = [st.container() for _ in range(3)]
    numbers_slot, chart_box, tables_box = slots if on else (slots[1], slots[2], slots[0])
    numbers = numbers_slot.container(key="teach_numbers")
    read_txt = "; ".join(f"y{i + 1} = {v}" if v is not None else f"y{i + 1} unread"
                         for i, v in enumerate(labels))
    if t == T:
        full = comps[0]
        head = (f"**With y = {full.labels}:** AUGRC A = {full.augrc[0]}, B = {full.augrc[1]}; "
                f"the winner is **{full.winner}**"
                + (" (a tie, which goes to A)." if full.risks[0] == full.risks[1] else "."))
    else:
        head = (f"**After {t} of {T} labels** ({read_txt}): {len(comps)} completions left, "
                f"won by {' and '.join(winners)}.")
    numbers.markdown(head)
    if len(winners) > 1:
        # every completion, ties too: after y1 = 1 A wins only through the tie (1, 1)
        verdict = (f"After {t} label(s) **either candidate can still win**: "
                   + "; ".join(f"y = {c.labels} favours {c.winner}" if c.risks[0] != c.risks[1]
                               else f"y = {c.labels} is a tie, which goes to {c.winner}"
                               for c in comps) + ".")
        numbers.warning(verdict)
    else:
        verdict = (f"After {t} label(s) **every completion picks {winners[0]}**"
                   + (f" (certified by the stopping test: {s.selected})" if s.certified
                      else "") + ".")
        numbers.success(verdict)
    acc = ("Accuracy ties in every completion (equal error counts), so accuracy needs no "
           "label; AUGRC does." if acc_ties else "Accuracy differs in some completion.")
    numbers_slot.markdown(acc)
    chart_box.plotly_chart(_chart(comps_all, {c.labels for c in comps}), width="stretch",
                           config=plot_config(f"figure1_step{t}"), key="fig1_chart")
    with chart_box:
        numbers_download(
            "\n".join([f"Figure 1, step {t} of {T} ({read_txt})", head.replace("**", ""),
                       verdict.replace("**", ""), acc]
                      + [f"y = {c.labels}: AUGRC A = {c.augrc[0]}, B = {c.augrc[1]}, "
                         f"winner {c.winner}" for c in comps]) + "\n",
            f"figure1_step{t}.txt")

    light_table(
        {"row": [1, 2],
         "w_A": [int(w) for w in pool.weights[0]], "w_B": [int(w) for w in pool.weights[1]],
         "ŷ_A": [int(p) for p in pool.preds[0]], "ŷ_B": [int(p) for p in pool.preds[1]],
         "y": [UNREAD if v is None else str(v) for v in labels]}, tables_box)
    tables_box.caption("Weights w = 2n − s − e (paper eq. (2), scaled by 2n² = 8): the row "
                       "accepted first weighs 3, the other 1.")
    light_table(
        {"labels (y1, y2)": [str(c.labels) for c in comps],
         "AUGRC A": [str(c.augrc[0]) for c in comps],
         "AUGRC B": [str(c.augrc[1]) for c in comps],
         "errors A": [c.errors[0] for c in comps], "errors B": [c.errors[1] for c in comps],
         "AUGRC winner": [c.winner for c in comps]}, tables_box)


with step_box:
    _figure()
