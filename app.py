"""certlib dashboard: plan a labelling budget, replay a policy, bound the minimum certificate.

Run: streamlit run app.py
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

import certlib
from certlib.errors import CertlibError
from certlib.policies import policy_names
from ui.common import cached_certify, cached_replay, choose_pool, pool_key, pool_summary

st.set_page_config(page_title="certlib", layout="wide")
st.title("certlib: how many labels does model choice need?")
st.caption("Exact certificates for choosing between frozen candidates by AUGRC "
           "(paper 000). Every number below is exact: integers, verified witnesses.")

pool, label = choose_pool()
if pool is None:
    st.stop()
pool_summary(pool)

st.header("1. Before labelling: which budgets can never suffice")
tol = st.number_input("AUGRC tolerance tau (0 = exact choice)", min_value=0.0, max_value=0.5,
                      value=0.0, step=0.0005, format="%.4f", key="tol")
pre = certlib.prelabel_bound(pool, tolerance=tol)
c1, c2 = st.columns([1, 2])
c1.metric("prelabel bound", f"{pre.prelabel_bound:,} labels")
c1.caption(f"{100 * pre.prelabel_fraction:.1f}% of the pool")
budget = c2.number_input("Your labelling budget (labels)", min_value=0, max_value=pool.n,
                         value=max(1, pool.n // 2),
                         key="budget")
if pre.ruled_out(int(budget)):
    c2.warning(f"A budget of {int(budget):,} is ruled out: no policy can certify the choice with "
             f"fewer than {pre.prelabel_bound:,} labels, whatever the labels are. Raise the budget, "
             "allow a tolerance, or change the candidate set.")
else:
    c2.success(f"A budget of {int(budget):,} is not ruled out (the bound is necessary, not sufficient).")

if not pool.fully_labelled:
    st.info(f"{pool.n - pool.n_labelled:,} rows have no label yet: replay and the minimum "
            "certificate need a fully labelled pool.")
    st.stop()

st.header("2. With labels known: what a policy would have read")
c1, c2, c3 = st.columns(3)
names = list(policy_names())
policy = c1.selectbox("Policy", names, index=names.index("adaptive-pair-sum"), key="policy")
rule = c2.selectbox("Stopping rule", ["shared", "centered", "separate"], key="rule")
seed = c3.number_input("Seed (random policies)", min_value=0, value=0, step=1, key="seed")
try:
    rep = cached_replay(pool, pool_key(pool), policy, rule, tol, int(seed))
except CertlibError as exc:
    st.error(str(exc))
    st.stop()
c1.metric("labels read", f"{rep.labels_read:,}")
c1.caption(f"{100 * rep.labels_fraction:.1f}% of the pool; "
           + ("certified" if rep.certified else f"not certified, worst-case gap {float(rep.excess):.3g}"))
c2.metric("selected", rep.selected)
c3.metric("full-pool winner", rep.full_pool_winner)

st.header("3. In hindsight: the smallest sufficient label set")
cert = cached_certify(pool, pool_key(pool), tol)
size = f"{cert.lower:,}" if cert.exact else f"{cert.lower:,} to {cert.upper:,}"
st.metric("minimum certificate", f"{size} labels")
st.caption(("exact minimum" if cert.exact else "enclosure: the minimum lies in this range")
           + ("" if cert.solver_minimum is None
              else f"; HiGHS finds {cert.solver_minimum:,} (not proved)")
           + f"; selected {cert.selected}")

fig = go.Figure()
fig.add_bar(x=["prelabel bound", "minimum certificate", f"{policy} ({rule})"],
            y=[pre.prelabel_bound, cert.upper, rep.labels_read],
            text=[pre.prelabel_bound, size, rep.labels_read], textposition="outside",
            marker_color=["#f28e2b", "#59a14f", "#4e79a7"])
fig.add_hline(y=pool.n, line_dash="dot", annotation_text=f"pool n = {pool.n}")
fig.update_layout(yaxis_title="labels", height=380, margin=dict(t=30, b=10))
st.plotly_chart(fig, width="stretch")
st.caption("Necessary (prelabel) ≤ sufficient in hindsight (certificate) ≤ what a policy "
           "reads without knowing the labels.")
