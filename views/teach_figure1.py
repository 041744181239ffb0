"""Paper Figure 1: the same predictions do not settle a selective comparison."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from certlib import Session
from certlib.teaching.worked_examples import completions, figure1_pool
from ui.state import url_widget, write_url_state

st.title("Figure 1: same predictions, different confidence orders")
st.markdown(
    "Two rows. Candidates **A** and **B** both predict 0 on both rows, so their accuracy "
    "is always equal. But A accepts row 1 first and B accepts row 2 first, and AUGRC "
    "counts an error accepted early more. Ties favour **A** (listed first). Set the labels "
    "you have read; the table lists every completion of the others.")

UNREAD = "not read"
CHOICES = [UNREAD, 0, 1]


def _choice(text: str):
    return next(c for c in CHOICES if str(c) == text)


# kept in the address and the session: a reload or a visit elsewhere keeps the labels
c1, c2, _ = st.columns([1, 1, 2])
y1 = c1.selectbox("y1 (row 1)", CHOICES, **url_widget("fig1_y1", UNREAD, _choice, CHOICES))
y2 = c2.selectbox("y2 (row 2)", CHOICES, **url_widget("fig1_y2", UNREAD, _choice, CHOICES))
write_url_state("fig1_y1", "fig1_y2")
labels = tuple(None if v == UNREAD else v for v in (y1, y2))
pool = figure1_pool(labels)

st.dataframe({"row": [1, 2],
              "w_A": [int(w) for w in pool.weights[0]], "w_B": [int(w) for w in pool.weights[1]],
              "ŷ_A": [int(p) for p in pool.preds[0]], "ŷ_B": [int(p) for p in pool.preds[1]],
              "y": [UNREAD if v is None else str(v) for v in labels]}, hide_index=True)
st.caption("Weights w = 2n − s − e (paper eq. (2), scaled by 2n² = 8): the row accepted "
           "first weighs 3, the other 1.")

comps = completions(pool)
st.dataframe(
    {"labels (y1, y2)": [str(c.labels) for c in comps],
     "AUGRC A": [str(c.augrc[0]) for c in comps], "AUGRC B": [str(c.augrc[1]) for c in comps],
     "errors A": [c.errors[0] for c in comps], "errors B": [c.errors[1] for c in comps],
     "AUGRC winner": [c.winner for c in comps]}, hide_index=True)

winners = sorted({c.winner for c in comps})
acc_ties = all(c.errors[0] == c.errors[1] for c in comps)
s = Session.from_pool_labels(pool)
read = sum(v is not None for v in labels)
if len(winners) > 1:
    # every completion, ties too: after y1 = 1 A wins only through the tie (1, 1)
    st.warning(f"After {read} label(s) **either candidate can still win**: "
               + "; ".join(f"y = {c.labels} favours {c.winner}" if c.risks[0] != c.risks[1]
                           else f"y = {c.labels} is a tie, which goes to {c.winner}"
                           for c in comps) + ".")
else:
    st.success(f"After {read} label(s) **every completion picks {winners[0]}**"
               + (f" (certified by the stopping test: {s.selected})" if s.certified else "")
               + ".")
st.markdown("Accuracy ties in every completion (equal error counts), so accuracy needs no "
             "label; AUGRC does." if acc_ties else "Accuracy differs in some completion.")

if read == 2:
    full = comps[0]
    fig = go.Figure(go.Bar(x=["A", "B"], y=[float(v) for v in full.augrc],
                           text=[str(v) for v in full.augrc], textposition="outside",
                           marker_color=["#4e79a7", "#f28e2b"]))
    fig.update_layout(height=280, yaxis=dict(title="AUGRC (lower is better)", range=[0, 0.6]),
                      margin=dict(t=20, b=20))
    st.plotly_chart(fig, width="stretch")
    st.markdown(f"With y = {full.labels}: AUGRC A = {full.augrc[0]}, B = {full.augrc[1]}; "
                f"the winner is **{full.winner}**"
                + (" (a tie, which goes to A)." if full.risks[0] == full.risks[1] else "."))
