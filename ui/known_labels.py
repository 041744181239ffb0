"""Which labels a planning page counts as known: the pool file's, or a labelling
project's from the label store.

A lead plans, starts labelling, and asks again as the labels arrive; the planning pages
(Plan and certify, Budget map and forecast) then count the project's labels as read, as
`certlib plan --store DB --project N` does.  The choice is one setting shared by those
pages and kept in the address (``?known=``: ``file`` or a project's id).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from certlib.errors import CertlibError
from certlib.labelling.store import LabelStore
from ui.cache import POOL_HASH, pool_key, project_state
from ui.state import sticky
from ui.text import plain

FILE = "file"


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=POOL_HASH)
def _project_codes(store_path: str, project_id: int, last_seq: int, pool):
    """The label codes a project has read (its labels in force), per newest event: the
    log is append-only, so a key press elsewhere is a new key."""
    return np.asarray(LabelStore(store_path).pool_with_labels(project_id, pool).labels)


def _describe(store, project, pool) -> str:
    got = project_state(store, project.id, pool)
    state = "" if got is None else (f", {got[0]:,} label{'' if got[0] == 1 else 's'} read, "
                                    f"{got[1]}")
    return (f"project {project.id}: {project.policy}, tau = {float(project.tolerance):g}"
            + state)


def known_labels(pool, container=None):
    """Draw the "Labels known" box and return (the pool with those labels, a sentence
    naming them).

    The file's labels, or those of one of the labelling projects on this pool (newest
    first).  The default is the newest project that has read a label when the file has
    unlabelled rows (a lead's labels are in the store), else the file (every label is
    known: no project can add one).  Without a project on the pool, or with a store that
    cannot be read, the file's labels and no box."""
    container = st if container is None else container
    try:
        store = LabelStore()
        projects = store.projects(pool)
    except CertlibError:
        return pool, "the pool file's labels"
    if not projects:
        return pool, "the pool file's labels"
    options = [FILE] + [str(p.id) for p in reversed(projects)]
    by_id = {str(p.id): p for p in projects}
    # the newest project that has read a label (a project just started, or started by
    # mistake, would otherwise hide the one being labelled); the 10 newest are looked at
    with_labels = [o for o in options[1:11]
                   if (got := project_state(store, int(o), pool)) is not None and got[0] > 0]
    default = FILE if pool.fully_labelled else (with_labels or options[1:])[0]
    file_text = f"the pool file ({pool.n_labelled:,} label{'' if pool.n_labelled == 1 else 's'})"
    # kept per pool (a choice made on one pool says nothing about another's projects),
    # shared by the planning pages; the address seeds it once per session (a reload, a
    # link), and always shows the choice in use
    key = pool_key(pool)  # labels included: a labelled copy of a file is another pool here
    name = f"known@{key[:16]}{key[-8:]}"
    kept = st.session_state.setdefault("_sticky", {})
    raw = st.query_params.get("known")
    if raw in options and not any(str(k).startswith("known@") for k in kept):
        kept[name] = raw
    choice = container.selectbox(
        "Labels known", options,
        format_func=lambda o: file_text if o == FILE else _describe(store, by_id[o], pool),
        help="The labels counted as read: the pool file's label column, or a labelling "
             "project's on this pool (page Label; the newest first). The status, the "
             "bounds, the map and the forecast follow.",
        **sticky("known", default, shared=name, options=options, index=True))
    if st.query_params.get("known") != choice:
        st.query_params["known"] = choice
    if choice == FILE:
        return pool, "the pool file's labels"
    project = by_id[choice]
    try:
        events = store.events(project.id)
        codes = _project_codes(str(store.path), project.id, events[-1].seq if events else 0,
                               pool)
    except CertlibError as exc:
        container.warning(f"Project {project.id}'s labels cannot be read: {plain(exc)}. "
                          "The pool file's labels are used.")
        return pool, "the pool file's labels"
    return pool.with_labels(codes), f"project {project.id}'s labels"
