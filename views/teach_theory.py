"""Theory explorer: paper 000 Propositions 2 and 3, Figures 4 and 5, correlated orders."""

from __future__ import annotations

import streamlit as st

from certlib.errors import CertlibError
from certlib.policies import policy_names
from certlib.teaching.theory import (LIMITS, copula_prelabel, cyclic_shift, quarter_geometry,
                                     random_orders, sample_square, shipped_random_orders)
from ui.inputs import number_box
from ui.state import sticky
from ui.svg_chart import log_x_lines, unit_square
from ui.teach import numbers_download, teaching_header

on = teaching_header("Theory explorer: how many labels, as n grows", "th", steps=False)
top, bottom = st.container(), st.container()
# in presentation mode Figure 5 and its numbers come first, the settings and the rest
# under them; normal mode reads top to bottom: the text, the settings, then the figure
fig_box, set_box = (top, bottom) if on else (bottom, top)
set_box.markdown(
    "Candidates that **predict identically** but accept rows in **independent uniformly "
    "random orders**, with iid Bernoulli(q) errors. Paper 000 proves three limits "
    "(Propositions 2 and 3, Figure 5): the prelabel bound → n/4, the minimum certificate "
    "C(y) → n/2 (K = 2) and every exact policy → n. Each point below is a mean over "
    "simulated pools, computed by the library (the default settings come from a table "
    "the library computed and ships, so the page opens at once; any other setting is "
    "simulated live).")

SIZES = [50, 100, 300, 1000, 3000, 10000, 30000]
# three rows of controls, the sizes alone on the first: in a column their chips hid behind
# a scroll at 800 px, and five controls in one row are unreadable on a narrow screen
# every setting outlives a visit to another page (`sticky`)
_ns = sticky("th_ns", [100, 300, 1000, 3000, 10000])
ns = set_box.multiselect("pool sizes n", SIZES, default=_ns["value"], key=_ns["key"])
names = [p for p in policy_names() if p not in ("model-selector", "expected-coverage")]
c5, c2 = set_box.columns(2)
policy = c5.selectbox("policy", names,
                      **sticky("th_policy", "adaptive-pair-sum", options=names, index=True))
K = number_box(c2, "candidates K", "th_K", 2, low=2, high=8, what="K", step=1)
c3, c4 = set_box.columns(2)
q = c3.slider("error rate q", 0.05, 0.95, step=0.05, **sticky("th_q", 0.3))
seeds = number_box(c4, "pools per n", "th_seeds", 5, low=1, high=50, what="Pools per n", step=1)


@st.cache_data(show_spinner=False, max_entries=256)
def _one(n, K, q, seeds, policy):
    # the default settings are shipped (a fresh server would simulate 25 pools first)
    shipped = shipped_random_orders(n, K=K, q=q, seeds=seeds, policy=policy)
    if shipped is not None:
        return shipped
    return random_orders(ns=(n,), K=K, q=q, seeds=seeds, policy=policy)


if not ns:
    fig_box.info("Choose at least one pool size.")
    st.stop()
ns = sorted(ns)
bar = fig_box.progress(0.0, text="Simulating ...")
parts = []
try:
    for i, n in enumerate(ns):
        parts.append(_one(n, int(K), float(q), int(seeds), policy))
        bar.progress((i + 1) / len(ns), text=f"Simulated n = {n:,} ({i + 1} of {len(ns)})")
except CertlibError as exc:
    fig_box.error(str(exc))
    st.stop()
bar.empty()

rows = {"prelabel / n": [p.prelabel[0] for p in parts],
        "C(y) / n": [p.cert_upper[0] for p in parts],
        f"{policy} / n": [p.policy_read[0] for p in parts]}
limits = [LIMITS["prelabel"], LIMITS["certificate"], LIMITS["policy"]]
colors = ["#9c755f", "#59a14f", "#4e79a7"]
# drawn as SVG with the page's text: a Plotly chart here waited seconds for plotly.js on
# a fresh browser; the log axis is ticked at powers of ten only, in 16 px text
svg = log_x_lines([(name, ns, ys, col) for (name, ys), col in zip(rows.items(), colors)],
                  hlines=[(float(lim), f"limit {lim}", col) for lim, col in zip(limits, colors)],
                  x_title="pool size n (log scale)", y_title="labels / n")
ALT = "labels / n against pool size n, with the limits 1/4, 1/2, 1"
# on a projector the figure and its numbers side by side (one above the other ran past
# 720 px); on a screen the figure, then the numbers under it
chart_col, num_col = fig_box.columns([3, 2], vertical_alignment="center") if on else \
    (fig_box, fig_box)
# 520 units drawn at most 760 px wide: 16 px text stays 14 px or more down to a 460 px
# column (an 800 px window with the sidebar open); on a projector the column's width
chart_col.image(svg, width="stretch" if on else 760, alt=ALT)
last = parts[-1]
lo_txt, hi_txt = f"{last.cert_lower[0]:.3f}", f"{last.cert_upper[0]:.3f}"
# the certificate is enclosed (lower-upper) when a pool's search ran out of work; show
# one number when the two agree to the digits shown
cert_txt = hi_txt if lo_txt == hi_txt else f"{lo_txt}-{hi_txt}"
setting = f"K = {int(K)}, q = {q:g}, mean of {int(seeds)} pools"
k_note = "" if int(K) == 2 else "; for K > 2 the paper proves only ≥ 1/2"
numbers = [f"prelabel/n = **{last.prelabel[0]:.3f}** (limit {LIMITS['prelabel']})",
           f"C(y)/n = **{cert_txt}** (limit {LIMITS['certificate']}{k_note})",
           f"{policy} reads **{last.policy_read[0]:.3f}** n (limit {LIMITS['policy']})"]
box = num_col.container(key="teach_numbers")
if on:  # one number a line, readable from the back of the room
    box.markdown(f"At **n = {ns[-1]:,}** ({setting}):\n" + "".join(f"\n- {x}" for x in numbers))
else:
    box.markdown(f"At **n = {ns[-1]:,}** ({setting}): " + ", ".join(numbers) + ".")
exports = num_col.container(horizontal=True)
exports.download_button("Figure 5 (SVG)", svg, file_name="figure5.svg", mime="image/svg+xml",
                        key="th_svg", on_click="ignore",
                        help="The chart as drawn here, a vector image for slides.")
with exports:
    numbers_download(
        "\n".join([f"Theory explorer, Figure 5 ({setting}, policy {policy})",
                    *(f"At n = {n:,}: " + ", ".join(f"{k} = {ys[i]:.3f}" for k, ys in rows.items())
                      for i, n in enumerate(ns)),
                    f"At n = {ns[-1]:,}: " + "; ".join(x.replace("**", "") for x in numbers),
                    "Limits: prelabel/n -> 1/4, C(y)/n -> 1/2 (K = 2), a policy's labels/n -> 1"])
        + "\n", "figure5_numbers.txt")
table_box = st.container() if on else fig_box  # a big table: under the settings on a projector
table_box.table({"n": [f"{n:,}" for n in ns],
                 **{k: [f"{v:.3f}" for v in ys] for k, ys in rows.items()}})
table_box.caption("Convergence is slow: these are finite-pool means, not the limits. The gap "
                  "between the certificate and the policy is the cost of finding useful "
                  "labels without seeing them (Proposition 3).")

st.header("Figure 4: where the quarter comes from")
geo = quarter_geometry()
m = st.slider("sampled points", 200, 5000, step=200, **sticky("th_points", 2000))
sq = sample_square(m, seed=0)
far = sq["far"]
# an SVG drawn with the text, as Figure 5: a Plotly chart here kept the page waiting
# seconds for plotly.js (the page's last chart that needed it)
svg4 = unit_square(
    [(sq["u"][far], sq["v"][far], "sampled, far", "#e15759"),
     (sq["u"][~far], sq["v"][~far], "sampled, near", "#bab0ac")],
    regions=[([(0.5, 0), (1, 0), (1, 0.5)], "|U − V| > 1/2", "rgba(225,87,89,0.2)"),
             ([(0, 0.5), (0, 1), (0.5, 1)], "", "rgba(225,87,89,0.2)")],
    x_title="U (rank in A / n)", y_title="V (rank in B / n)", font_px=20 if on else 16)
# one above the other: in two columns the square shrank to about 150 px at 800 px
st.image(svg4, width=460, alt="the unit square of ranks with the region |U - V| > 1/2 "
         "and the sampled points")
st.download_button("Figure 4 (SVG)", svg4, file_name="figure4.svg", mime="image/svg+xml",
                   on_click="ignore", key="dl_figure4")
st.markdown(
    f"For independent uniform U, V the region |U − V| > 1/2 has probability "
    f"**{geo['probability']}** but carries **{geo['mass_share']}** of E|U − V| = "
    f"{geo['mean_abs_diff']} (its part is {geo['mass']}). So even the largest potential "
    f"gains need a quarter of the rows to cover the deficit.  \n"
    f"Sampled: {sq['probability']:.3f} of the points, {sq['mass_share']:.3f} of the mass.")

st.header("Correlated orders")
rc1, rc2 = st.columns(2)
with rc1:
    st.subheader("Gaussian copula")
    n_cop = st.select_slider("n", [500, 1000, 2000, 5000], **sticky("th_cop_n", 1000))
    bar2 = st.progress(0.0, text="Simulating ...")

    @st.cache_data(show_spinner=False, max_entries=32)
    def _copula(rho, n):
        return copula_prelabel(rhos=(rho,), n=n, seeds=3)

    rhos = (0.0, 0.3, 0.6, 0.9, 0.99)
    res = []
    for i, rho in enumerate(rhos):
        res.append(_copula(rho, n_cop))
        bar2.progress((i + 1) / len(rhos), text=f"rho = {rho}")
    bar2.empty()
    st.table({"rho": [f"{r:g}" for r in rhos],
              "Spearman": [f"{c.spearman[0]:.3f}" for c in res],
              "prelabel / n": [f"{c.prelabel[0]:.3f}" for c in res]})
    st.caption("Two candidates, identical predictions; confidences from a bivariate normal "
               "with correlation rho. Mean of 3 pools each. At rho = 1 the orders coincide "
               "and no label is needed.")
with rc2:
    st.subheader("Cyclic shift")
    n_sh = number_box(st, "n", "th_shift_n", 1000, low=2, high=100_000, step=1)
    s_max = max(1, int(n_sh) // 2)
    s_sh = number_box(st, "shift s (0 < s ≤ n/2)", "th_shift_s", min(90, s_max), low=1,
                      high=s_max, what="The shift s (at most n/2)", step=1)
    sh = cyclic_shift(int(n_sh), int(s_sh))
    st.metric("prelabel bound", sh.prelabel, help="the paper: exactly s")
    unit = "row" if sh.s == 1 else "rows"
    st.markdown(f"Shifting B's order by s = {sh.s} {unit}: prelabel = **{sh.prelabel}** "
                f"({'= s' if sh.prelabel == sh.s else '≠ s'}), prelabel/n = "
                f"{sh.prelabel / sh.n:.3f}, while the Spearman correlation is "
                f"{sh.spearman:.3f}: correlation alone does not determine the bound.")
