"""Label a pool in the browser: the policy picks the row, the exact stopping test says
when to stop, and every label is committed to the SQLite store at once (certlib.labelling.store).

The page keeps no labelling state of its own: each run replays the project's events
from the store, so a reload or a server restart resumes where the annotator stopped.
The open project is kept in the URL (?project=<id>) and the session (a visit to another
page), `ui.state.url_kept`.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from certlib.errors import CertlibError
from certlib.labelling.events import budget_in_force, file_seed, labels_in_force
from certlib.core.pool_stats import stray_class_notes
from certlib.labelling.progress import versus_minimum_text
from certlib.labelling.reviews import open_for
from certlib.labelling.store import (LabelStore, PoolMismatchError,
                           UnknownProjectError, file_labels)
from ui.cache import POOL_HASH, cached_prelabel, pool_key, project_state
from ui.inputs import (LOST_PRESS, acted, annotator_input, brought_in, budget_input, held_back,
                       keep_annotator, lost_press, number_box, policy_input, seed_input,
                       tolerance_input, view_key)
from ui.keys import class_shortcuts, skip_shortcut, undo_shortcut
from ui.links import page_button
from ui.live_forecast import live_forecast
from ui.pool_picker import (choose_pool, class_settings, mismatch_message, pool_folder,
                            pool_ref)
from ui.team import assigned_project, handed_row, team_sidebar, team_store
from ui.state import set_url_kept, sticky, url_kept
from ui.text import plain, plot_text
from ui.label_errors import (begin_run, label_act, label_downloads, margin_panel,
                             read_only_note)
from ui.label_panel import (apply_presses, label_panel, panel_data, panel_state, panel_wake,
                            presses_callback)

begin_run()  # first: this run's callbacks (`store_act`) have run by now
st.title("Label the pool, one row at a time")
st.caption("The policy chooses each row; the exact stopping test (paper Theorem 1) says when "
           "the choice of model is fixed for every completion of the unread labels. Every "
           "label is saved to the label store the moment you click.")

user = st.session_state.get("_user")  # signed in (ui.auth), or None: local mode
try:
    store = LabelStore()
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
read_only_note(store)  # a store that cannot be written: reading only
team = team_store(store) if user is not None else None
assigned_pid = None
if user is not None and not user.lead:  # an annotator: only the projects assigned to them
    if team is None:
        st.stop()
    pool, pool_label, assigned_pid = assigned_project(store, team, user)
else:
    if team is not None and "pool_ref" not in st.session_state and "pool" not in st.query_params:
        # a link to a project (?project=N) opens on the pool it was assigned with
        try:
            linked = team.pool_ref(int(url_kept("project")[0] or 0))
        except (CertlibError, ValueError):
            linked = None
        if linked is not None:
            st.session_state["pool_ref"] = linked
    pool, pool_label = choose_pool(default="unlabelled")
if pool is None:
    st.stop()

# ------------------------------------------------------------------ settings
sb = st.sidebar
sb.header("Labelling")


if user is not None:  # the store records the signed-in identity, never a typed name
    who = user.annotator
    sb.caption(f"Labelling as **{plain(user.email)}**.")
else:
    who = annotator_input("annotator", sb)
pid, restored = url_kept("project")
if assigned_pid is not None:
    pid, restored = assigned_pid, False
if restored:  # open before a visit to another page: closed if the pool changed meanwhile
    try:
        kept_project = store.project(int(pid))
    except (CertlibError, ValueError):  # no longer in the store: forgotten
        kept_project = None
    if kept_project is None or not pool.matches_hash(kept_project.pool_hash):
        set_url_kept("project", None)
        set_url_kept("ref", None)
        if kept_project is not None:
            st.info(f"Project {kept_project.id}, open when you left this page, was started on "
                    "another pool file, or on this one with another class set declared on "
                    "the Pool page: it is closed here, and its labels stay in the store. To "
                    "open it again, choose that pool (with that class set) and open it from "
                    "the list.")
        pid = None
def _resume(project_id: int) -> None:
    """Open a project (the Resume button's callback, and after Start)."""
    acted()
    set_url_kept("project", project_id)
    set_url_kept("ref", None)
    if user is None:  # a typed name is kept in the address; an identity is not
        keep_annotator("annotator")


if pid is None:
    # a new project starts from the settings chosen on the other pages (`sticky`)
    policy = policy_input(sb, "label_policy")
    tol = tolerance_input(sb, "label_tol")
    budget = budget_input(sb, "Budget (labels; 0 = none)", pool.n, 0, "label_budget",
                          f"label_budget_{pool_key(pool)[:16]}", zero="0 (no budget)")
    seed = seed_input(sb, "label_seed")
    # a number brought into range in this very run (typed, then Start at once) is shown,
    # not used: Start waits for the user to see it
    changed = brought_in("label_tol", "label_budget", "label_seed")
    known = pool.n_labelled
    from_file = False
    if 0 < known < pool.n:  # labels in the file count as read, as on the planning pages
        from_file = sb.checkbox(
            f"Start from the {known:,} label{'' if known == 1 else 's'} in the file",
            **sticky("label_from_file", True),
            help="They count as read: the policy asks only for unlabelled rows, the budget "
                 "counts them, and the evidence record lists them as given by the pool file. "
                 "Untick to label every row yourself; then each answer is checked against "
                 "the file's label when the record is verified.")
    elif known:
        sb.caption("Every row of this pool file is labelled. A project here labels it again "
                   "from scratch (e.g. to practise); verifying its evidence record checks "
                   "each answer against the file's label.")
    floor_ = cached_prelabel(pool, tol).prelabel_bound
    if 0 < budget < floor_:
        sb.warning(f"A budget of {int(budget):,} is below the prelabel bound ({floor_:,}): no "
                   "policy can certify the choice with it, whatever the labels are.")
    if from_file and 0 < budget <= known:
        sb.warning(f"A budget of {int(budget):,} does not exceed the {known:,} labels in the "
                   "file, which count as read: raise it, set 0 (none), or untick the box.")
    # "Start a new project" always starts one; the project these settings would resume
    # has its own button, which names it.  The start button's key changes once a project
    # is started, so a quick second press (sent before the page moved on) names a button
    # that is gone and starts nothing.
    token = st.session_state.setdefault("label_start_token", 0)
    start = sb.button("Start a new project", key=f"start@{token}", type="primary",
                      help="A new project with these settings, whatever projects this pool "
                           "already has (they keep their labels).")
    try:
        match = store.find_project(pool, policy=policy, tolerance=tol,
                                   budget=int(budget) or None, seed=int(seed),
                                   from_file=from_file)
    except CertlibError:
        match = None
    if match is not None:
        got = project_state(store, match, pool)
        # keyed by the project and opened by its callback (Streamlit keeps it after the
        # button is gone), so a press opens the project the button named, even when
        # another project with these settings was started before the press arrived
        sb.button(f"Resume project {match}" + ("" if got is None else
                                               f" ({got[0]:,} label{'' if got[0] == 1 else 's'}"
                                               f" read, {got[1]})"),
                  key=f"resume_project@{match}", on_click=_resume, args=(match,),
                  help=f"Project {match} on this pool has exactly these settings: open it "
                       "where it stopped.")
    if lost_press("resume_project@"):
        st.warning(LOST_PRESS)
    if start and changed:
        st.warning(held_back())
    elif start:
        try:
            pid = store.create_project(pool, pool_label, policy=policy, tolerance=tol,
                                       budget=int(budget) or None, seed=int(seed),
                                       from_file=from_file)
        except CertlibError as exc:
            st.error(plain(exc))
            st.stop()
        st.session_state["label_start_token"] = token + 1
        _resume(pid)
        st.rerun()  # else this run kept the start settings and button in the sidebar
elif assigned_pid is None:
    if sb.button("Close project", key="new_project",
                 help="Close this project (its labels stay in the store) and choose new "
                      "settings."):
        set_url_kept("project", None)
        set_url_kept("ref", None)
        st.session_state.pop("label_progress", None)
        st.rerun()
if user is None or user.lead:
    sb.caption(f"Label store: {plain(store.path)} (set CERTLIB_STORE to move it)")

if pid is None:
    for note in stray_class_notes(pool, fmt=plain):  # each would be a class button
        st.warning(note)
    mine = store.projects(pool)
    st.info("Choose the settings in the sidebar and press **Start a new project**. "
            + (f"This pool already has {len(mine)} project(s) in the store: open one below, "
               "or press **Resume project N** in the sidebar when one has exactly the "
               "settings chosen there" + (" (the box for the file's labels included)"
                                          if 0 < pool.n_labelled else "") + "."
               if mine else ""))

    listing = st.container(height=420) if len(mine) > 6 else st.container()  # scrolls
    for i, p in enumerate(reversed(mine)):  # the newest first
        ev = store.events(p.id)
        seeded = len(file_seed(ev))
        b, k = budget_in_force(p.budget, ev), len(labels_in_force(ev))
        # its status as its page says it (the 20 newest: a replay each, kept)
        state = (project_state(store, p.id, pool, ev) or (None, None))[1] if i < 20 else None
        row = listing.container(horizontal=True, vertical_alignment="center")
        row.markdown(f"**Project {p.id}** on {plain(p.pool_name)}: {plain(p.policy)}, rule "
                     f"{p.rule}, tolerance {float(p.tolerance):g}, seed {p.seed}, budget "
                     f"{'none' if b is None else f'{b:,}'}; {k:,} label{'' if k == 1 else 's'}"
                     + (f" ({seeded:,} from the pool file)" if seeded else "")
                     + (f"; **{state}**" if state else ""))
        row.button("Open", key=f"open_project_{p.id}", on_click=_resume, args=(p.id,))
    if lost_press("open_project_"):
        st.warning(LOST_PRESS)
    st.stop()


@st.cache_data(show_spinner="Finding the smallest sufficient subset ...", max_entries=16)
def _hindsight(_prog, store_path: str, project_id: int, last_seq: int):
    """Keyed by the project and its newest event: the log is append-only."""
    return _prog.hindsight()


@st.cache_data(show_spinner=False, max_entries=16, hash_funcs=POOL_HASH)
def _file_change(_prog, pool, store_path: str, project_id: int):
    """(labels the project took from the pool file, labels the file holds now, rows that
    differ; 0 when it took none), once per project and pool file: the first events never
    change, and a key press should not rebuild the file's labels (50 ms at n = 100,000)."""
    seed = dict(file_seed(_prog.events))
    if not seed:
        return 0, 0, 0
    now = dict(file_labels(pool))
    return len(seed), len(now), sum(seed.get(r) != now.get(r) for r in seed.keys() | now.keys())


# ------------------------------------------------------------------ actions
def _extend(project_id, value_key, who, seq, low):
    """The new budget, or None when "Remove the budget" is ticked.  A number
    below ``low`` (typed and pressed at once, before the box brought it in) extends
    nothing and says so in the page's words, not the store's (``new_budget``)."""
    value = None if st.session_state.get("remove_budget") else st.session_state[value_key]
    if value is not None and value < low:
        acted()
        st.session_state["label_flash"] = (
            f"Nothing was extended: a budget can only grow, to {low:,} labels or more "
            f"(the box held {value:,}).")
        return
    label_act(store.extend_budget, project_id, value, who, expect_seq=seq)  # acted() too


try:
    # the previous run's replay is extended when the log only grew by labels
    prog = store.resume(pid, pool, since=st.session_state.get("label_progress"))
except UnknownProjectError as exc:
    set_url_kept("project", None)  # said once; not kept for the next visit
    set_url_kept("ref", None)
    st.warning(f"{plain(exc)}. Start a new project in the sidebar.")
    st.stop()
except PoolMismatchError as exc:
    st.warning(mismatch_message(store, pid, exc))
    st.stop()
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
st.session_state["label_progress"] = prog
pid = prog.project.id
s, g, pr = prog.session, prog.guarantee, prog.project
budget_text = "none" if prog.budget is None else f"{prog.budget:,} labels"
sb.markdown(f"**Project {pr.id}** (settings fixed when it started; the budget can grow)  \n"
            f"policy {pr.policy}, rule {pr.rule}  \n"
            f"tolerance {float(pr.tolerance):g}, seed {pr.seed}  \n"
            f"budget {budget_text}"
            + ("" if prog.budget == pr.budget else
               f" (extended from {'none' if pr.budget is None else f'{pr.budget:,}'})"))
if user is not None and user.lead and team is not None:
    team_sidebar(team, user, pid, prog, pool_ref())
if prog.budget is not None and assigned_pid is None:  # raised or removed, never lowered
    low = max(prog.budget, s.t) + 1
    drop = sb.checkbox("Remove the budget", key="remove_budget")
    extend_key = f"extend_budget_to_{low}"  # a new key once the minimum moves
    # `number_box`: a lower number is brought up to the minimum in the box and said once
    # (with Streamlit's own bound the button extended to the last valid number unasked)
    number_box(sb, "Extend budget to (labels)", extend_key, low, low=low, step=1,
               disabled=drop, what="The new budget")
    sb.button("Extend budget", key=view_key("extend_budget", prog.last_seq), disabled=not who,
              on_click=_extend,
              args=(pid, extend_key, who, prog.last_seq, low),
              help="Recorded as an event: the project keeps its labels and goes on.")
if "label_flash" in st.session_state:
    st.error(plain(st.session_state.pop("label_flash")))
keys = class_shortcuts(pool.classes)
skey, ukey = skip_shortcut(keys), undo_shortcut(keys)
display = class_settings()  # read once per run (a file read), used for every class shown
panel_key = f"label_panel_{pid}"


_on_presses = presses_callback(
    panel_key, "label_panel",
    lambda presses, results: apply_presses(store, pid, pool, who, presses, results,
                                           since=st.session_state.get("label_progress"),
                                           team=team, reopens=assigned_pid is None),
    "label_flash", keep="label_progress")
# an annotator of a team sees the candidates' answers only when a lead shows them
show_predictions = assigned_pid is None or (team is not None and team.shows_predictions(pid))


def _on_refresh() -> None:
    st.session_state["label_panel_refresh"] = True


final_drawn = g.final


# in a team the panel asks again every few seconds: it keeps this annotator's rows held
# while the page is open (a closed tab lets them run out) and offers a row freed meanwhile
@st.fragment(run_every=10 if team is not None else None)
def _panel() -> None:
    """The row to label and the progress: an answer reruns only this (`st.fragment`);
    the rest of the page follows once the panel is quiet (its ``refresh``) or when the
    session ends."""
    ss = st.session_state
    try:
        now = store.resume(pid, pool, since=ss.get("label_progress"))
    except CertlibError as exc:
        st.error(plain(exc))
        return
    ss["label_progress"] = now
    if "label_flash" in ss:  # a refusal of this fragment's own buttons (Revisit)
        st.error(plain(ss.pop("label_flash")))
    if ss.pop("label_panel_refresh", False) or now.guarantee.final != final_drawn:
        st.rerun()  # the chart, the log and the answer's section follow the store
    if not who:
        st.warning("Enter your name in the sidebar to label: it goes into the evidence record.")
    if now.next_row is not None:
        st.markdown("**Label this row** (keyboard: "
                    + ", ".join(f"`{k}` = {plain(display.label(c))}"
                                for k, c in zip(keys, pool.classes) if k)
                    + (f", `{skey}` = skip" if skey else "") + f", `{ukey}` = undo)")
    handed = handed_row(team, pid, who, now, pool) if team is not None and who else None
    label_panel(panel_key, panel_data(now, pool, who, display, pool_folder(), keys, skey, ukey,
                                      *panel_state("label_panel"), handed=handed,
                                      predictions=show_predictions,
                                      reopens=assigned_pid is None),
                on_presses=_on_presses, on_refresh=_on_refresh)
    if now.skipped and now.next_row is not None:
        n_skip = len(now.skipped)
        back = pool.row_ids[now.next_row] in now.skipped
        st.caption(f"{n_skip:,} skipped row(s) (row_id "
                   + ", ".join(plain(r) for r in now.skipped[:10])
                   + (", ..." if n_skip > 10 else "") + ")."
                   + (" Only skipped rows are left, so this is one of them." if back else
                      " They come back when you revisit them or when nothing else is left."))
        st.button("Revisit skipped rows", key=view_key("unskip", now.last_seq),
                  disabled=not who or assigned_pid is not None,
                  help="Every skipped row comes back to everyone now (a lead's choice in a "
                       "team; skipped rows also come back when nothing else is left).",
                  on_click=label_act, args=(store.unskip_all, pid, who),
                  kwargs={"expect_seq": now.last_seq})
    metrics = st.container(horizontal=True, gap="large")  # wraps on a narrow window
    metrics.metric("labels read", f"{now.session.t:,} of {pool.n:,}", width="content")
    metrics.metric("prelabel bound", f"{pr.prelabel_bound:,} labels", width="content")
    metrics.metric("budget", budget_text, width="content")
    metrics.metric("status", now.session.status, width="content")


_panel()
panel_wake(sb)


@st.fragment(run_every=2)
def _forecast() -> None:
    """How many more labels (a forecast made off the key press's path: ui.live_forecast);
    a fragment of its own, so the panel is not redrawn when a forecast arrives."""
    now = st.session_state.get("label_progress")
    if now is not None and now.project.id == pid:
        live_forecast(store, now, pool)


if assigned_pid is None and not g.final:  # a lead's number (an annotator sees the panel)
    _forecast()

seeded, now, differ = _file_change(prog, pool, str(store.path), pid)
if seeded:  # file labels are never undone nor corrected: all of them are in force
    st.caption(f"{seeded:,} of the labels read come from the pool file (the project "
               "started from them); the policy asks only for the others.")
if differ:  # the pool hash leaves labels out: the file changed since
    st.warning(f"This project started from {seeded:,} labels of the pool file; the file "
               f"now holds {now:,}, and {differ:,} row(s) differ. It goes on from the "
               "labels it started with (its record verifies against that file, not this "
               "one): rows only this file labels are asked for like any other. To start from "
               "the file's labels as they are, press **Close project** and start a new one.")
st.caption(f"Project {pr.id} on {plain(pr.pool_name)}: policy {pr.policy}, rule {pr.rule}, "
           f"tolerance {float(pr.tolerance):g}, seed {pr.seed}; candidates in tie priority "
           f"order: {', '.join(plain(c) for c in pr.candidates)}.")

# blind review: the rows waiting for this annotator's review keep their labels hidden
blind = {i.row_id for i in open_for(prog.reviews, who)} if who else set()
if g.final:
    box = st.success if s.certified else st.warning
    box(f"**{s.status.capitalize()} after {s.t:,} labels:** {g.text(plain)}."
        + (" You can stop labelling." if s.certified else "")
        + (" To read more labels in this project, **Extend budget** in the sidebar."
           if s.budget_exhausted and not s.certified else ""))
    if pr.rule == "shared" and s.t:
        hs = _hindsight(prog, str(store.path), pid, prog.last_seq)
        st.markdown(f"**Hindsight.** {hs.text()}.")
        st.caption(versus_minimum_text(hs.partial))
        if hs.witness:
            with st.expander(f"The {len(hs.witness):,} rows that would have sufficed (row ids)"):
                st.text(", ".join(str(r) for r in hs.witness))
        if s.certified and assigned_pid is None:  # an annotator has no Certificate page
            page_button("views/certificate.py", "Open on the Certificate page (the witness "
                        "rows as CSV)", "to_certificate",
                        {"cert_source": f"project {pid}: {pr.policy}"},
                        icon=":material/workspace_premium:")
    if blind:  # blind review: both files hold the labels under review
        st.caption(f"The downloads are hidden while {len(blind):,} row(s) wait for your "
                   "review: they hold the first labels.")
    elif assigned_pid is None:  # the record and the labels are the lead's to hand on
        label_downloads(prog, pid)
elif assigned_pid is not None:  # which model leads is not an annotator's to see: anchoring
    st.info(f"Running: {s.t:,} labels read so far. The page says when the choice of model "
            "is certified.")
else:
    left = prog.labels_left_at_least
    st.info(f"Running: {g.text(plain)}."
            + (f" At least {left:,} more labels are needed by any policy (prelabel bound)."
               if left else ""))
    if store.read_only and not blind:  # labelling is off: what was saved can be taken away
        label_downloads(prog, pid)

# label errors; the review answers take the class keys when no row is up
margin_panel(prog, store, pool, who, display.name, keys=keys if g.final else None,
             decides=assigned_pid is None)

if lost_press("extend_budget@", "queue_review@", "unskip@", "review_", "correct_",
              "keep_"):
    # by prefix: the press came from the view its browser showed, which is older than
    # this run's when someone else labelled while the server restarted
    st.warning(LOST_PRESS)

if assigned_pid is not None:  # the bounds, the rivals and everyone's labels: the lead's
    st.stop()

# ------------------------------------------------------------------ bounds
best = s.best_guess
ref_key = f"label_ref_{pid}"
if st.session_state.get(ref_key) not in pr.candidates:
    # fixed for this project until the user changes it, across reloads too (the address
    # keeps it); the first default is the best guess when the page first drew the chart
    kept = url_kept("ref")[0]
    st.session_state[ref_key] = kept if kept in pr.candidates else best
ref = st.selectbox("Draw every bound against", list(pr.candidates), key=ref_key,
                   help="A fixed reference, so the history does not flip when the best guess "
                        "changes. The table below is always against the current best guess.")
set_url_kept("ref", ref)
k = list(pr.candidates).index(ref)
fig = go.Figure()
palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"]
for i, (rival, (lo, hi)) in enumerate(prog.rival_bounds(k).items()):
    color = palette[i % len(palette)]
    fig.add_scatter(y=lo, mode="lines", name=f"{plot_text(rival)}: lower", line={"color": color})
    fig.add_scatter(y=hi, mode="lines", name=f"{plot_text(rival)}: upper",
                    line={"color": color, "dash": "dot"})
fig.add_hline(y=0, line_color="gray")
fig.add_vline(x=pr.prelabel_bound, line_dash="dash", line_color="#9c755f",
              annotation_text=f"prelabel {pr.prelabel_bound}", annotation_position="bottom right")
fig.update_layout(height=340, margin={"t": 30, "b": 10}, xaxis_title="labels read",
                  yaxis_title=f"AUGRC(rival) − AUGRC({plot_text(ref)})",
                  legend={"orientation": "h", "y": -0.25})
st.plotly_chart(fig, width="stretch")
st.caption(f"Exact bounds of each rival's objective minus {plain(ref)}'s over every "
           "completion of the unread labels. A candidate is certified when every lower bound "
           "against it clears zero (strictly for rivals earlier in the tie priority).")
kb = list(pr.candidates).index(best)
Lnow, Hnow, unit = s.lower(), s.upper(), pool.scale
# short headers: the table must fit the 500 px beside a sidebar at 800 px
st.dataframe(pd.DataFrame({
    "rival": [str(c) for j, c in enumerate(pr.candidates) if j != kb],
    "L": [str(Lnow[j, kb]) for j in range(pool.K) if j != kb],
    "H": [str(Hnow[j, kb]) for j in range(pool.K) if j != kb],
    "AUGRC gap": [f"[{float(Lnow[j, kb]) / unit:+.4f}, {float(Hnow[j, kb]) / unit:+.4f}]"
                  for j in range(pool.K) if j != kb],
}), hide_index=True, width="stretch")
st.caption(f"Each rival against the current best guess, {plain(best)}: L and H are the "
           f"exact integer bounds of AUGRC(rival) − AUGRC({plain(best)}) in units of "
           f"1/{unit:,}; the AUGRC gap is the same interval as a number.")

with st.expander(f"Label log ({len(prog.events)} events, nothing is ever deleted)"):
    if prog.events:
        log = pd.DataFrame([e.to_dict() for e in reversed(prog.events)])
        if blind:  # blind review: rows waiting for this annotator's review
            hide = log["row_id"].isin(list(blind)) & log["kind"].ne("skip")
            # as text: "(hidden)" among numbers made Arrow log a traceback on the server
            log["label"] = log["label"].map(
                lambda v: "" if v is None else str(v)).where(~hide, "(hidden)")
            st.caption(f"Labels of the {len(blind):,} row(s) waiting for your review are "
                       "hidden here until you answer.")
        st.dataframe(log, hide_index=True, width="stretch")

