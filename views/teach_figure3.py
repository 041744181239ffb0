"""Paper Figure 3: one label set must cover every rival (the covering LP in a slice)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import streamlit as st

from certlib import Session, certify, prelabel_bound, replay
from certlib.core.pair_terms import initial_lower
from certlib.teaching.worked_examples import (covering_problem, exact_lp, figure3_pool,
                                              minimum_certificates, reading_order,
                                              slice_region)
from ui.state import url_state, write_url_state
from ui.teach import (chart_fonts, numbers_download, parse_step, plot_config, step_controls,
                      teaching_header)

on = teaching_header("Figure 3: one label set must cover every rival", "fig3")
# normal mode: the pool, the LP slice, then the reading step by step; in presentation
# mode the step (its chart and numbers) comes first and the explanations under it
intro_box, table_box, lp_box, step_box = (st.container() for _ in range(4))
if on:
    step_box, lp_box, intro_box, table_box = intro_box, table_box, lp_box, step_box
intro_box.markdown(
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
table_box.dataframe(table, hide_index=True)

win = pool.names[k]
c1, c2, c3 = table_box.columns(3)
c1.metric("risks (r_A, r_B, r_C)", "(" + ", ".join(map(str, risks)) + ")")
c2.metric(f"lower bounds against {win}", "(" + ", ".join(str(int(L0[j, k])) for j in rivals)
          + ")")
c3.metric("deficits to cover", "(" + ", ".join(str(int(D[j])) for j in rivals) + ")")


def gains(rows):
    return "(" + ", ".join(str(int(G[j, rows].sum())) for j in rivals) + ")"


table_box.markdown(
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
chart_fonts(fig, on, height=560)  # below the fold on a projector: room for the legend
lp_box.plotly_chart(fig, width="stretch", config=plot_config("figure3_lp_slice"))

cert = certify(pool)
mins = minimum_certificates(pool)
rounded = [i + 1 for i, v in enumerate(up) if v]
read_order = reading_order(pool)
order = [r + 1 for r in read_order]
rep = replay(pool, policy="static-range")
xs = ", ".join(str(v) for v in x)
lp_box.markdown(
    f"**LP relaxation**: x = ({xs}) with value **{lp.value}** "
    f"(≈ {val:.3f}; the unique optimal vertex over all four variables, not only the "
    f"slice). Rounding it up gives rows {{{', '.join(map(str, rounded))}}}, a certificate of "
    f"{len(rounded)} labels. So ⌈{lp.value}⌉ = {math.ceil(lp.value)} ≤ C(y) ≤ {len(rounded)}: "
    f"**C(y) = {cert.upper}** (`certify`: {'exact' if cert.exact else 'not proved'}; "
    f"minimum certificates: "
    + " or ".join("{" + ", ".join(str(r + 1) for r in m) + "}" for m in mins) + ").")
lp_box.markdown(
    f"**Static range** reads rows {', '.join(map(str, order))} and stops after "
    f"**{rep.labels_read} labels** ({rep.selected} certified): one more than the minimum, "
    f"the cost of finding the certificate without knowing the labels. Before any label, "
    f"the prelabel bound is {prelabel_bound(pool).prelabel_bound}.")

# the reading, label by label: the session after each row of the static range order (the
# exact test of paper 000 section 3), next to the gains each rival has received so far
T = pool.n
states = [Session.start(pool, policy="static-range")]
for r in read_order:
    states.append(states[-1].observe(r, pool.classes[pool.labels[r]]))
stop = rep.labels_read
COVERAGE_NOTE = (
    "A rival's deficit is how far its lower bound against the winner starts below what "
    "certifies the winner; each row read adds its gain, and the winner is certified once "
    "every rival's deficit is covered. The faint segments are the unread rows' gains, known "
    "here only with hindsight.")
if on:  # under the fold on a projector, with the other explanations
    intro_box.caption(COVERAGE_NOTE)
ROW_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1"]


url_state("fig3_t", 0, parse_step)  # a reload shows the same step


def _coverage(t: int):
    """Each rival's gains as a bar, one segment per row (solid once read, faint while
    unread: shown with hindsight), against its deficit: the LP's constraint G_j x >= D_j
    at x = the rows read (paper 000 eq. (7)-(8))."""
    fig = go.Figure()
    names = [f"vs {pool.names[j]}" for j in rivals]
    for s, r in enumerate(read_order):
        read = s < t
        g = [int(G[j, r]) for j in rivals]
        fig.add_bar(y=names, x=g, orientation="h", name=f"row {r + 1}",
                    marker=dict(color=ROW_COLORS[r], opacity=1 if read else 0.18,
                                line=dict(width=0)),
                    text=[f"row {r + 1}: {v}" if v else "" for v in g],
                    textposition="inside", insidetextanchor="middle",
                    textfont=dict(color="white" if read else "#555"),
                    hovertemplate=f"row {r + 1} ({'read' if read else 'unread'}): "
                                  "gain %{x}<extra></extra>", showlegend=False)
    for i, j in enumerate(rivals):
        d = int(D[j])
        fig.add_shape(type="line", x0=d, x1=d, y0=i - 0.4, y1=i + 0.4,
                      line=dict(color="black", width=4))
        fig.add_annotation(x=d, y=i - 0.4, text=f"deficit {d}", showarrow=False,
                           yanchor="bottom", xanchor="left", xshift=4)
    top = max(int(G[j].sum()) for j in rivals)
    fig.update_layout(barmode="stack", height=260, bargap=0.5,
                      margin=dict(t=10, b=40, l=10, r=10),
                      xaxis=dict(range=[0, max(top, int(D.max())) + 2],
                                 title="gains of the rows read (faint: not read yet)"),
                      yaxis=dict(autorange="reversed"))
    chart_fonts(fig, on, height=300)
    return fig


def _rival_line(j: int, t: int) -> str:
    got = [int(G[j, r]) for r in read_order[:t]]
    total, d = sum(got), int(D[j])
    sum_txt = ("0" if not got else str(total) if len(got) == 1
               else " + ".join(map(str, got)) + f" = {total}")
    low = int(states[t].lower()[j, k])
    name = pool.names[j]
    covered = (f"≥ deficit {d}: **covered**" if total >= d
               else f"< deficit {d}: **not covered** ({d - total} short)")
    # the same fact as a bound: L_jk = its start plus the gains read (the session's L)
    return f"vs **{name}**: gains {sum_txt} {covered}; L_{name}{win} = {low}"


def _verdict(t: int) -> tuple[str, str]:
    """The exact test after ``t`` rows, in words, and the alert kind that shows it."""
    s = states[t]
    if s.certified and t > stop:
        return "success", (f"**{s.selected} has been certified since label {stop}**: the "
                           f"exact test stops there, so static range reads {stop} labels. "
                           "This step only shows the rest of the order.")
    if s.certified:
        return "success", (f"**{s.selected} is certified** by the exact test after {t} "
                           "labels: every rival's deficit is covered, so it wins under every "
                           "completion of the unread labels. Static range stops here.")
    short = [pool.names[j] for j in rivals if G[j, list(read_order[:t])].sum() < D[j]]
    return "caption", ("Not certified yet: against " + " and ".join(short) + " the gains "
                       "fall short, so some completion of the unread labels still lets "
                       + ("it" if len(short) == 1 else "each") + f" beat {win}.")


@st.fragment
def _steps() -> None:
    """The step's chart and numbers: a step redraws only this (`st.fragment`)."""
    if not on:
        st.subheader("Reading the rows in the static range order")
    t = step_controls("fig3_t", T, what="row")
    write_url_state("fig3_t")
    read = ", ".join(str(r + 1) for r in read_order[:t]) or "none"
    head = (f"**After {t} of {T} labels** (rows read: {read}; order "
            f"{', '.join(map(str, order))})")
    numbers = st.container(key="teach_numbers")
    numbers.markdown(head + "  \n" + "  \n".join(_rival_line(j, t) for j in rivals))
    kind, verdict = _verdict(t)
    getattr(numbers, kind)(verdict)
    st.plotly_chart(_coverage(t), width="stretch", config=plot_config(f"figure3_step{t}"),
                    key="fig3_chart")
    numbers_download(
        "\n".join([f"Figure 3, step {t} of {T} (static range order: rows "
                   f"{', '.join(map(str, order))}; rows read: {read})",
                   *(_rival_line(j, t).replace("**", "") for j in rivals),
                   verdict.replace("**", "")]) + "\n",
        f"figure3_step{t}.txt")
    if not on:
        st.caption(COVERAGE_NOTE)


with step_box:
    _steps()
