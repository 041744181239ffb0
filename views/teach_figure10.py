"""Paper Figure 10 on a shipped pool: the bounds label by label under three rules."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from certlib.errors import CertlibError
from certlib.teaching.bound_traces import teaching_figure
from certlib.policies import policy_names
from certlib.teaching.worked_examples import tie_zero_moment
from ui.cache import POOL_HASH
from ui.pool_picker import choose_pool, pool_summary
from ui.state import url_widget, write_url_state
from ui.text import plain, plot_text

st.title("One condition, label by label (paper Figure 10)")

pool, label = choose_pool(default="teaching")
if pool is None:
    st.stop()
pool_summary(pool)
if not pool.fully_labelled:
    st.info("This figure replays a policy with the labels known: choose a fully labelled pool.")
    st.stop()

names = [p for p in policy_names() if p != "model-selector"]
# the policy and the cursor are kept in the address and the session: a reload or a
# visit to another page shows the same figure
policy = st.selectbox("Reading order", names,
                      **url_widget("fig_policy", "static-range", options=names))


@st.cache_data(show_spinner="Computing bounds and the minimum certificate ...",
               hash_funcs=POOL_HASH)
def _figure(pool, policy):
    return teaching_figure(pool, policy=policy)


try:
    f = _figure(pool, policy)
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()

colors = {"shared": "#4e79a7", "centered": "#f28e2b", "separate": "#e15759"}
fig = go.Figure()
for rule, path in f.paths.items():
    y = path.lower_objective
    # dashes and widths: where two rules agree (the figure2 pool) both lines stay visible
    fig.add_scatter(x=list(range(len(y))), y=y, mode="lines", name=f"{rule}: lower bound",
                    line=dict(color=colors[rule], width=4 if rule == "shared" else 2,
                              dash={"centered": "dash", "separate": "dashdot"}.get(rule)))
    if path.stop is not None:
        fig.add_scatter(x=[path.stop], y=[y[path.stop]], mode="markers+text",
                        marker=dict(size=11, color=colors[rule]), text=[str(path.stop)],
                        # shared and centered often stop a few labels apart (124, 134):
                        # one number above, one below, so they never run together; all
                        # to the left of their stop (at 800 px centered's 158, to its
                        # right, touched separate's 171)
                        textposition="bottom left" if rule == "centered" else "top left",
                        showlegend=False)
shared = f.paths["shared"]
fig.add_scatter(x=list(range(len(shared.upper))), y=shared.upper_objective, mode="lines",
                name="shared: upper bound", line=dict(color=colors["shared"], dash="dot"))
fig.add_hline(y=0, line_color="gray")
fig.add_vline(x=f.prelabel, line_dash="dash", line_color="#9c755f",
              annotation_text=f"prelabel {f.prelabel}", annotation_position="top right")
if f.certificate_lower is not None:
    fig.add_vrect(x0=f.certificate_lower - 0.5, x1=f.certificate_upper + 0.5, fillcolor="#59a14f",
                  opacity=0.25, line_width=0,
                  annotation_text=("min. certificate " + (str(f.certificate_lower)
                                   if f.certificate_lower == f.certificate_upper
                                   else f"{f.certificate_lower}-{f.certificate_upper}")),
                  annotation_position="bottom left")  # the stops' labels sit at the top
zero = tie_zero_moment(shared.lower, shared.stop)
if zero is not None:
    fig.add_scatter(x=[zero], y=[shared.lower_objective[zero]], mode="markers",
                    marker=dict(size=14, symbol="diamond-open", color="#e15759", line_width=2),
                    name=f"tie rule: bound 0 at {zero}, not yet certified")
if not 0 <= st.session_state.get("fig_cursor", 0) <= f.n:  # drawn for a larger pool
    del st.session_state["fig_cursor"]
# a cursor beyond this pool (another pool, an edited address) gives way to the stop
t_cursor = st.slider("Cursor: labels read", 0, f.n,
                     **url_widget("fig_cursor", shared.stop or f.n, int, low=0, high=f.n),
                     help="Moves a cursor along the reading order; the three bounds at that "
                     "label count are shown under the chart.")
write_url_state("fig_policy", "fig_cursor")
fig.add_vline(x=t_cursor, line_color="#333333", line_width=1)
fig.update_layout(xaxis_title="labels read", height=520,
                  # a margin past n: a stop at the last label is not half outside the plot
                  xaxis=dict(range=[-0.02 * f.n, 1.04 * f.n]),
                  yaxis_title="bound on min over rivals j of AUGRC_j − "
                              f"AUGRC_{plot_text(f.winner)}",
                  legend=dict(orientation="h", y=-0.18), margin=dict(t=30))
st.plotly_chart(fig, width="stretch")

cols = st.columns(len(f.paths))
for col, (rule, path) in zip(cols, f.paths.items()):
    ok = path.stop is not None and t_cursor >= path.stop
    # a short label: three metrics side by side on an 800 px screen
    col.metric(f"{rule}, {t_cursor} labels", f"{path.lower_objective[t_cursor]:.5f}",
               help=f"lower bound after {t_cursor} labels; exact: "
                    f"{int(path.lower[t_cursor])} / {path.unit * path.scale}")
    col.caption(("certified" if ok else "not certified")
                + (f" (stops at {path.stop})" if path.stop is not None else " (never stops)"))
if zero is not None:
    st.info(f"**Tie rule.** After {zero} labels the shared lower bound reaches 0: no rival "
            f"can beat {plain(f.winner)} any more, but a rival listed earlier could still tie, "
            "and ties go to the earlier candidate. So the winner is not certified until "
            f"the bound is strictly positive against every earlier rival ({shared.stop}).")
stops = ", ".join(f"{r} {p.stop}" for r, p in f.paths.items())
st.markdown(
    f"**Winner {plain(f.winner)}**, n = {f.n}, {f.policy} order. The winner is certified "
    f"at the first label count where its lower bound clears the tie rule: {stops}. "
    f"In hindsight {f.certificate_lower}"
    + ("" if f.certificate_lower == f.certificate_upper else f"–{f.certificate_upper}")
    + f" labels suffice; before any label, a budget below {f.prelabel} is ruled out for "
    "every policy."
)
if f.adaptive:
    st.caption(
        f"{f.policy} chooses its next row from the labels read, so its order depends on "
        "the rule. The order drawn is the one it reads with the shared rule until it "
        f"certifies ({shared.stop} labels, as on the *Replay a policy* page), then the rows "
        "it reads with the separate rule and had not read yet, then the rest. The centered "
        "and separate stops are along that order, not those rules' own runs.")
