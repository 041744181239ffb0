"""Home page: plan a labelling budget, replay a policy, bound the minimum certificate."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import certlib
from certlib.errors import CertlibError
from certlib.cli_plan import BUDGET_DRAWS
from ui.cache import POOL_HASH, cached_certify, cached_replay, pool_key
from ui.inputs import budget_input, default_budget, policy_input, seed_input, tolerance_input
from ui.known_labels import known_labels
from ui.links import page_link
from ui.pool_picker import choose_pool, pool_summary
from ui.state import RULE, RULES, sticky
from ui.text import plain
from ui.label_errors import fragility_section

st.title("certlib: how many labels does model choice need?")
st.caption("Exact certificates for choosing between frozen candidates by AUGRC "
           "(paper 000). Every number below is exact: integers, verified witnesses.")

pool, label = choose_pool()
if pool is None:
    st.stop()
pool, known_from = known_labels(pool)
pool_summary(pool)

@st.cache_data(show_spinner="Working out what the budget buys ...", max_entries=64,
               hash_funcs=POOL_HASH)
def _budget_answer(pool, budget: int, policy: str, seed: int):
    return certlib.what_budget_buys(pool, budget, policy=policy, draws=BUDGET_DRAWS, seed=seed)


st.header("1. Before labelling: which budgets can never suffice")
tol = tolerance_input(st, "tol", "AUGRC tolerance tau (0 = exact choice)")
pre = certlib.prelabel_bound(pool, tolerance=tol)
c1, c2 = st.columns([1, 2])
c1.metric("prelabel bound", f"{pre.prelabel_bound:,} labels")
c1.caption(f"{100 * pre.prelabel_fraction:.1f}% of the pool")
# one budget box per pool: a value typed for a larger pool never outlives a switch
budget = budget_input(c2, f"Your labelling budget (labels, at most n = {pool.n:,})", pool.n,
                      default_budget(pool), key=f"budget_{pool_key(pool)[:16]}")  # the map's too
if pre.ruled_out(budget):
    c2.warning(f"A budget of {budget:,} is ruled out: no policy can certify the choice "
               f"with fewer than {pre.prelabel_bound:,} labels, whatever the labels are. Raise "
               "the budget, allow a tolerance, or change the candidate set.")
else:
    c2.success(f"A budget of {budget:,} is not ruled out (the bound is necessary, "
               "not sufficient)."
               + (f" It is below the {pool.n_labelled:,} labels already known, which count "
                  "as read." if 0 < pool.n_labelled < pool.n and budget < pool.n_labelled
                  else ""))
q1, q2 = st.columns([5, 4])  # the policy names are long; at 800 px a narrower seed box
# wraps its label and loses its + and -
policy = policy_input(q1, "policy")
seed = seed_input(q2, "seed")
try:
    answer = _budget_answer(pool, budget, policy, int(seed))
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
st.markdown(f"**What your budget buys.** {answer.text(plain)}")
st.caption("The policy's run aiming at the exact choice, stopped at the budget (shared rule; "
           "the tolerance box above does not change it)"
           + ("" if pool.fully_labelled else
              f"; a forecast from {BUDGET_DRAWS} draws of the unread labels, as "
              "`certlib plan --budget` makes it with its defaults") + ".")
with st.expander("Labels each candidate needs at least before it can be certified"):
    st.dataframe(pd.DataFrame({
        "candidate": [str(c) for c in pre.candidates],
        "labels needed at least": ["never" if m is None else f"{m:,}" for m in pre.per_target],
    }), hide_index=True)
page_link("views/budget.py", icon=":material/grid_on:",
          label="Budget map and forecast: every tolerance and budget")

if not pool.fully_labelled:
    sess = certlib.Session.from_pool_labels(pool, tolerance=tol)
    st.info(f"{pool.n - pool.n_labelled:,} of {pool.n:,} rows have no label yet, so a replay "
            "and the minimum certificate (which need every label) are not shown.")
    left = max(0, pre.prelabel_bound - pool.n_labelled)
    st.markdown(f"**From the {pool.n_labelled:,} labels known ({known_from}):** "
                + (f"{plain(sess.selected)} is certified ({sess.status})."
                   if sess.done and sess.certified else
                   f"nothing is certified yet; best guess {plain(sess.best_guess)}, worst-case "
                   f"AUGRC gap {float(sess.excess):.4g}."
                   + (f" At least {left:,} more labels are needed by any policy (prelabel "
                      "bound)." if left else "")))
    if known_from != "the pool file's labels":
        page_link("views/certificate.py", icon=":material/workspace_premium:",
                  label="Certificate: how many of the project's labels would have sufficed")
    page_link("views/label.py", icon=":material/edit_note:",
              label="Label this pool: a new project starts from the tolerance chosen here")
    st.stop()

st.header("2. With labels known: what a policy would have read")
rule = st.columns([1, 2])[0].selectbox("Stopping rule", RULES,
                                       **sticky("rule", "shared", RULE, RULES, index=True))
c1, c2, c3 = st.columns([5, 3, 4])
try:
    rep = cached_replay(pool, policy, rule, tol, int(seed))
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
within = "exactly" if tol == 0 else f"within tau = {tol:g}"
c1.metric("labels read", f"{rep.labels_read:,}")
c1.caption(f"{100 * rep.labels_fraction:.1f}% of the pool; "
           + (f"certified {within}" if rep.certified
              else f"not certified, worst-case AUGRC gap {float(rep.excess):.3g}"))
c2.metric("selected" if tol == 0 else "selected (within tau)", plain(rep.selected))
c3.metric("full-pool winner", plain(rep.full_pool_winner))
if tol > 0 and rep.selected != rep.full_pool_winner:
    st.caption(f"With tau = {tol:g} every candidate within tau of the best qualifies: the policy "
               f"certified {plain(rep.selected)}, whose AUGRC is within tau of the full-pool "
               f"winner {plain(rep.full_pool_winner)}'s.")
st.header("3. In hindsight: the smallest sufficient label set")
cert = cached_certify(pool, tol)
size = f"{cert.lower:,}" if cert.exact else f"{cert.lower:,} to {cert.upper:,}"
st.metric("minimum certificate", f"{size} labels")
st.caption(("exact minimum" if cert.exact else "enclosure: the minimum lies in this range")
           + ("" if cert.solver_minimum is None
              else f"; HiGHS finds {cert.solver_minimum:,} (not proved)")
           + (f"; certifies {plain(cert.selected)}" if tol == 0 else
              f"; the smallest certificate of any candidate within tau, here for "
              f"{plain(cert.selected)}"))

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

fragility_section(pool, tol, policy, rule, int(seed),
                  header="4. If some labels are wrong")
