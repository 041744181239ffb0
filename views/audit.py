"""Audit a model update in the browser (paper 002, SPEC section 11).

A running audit project lives in the label store (certlib.audit.store): traffic is
appended in batches, the audit routes some disagreements to the labelling queue, and
the verdict, both confidence sequences, the slice and window verdicts are recomputed
from the store on every run, so a reload or a server restart loses nothing.  The open
project is kept in the URL (?audit=<id>).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st
from plotly.subplots import make_subplots

from certlib.audit.batch import check_batch, read_batch
from certlib.audit.store import AuditStore
from certlib.errors import CertlibError
from certlib.labelling.saved_pools import SavedPools
from certlib.labelling.store import UnknownProjectError
from ui.inputs import annotator_input, brought_in, held_back, keep_annotator, number_box
from ui.keys import class_shortcuts, undo_shortcut
from ui.pool_picker import ROOT
from ui.state import set_url_kept, sticky, url_kept
from ui.text import outward_end, outward_interval, plain
from ui.label_errors import begin_run, read_only_note, store_act
from ui.label_panel import (apply_audit_presses, audit_panel_data, label_panel, panel_state,
                            panel_wake, presses_callback)

SAMPLE = ROOT / "sample_data" / "audit_stream.csv"
SAMPLE_TAG = "sample_data/audit_stream.csv"
HIDDEN = "labels hidden"
NONE = "(none)"

begin_run()  # first: this run's callbacks (`store_act`) have run by now
st.title("Audit a model update")
st.caption("Replace the deployed model (incumbent) by a candidate only with a certificate: "
           "Tier 0 certifies from disagreements alone, Tier 1 pays for labels on some "
           "disagreements. Verdicts hold at any stopping time, however often you look "
           "(paper 002). Every batch and every label is saved to the store at once.")

try:
    store = AuditStore()
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
read_only_note(store, "labelling and adding batches")  # reading only

sb = st.sidebar
sb.header("Update audit")


who = annotator_input("audit_annotator", sb)


@st.cache_data(show_spinner=False)
def _sample_frame(mtime: float):
    import polars as pl

    return pl.read_csv(SAMPLE)


def _sample():
    return _sample_frame(SAMPLE.stat().st_mtime)


def _sample_batch(lo: int, hi: int, hidden: bool):
    df = _sample()[lo:hi]
    if hidden:
        df = df.drop("label")
    return read_batch(df, name=f"{SAMPLE_TAG} items {lo + 1}-{lo + df.height}"
                      + (f" ({HIDDEN})" if hidden else ""))


# keyed by the upload's id, not its bytes: hashing a large file on every run of the
# sidebar cost more than the check
@st.cache_data(show_spinner=False, max_entries=4)
def _upload_columns(file_id: str, _data: bytes, name: str) -> tuple:
    """(the columns of an uploaded stream, the message when it cannot be read)."""
    try:
        return list(read_batch(_data, name).columns), None
    except CertlibError as exc:
        return [], plain(exc)


@st.cache_data(show_spinner="Checking the stream ...", max_entries=4)
def _upload_problem(file_id: str, _data: bytes, name: str, judge: str | None,
                    slices: str | None):
    """What `check_batch` refuses in an upload with these columns (None: it is fine), shown
    before Start, not after it."""
    try:
        check_batch(read_batch(_data, name), judge_column=judge, slice_column=slices)
    except CertlibError as exc:
        return plain(exc)
    return None


def _open(pid: int):
    set_url_kept("audit", pid)
    keep_annotator("audit_annotator")


# ------------------------------------------------------------------ start or open
pid = url_kept("audit")[0]
if pid is None:
    # no audit open: the start form is the page (in the sidebar it sat below the fold,
    # beside an empty main area)
    st.info("Start an audit on the shipped sample or your own stream, or open a running "
            "one. A pipeline can feed the same audit from the command line: "
            "`certlib audit-project append ID batch.csv`.")
    running = store.projects()
    if running:
        st.subheader("Open a running audit")
        labels = {p.id: f"{p.id}: {p.name or 'audit'} (eps {p.config.epsilon:g})"
                  for p in reversed(running)}
        pick = st.container(horizontal=True, vertical_alignment="bottom")
        choice = pick.selectbox("Audit project", list(labels), format_func=labels.get,
                                key="audit_pick", width=420)
        if pick.button("Open", key="audit_open"):
            _open(choice)
            st.rerun()
    st.subheader("Start an audit")
    form = st.container(border=True)
    left, right = form.columns(2, gap="large")
    # the settings outlive a visit to another page (`sticky`); an upload does not
    traffic = ["Shipped sample stream", "Upload a stream"]
    source = left.radio("Traffic", traffic,
                        **sticky("audit_src", traffic[0], options=traffic, index=True),
                        help="The sample: 20,000 items of traffic drawn from scikit-learn's "
                             "handwritten digits, two logistic regressions, each item shown "
                             "as its image (sample_data/audit_stream.csv).")
    upload, upload_error = None, None
    if source == "Upload a stream":
        upload = left.file_uploader("Stream (CSV or Parquet)", type=["csv", "parquet"],
                                    key="audit_upload",
                                    help="Columns pred_incumbent, pred_candidate, an item id "
                                         "(item_id or row_id), optional label, judge and "
                                         "slice columns; other columns are the item's content, "
                                         "shown to annotators (a relative image path as the "
                                         f"image, from {plain(SavedPools().folder)}).")
        problem = left.empty()  # by the uploader, filled once the whole check has run
        columns = []
        if upload is not None:
            data = upload.getvalue()  # read once a run (a copy of the whole file)
            columns, upload_error = _upload_columns(upload.file_id, data, upload.name)
    else:
        columns = list(_sample().columns)
    hide = left.checkbox("Hide the sample's labels", **sticky("audit_hide", True),
                         disabled=source != "Shipped sample stream",
                         help="Label the queue here; the held-back labels only score the "
                              "baselines.")
    first = number_box(left, "Sample items in the first batch", "audit_first", 2500, low=1,
                       what="Items in the first batch", step=500,
                       disabled=source != "Shipped sample stream",
                       help="An uploaded stream is the first batch as a whole.")
    chain = left.text_input("Promotion chain (optional)", **sticky("audit_chain", ""),
                            help="Audits of one chain share delta: audit k runs at "
                                 "delta 6/(pi^2 k^2).")
    eps = number_box(right, "Tolerance epsilon", "audit_eps", 0.03, low=0.001, high=1.0,
                     what="epsilon", step=0.005, format="%g",
                     help="Safe means: the candidate's error rate is at most epsilon "
                          "above the incumbent's.")
    delta = number_box(right, "delta (miscoverage; the lifetime budget in a chain)",
                       "audit_delta", 0.05, low=0.001, high=0.5, what="delta", step=0.01,
                       format="%g")
    extra_cols = [NONE] + [c for c in columns if c not in (
        "pred_incumbent", "pred_candidate", "label", "item_id", "row_id")]
    judge = right.selectbox("Judge column (routing scores in [0, 1])", extra_cols,
                            **sticky("audit_judge", NONE, options=extra_cols, index=True))
    pi = number_box(right, "pi (labelling probability on disagreements)", "audit_pi", 0.5,
                    low=0.01, high=1.0, what="pi", step=0.05, disabled=judge != NONE)
    slices = right.selectbox("Slice column (per-slice verdicts)", extra_cols,
                             **sticky("audit_slices", NONE, options=extra_cols, index=True))
    window = number_box(right, "Window (items; 0 = none)", "audit_window", 0, low=0,
                        what="The window", step=500)
    seed = number_box(right, "Seed (labelling draws)", "audit_seed", 0, low=0, what="The seed",
                      step=1)
    judge_col = None if judge == NONE else judge
    slice_col = None if slices == NONE else slices
    if upload is not None and not upload_error:  # the whole check, before Start
        upload_error = _upload_problem(upload.file_id, data, upload.name, judge_col,
                                       slice_col)
    if upload_error:
        problem.error(f"The uploaded stream cannot start an audit: {upload_error}")
    changed = brought_in("audit_eps", "audit_delta", "audit_pi", "audit_window",
                         "audit_seed", "audit_first")
    # under the shorter column: in sight without scrolling at 1400 x 1000 and 800 x 1000
    start = left.button("Start audit", key="audit_start", type="primary",
                        disabled=source == "Upload a stream" and (upload is None
                                                                 or bool(upload_error)),
                        help="Choose a stream file the page can read first."
                        if source == "Upload a stream" and (upload is None or upload_error)
                        else None)
    if start and changed:  # typed and pressed at once: show the number used, start nothing
        left.warning(held_back())
    elif start:
        try:
            if upload is not None:
                batch = read_batch(data, upload.name)
                name = upload.name
            else:
                batch = _sample_batch(0, int(first), hide)
                name = "sample stream" + (f" ({HIDDEN})" if hide else "")
            # a bad file leaves no empty project
            check_batch(batch, judge_column=judge_col, slice_column=slice_col)
            new = store.create(epsilon=eps, delta=delta, pi=None if judge != NONE else pi,
                               seed=int(seed), judge_column=judge_col,
                               slice_column=slice_col,
                               window=int(window) or None, chain=chain.strip() or None,
                               name=name, who=who)
            store.append_batch(new, batch, who=who or "page")
        except CertlibError as exc:
            # the message, and the rest of the form (open a running audit) stays usable
            left.error(plain(exc))
        else:
            _open(new)
            st.rerun()
    st.stop()

if sb.button("Close this audit", key="audit_close",
             help="Its batches and labels stay in the store; open it again from the list."):
    set_url_kept("audit", None)
    st.rerun()
sb.caption(f"Store: {plain(store.path)} (set CERTLIB_STORE to move it)")

try:
    status = store.status(pid)
except UnknownProjectError as exc:
    st.warning(f"{plain(exc)}. Start or open another audit.")
    set_url_kept("audit", None)
    st.stop()
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
project, r, cfg = status.project, status.result, status.project.config
pid = project.id
for value, k, first_item in status.unpredicted:
    st.warning(f"Label {plain(repr(value))} is on {k:,} item{'' if k == 1 else 's'} (first: "
               f"item_id {plain(str(first_item))}) but neither model predicts it on any item. "
               "A typo in a batch file? Both models count as wrong there.")


# a button's store call; a refusal (another annotator was first, a stale view) becomes
# the message of the next run
_act = store_act("audit_flash", "item")


# ------------------------------------------------------------------ append a batch
sources = [b.source for b in status.batches]
from_sample = bool(sources) and all(s.startswith(SAMPLE_TAG) for s in sources)
# where the items' image paths resolve: sample_data/ for an audit started on the sample,
# else the folder the Label page gives an uploaded pool's (the saved-pools folder)
image_folder = (SAMPLE.parent if sources and sources[0].startswith(SAMPLE_TAG)
                else SavedPools().folder)
with sb.expander("Append a batch", expanded=from_sample):
    if from_sample and status.items < _sample().height:
        hidden = HIDDEN in sources[0]
        step = number_box(st, "Items", "audit_step", 2500, low=1, what="Items to append",
                          step=500)
        hi = min(status.items + int(step), _sample().height)
        changed = brought_in("audit_step")  # typed and pressed at once: append nothing
        pressed = st.button(f"Append sample items {status.items + 1:,}-{hi:,}",
                            key="audit_next")
        if pressed and changed:
            st.warning(held_back("appended"))
        elif pressed:
            _act(store.append_batch, pid, _sample_batch(status.items, hi, hidden),
                 who=who or "page")
            st.rerun()
    up = st.file_uploader("Batch (CSV or Parquet)", type=["csv", "parquet"],
                          key=f"audit_batch_{len(status.batches)}")
    if up is not None and st.button("Append this batch", key="audit_append"):
        _act(store.append_batch, pid, up.getvalue(), who=who or "page", name=up.name)
        st.rerun()

if "audit_flash" in st.session_state:
    st.error(plain(st.session_state.pop("audit_flash")))

# ------------------------------------------------------------------ verdict
routing = (f"judge {plain(project.judge_column)}, pi_min {cfg.routing.pi_min:g}"
           if cfg.routing.kind == "judge" else f"pi {cfg.routing.pi:g}")
st.caption(f"Audit {pid}: {plain(project.name or 'audit')}. epsilon {cfg.epsilon:g}, "
           f"delta {cfg.delta:.4g} (Tier 0 at {cfg.delta0:.4g}, Tier 1 at {cfg.delta1:.4g}), "
           f"{routing}, seed {cfg.seed}, Tier 1 on "
           + ("the betting CS" if cfg.confidence == "betting" else "PrPl-EB")
           + (f", slices by {plain(project.slice_column)}" if project.slice_column else "")
           + (f", window {project.window:,}" if project.window else "")
           + (f", chain {plain(project.chain)} (audit k = {project.chain_k})"
              if project.chain else "") + ".")


# with slices the audit runs on for the slices still undecided, so labels_used can hold
# labels paid after the overall verdict (often many more than it needed): the banner
# counts those up to the verdict and says how many more the slices took
by_verdict = (sum(e.t <= r.stopping_time for e in r.trace) if r.stopping_time is not None
              else r.labels_used)
later = (f" ({r.labels_used - by_verdict:,} more were paid after it, for the slices still "
         "undecided then)" if r.labels_used > by_verdict else "")


if r.verdict == "safe" and r.tier == 0:
    rho_hi = outward_end(r.rho_interval[1], "upper", (cfg.epsilon / cfg.B,))
    st.success(f"**Safe by Tier 0 with zero labels** at item {r.stopping_time:,}{later}: "
               f"the models disagree on at most {rho_hi} of the traffic < epsilon, so the "
               "candidate cannot be epsilon worse. Promote.")
elif r.verdict == "safe":
    d_hi = outward_end(r.delta_interval[1], "upper", (cfg.epsilon,))
    st.success(f"**Safe by Tier 1** at item {r.stopping_time:,} after {by_verdict:,} "
               f"labels{later}: Delta <= {d_hi} < epsilon = {cfg.epsilon:g}. "
               "Promote.")
elif r.verdict == "regression":
    d_lo = outward_end(r.delta_interval[0], "lower", (0.0,))
    st.error(f"**Regression** at item {r.stopping_time:,} after {by_verdict:,} "
             f"labels{later}: Delta >= {d_lo} > 0, the candidate is worse. Do not promote.")
elif status.queue:
    st.info(f"**Continue**: the audit waits for labels ({len(status.queue):,} item(s) in the "
            "queue below).")
else:
    st.info("**Continue**: no verdict yet and nothing to label; append more traffic.")

# ------------------------------------------------------------------ queue
st.subheader("Labelling queue")
panel_key = f"audit_panel_{pid}"


_on_presses = presses_callback(
    panel_key, "audit_panel",
    lambda presses, results: apply_audit_presses(store, pid, who, presses, results),
    "audit_flash")


def _on_refresh() -> None:
    st.session_state["audit_panel_refresh"] = True


verdict_drawn = r.verdict


@st.fragment
def _queue() -> None:
    """The item to label and the progress: an answer reruns only this; the verdict, the
    chart and the tables follow once the panel is quiet, or when the verdict changes."""
    ss = st.session_state
    try:
        now = store.status(pid)
    except CertlibError as exc:
        st.error(plain(exc))
        return
    rn = now.result
    if ss.pop("audit_panel_refresh", False) or rn.verdict != verdict_drawn:
        st.rerun()
    if "audit_flash" in ss:
        st.error(plain(ss.pop("audit_flash")))
    # from this run's classes (a batch adds classes and no event; each answer names its
    # class, checked by the server)
    keys = class_shortcuts(list(now.classes))
    ukey = undo_shortcut(keys)
    if now.queue and not who:
        st.warning("Enter your name in the sidebar to label: it goes into the evidence record.")
    if now.queue:
        st.markdown("**The true class of this item** (keyboard: "
                    + ", ".join(f"`{k}` = {plain(c)}" for k, c in zip(keys, now.classes) if k)
                    + f", `{ukey}` = undo)")
    label_panel(panel_key, audit_panel_data(now, store.lookahead(pid, status=now), who, keys,
                                            ukey, *panel_state("audit_panel"),
                                            folder=image_folder),
                on_presses=_on_presses, on_refresh=_on_refresh)
    # the progress after the queue: above it, the metrics (wrapped to two lines at 800 px)
    # pushed the item and its buttons below the fold of an 800 x 900 window
    metrics = st.container(horizontal=True, gap="large")
    metrics.metric("items seen", f"{rn.items_seen:,} of {now.items:,}", width="content")
    metrics.metric("labels used", f"{rn.labels_used:,}", width="content")
    metrics.metric("queue", f"{len(now.queue):,}", width="content")
    metrics.metric("batches", f"{len(now.batches):,}", width="content")
    metrics.metric("verdict", rn.verdict + ("" if rn.tier is None else f" (tier {rn.tier})"),
                   width="content")


_queue()
panel_wake(sb)
# the numbers `certlib audit` prints, rounded outwards, so they compare with the command
# line without hovering the chart
st.caption(f"At item {r.items_seen:,}: rho (how often the models disagree) in "
           f"{outward_interval(*r.rho_interval, sign='', marks=(cfg.epsilon / cfg.B,))}; "
           f"Delta (the candidate's error rate minus the incumbent's) in "
           f"{outward_interval(*r.delta_interval, marks=(0.0, cfg.epsilon))}. Both hold at "
           f"every item with probability at least {1 - cfg.delta:g} (anytime-valid).")


def _at(item) -> str:
    """An item number for a table, or "-" when there is no verdict yet (not None)."""
    return "-" if item is None else f"{int(item):,}"


# ------------------------------------------------------------------ chart
n_seen = r.items_seen
if n_seen:
    stride = max(1, n_seen // 1500)
    idx = np.unique(np.r_[np.arange(0, n_seen, stride), n_seen - 1])
    t = idx + 1
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("Tier 0: disagreement rate rho (no labels)",
                                        "Tier 1: Delta = error(candidate) - error(incumbent)"))

    def band(row, lo, hi, color, name):
        fig.add_scatter(x=t, y=hi[idx], mode="lines", line={"color": color, "width": 1},
                        name=f"{name} upper", row=row, col=1, showlegend=False)
        fig.add_scatter(x=t, y=lo[idx], mode="lines", line={"color": color, "width": 1},
                        fill="tonexty", name=name, row=row, col=1)

    band(1, r.rho_lower, r.rho_upper, "#4e79a7", "rho interval")
    fig.add_hline(y=cfg.epsilon / cfg.B, line_dash="dash", line_color="#e15759", row=1, col=1,
                  annotation_text="eps / B", annotation_position="top left")
    start1 = r.tier1_start
    t0_end = (start1 - 1) if start1 else (r.stopping_time or n_seen)
    fig.add_vrect(x0=1, x1=max(t0_end, 1), fillcolor="#4e79a7", opacity=0.08, line_width=0,
                  row=1, col=1)
    if start1:
        tier1 = idx >= start1 - 1
        fig.add_scatter(x=t[tier1], y=r.delta_upper[idx][tier1], mode="lines",
                        line={"color": "#f28e2b", "width": 1}, row=2, col=1, showlegend=False,
                        name="Delta upper")
        fig.add_scatter(x=t[tier1], y=r.delta_lower[idx][tier1], mode="lines",
                        line={"color": "#f28e2b", "width": 1}, fill="tonexty",
                        name="Delta interval", row=2, col=1)
        fig.add_vrect(x0=start1, x1=n_seen, fillcolor="#f28e2b", opacity=0.08, line_width=0,
                      row=2, col=1)
    else:  # an empty panel said nothing: say why it is empty
        fig.add_annotation(xref="x2 domain", yref="y2 domain", x=0.5, y=0.5, showarrow=False,
                           text=("Tier 1 was not needed: Tier 0 gave the verdict without "
                                 "labels" if r.stopping_time else "Tier 1 has not started: "
                                 "rho may still be small enough for Tier 0"),
                           font={"color": "#555555"})
    fig.add_hline(y=0, line_color="gray", row=2, col=1)
    fig.add_hline(y=cfg.epsilon, line_dash="dash", line_color="#e15759", row=2, col=1,
                  annotation_text="eps", annotation_position="top left")
    if r.stopping_time:
        fig.add_vline(x=r.stopping_time, line_dash="dot", line_color="#59a14f")
    fig.update_yaxes(range=[0, min(1.0, max(3 * cfg.epsilon, float(r.rho_upper[-1]) * 1.2))],
                     row=1, col=1)
    # wide enough for the current interval (a judge-routed stream with 21 labels had
    # [-0.27, 0.26], which a fixed +-0.2 turned into a panel filled with orange); the
    # early, wider part of the sequence may run off the panel
    reach = max(0.2, 3 * cfg.epsilon, 1.15 * max(abs(v) for v in r.delta_interval)
                if start1 else 0.0)
    reach = min(reach, 1.05 * cfg.B)
    fig.update_yaxes(range=[-reach, reach], row=2, col=1)
    fig.update_xaxes(title_text="items seen", row=2, col=1)
    fig.update_layout(height=520, margin={"t": 40, "b": 10, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": -0.15})
    st.plotly_chart(fig, width="stretch")
    st.caption("Confidence sequences (running intersection) against items seen. Shaded: "
               "where each tier is active. Tier 1 sleeps, spending no labels, until Tier 0's "
               "lower bound on rho reaches "
               + ("eps/(2B), above the rates it certifies soon" if cfg.tier1_from == 0.5
                  else f"{cfg.tier1_from:g} eps/B")
               + (f"; it started at item {start1:,}." if start1 else "; it has not started.")
               + (f" The dotted line marks the verdict at item {r.stopping_time:,}."
                  if r.stopping_time else ""))


# ------------------------------------------------------------------ baselines
@st.cache_data(show_spinner=False, max_entries=8)
def _baselines(store_path: str, project_id: int, items: int, last_seq: int, truth: bool):
    """Uniform, PPI-style and active labelling on the same items (and CS)."""
    from certlib.audit.baselines import compare_baselines

    f, g, y, judge, _, ids = AuditStore(store_path).stream(project_id)
    if truth:  # the shipped sample's held-back labels for the same items
        y = _sample()["label"].to_numpy()[np.asarray(ids, dtype=int)].astype(float)
    c = AuditStore(store_path).project(project_id).config
    out = compare_baselines(f, g, y, epsilon=c.epsilon, delta=c.delta, seed=c.seed,
                            pi=None if c.routing.kind == "judge" else c.routing.pi,
                            pi_min=c.routing.pi_min, judge=judge, truncation=c.truncation,
                            confidence=c.confidence, tier1_from=c.tier1_from)
    return [row.to_dict() for row in out.rows]


st.subheader("Labels used versus uniform labelling")
truth = from_sample and HIDDEN in sources[0]
try:
    rows = _baselines(str(store.path), pid, status.items, status.last_seq, truth)
except CertlibError as exc:
    rows = None
    st.caption(f"The baselines replay the stream with every label known: {plain(exc)}")
if rows:
    names = {"discern": "Discern (this audit, all labels known)", "uniform": "uniform labelling",
             "ppi": "PPI-style control variate", "active": "active testing"}
    st.dataframe(pd.DataFrame({
        "method": [names[x["method"]] for x in rows],
        "verdict": [x["verdict"] for x in rows],
        "at item": [_at(x["stopping_time"]) for x in rows],
        "labels": [x["labels_used"] for x in rows]}), hide_index=True, width="stretch")
    uni = next(x for x in rows if x["method"] == "uniform")
    st.caption(f"On the {status.items:,} items appended so far"
               + (" (with the sample's held-back labels)" if truth else "")
               + f". This audit used {r.labels_used:,} labels; uniform labelling "
               + (f"needs {uni['labels_used']:,} to reach its verdict."
                  if uni["verdict"] != "continue" else
                  f"labels all {uni['labels_used']:,} items and has no verdict yet.")
               + " Same confidence sequence and verdict rule; the baselines run at the whole "
               "delta, a tilt in their favour.")

# ------------------------------------------------------------------ slices, windows, ledger
if r.slices:
    st.subheader("Per-slice verdicts")
    k = len(r.slices)
    st.dataframe(pd.DataFrame({
        "slice": [s.slice for s in r.slices], "items": [s.items for s in r.slices],
        "disagreements": [s.disagreements for s in r.slices],
        "verdict": [s.verdict for s in r.slices],
        "at item": [_at(s.stopping_time) for s in r.slices],
        "labels": [s.labels_used for s in r.slices],
        "Delta interval": [outward_interval(*s.delta_interval, marks=(0.0, cfg.epsilon))
                           for s in r.slices]}),
                 hide_index=True, width="stretch")
    st.caption(f"Each of the {k} slices runs Tier 1 at delta1/K = {cfg.delta1 / k:.4g}, so all "
               f"{k} intervals hold together (simultaneous coverage) with probability at least "
               f"1 - delta1 = {1 - cfg.delta1:.4g}, at every stopping time (paper Prop. 12).")
if status.windows is not None:
    st.subheader(f"Windows of {project.window:,} items (drift)")
    ws = status.windows.windows
    st.dataframe(pd.DataFrame({
        "items": [f"{w.start:,}-{w.end:,}" for w in ws], "verdict": [w.verdict for w in ws],
        "tier": [w.tier for w in ws], "at item": [_at(w.stopping_time) for w in ws],
        "labels": [w.labels_used for w in ws],
        "rho interval": [outward_interval(*w.rho_interval, sign="",
                                  marks=(cfg.epsilon / cfg.B,)) for w in ws],
        "Delta interval": [outward_interval(*w.delta_interval, marks=(0.0, cfg.epsilon))
                           for w in ws]}),
                 hide_index=True, width="stretch")
    st.caption("Each window restarts both tiers and certifies its own average Delta at delta "
               "(a per-window guarantee, not family-wise over windows).")
if status.ledger is not None:
    led = status.ledger
    st.subheader(f"Promotion ledger of chain {plain(project.chain)}")
    st.dataframe(pd.DataFrame({
        "k": [e["k"] for e in led.entries], "audit": [e["project_id"] for e in led.entries],
        "name": [e["name"] for e in led.entries], "verdict": [e["verdict"] for e in led.entries],
        "delta_k": [f"{e['delta_k']:.4g}" for e in led.entries],
        "labels": [e["labels_used"] for e in led.entries]}), hide_index=True, width="stretch")
    st.caption(f"Audit k runs at delta_k = delta 6/(pi^2 k^2); the whole chain, however long, "
               f"spends at most its lifetime delta = {led.lifetime_delta:g} (spent so far "
               f"{led.spent:.4g}).")

# ------------------------------------------------------------------ record
st.subheader("Evidence record")
downloads = st.container(horizontal=True)
# built when clicked (Streamlit calls ``data``), not on every key press of the queue;
# no rerun on a click: a rerun renews the deferred file ids, and a second click made
# during it fetched a stale id and downloaded nothing (CI, stop 22)
downloads.download_button("Download the evidence record (JSON)", key="audit_download",
                          data=lambda: json.dumps(store.record(pid), indent=2, default=str),
                          file_name=f"certlib_audit{pid}.json", mime="application/json",
                          on_click="ignore")
downloads.download_button("Download the stream (CSV)", key="audit_download_stream",
                          data=lambda: store.stream_csv(pid),
                          file_name=f"certlib_audit{pid}_stream.csv", mime="text/csv",
                          on_click="ignore")
st.caption("Check them anywhere with `certlib verify-audit RECORD STREAM`, or below.")
# open while it holds a file: a redraw must not shut it over the result it is showing
with st.expander("Verify a record against its stream",
                 expanded=bool(st.session_state.get("audit_vrec")
                               or st.session_state.get("audit_vstream"))):
    rec_up = st.file_uploader("Evidence record (JSON)", type=["json"], key="audit_vrec")
    stream_up = st.file_uploader("Stream (CSV or Parquet)", type=["csv", "parquet"],
                                 key="audit_vstream")
    if rec_up is not None and stream_up is not None:
        from certlib.audit.batch import read_stream
        from certlib.audit.record import parse_record, verify_record

        try:  # errors name the uploaded files, not a temporary folder
            rec = parse_record(rec_up.getvalue(), repr(rec_up.name))
            with tempfile.TemporaryDirectory() as tmp:
                sp = Path(tmp) / Path(stream_up.name).name
                sp.write_bytes(stream_up.getvalue())
                cols = read_stream(sp, judge=rec.get("judge_column"),
                                   slices=rec.get("slice_column"), name=stream_up.name)
            ver = verify_record(rec, cols.incumbent, cols.candidate, cols.labels, judge=cols.judge,
                                slices=cols.slices)
        except CertlibError as exc:
            st.error(plain(exc))
        else:
            if ver.ok:
                st.success(f"Verified: every interval, the verdict ({ver.recomputed['verdict']}) "
                           "and the trace match.")
            else:
                st.error("Mismatch: " + "; ".join(plain(m) for m in ver.mismatches))

with st.expander(f"Event log ({len(status.events)} events, nothing is ever deleted) and "
                 f"batches ({len(status.batches)})"):
    st.dataframe(pd.DataFrame([b.to_dict() for b in status.batches]), hide_index=True,
                 width="stretch")
    if status.events:
        st.dataframe(pd.DataFrame([e.to_dict() for e in reversed(status.events)]).astype(
            {"label": str}), hide_index=True, width="stretch")

