"""Paper Figure 10's protocol on any labelled pool: the bounds label by label under
three rules, with the data shown named and set beside the paper's own condition."""

from __future__ import annotations

from fractions import Fraction

import plotly.graph_objects as go
import streamlit as st

from certlib.core.duplicates import find_duplicates
from certlib.errors import CertlibError
from certlib.teaching.bound_traces import teaching_figure
from certlib.policies import policy_names
from certlib.teaching.worked_examples import tie_zero_moment
from ui.cache import POOL_HASH
from ui.pool_picker import (ROOT, SAMPLES, choose_panel, choose_pool, panel_about, panels,
                            pool_ref)
from ui.state import url_state, url_widget, write_url_state
from ui.teach import (CHART_HEIGHT, chart_fonts, numbers_download, plot_config, step_controls,
                      teaching_header)
from ui.text import plain, plot_text

# Paper 000, Figure 10's caption: the one condition it traces
PAPER = {"data": "Ionosphere (UCI), split 731, trees", "n": 106, "K": 4,
         "stops": {"shared": 73, "centered": 77, "separate": 106},
         "certificate": (49, 50), "prelabel": 16}

# each shipped sample's data set and candidates (sample_data/README.md): short, long
ABOUT = {
    "teaching": ("Breast Cancer, split 1, trees",
                 "Breast Cancer (scikit-learn), evaluation split 1; the candidates are "
                "decision trees on four feature panels of the paper's backward search "
                "(section 6.1, budgets eps = 0, .01, .04, .12)"),
    "demo": ("Breast Cancer, split 0, four model families",
             "Breast Cancer (scikit-learn), evaluation split 0; the candidates are four "
             "model families (logistic regression, a depth-4 tree, naive Bayes, 7-NN)"),
    "digits": ("Digits, 10 classes, three confidence scores",
               "Digits (scikit-learn), 10 classes, one logistic regression; the candidates "
               "are three confidence scores of its prediction"),
    "figure2": ("paper Figure 2", "Paper Figure 2's four rows and two candidates"),
    "worst_case": ("paper section 4.2", "Paper section 4.2's worst-case rank example"),
}

on = teaching_header("One condition, label by label (as in Figure 10)", "fig10")
head = st.container()  # the data statement (a short line of it in presentation mode)
# in presentation mode the chart and its numbers come first, the settings under them
if on:
    fig_box, set_box = st.container(), st.container()
else:
    set_box, fig_box = st.container(), st.container()
statement = set_box.container() if on else head

pool, label = choose_pool(default="teaching")
if pool is None:
    st.stop()
ref = pool_ref() or "sample:teaching"
kind, key = ref.split(":", 1)
if kind == "sample" and key in SAMPLES:
    source = f"`{SAMPLES[key][1].relative_to(ROOT).as_posix()}`" + (
        ", the shipped teaching pool" if key == "teaching" else "")
elif kind == "panel":
    source = f"`sample_data/panels/{key}.csv`, a shipped panel pool"
else:
    source = f"the uploaded file {plain(label)}"
if not pool.fully_labelled:
    # one message: the figure traces every label, so a partly labelled pool has no figure
    head.warning(f"The pool {source} is not fully labelled ({pool.n - pool.n_labelled:,} of "
                 f"{pool.n:,} rows have no label): this figure reads every label in turn. "
                 "Choose a fully labelled pool in the sidebar, such as the teaching pool.")
    st.stop()

names = [p for p in policy_names() if p != "model-selector"]
# the policy and the cursor are kept in the address and the session: a reload or a
# visit to another page shows the same figure
policy = set_box.selectbox("Reading order", names,
                           **url_widget("fig_policy", "static-range", options=names),
                           help="The paper's Figure 10 reads in static range order.")


@st.cache_data(show_spinner="Computing bounds and the minimum certificate ...",
               max_entries=16, hash_funcs=POOL_HASH)
def _figure(pool, policy):
    return teaching_figure(pool, policy=policy)


try:
    f = _figure(pool, policy)
except CertlibError as exc:
    head.error(f"The pool {source} cannot be drawn: {plain(exc)}")
    st.stop()


def _panel_chosen() -> None:
    if st.session_state.get("fig10_panel"):
        choose_panel(st.session_state["fig10_panel"])


def _cell(count, n) -> str:
    return "never" if count is None else f"{count} ({count / n:.0%})"


short, about = (ABOUT[key] if kind == "sample" and key in ABOUT
                else panel_about(key) if kind == "panel"
                else (plain(label), "Candidates " + ", ".join(plain(c) for c in pool.names)))
stops_here = " / ".join("—" if r not in f.paths or f.paths[r].stop is None
                        else str(f.paths[r].stop) for r in ("shared", "centered", "separate"))
if on:
    # a projector has room for one line above the chart: which data, and that it is not
    # the paper's; the full statement is under the chart
    file = (f"`{SAMPLES[key][1].name}`" if kind == "sample" and key in SAMPLES
            else f"`{key}.csv`" if kind == "panel" else "uploaded")
    head.markdown(f"**Data:** {short} ({file}, n = {f.n}, K = {pool.K}); the paper's "
                  f"Figure 10 is Ionosphere, n = {PAPER['n']}.")
statement.markdown(
    f"**Data shown:** {source}: n = {f.n} rows, K = {pool.K} candidates. "
    f"{about}.  \n**Not the paper's condition:** its Figure 10 is "
    f"{PAPER['data']}, n = {PAPER['n']}: the shared, centered and separate rules "
    f"stop at {' / '.join(str(v) for v in PAPER['stops'].values())} labels, "
    f"minimum certificate {PAPER['certificate'][0]}–{PAPER['certificate'][1]}, "
    f"prelabel {PAPER['prelabel']}. Here they stop at {stops_here}; the table "
    "under the chart says why.")

colors = {"shared": "#4e79a7", "centered": "#f28e2b", "separate": "#e15759"}
shared = f.paths["shared"]
zero = tie_zero_moment(shared.lower, shared.stop)
certificate = ("—" if f.certificate_lower is None else str(f.certificate_lower)
               if f.certificate_lower == f.certificate_upper
               else f"{f.certificate_lower}–{f.certificate_upper}")
# every bound drawn, for the chart's vertical range
y_span = (min(float(p.lower_objective.min()) for p in f.paths.values()),
          max(float(shared.upper_objective.max()),
              max(float(p.lower_objective.max()) for p in f.paths.values())))
# the exports' names: the pool (an upload by its hash's start), the order
slug = f"{key if kind in ('sample', 'panel') else 'upload_' + key[:8]}_{f.policy}"


def _chart(t: int) -> go.Figure:
    """The three rules' lower bounds and the shared upper bound along the reading order,
    with the cursor at ``t`` labels."""
    fig = go.Figure()
    for rule, path in f.paths.items():
        y = path.lower_objective
        # dashes and widths: where two rules agree (the figure2 pool) both lines stay visible
        fig.add_scatter(x=list(range(len(y))), y=y, mode="lines",
                        name=rule if on else f"{rule}: lower bound",
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
    fig.add_scatter(x=list(range(len(shared.upper))), y=shared.upper_objective, mode="lines",
                    name="shared upper" if on else "shared: upper bound",
                    line=dict(color=colors["shared"], dash="dot"))
    fig.add_hline(y=0, line_color="gray")
    fig.add_vline(x=f.prelabel, line_dash="dash", line_color="#9c755f",
                  annotation_text=f"prelabel {f.prelabel}", annotation_position="top right")
    if f.certificate_lower is not None:
        fig.add_vrect(x0=f.certificate_lower - 0.5, x1=f.certificate_upper + 0.5,
                      fillcolor="#59a14f", opacity=0.25, line_width=0,
                      annotation_text=f"min. certificate {certificate.replace('–', '-')}",
                      annotation_position="bottom left")  # the stops' labels sit at the top
    if zero is not None:
        fig.add_scatter(x=[zero], y=[shared.lower_objective[zero]], mode="markers",
                        marker=dict(size=14, symbol="diamond-open", color="#e15759",
                                    line_width=2),
                        name=(f"tie: 0 at {zero}" if on else
                              f"tie rule: bound 0 at {zero}, not yet certified"))
    fig.add_vline(x=t, line_color="#333333", line_width=2 if on else 1)
    fig.update_layout(xaxis_title="labels read", height=520,
                      # a margin past n: a stop at the last label is not half outside the plot
                      xaxis=dict(range=[-0.02 * f.n, 1.04 * f.n]),
                      yaxis_title="bound on min over rivals j of AUGRC_j − "
                                  f"AUGRC_{plot_text(f.winner)}",
                      legend=dict(orientation="h", y=-0.18), margin=dict(t=30))
    if on:
        # a 20 px axis title as long as the one above is cut at the chart's height; the
        # legend above the plot, and room under it for the stops' numbers at 20 px
        lo, hi = y_span
        fig.update_layout(yaxis_title="AUGRC_j − AUGRC_winner",
                          yaxis_range=[lo - 0.04 * (hi - lo), hi + 0.16 * (hi - lo)],
                          legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0))
        fig.update_annotations(selector=dict(text=f"prelabel {f.prelabel}"),
                               yanchor="bottom", y=0)
    chart_fonts(fig, on, height=CHART_HEIGHT)
    return fig


def _numbers_text(t: int) -> str:
    """The cursor's numbers as plain text (the export)."""
    name = short if kind in ("sample", "panel") else str(label)
    lines = [f"Figure 10 protocol, cursor at {t} of {f.n} labels",
             f"Data: {name} ({ref}), n = {f.n}, K = {pool.K}, winner {f.winner}",
             f"Reading order: {f.policy}",
             f"Lower bound on min over rivals j of AUGRC_j - AUGRC_{f.winner} "
             f"after {t} labels:"]
    for rule, path in f.paths.items():
        exact = Fraction(int(path.lower[t]), path.unit * path.scale)
        state = "certified" if path.stop is not None and t >= path.stop else "not certified"
        lines.append(f"  {rule}: {exact} = {float(exact):.6f}, {state} "
                     f"(stops at {'never' if path.stop is None else path.stop})")
    lines += [f"Stops: {', '.join(f'{r} {_cell(p.stop, f.n)}' for r, p in f.paths.items())}",
              f"Prelabel bound: {f.prelabel}",
              f"Minimum certificate: {certificate}",
              f"Paper Figure 10: {PAPER['data']}, n = {PAPER['n']}, stops "
              f"{' / '.join(str(v) for v in PAPER['stops'].values())}, minimum certificate "
              f"{PAPER['certificate'][0]}-{PAPER['certificate'][1]}, "
              f"prelabel {PAPER['prelabel']}"]
    return "\n".join(lines) + "\n"


def _from_slider() -> None:
    st.session_state["fig_cursor"] = st.session_state["fig_cursor_slider"]


def _cursor_count(text: str) -> int:
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


# the cursor lives in the session under its own name (the slider's state is the slider's:
# the buttons, the keys and the slider all move this one); a cursor beyond this pool
# (another pool, an edited address) gives way to the shared stop
url_state("fig_cursor", shared.stop or f.n, _cursor_count)
if not 0 <= st.session_state["fig_cursor"] <= f.n:
    st.session_state["fig_cursor"] = shared.stop or f.n
write_url_state("fig_policy")


@st.fragment
def _cursor_view() -> None:
    """The chart, the cursor and its numbers: a step redraws only this (`st.fragment`),
    not the pool, the policy or the cached figure."""
    # on a projector the chart comes first, then one row of controls; the chart is drawn
    # last, so the numbers reach the browser before the chart's data
    chart_box = st.container() if on else None
    if on:
        buttons, export, jump = st.columns([2, 1, 3], vertical_alignment="bottom")
    else:  # a row each: at 800 px beside the sidebar the three buttons need the width
        buttons = export = jump = st.container()
    with buttons:
        t = step_controls("fig_cursor", f.n, what="label")
    write_url_state("fig_cursor")
    # the slider jumps; it shows the cursor the buttons and keys moved, and moves it back
    st.session_state["fig_cursor_slider"] = t
    jump.slider(
        "Cursor: labels read", 0, f.n, key="fig_cursor_slider", on_change=_from_slider,
        label_visibility="collapsed" if on else "visible",
        help="Jumps the cursor along the reading order; the three bounds at that label "
             "count are shown under the chart.")
    chart_box = chart_box or st.container()
    numbers = st.container(key="teach_numbers")
    cols = numbers.columns(len(f.paths))
    for col, (rule, path) in zip(cols, f.paths.items()):
        ok = path.stop is not None and t >= path.stop
        # a short label: three metrics side by side on an 800 px screen
        value = path.lower_objective[t]
        # a bound of a few millionths still decides: never shown as 0.00000
        col.metric(f"{rule}, {t} labels", f"{value:.5f}" if value == 0 or abs(value) >= 1e-4
                   else f"{value:.2e}",
                   help=f"lower bound after {t} labels; exact: "
                        f"{int(path.lower[t])} / {path.unit * path.scale}")
        col.caption(("certified" if ok else "not certified")
                    + (f" (stops at {path.stop})" if path.stop is not None
                       else " (never stops)"))
    with (export if on else st.container()):
        numbers_download(_numbers_text(t), f"figure10_{slug}_t{t}.txt")
    chart_box.plotly_chart(_chart(t), width="stretch", key="fig_chart",
                           config=plot_config(f"figure10_{slug}_t{t}"))


with fig_box:
    _cursor_view()

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

rows = [("data", PAPER["data"], short),
        ("n, K", f"{PAPER['n']}, {PAPER['K']}", f"{f.n}, {pool.K}"),
        ("reading order", "static-range", f.policy)]
rows += [(f"{rule} stops at", _cell(PAPER["stops"][rule], PAPER["n"]),
          _cell(f.paths[rule].stop, f.n) if rule in f.paths else "— (binary pools only)")
         for rule in ("shared", "centered", "separate")]
lo, hi = PAPER["certificate"]
rows += [("minimum certificate",
          f"{lo}–{hi} ({lo / PAPER['n'] * 100:.0f}–{hi / PAPER['n']:.0%})",
          f"{certificate}" + ("" if f.certificate_upper is None
                              else f" ({f.certificate_upper / f.n:.0%})")),
         ("prelabel bound", _cell(PAPER["prelabel"], PAPER["n"]), _cell(f.prelabel, f.n))]
table = "| | paper Figure 10 | this page |\n|---|---|---|\n" + "\n".join(
    f"| {a} | {b} | {c} |" for a, b, c in rows)
why = ("**Why the numbers differ:** another data set. Ionosphere is not shipped here: "
       "scikit-learn bundles Breast Cancer, Wine, Digits, Iris, Diabetes and Linnerud, no "
       "installed package holds Ionosphere, and nothing is downloaded. ")
if kind == "sample" and key == "teaching":
    why += ("This pool follows the paper's panel protocol on Breast Cancer (the panels "
            "follow its text; its artifact is not available) and reproduces the figure's "
            "shape: the shared test stops first, separate intervals read the whole pool.")
elif kind == "panel":
    why += (f"This pool follows the paper's panel protocol on {short.split(',')[0]} (the "
            "panels follow its text; its artifact is not available); Figure 10's procedure "
            "runs unchanged on it.")
else:
    why += ("Figure 10's procedure runs unchanged on this pool: the reading order above, "
            "the three rules' bounds, the minimum certificate and the prelabel bound.")
if f.policy != "static-range":
    why += f" The order here is {f.policy}, not the paper's static range."
dup = find_duplicates(pool)
if dup.groups:
    # the paper merges copies for all three rules; unmerged, a copy of the winner can
    # hold back the centered and separate stops (the shared stop is unchanged)
    why += (f" The paper merges exact duplicate candidates; this pool keeps them "
            f"({plain(dup.message())}).")
# below the chart: on a projector the chart comes first
with st.expander("This pool beside the paper's Figure 10", expanded=True):
    st.markdown(table)
    st.markdown(why)
    shipped = panels()
    # the box shows the active pool: a pool chosen in the sidebar since empties it, so
    # the same panel can be chosen again
    st.session_state["fig10_panel"] = ref if ref in shipped else None
    st.selectbox("Run it on a shipped panel pool", list(shipped),
                 format_func=lambda r: panel_about(r.split(":", 1)[1])[0],
                 placeholder="the same protocol on Wine, Digits, other Breast Cancer splits",
                 key="fig10_panel", on_change=_panel_chosen,
                 help="The pools of sample_data/panels/ (sample_data/README.md says how "
                      "they were made); the choice becomes every page's active pool.")
    st.caption("Other pools: the sidebar's *Active pool* (every shipped sample), or add a "
               "file of your own there.")
