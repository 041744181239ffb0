"""The Label page for a team (sign-in configured, `ui.auth`): an annotator's projects,
the lead's assignment of annotators, and the row handed to each annotator
(`certlib.labelling.team`)."""

from __future__ import annotations

import streamlit as st

from certlib.errors import CertlibError
from certlib.labelling.events import same_annotator
from certlib.labelling.team import TeamStore, hand_out, lookahead_for
from ui.auth import roles
from ui.pool_picker import load_ref
from ui.state import set_url_kept, url_kept
from ui.text import plain

__all__ = ["ANCHORING", "assigned_project", "handed_row", "team_sidebar", "team_store"]

ANCHORING = ("An annotator who sees the models' answers tends to agree with them, which "
             "pulls the labels toward the models being compared: hidden unless you need "
             "them (e.g. to find a row's object).")


def team_store(store) -> TeamStore | None:
    """The team tables beside the label store, or None (said) when they cannot be opened
    (a read-only store: labelling is off anyway)."""
    try:
        return TeamStore(store.path)
    except CertlibError as exc:
        st.warning(f"The team's assignments cannot be read: {plain(exc)}")
        return None


def _pick(key: str) -> None:
    set_url_kept("project", st.session_state[key])


def _load(team: TeamStore, pid: int):
    from ui.pool_picker import SavedPools

    ref = team.pool_ref(pid)
    if ref is None:
        return None
    return load_ref(ref, SavedPools().class_settings(ref).declared)[0]


def _resume_choice(store, team: TeamStore, user, ids: list) -> int:
    """The project an annotator opens without asking: the one whose row they hold (they
    were labelling it), else the first still running, else the first."""
    for p in ids:
        if team.current(p, user.email) is not None:
            return p
    for p in ids:
        try:
            pool = _load(team, p)
            if pool is not None and not store.resume(p, pool).session.done:
                return p
        except CertlibError:
            continue
    return ids[0]


def assigned_project(store, team: TeamStore, user):
    """Sidebar: the projects assigned to an annotator; returns (pool, pool label,
    project id) of the one chosen, or stops with one message."""
    from ui.pool_picker import SavedPools

    names = {}
    for p in team.projects_of(user.email):
        try:
            names[p] = f"Project {p} on {store.project(p).pool_name}"
        except CertlibError:  # assigned, then gone from the store: not offered
            continue
    ids = list(names)
    asked = url_kept("project")[0]
    if not ids:
        st.title("Label")
        st.info("No project is assigned to you yet. A lead assigns annotators to a project "
                "on its Label page; then it appears here.")
        st.stop()
    try:
        asked_id = int(asked) if asked is not None else None
    except ValueError:
        asked_id = None
    if asked_id is not None and asked_id not in ids:
        st.warning(f"Project {plain(asked)} is not assigned to you; here are yours.")
        asked_id = None
    pid = asked_id if asked_id is not None else _resume_choice(store, team, user, ids)
    key = "assigned_project"
    st.session_state[key] = pid
    st.sidebar.selectbox("Your projects", ids, key=key, format_func=names.get,
                         on_change=_pick, args=(key,))
    set_url_kept("project", pid)
    ref = team.pool_ref(pid)
    if ref is None:
        st.error(f"Project {pid} has no pool file on this server: ask a lead to assign it "
                 "again from its Label page.")
        st.stop()
    try:
        pool, label = load_ref(ref, SavedPools().class_settings(ref).declared)
    except CertlibError as exc:
        st.error(f"The pool file of project {pid} cannot be read: {plain(exc)}. Ask a lead.")
        st.stop()
    return pool, label, pid


def _save_team(team: TeamStore, pid: int, who_key: str, show_key: str, by: str,
               pool_ref: str | None) -> None:
    ss = st.session_state
    try:
        team.assign(pid, ss[who_key], by=by, pool_ref=pool_ref)
        team.show_predictions(pid, ss[show_key])
    except CertlibError as exc:
        ss["label_flash"] = f"The team was not saved: {exc}"


def team_sidebar(team: TeamStore, user, pid: int, prog, pool_ref: str | None) -> None:
    """A lead's part of the sidebar: who labels this project, whether they see the
    candidates' predictions, and each annotator's labels so far (the store's message
    when the team tables cannot be read)."""
    try:
        _team_sidebar(team, user, pid, prog, pool_ref)
    except CertlibError as exc:
        st.sidebar.warning(f"The team cannot be shown: {plain(exc)}")


def _team_sidebar(team: TeamStore, user, pid: int, prog, pool_ref: str | None) -> None:
    sb = st.sidebar
    sb.subheader("Team")
    people = sorted(roles().annotators)
    assigned = list(team.assigned(pid))
    who_key, show_key = f"team_members_{pid}", f"team_show_{pid}"
    with sb.form(f"team_{pid}", border=False):
        st.multiselect("Annotators of this project", sorted(set(people) | set(assigned)),
                       default=assigned, key=who_key,
                       help="Listed in [certlib.roles] annotators of the secrets. Each is "
                            "handed rows nobody else holds.")
        st.checkbox("Show the candidates' predictions to annotators",
                    value=team.shows_predictions(pid), help=ANCHORING, key=show_key)
        # a callback, not the button's return value: a run interrupted by another
        # rerun (the labelling panel's) would drop the press
        st.form_submit_button("Save the team", on_click=_save_team,
                              args=(team, pid, who_key, show_key, user.email, pool_ref))
    # what is in force, read back from the store at every run (a message set by the
    # callback would be lost with a run another rerun interrupts)
    now = team.assigned(pid)
    sb.caption(f"Saved: assigned to {', '.join(plain(e) for e in now)}; the candidates' "
               f"answers are {'shown to' if team.shows_predictions(pid) else 'hidden from'} "
               "them." if now else "Saved: no annotator is assigned to this project yet "
               "(choose them above and press Save the team).")
    counts: dict[str, int] = {}
    for e in prog.labels:
        counts[str(e.annotator)] = counts.get(str(e.annotator), 0) + 1
    holders = team.holders(pid)
    lines = [f"{plain(who)}: {n:,} label{'' if n == 1 else 's'}"
             + (" (labelling now)" if any(same_annotator(h, who) for h in holders) else "")
             for who, n in sorted(counts.items())]
    lines += [f"{plain(h)}: labelling now" for h in holders
              if not any(same_annotator(h, w) for w in counts)]
    sb.caption("  \n".join(lines) if lines else "No labels yet.")


def handed_row(team: TeamStore, pid: int, who: str, prog, pool):
    """(row, lookahead, wait text) for one annotator of a team
    (`certlib.labelling.team.hand_out`), holding the row and the rows ahead for them; no
    row, and the store's message, when the holds cannot be read or written."""
    try:
        return _handed_row(team, pid, who, prog, pool)
    except CertlibError as exc:
        return None, (), plain(exc)


def _handed_row(team: TeamStore, pid: int, who: str, prog, pool):
    if team.read_only:
        return None, (), ("The label store cannot be written, so no row is handed out: the "
                          "labels saved are shown and can be downloaded.")
    for _ in range(3):  # another annotator may take the row between the reads and the hold
        held = team.held_by_others(pid, who)
        r = hand_out(prog, held, team.current(pid, who))
        if r is None:
            n = len(team.holders(pid)) - (1 if team.current(pid, who) is not None else 0)
            return (None, (), f"Every row left is with another annotator right now ({n} "
                    "labelling). This page asks again every few seconds.")
        look = lookahead_for(prog, r, held)
        ahead = [pool.row_ids[la.next_row] for la in look if la.next_row is not None]
        if team.hold(pid, who, pool.row_ids[r], ahead):
            return r, look, ""
    return None, (), "Another annotator took the rows offered; asking again in a moment."
