"""Certificate page: the fewest labels that would have sufficed, in hindsight.

For a fully labelled pool: the enclosure of the minimum certificate with its witness rows,
every policy's labels read beside it (`certlib.planning.comparison.policy_comparison`) and the cost
of beating each rival alone against all at once (`certlib.planning.comparison.per_rival`).  For a
labelling project from the store: what the rows it read would have needed
(`certlib.certificates.certificate.certify_partial`).  The page only calls the library and draws.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from certlib.certificates.certificate import certify_partial
from certlib.planning.comparison import per_rival, policy_comparison
from certlib.errors import CertlibError
from certlib.labelling.progress import labels_read_text, sufficed_text, versus_minimum_text
from certlib.labelling.store import LabelStore
from certlib.spreadsheet import csv_text
from ui.cache import POOL_HASH, cached_certify, cached_prelabel
from ui.inputs import tolerance_input
from ui.pool_picker import choose_pool
from ui.state import url_widget, write_url_state
from ui.text import plain, plot_text
from ui.label_errors import fragility_section

st.title("Certificate")
st.caption("In hindsight, with every label known: the fewest rows whose labels certify the "
           "choice (paper 000 Theorem 2), next to what each policy reads without knowing the "
           "labels and the prelabel bound (necessary before any label).")

pool, pool_label = choose_pool()
if pool is None:
    st.stop()


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=POOL_HASH)
def _comparison(pool, tolerance: float, rule: str, _cert):
    return policy_comparison(pool, tolerance=tolerance, rule=rule, certificate=_cert)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=POOL_HASH)
def _rivals(pool, tolerance: float, _cert):
    return per_rival(pool, tolerance=tolerance, certificate=_cert)


def _projects():
    try:
        store = LabelStore()
        return store, store.projects(pool)
    except CertlibError as exc:
        st.sidebar.warning(f"Label store not readable: {plain(exc)}")
        return None, ()


def _witness_download(witness, name: str, key: str) -> None:
    table = pd.DataFrame({"row_id": [str(r) for r in witness]})
    with st.expander(f"Witness: {len(witness):,} rows"):
        st.dataframe(table, hide_index=True, height=min(35 * len(witness) + 38, 300))
        # the one CSV writer: a row id a spreadsheet would run starts with ' (read back
        # with certlib.spreadsheet.read_csv), numbers and ids like -1 stay as they are
        st.download_button("Download row ids (CSV)", csv_text({"row_id": list(witness)}),
                           file_name=name, mime="text/csv", key=key, on_click="ignore",
                           help="Text a spreadsheet would run as a formula starts with '; "
                                "certlib.spreadsheet.read_csv reads the ids back.")


# ------------------------------------------------------------------ settings
store, projects = _projects()
# a pool file with unlabelled rows has no certificate of its own: with projects on it,
# only they are offered, the newest first chosen (else the "rows have no label" warning
# would come first, also after switching pools in one session)
sources = {} if projects and not pool.fully_labelled else {"the pool file": None}
for p in sorted(projects, key=lambda q: q.id, reverse=not pool.fully_labelled):
    sources[f"project {p.id}: {p.policy}"] = p
c1, c2 = st.columns(2)
source = c1.selectbox("Labels from", list(sources),
                      **url_widget("cert_source", next(iter(sources)), options=list(sources)),
                      help="The pool file's label column, or a labelling project in the store "
                           "on this pool (page Label; the project's number and policy).")
write_url_state("cert_source")  # a reload keeps the project
project = sources[source]

# ------------------------------------------------------------------ a labelling project
if project is not None:
    try:
        prog = store.progress(project.id, pool)
    except CertlibError as exc:
        st.error(plain(exc))
        st.stop()
    sess = prog.session
    with st.spinner("Bounding the certificate inside the rows read ..."):
        part = certify_partial(pool.with_labels(sess.label_codes), sess.read_rows,
                               tolerance=project.tolerance)
    st.header("The rows the project read")
    st.caption(f"Project {project.id}, started {project.created_at[:16].replace('T', ' ')}: "
               f"policy {plain(project.policy)}, rule {project.rule}, tolerance tau = "
               f"{float(project.tolerance):g} (fixed when it started).")
    read = labels_read_text(part.labels_read, len(prog.file_rows))
    if part.certified:
        # the fewest is claimed only when the bounds meet (worded as on the Label page)
        st.success(f"{read}; {sufficed_text(part)}; the prelabel bound was "
                   f"{project.prelabel_bound:,}. The certified candidate: "
                   f"{plain(part.selected)}.")
        st.caption(versus_minimum_text(part) + (" The search for a smaller subset hit its "
                                                "time limit." if part.time_limited else ""))
        _witness_download(part.witness, f"project_{project.id}_witness.csv", "part_witness")
    else:
        st.info(f"{read} and {'it does' if part.labels_read == 1 else 'they do'} not "
                "certify the choice yet "
                f"(the prelabel bound was {project.prelabel_bound:,}). Whatever the unread "
                f"labels are, a certificate needs at least {part.lower:,} rows. Continue on "
                "the Label page" + (" (its budget is used up: extend it there first)."
                                    if sess.budget_exhausted else "."))
    st.stop()

# ------------------------------------------------------------------ the pool file
tol = tolerance_input(c2, "cert_tol")
if not pool.fully_labelled:
    missing = pool.n - pool.n_labelled
    st.warning(f"**{missing:,} of {pool.n:,} rows have no label** in this pool, and the minimum "
               "certificate needs every label. Choose a pool whose label column is complete, "
               "or a labelling project on this pool under *Labels from* (page Label)."
               + ("" if projects else " This pool has no project in the label store yet."))
    st.stop()

with st.status("Bounding the minimum certificate ...", expanded=False) as status:
    cert = cached_certify(pool, tol)
    pre = cached_prelabel(pool, tol)
    status.update(label="Replaying every policy ...")
    rule = "shared"
    cmp = _comparison(pool, tol, rule, cert)
    status.update(label="Beating each rival alone ...")
    rivals = _rivals(pool, tol, cert)
    status.update(label="Certificate, policies and rivals computed", state="complete")

st.header("Minimum certificate")
size = f"{cert.lower:,}" if cert.exact else f"{cert.lower:,}–{cert.upper:,}"
m1, m2, m3 = st.columns([3, 2, 2])
m1.metric("certificate (labels)", size)
m2.metric("certifies", plain(cert.selected))
m3.metric("prelabel bound", f"{pre.prelabel_bound:,}")
notes = ["exact minimum" if cert.exact
         else f"enclosure: the minimum lies in [{cert.lower:,}, {cert.upper:,}]"]
if cert.solver_minimum is not None:
    notes.append(f"HiGHS claims {cert.solver_minimum:,} (not proved)")
if tol > 0:
    notes.append(f"the smallest certificate of any candidate within tau = {tol:g}")
notes.append(f"{100 * cert.upper / pool.n:.1f}% of the {pool.n:,} rows")
st.caption("; ".join(notes) + ".")
if cert.time_limited:
    st.warning("The search hit its time limit: a slower machine may report a wider enclosure.")
_witness_download(cert.witness, "certificate_witness.csv", "witness")

# ------------------------------------------------------------------ policies
st.header("What each policy reads")
table = pd.DataFrame([{
    "policy": r.policy,
    "seeds": ", ".join(map(str, r.seeds)),
    "labels read": (f"{r.min:,}" if not r.randomised
                    else f"{r.min:,} / {float(r.median):g} / {r.max:,}"),
    "certified": "yes" if r.all_certified else "no",
    "selected": ", ".join(sorted(set(r.selected))),
} for r in cmp.rows])
st.dataframe(table, hide_index=True)
st.caption("Random policies (their reading order depends on the seed) show min / median / max "
           f"over seeds {', '.join(map(str, cmp.seeds))}; the others read the same rows with "
           f"seeds {cmp.seeds[0]} and {cmp.seeds[1]} and are shown once.")

names = [plot_text(r.policy) for r in cmp.rows]
fig = go.Figure()
for randomised in (False, True):  # error bars only where the seed matters
    rows = [r for r in cmp.rows if r.randomised == randomised]
    if not rows:
        continue
    mid = [float(r.median) for r in rows]
    fig.add_bar(
        x=[plot_text(r.policy) for r in rows], y=mid, marker_color="#4e79a7", showlegend=False,
        error_y=dict(type="data", symmetric=False, array=[r.max - m for r, m in zip(rows, mid)],
                     arrayminus=[m - r.min for r, m in zip(rows, mid)]) if randomised else None,
        customdata=[[r.min, r.max] for r in rows],
        hovertemplate=("%{x}: %{y} labels (median; %{customdata[0]} to %{customdata[1]})"
                       if randomised else "%{x}: %{y} labels") + "<extra></extra>")
fig.add_hline(y=pre.prelabel_bound, line_dash="dash", line_color="#f28e2b")
if cert.exact:
    fig.add_hline(y=cert.upper, line_color="#59a14f")
else:
    fig.add_hrect(y0=cert.lower, y1=cert.upper, fillcolor="#59a14f", opacity=0.3, line_width=0)
# the reference lines named in the legend, so no text sits on the bars
fig.add_scatter(x=[names[0]], y=[None], mode="lines", name=f"certificate {size}",
                line=dict(color="#59a14f"))
fig.add_scatter(x=[names[0]], y=[None], mode="lines", name=f"prelabel bound {pre.prelabel_bound:,}",
                line=dict(color="#f28e2b", dash="dash"))
fig.update_layout(yaxis_title="labels read", height=400, margin=dict(t=40, b=10, l=10, r=10),
                  barmode="overlay", yaxis_range=[0, pool.n * 1.02],
                  xaxis=dict(categoryorder="array", categoryarray=names),
                  legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
st.plotly_chart(fig, width="stretch")

fragility_section(pool, tol, header="Label errors")

# ------------------------------------------------------------------ per rival
st.header("Rival by rival")
st.dataframe(pd.DataFrame({
    "rival": [c.rival for c in rivals],
    "alone": [c.alone for c in rivals],
    "all jointly": [c.joint_lower if c.joint_exact  # an exact number stays a number
                    else f"{c.joint_lower:,}–{c.joint_upper:,}" for c in rivals],
    "prelabel (any labels)": [c.prelabel for c in rivals],
}), hide_index=True)
st.caption(f"Labels needed to certify {plain(cert.selected)} against each rival alone, in "
           "hindsight, versus against all rivals at once. Both are right: one set must beat "
           "every rival, so the joint number is at least the largest single one, but one row "
           "can help against several rivals, so it is at most their sum (the numbers are not "
           "shares of it).")
