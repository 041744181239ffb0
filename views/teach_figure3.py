"""Paper Figure 3: one label set must cover every rival (the covering LP in a slice)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import streamlit as st

from certlib import certify, prelabel_bound, replay
from certlib.core.pair_terms import initial_lower
from certlib.teaching.worked_examples import (covering_problem, exact_lp, figure3_pool,
                                              minimum_certificates, reading_order,
                                              slice_region)

st.title("Figure 3: one label set must cover every rival")
st.markdown(
    "Three candidates **A**, **B**, **C** on four rows; each weight vector permutes "
    "(7, 5, 3, 1) and ties go to A, then B, then C. The paper prints the numbers, not the "
    "pool: this pool is the only one of its kind that reproduces every number "
    "(`scripts/search_figure3.py`). Labels are shown for the hindsight calculation; a "
    "policy does not know them before reading.")

pool = figure3_pool()
G, D, k = covering_problem(pool)
risks = [int(r) for r in pool.risks()]
L0 = initial_lower(pool, "shared")
rivals = [j for j in range(pool.K) if j != k]
# one column per row of the pool, one line per quantity (the gains first: they are what
# the figure is about): five columns fit an 800 px screen, where the ten columns of the
# row-per-row table put the last predictions behind a horizontal scroll
lines = [("y", [pool.classes[c] for c in pool.labels])]
lines += [(f"gain vs {pool.names[j]}", [int(g) for g in G[j]]) for j in rivals]
lines += [(f"w_{name}", [int(w) for w in pool.weights[j]]) for j, name in enumerate(pool.names)]
lines += [(f"ŷ_{name}", [int(p) for p in pool.preds[j]]) for j, name in enumerate(pool.names)]
table = {"": [what for what, _ in lines]}
for i in range(pool.n):
    table[f"row {i + 1}"] = [str(values[i]) for _, values in lines]
st.dataframe(table, hide_index=True)

win = pool.names[k]
c1, c2, c3 = st.columns(3)
c1.metric("risks (r_A, r_B, r_C)", "(" + ", ".join(map(str, risks)) + ")")
c2.metric(f"lower bounds against {win}", "(" + ", ".join(str(int(L0[j, k])) for j in rivals)
          + ")")
c3.metric("deficits to cover", "(" + ", ".join(str(int(D[j])) for j in rivals) + ")")


def gains(rows):
    return "(" + ", ".join(str(int(G[j, rows].sum())) for j in rivals) + ")"


st.markdown(
    f"The winner with every label is **{win}**. Reading rows 2 and 3 supplies gains "
    f"{gains([1, 2])}: " + ", ".join(
        f"{'enough' if G[j, [1, 2]].sum() >= D[j] else 'not enough'} against {pool.names[j]}"
        for j in rivals)
    + f". Rows 1 and 2 supply {gains([0, 1])} and cover "
    + ("both deficits." if all(G[j, [0, 1]].sum() >= D[j] for j in rivals) else "not all."))

lp = exact_lp(pool)
x = lp.x
region = slice_region(pool, free=(0, 1))
fig = go.Figure()
vx = [float(p[0]) for p in region["vertices"]]
vy = [float(p[1]) for p in region["vertices"]]
fig.add_scatter(x=vx + vx[:1], y=vy + vy[:1], fill="toself", fillcolor="rgba(89,161,79,0.3)",
                line=dict(color="#59a14f"), name="feasible (x3 = x4 = 0)")
colors = ["#4e79a7", "#e15759"]
for (name, (g0, g1, d)), col in zip(region["constraints"].items(), colors):
    # g0 x1 + g1 x2 = d across the unit square
    xs = [0.0, 1.0]
    fig.add_scatter(x=xs, y=[(d - g0 * v) / g1 for v in xs], mode="lines",
                    line=dict(color=col, dash="dash"), name=f"vs {name}: {g0} x1 + {g1} x2 ≥ {d}")
val = float(lp.value)
fig.add_scatter(x=[0, 1], y=[val, val - 1], mode="lines", line=dict(color="gray", dash="dot"),
                name=f"x1 + x2 = {lp.value}")
fig.add_scatter(x=[float(x[0])], y=[float(x[1])], mode="markers", marker=dict(size=13),
                name="LP optimum")
up = [math.ceil(v) for v in x]
fig.add_scatter(x=[up[0]], y=[up[1]], mode="markers", marker=dict(size=13, symbol="x"),
                name="rounded up")
# labels with arrows, off the constraint lines that meet at these vertices
for px, py, txt, ax in ((float(x[0]), float(x[1]), "LP optimum", -70),
                        (up[0], up[1], "rounded up", -60)):
    fig.add_annotation(x=px, y=py, text=txt, showarrow=True, arrowhead=2, ax=ax, ay=-28,
                       bgcolor="rgba(255,255,255,0.8)")
# constrain="domain": keep the unit square's ranges and shrink the drawing area instead
# (scaleanchor alone widened the x range to about -0.5 .. 1.5)
fig.update_layout(height=480, xaxis=dict(range=[-0.05, 1.05], title="x1 (read row 1)",
                                         constrain="domain"),
                  yaxis=dict(range=[-0.05, 1.2], title="x2 (read row 2)",
                             scaleanchor="x", constrain="domain"),
                  legend=dict(orientation="h", y=-0.2), margin=dict(t=30))
st.plotly_chart(fig, width="stretch")

cert = certify(pool)
mins = minimum_certificates(pool)
rounded = [i + 1 for i, v in enumerate(up) if v]
order = [r + 1 for r in reading_order(pool)]
rep = replay(pool, policy="static-range")
xs = ", ".join(str(v) for v in x)
st.markdown(
    f"**LP relaxation**: x = ({xs}) with value **{lp.value}** "
    f"(≈ {val:.3f}; the unique optimal vertex over all four variables, not only the "
    f"slice). Rounding it up gives rows {{{', '.join(map(str, rounded))}}}, a certificate of "
    f"{len(rounded)} labels. So ⌈{lp.value}⌉ = {math.ceil(lp.value)} ≤ C(y) ≤ {len(rounded)}: "
    f"**C(y) = {cert.upper}** (`certify`: {'exact' if cert.exact else 'not proved'}; "
    f"minimum certificates: "
    + " or ".join("{" + ", ".join(str(r + 1) for r in m) + "}" for m in mins) + ").")
st.markdown(
    f"**Static range** reads rows {', '.join(map(str, order))} and stops after "
    f"**{rep.labels_read} labels** ({rep.selected} certified): one more than the minimum, "
    f"the cost of finding the certificate without knowing the labels. Before any label, "
    f"the prelabel bound is {prelabel_bound(pool).prelabel_bound}.")
