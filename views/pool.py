"""Pool page: what the active pool holds, before any choice is made.

Sizes, classes and their counts (a stray class is flagged), each candidate's error rate
and full-pool AUGRC, how often two candidates disagree, how alike their confidence
orders are, and the first rows.  The numbers come from `certlib.core.pool_stats`.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from certlib.errors import CertlibError
from certlib.core.pool import UNREAD, pool_hash
from certlib.core.duplicates import find_duplicates
from certlib.core.pool_stats import pool_stats, stray_class_notes
from certlib.labelling.saved_pools import SavedPools
from certlib.labelling.store import LabelStore
from ui.cache import POOL_HASH
from ui.column_map import show_saved_map
from ui.pool_picker import (choose_pool, class_settings, load_ref, merge_upload_duplicates,
                            pool_ref, remap_saved, saved_column_map)
from ui.text import plain, plot_text

PREVIEW_ROWS = 50
HEAT_MAP_WIDTH = 440  # pixels
TICK_CHARS = 16  # a class on fewer than 1% of the rows of a pool with > 2 classes


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=POOL_HASH)
def cached_stats(pool):
    return pool_stats(pool)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=POOL_HASH)
def cached_duplicates(pool):
    return find_duplicates(pool)


def _column(values) -> pd.Series:
    """Values from a file for st.dataframe: integers stay integers, anything mixed is
    shown as text (Arrow needs one type per column); None stays empty."""
    s = pd.Series(list(values), dtype=object)
    present = [v for v in s if v is not None]
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return s.astype("Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in present):
        return s.astype("Float64")
    return s.map(lambda v: None if v is None else str(v))


def _unique(name: str, taken: set) -> str:
    out = name
    while out in taken:
        out += " (extra)"
    taken.add(out)
    return out


def preview(pool, rows: int = PREVIEW_ROWS) -> pd.DataFrame:
    """The first rows: row id, label, the file's extra columns, each candidate's
    prediction and confidence."""
    m = min(rows, pool.n)
    taken: set = set()
    cols = {_unique("row id", taken): _column(pool.row_ids[:m]),
            # an unread label says so (st.dataframe would write None)
            _unique("label", taken): _column(pool.classes[c] for c in pool.labels[:m].tolist())
            if (pool.labels[:m] != UNREAD).all() else
            pd.Series(["(unread)" if c == UNREAD else str(pool.classes[c])
                       for c in pool.labels[:m].tolist()], dtype=object)}
    for name, values in pool.extra.items():
        cols[_unique(str(name), taken)] = _column(values[:m])
    for j, name in enumerate(pool.names):
        cols[_unique(f"{name}: prediction", taken)] = _column(
            pool.classes[c] for c in pool.preds[j, :m].tolist())
        cols[_unique(f"{name}: confidence", taken)] = pool.confs[j, :m]
    return pd.DataFrame(cols)


def heat_map(matrix, names, title: str, zmin: float, zmax: float, colorscale) -> go.Figure:
    labels = [plot_text(s) for s in names]
    z = [[None if math.isnan(v) else float(v) for v in row] for row in matrix]
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, zmin=zmin, zmax=zmax, colorscale=colorscale,
        texttemplate="%{z:.2f}", hoverongaps=False,
        hovertemplate="%{y} and %{x}: %{z:.3f}<extra></extra>"))
    fig.update_layout(title=dict(text=title, font=dict(size=15)),
                      height=min(700, 260 + 36 * len(names)), margin=dict(t=40, b=10, l=10, r=10))
    # long names are cut on the axes only (the hover shows them whole), so that the map
    # keeps its width at 800 px
    short = [plot_text(s if len(s) <= TICK_CHARS else s[:TICK_CHARS - 1] + "…") for s in names]
    fig.update_xaxes(type="category", tickangle=-30, tickvals=labels, ticktext=short)
    fig.update_yaxes(type="category", autorange="reversed", tickvals=labels, ticktext=short)
    return fig


def _projects_on(pool) -> int:
    """How many labelling projects were started on ``pool`` as it is loaded now."""
    if pool is None:
        return 0
    try:
        return len(LabelStore().projects(pool))
    except CertlibError:
        return 0


def class_form(found, pool=None) -> None:
    """Form "Class set": the classes found, the declared set (empty = infer) and a
    display name per class; Save writes the settings and reruns.  A labelling project
    is tied to the pool with its class set: the page says so when a save strands one."""
    ref = pool_ref()
    settings = class_settings()
    st.subheader("Class set")
    note = st.session_state.pop("class_set_note", None)
    if note:
        st.warning(note)
    done = st.session_state.pop("class_set_saved", None)
    if done:  # a save said nothing before
        st.success(done)
    # the loaded pool's classes are the declared set when there is one, not what the file
    # holds ("unknown" was listed as found in the file); without a pool they are the file's
    of_set = pool is not None and settings.declared is not None
    st.markdown(("**Classes of the pool (the declared set):** " if of_set
                 else "**Classes found in the file:** ")
                + (", ".join(plain(c) for c in found) if found else "(could not be read)"))
    shown = list(settings.declared) if settings.declared is not None else list(found)
    tag = ref.replace(":", "_")
    with st.form(f"class_set_{tag}"):
        text = st.text_input(
            "Declared class set (comma-separated; empty = the classes found)",
            value=", ".join(str(c) for c in settings.declared or ()), key=f"declared_{tag}",
            help="A prediction or label outside a declared set is an error naming its column "
            "and row, instead of a class of its own.")
        names = {}
        for i, c in enumerate(shown):
            names[c] = st.text_input(f"Display name of class {plain(c)}",
                                     value=settings.name(c) or "", max_chars=40,
                                     key=f"class_name_{tag}_{i}")
        saved = st.form_submit_button("Save")
    if saved:
        declared = [v.strip() for v in text.split(",") if v.strip()] or None
        try:
            SavedPools().save_class_settings(
                ref, declared=declared, names={c: n for c, n in names.items() if n.strip()},
                found=found)
        except CertlibError as exc:
            st.error(f"Class set not saved: {plain(exc)}")
        else:
            before = _projects_on(pool)
            try:
                after_pool = load_ref(ref, SavedPools().class_settings(ref).declared)[0]
            except CertlibError:
                after_pool = None
            now = SavedPools().class_settings(ref)
            st.session_state["class_set_saved"] = (
                "Saved: " + ("the declared class set " + ", ".join(plain(c) for c in now.declared)
                             if now.declared is not None else "classes as found in the file")
                + f"; display names for {len(now.names)} class(es) (the Label page shows them).")
            if before and (after_pool is None or pool_hash(after_pool) != pool_hash(pool)):
                st.session_state["class_set_note"] = (
                    f"{before} labelling project(s) were started on this pool with the "
                    "previous class set. They open again on the Label page once that class "
                    "set is restored here (the labels are kept).")
            st.rerun()


st.title("Pool")
st.caption("What the active pool holds before you choose: its size and classes, how good and "
           "how alike the candidates are, and its first rows.")

pool, label = choose_pool()
if pool is None:
    if pool_ref() and class_settings().declared is not None:
        try:  # the file does not fit its declared set: offer to change or clear it
            found = list(load_ref(pool_ref())[0].classes)
        except CertlibError:
            found = []
        class_form(found)
    st.stop()
stats = cached_stats(pool)
st.caption(f"Active pool: {plain(label)}")
saved_map = saved_column_map()

c1, c2, c3, c4 = st.columns(4)
c1.metric("rows", f"{stats.n:,}")
c2.metric("models", f"{stats.K:,}", help="Candidates (K)")
c3.metric("classes", f"{len(stats.classes):,}")
c4.metric("labelled", f"{stats.n_labelled:,}", help="Rows whose label is known")
st.markdown("**Candidates in tie-priority order** (earlier wins a tie): "
            + ", ".join(f"{j + 1}. {plain(s)}" for j, s in enumerate(stats.candidates))
            + (" · one shared prediction (confidence-score choice)"
               if pool.shared_prediction else ""))

for note in stray_class_notes(pool, fmt=plain, counts=stats.class_counts):  # cached
    st.warning(note)
dups = cached_duplicates(pool)
if dups.found:
    st.warning(plain(dups.message()) + "  \nA duplicate changes no certificate; merging "
               "it keeps the first of each group and leaves the later out of the tables.")
    if st.button("Merge the duplicates", help="Save this upload again with a column mapping "
                 "that leaves out the candidates that can never win. It replaces the saved "
                 "mapping: labelling projects started on the unmerged pool open again only "
                 "once it is restored (Change the mapping)."):
        why = merge_upload_duplicates(pool, dups.never_win)
        if why:
            st.error(why)
        else:
            st.rerun()

if saved_map is not None:
    show_saved_map(saved_map, label, pool)
    if st.button("Change the mapping", help="Open the mapping form again on the saved "
                 "files. Loading replaces the saved mapping: labelling projects started "
                 "with this one open again only once it is restored."):
        remap_saved()
        st.rerun()

st.subheader("Classes")
st.dataframe(pd.DataFrame({
    "class": [str(c.value) for c in stats.class_counts],
    "labelled": [c.labelled for c in stats.class_counts],
    "predicted (rows)": [c.rows_predicted for c in stats.class_counts],
    **{f"by {s}": [c.per_candidate[j] for c in stats.class_counts]
       for j, s in enumerate(stats.candidates)},
}), hide_index=True)
st.caption("labelled: rows with this label; predicted (rows): rows where at least one "
           "candidate predicts it; by ...: that candidate's predictions of it.")
class_form(list(pool.classes), pool)

st.subheader("Candidates")
# a column appears only when it has values: no labels, no error rates; AUGRC needs all
table = {"candidate": list(stats.candidates)}
if stats.n_labelled:
    table |= {"errors": list(stats.errors), "error rate": list(stats.error_rate)}
if stats.augrc is not None:
    table["AUGRC (full pool)"] = list(stats.augrc)
st.dataframe(pd.DataFrame(table), hide_index=True, column_config={
    "error rate": st.column_config.NumberColumn(format="%.4f"),
    "AUGRC (full pool)": st.column_config.NumberColumn(format="%.5f"),
})
if stats.n_labelled == 0:
    st.caption("No row has a label yet: error rates and AUGRC appear as labels arrive "
               "(page Label).")
elif not stats.fully_labelled:
    st.caption(f"Error rates on the {stats.n_labelled:,} labelled rows. The full-pool AUGRC "
               f"needs every label; {stats.n - stats.n_labelled:,} rows have none.")
else:
    st.caption(f"Error rates and AUGRC on all {stats.n:,} rows (AUGRC: exact value, rounded "
               "for display; lower is better).")

st.subheader("How alike the candidates are")
# two fixed widths that fit side by side in a wide layout and wrap onto two rows on a
# narrow screen (columns would squeeze both maps to half of 800 px)
with st.container(horizontal=True, gap="medium"):
    if pool.shared_prediction:
        with st.container(width=HEAT_MAP_WIDTH):
            st.info("Every candidate makes the same prediction on every row (a choice of "
                    "confidence score): they never disagree, only their confidence orders "
                    "differ.")
    else:
        with st.container(width=HEAT_MAP_WIDTH):
            st.plotly_chart(heat_map(stats.disagreement, stats.candidates,
                                     "Disagreement: rows predicted differently", 0.0,
                                     max(0.05, float(stats.disagreement.max())), "Blues"),
                            width="stretch", config={"displayModeBar": False})
    with st.container(width=HEAT_MAP_WIDTH):
        st.plotly_chart(heat_map(stats.spearman, stats.candidates,
                                 "Spearman: confidence orders", -1.0, 1.0, "RdBu"),
                        width="stretch", config={"displayModeBar": False})
st.caption("Disagreement: the fraction of rows where two candidates predict different classes. "
           "Spearman: the rank correlation of their confidences (ties share their mean rank); "
           "1 means the same acceptance order. A candidate with one constant confidence has no "
           "order: its cells are empty.")

st.subheader(f"First {min(PREVIEW_ROWS, stats.n)} rows")
# the grid sized the label column to its header, which cut "(unread)" to "(unreac": wide
# enough for its longest entry, within 100-300 px
first = preview(pool)
widest = max((len(str(v)) for v in first["label"]), default=0)
st.dataframe(first, hide_index=True, column_config={
    "label": st.column_config.Column(width=min(300, max(100, 8 * widest + 24)))})

