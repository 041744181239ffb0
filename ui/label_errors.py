"""Dashboard pieces on label errors, shared by the Plan and certify page, the
Certificate page and the Label page: the full-pool fragility with the labels a policy
reads to survive e = 0, 1, 2 wrong labels, and on the Label page the label-error margin of
the answer, the rows to re-check and the second-annotator review.  Also what the labelling
pages share about the store: its actions' refusals as one message (`store_act`; a full
disk, a read-only file or a held lock is a `certlib.errors.StoreAccessError`, one
message too), the note of a store opened read-only (`read_only_note`) and the downloads of
a project (`label_downloads`).  Only calls the library.
"""

from __future__ import annotations


import json

import pandas as pd
import streamlit as st

from certlib.errors import CertlibError
from certlib.labelling.label_errors import full_pool_fragility
from certlib.labelling.replay import replay
from certlib.labelling.events import same_annotator
from certlib.labelling.record import labels_csv, make_record
from certlib.labelling.reviews import open_for
from certlib.labelling.store import StaleStateError
from certlib.core.pool import Pool
from ui.cache import POOL_HASH
from ui.inputs import acted, view_key
from ui.label_panel import (apply_review_presses, label_panel, panel_state, presses_callback,
                            review_panel_data, stale_message)
from ui.pool_picker import class_settings, pool_folder
from ui.text import plain

__all__ = ["begin_run", "fragility_section", "label_act", "label_downloads", "margin_panel",
           "read_only_note"]

ERRORS = (0, 1, 2)


@st.cache_data(show_spinner="Replaying with 0, 1, 2 wrong labels ...", max_entries=32,
               hash_funcs=POOL_HASH)
def _robust_runs(pool: Pool, policy: str, rule: str, tolerance: float, seed: int):
    return [replay(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed,
                   label_errors=e) for e in ERRORS]


def fragility_sentence(f, n: int) -> str:
    """'the choice itself changes if 1 of the 171 labels is wrong': how many wrong labels
    among the ``n`` of the full pool would change the selected model."""
    if f.flips is None:
        return (f"The choice of {plain(f.selected)} itself survives any number of wrong labels "
                f"among the {n:,}.")
    return (f"**Fragility of the choice itself:** {plain(f.selected)} stops being the choice if "
            f"{f.flips:,} of the {n:,} labels {'is' if f.flips == 1 else 'are'} wrong "
            f"({plain(f.rival)} would then not be beaten); it survives any "
            f"{f.flips - 1:,}.")


def fragility_section(pool, tolerance: float, policy: str = "adaptive-pair-sum",
                      rule: str = "shared", seed: int = 0, header: str | None = None) -> None:
    """The full-pool fragility and a small table: per e = 0, 1, 2 the labels ``policy``
    reads before its answer survives any e wrong labels among those read."""
    if header:
        st.header(header)
    try:
        f = full_pool_fragility(pool, tolerance=tolerance, rule=rule)
        runs = _robust_runs(pool, policy, rule, tolerance, seed)
    except CertlibError as exc:
        st.error(plain(exc))
        return
    st.markdown(fragility_sentence(f, pool.n))
    st.dataframe(pd.DataFrame({
        "wrong labels survived (e)": [str(e) for e in ERRORS],
        "labels read": [f"{r.labels_read:,}" for r in runs],
        "margin at stop": ["any" if r.margin.flips is None else f"{r.margin.flips:,}"
                           for r in runs],
        "status": [r.status for r in runs],
    }), hide_index=True)
    fragile = any(r.status == "certified but fragile" for r in runs)
    st.caption(f"{plain(policy)} with the stopping rule that survives e wrong labels: it stops "
               "when no e wrong labels among the rows read can undo the certificate (label-error "
               "margin at least e + 1)."
               + (" 'certified but fragile': no continuation can reach that, because the "
                  "full-pool choice itself is that fragile." if fragile else ""))


def store_act(flash: str, what: str):
    """A page's callback for its buttons' store calls (a label, an undo, a review, a
    correction ...; ``args`` start with the project id and end with the annotator, as
    every store action's do): a refused one becomes the message shown at the next run
    (``st.session_state[flash]``), not an exception in a callback.  A stale view is said
    in words (`stale_message`; ``what``: the thing labelled), not the store's count of
    events.  The Label page's is `label_act`; the Audit page makes its own."""
    def act(fn, *args, **kwargs):
        acted()
        # one run's callbacks share the run number: a stale repeat of an action that
        # saved in the same run (the browser re-sends the older view's press) is not
        # said to have "saved nothing" beside the saved one
        same = (st.session_state.get("_run_no"), getattr(fn, "__name__", ""))
        try:
            fn(*args, **kwargs)
        except StaleStateError:
            if same[0] is not None and st.session_state.get("_saved_run") == same:
                return
            st.session_state["_stale_run"] = same
            st.session_state[flash] = stale_message(
                getattr(fn, "__self__", None), args[0], args[-1], kwargs.get("expect_seq"),
                what=what)
        except CertlibError as exc:  # a sentence on the page: capitalised
            st.session_state[flash] = str(exc)[:1].upper() + str(exc)[1:]
        else:
            st.session_state["_saved_run"] = same
            if same[0] is not None and st.session_state.get("_stale_run") == same:
                st.session_state.pop(flash, None)
    return act


def begin_run() -> None:
    """Call first in every run of a page using `store_act` (its callbacks have run by
    then): numbers the runs, so that a stale press's "saved nothing" is not said beside
    the same action of the same run that did save (both labels would otherwise be shown
    as saved under that message)."""
    st.session_state["_run_no"] = st.session_state.get("_run_no", 0) + 1


label_act = store_act("label_flash", "row")


def read_only_note(store, what: str = "labelling") -> None:
    """The note of a page whose store opened read-only (its file or folder cannot be
    written): the page shows what the store holds, and ``what`` is off."""
    if getattr(store, "read_only", False):
        st.info(f"**Read-only: {what} is off.** The store {plain(store.path)} cannot be "
                "written (the file or its folder is read-only), so nothing can be saved; "
                "everything saved before is shown, and the downloads work. To write, make "
                "the file and its folder writable (or set CERTLIB_STORE to a writable copy) "
                "and reload the page.")


def label_downloads(prog, pid: int) -> None:
    """The Label page's downloads of a project: its evidence record (JSON) and the labels
    in force (CSV, `certlib.spreadsheet`: text a spreadsheet would run starts with ')."""
    downloads = st.container(horizontal=True)
    downloads.download_button("Download the evidence record (JSON)", key="download",
                              data=json.dumps(make_record(prog), indent=2),
                              file_name=f"certlib_record_project{pid}.json",
                              mime="application/json", on_click="ignore",
                              help="Anyone can recompute it from the pool file: "
                              f"`certlib verify-record certlib_record_project{pid}.json "
                              "POOL` (exit 0: verified).")
    downloads.download_button("Download the labels (CSV)", key="download_csv",
                              data=labels_csv(prog),
                              file_name=f"certlib_labels_project{pid}.csv", mime="text/csv",
                              help="row_id, label, annotator, time of the labels in force, "
                              "in reading order; text that a spreadsheet would run as a "
                              "formula starts with ' (certlib.spreadsheet.read_csv reads the "
                              "values back).", on_click="ignore")


def _review_panel(prog, store, pool, who: str, keys) -> None:
    """The row waiting for ``who``'s blind review and its class answers, in the browser
    (`ui.label_panel`: the double-press guard on the browser's clock)."""
    pid = prog.project.id
    key = f"review_panel_{pid}"

    on_presses = presses_callback(
        key, "review_panel",
        lambda presses, results: apply_review_presses(
            store, pid, pool, who, presses, results,
            since=st.session_state.get("label_progress")),
        "label_flash", keep="label_progress")
    label_panel(key, review_panel_data(prog, pool, who, class_settings(), pool_folder(), keys,
                                       *panel_state("review_panel")),
                on_presses=on_presses, on_refresh=lambda: None)


def margin_panel(prog, store, pool, who: str, display_name=str, keys=None,
                 decides: bool = True) -> None:
    """Label page: the label-error margin of the certificate with the rows that, if
    mislabelled, would undo it; a review action that queues exactly those rows; the
    second annotator's queue; disagreements for the lead with the correction.
    ``keys``: one keyboard key per class for the review answers (None: no keys, when
    the page's label buttons hold them).  ``decides``: False for an annotator of a team,
    who answers the reviews queued for them but neither queues rows nor corrects or
    keeps a label (a lead's decisions)."""
    s, pid = prog.session, prog.project.id
    items = prog.reviews

    def as_seen(cls):  # a class as the annotators see it: its display name when it has one
        return "" if cls is None else str(display_name(cls) or cls)

    if s.certified:
        m = s.label_error_margin()
        if m.flips is None:
            st.success(f"**Label errors:** {m.text(plain)}.")
        else:
            if m.flips == 1:  # "survives any 0 wrong labels" read as a riddle
                st.warning(f"**Label errors:** one wrong label among these "
                           f"{len(m.critical_ids):,} of the {m.labels_read:,} rows read would "
                           f"undo the certificate ({plain(m.rival)} would then not be "
                           "beaten).")
            else:
                st.warning(f"**Survives any {m.flips - 1:,} wrong label"
                           f"{'' if m.flips == 2 else 's'}:** {m.flips:,} wrong labels among "
                           "these rows, if mislabelled, would undo it "
                           f"({plain(m.rival)} would then not be beaten). "
                           f"{len(m.critical_ids):,} of the {m.labels_read:,} rows read.")
            st.text("row_id: " + ", ".join(str(r) for r in m.critical_ids))
            # a row is queued once: again only when its label was undone since
            open_ = {i.row_id for i in items if i.status != "withdrawn"}
            # the pool file's labels are corrected in the file (the record is checked
            # against it), never reviewed here
            todo = [r for r in m.critical_ids if r not in open_ and r not in prog.file_rows]
            held = sum(r in prog.file_rows for r in m.critical_ids)
            if held:
                st.caption(f"{held:,} of these rows hold the pool file's labels: they are not "
                           "reviewed here; if one is wrong, correct the file.")
            if todo and decides:
                st.button("Queue this row for review" if len(todo) == 1 else
                          f"Queue these {len(todo):,} rows for review",
                          key=view_key("queue_review", prog.last_seq),
                          disabled=not who, on_click=label_act,
                          args=(store.queue_review, pid, todo, who),
                          kwargs={"pool": pool, "expect_seq": prog.last_seq},
                          help="A second annotator labels them again (review events in the "
                               "store); a disagreement is shown here and a corrected label "
                               "replays the session.")
            elif len(m.critical_ids) > held:
                st.caption(("The others are" if held else "Every one of these rows is")
                           + " queued for review or reviewed.")
    if not items:
        return
    mine = open_for(items, who) if who else ()
    # open when there is something to do here (a review of yours, a disagreement to
    # decide) or no row is left to label; else closed, so that on a narrow screen the
    # next row is not pushed below a 70-row table
    act = bool(mine) or any(i.status == "disagrees" for i in items) or keys is not None
    with st.expander(f"Review: {len(items):,} row(s) queued for a second annotator",
                     expanded=act):
        if mine:
            item = mine[0]
            keyed = [(k, c) for k, c in zip(keys or (), pool.classes) if k]
            st.markdown(f"**Your review** ({len(mine):,} waiting): row_id {plain(item.row_id)}. "
                        "The first label stays hidden until you answer."
                        + (" Keyboard: " + ", ".join(f"`{k}` = {plain(as_seen(c))}"
                                                     for k, c in keyed)
                           + "." if keyed else ""))
            _review_panel(prog, store, pool, who, keys)
        elif who:
            st.caption("No row waits for your review (a row is reviewed by someone other than "
                       "its first annotator).")
        st.dataframe(pd.DataFrame({
            "row_id": [str(i.row_id) for i in items],
            # blind review: the first label shows once the row has been reviewed
            "label": ["" if i.status == "waiting" else as_seen(i.label) for i in items],
            "by": [str(i.labelled_by or "") for i in items],
            "review": [as_seen(i.review_label) for i in items],
            "reviewer": [str(i.reviews[-1][1]) if i.reviews else "" for i in items],
            "status": [i.status + (" (corrected)" if i.corrected else "") for i in items],
        }), hide_index=True)
        for i in (i for i in items if i.status == "disagrees"):
            if not decides:
                continue
            st.warning(f"Row_id {plain(i.row_id)}: labelled {plain(as_seen(i.label))} by "
                       f"{plain(i.labelled_by)}, reviewed {plain(as_seen(i.review_label))} by "
                       f"{plain(i.reviews[-1][1])}.")
            reviewer = str(i.reviews[-1][1])
            own = same_annotator(who, reviewer)
            author = bool(who) and not i.may_keep(who)  # gave or backed the label
            pair = st.container(horizontal=True)  # the two decisions side by side
            pair.button(f"Correct row_id {plain(i.row_id)} to {plain(as_seen(i.review_label))}",
                        key=view_key(f"correct_{i.row_id}", prog.last_seq),
                        disabled=not who or own, on_click=label_act,
                        args=(store.correct_label, pid, i.row_id, i.review_label, who),
                        kwargs={"pool": pool, "expect_seq": prog.last_seq},
                        help=(f"{reviewer} gave this review, so someone else decides it."
                              if own else
                              "Replaces the label in force (a correct event); the session "
                              "is replayed with it, so the certificate may fall and labelling "
                              "resume."))
            pair.button(f"Keep {plain(as_seen(i.label))}",
                        key=view_key(f"keep_{i.row_id}", prog.last_seq),
                        disabled=not who or author, on_click=label_act,
                        args=(store.keep_label, pid, i.row_id, who),
                        kwargs={"pool": pool, "expect_seq": prog.last_seq},
                        help=("You gave or backed this label, so someone else decides "
                              "to keep it (the reviewer may, withdrawing the review)."
                              if author else
                              "Decides the disagreement for the label in force (a keep "
                              "event); nothing changes in the bounds."))
        kept = [i for i in items if i.status == "kept"]
        if kept:
            st.caption(f"{len(kept):,} disagreement(s) decided for the label in force (kept): "
                       "row_id " + ", ".join(plain(i.row_id) for i in kept[:10])
                       + (", ..." if len(kept) > 10 else "") + ".")
