"""The labelling panel: the row to label, its class keys, Skip and Undo, run in the
browser (a Streamlit custom component, `ui/label_panel.js` and `ui/label_panel.css`,
shipped here: no build step, nothing fetched from outside).

With the row the server sends, for every answer, the row the policy asks next
(`certlib.labelling.progress.Progress.lookahead`), so a key press draws the next row in the browser
at once; the answer comes back as a trigger carrying the row it answers and the view's
sequence number, and `apply_presses` appends it to the store with ``expect_seq``.  The
browser keeps its unacknowledged answers and sends all of them with every trigger
(Streamlit may drop a trigger that arrives while the script runs), so the server takes
each press once, by its id, and a press it already saved before a restart is known by
the event it wrote.  The double-press guard runs in the browser, on its clock
(`GUARD_MS`).
"""

from __future__ import annotations

import base64
import mimetypes
import numbers
from pathlib import Path, PurePosixPath

import streamlit as st

from certlib.core._values import python_scalar
from certlib.errors import CertlibError
from certlib.labelling.events import FILE_ANNOTATOR, same_annotator
from certlib.labelling.progress import SKIP
from certlib.labelling.store import StaleStateError

__all__ = ["GUARD_MS", "MAX_IMAGE_BYTES", "apply_audit_presses", "apply_presses",
           "apply_review_presses", "apply_team_presses", "audit_panel_data",
           "image_in_folder", "label_panel", "panel_data", "panel_state", "panel_wake",
           "presses_callback", "review_panel_data", "row_key", "split_extra", "split_values",
           "stale_message", "take_presses"]

GUARD_MS = 250
"""A press counts only for a row painted on screen at least this long (the browser's
clock, from the first animation frame after the row was drawn).  Double presses in
Chromium came 30-200 ms apart; a person reading a row and answering it takes longer
(bench/bench_label_panel.py)."""

MAX_IMAGE_BYTES = 1024**2  # an image column's file beyond this is named, not sent
_RESULTS_KEPT = 500  # the acknowledgements a session remembers (a browser resends few)

_HERE = Path(__file__).resolve().parent
_HTML = ('<div class="cl-panel"><div class="cl-row" data-row-id=""></div>'
         '<div class="cl-buttons"></div><div class="cl-msg" aria-live="polite"></div>'
         '<div class="cl-undo-note"></div><div class="cl-status" aria-live="polite"></div>'
         '</div>')
_component = st.components.v2.component(
    "certlib.label_panel", html=_HTML, css=(_HERE / "label_panel.css").read_text(),
    js=(_HERE / "label_panel.js").read_text())


# a component outside the page's fragment: the panel calls it when its answers go
# unanswered, since after a server restart the fresh session knows no fragment and only
# a whole-page run draws the panel (and its fragment) anew
_WAKE_JS = """
export default function ({ setTriggerValue }) {
  globalThis.__certlibPanelWake = () => setTriggerValue("wake", Date.now());
}
"""
_wake = st.components.v2.component("certlib.label_panel_wake", html="<span></span>",
                                   js=_WAKE_JS)


def panel_wake(container) -> None:
    """Mount the panel's wake-up (an empty element) in ``container``, outside any
    fragment: its trigger reruns the whole page."""
    with container:
        _wake(key="label_panel_wake", data={}, on_wake_change=lambda: None, height=0)


def _run_number() -> int:
    """A number new at every run that draws a panel: the panel's data is then never equal
    to the last sent (Streamlit sends equal data no more), so the browser hears of each
    run and knows a whole-page run is over."""
    n = st.session_state.get("_label_panel_run", 0) + 1
    st.session_state["_label_panel_run"] = n
    return n


def row_key(pool, row: int) -> str:
    """The row id as the panel carries it: text, so an id beyond 2**53 survives JSON."""
    return str(python_scalar(pool.row_ids[row]))


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


def image_in_folder(value, folder) -> Path | None:
    """The image file a cell names, only when it is a relative path that stays inside
    ``folder`` once resolved (no ``..``, no absolute path, no URL or drive, no symlink
    out) and the file exists; else None (the page then shows the text).  Nothing
    outside the folder is ever read or fetched."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text.lower().endswith(IMAGE_SUFFIXES) or ":" in text or "\\" in text:
        return None  # a URL (scheme:), a Windows drive or separator
    rel = PurePosixPath(text)
    if rel.is_absolute() or ".." in rel.parts:
        return None
    base = Path(folder).resolve()
    full = (base / rel).resolve()
    if not full.is_relative_to(base) or not full.is_file():
        return None
    return full


def split_extra(pool, row: int, folder) -> tuple:
    """The extra columns of one row by type: (numbers {name: value}, images {name: path},
    texts {name: text}); empty cells are left out."""
    return split_values({name: col[row] for name, col in pool.extra.items()}, folder)


def split_values(values: dict, folder) -> tuple:
    """`split_extra` of cells given as {column: value} (an audit item's extra columns);
    ``folder`` None: no cell is read as an image."""
    nums, images, texts = {}, {}, {}
    for name, v in values.items():
        if v is None or (isinstance(v, float) and v != v):
            continue
        if isinstance(v, numbers.Number) and not isinstance(v, bool):
            nums[name] = v
        elif folder is not None and (img := image_in_folder(v, folder)) is not None:
            images[name] = img
        else:
            texts[name] = str(v)
    return nums, images, texts


def _image(path: Path) -> str | None:
    try:
        data = path.read_bytes() if path.stat().st_size <= MAX_IMAGE_BYTES else None
    except OSError:
        return None
    if data is None:
        return None
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _content(split: tuple) -> tuple:
    """(fields, images) of the panel for extra columns split by `split_values`: numbers,
    then texts, then images as data addresses (a file too large to send is named)."""
    nums, images, texts = split
    # a whole number (an id, a count) exactly; a fraction to 6 significant digits
    fields = [[str(k), str(v) if isinstance(v, numbers.Integral) else f"{v:,.6g}"]
              for k, v in nums.items()]
    fields += [[str(k), str(v)] for k, v in texts.items()]
    shown = []
    for name, path in images.items():
        src = _image(path)
        if src is None:
            fields.append([str(name), f"{path.name} (too large to show: over "
                                      f"{MAX_IMAGE_BYTES // 1024**2} MB)"])
        else:
            shown.append([str(name), src])
    return fields, shown


def row_view(pool, row: int, display, folder, no_skip: bool = False,
             predictions: bool = True) -> dict:
    """What the panel draws for one row: its title, extra columns (numbers, texts,
    images as data addresses) and, unless ``predictions`` is False, the candidates'
    predictions and confidences."""
    fields, shown = _content(split_extra(pool, row, folder))
    table = {"head": ["candidate", "prediction", "confidence"],
             "rows": [[str(c), str(display.label(pool.classes[p])), f"{v:.4g}"]
                      for c, p, v in zip(pool.names, pool.preds[:, row].tolist(),
                                         pool.confs[:, row].tolist())]}
    return {"key": row_key(pool, row), "title": f"row_id {row_key(pool, row)}",
            "fields": fields, "images": shown, "table": table if predictions else None,
            "no_skip": bool(no_skip)}


def _answer_id(i: int) -> str:
    return f"c{i}"


def _value_text(c) -> str:
    """A class as the press carries it back, checked by the server (`_class_of`): an
    answer names the class itself, not only its place in a list that can change (the
    Audit page's classes grow with a batch, and a batch is no event)."""
    return str(python_scalar(c))


def panel_data(prog, pool, who: str, display, folder, keys, skip_key, undo_key,
               client: str | None, results: dict, echo=None, *, handed=None,
               predictions: bool = True, reopens: bool = True) -> dict:
    """The panel's data for the project as ``prog`` shows it: the row (None when the
    session is done), the next row after each answer, the buttons and their keys, the
    undo rule and the acknowledgements for ``client``.  ``handed``: for one annotator of
    a team, (the row handed out, its lookahead, the text while no row is free)
    (`certlib.labelling.team.hand_out`); ``predictions``: show the candidates' answers;
    ``reopens``: an undo may take back a label of a finished session (not an annotator's
    of a team: a certificate the lead has read is reopened by the lead)."""
    r = prog.next_row if handed is None else handed[0]
    skipped = set(prog.skipped)
    answers = [{"id": _answer_id(i), "label": str(display.label(c)) or f"class {c}",
                "key": k, "value": _value_text(c)}
               for i, (c, k) in enumerate(zip(pool.classes, keys))]
    answers.append({"id": SKIP, "label": "Skip", "key": skip_key})
    nxt, views = {}, {}
    here = None if r is None else pool.row_ids[r]
    for la in (prog.lookahead() if handed is None else handed[1]):
        aid = SKIP if la.answer == SKIP else _answer_id(pool.classes.index(la.answer))
        if la.final or la.next_row is None:
            nxt[aid] = {"row": None, "wait": f"Saving your answer: the session is then "
                                             f"{la.status}."}
            continue
        # skipped after this answer: the rows skipped now, less this row once labelled,
        # plus this row once skipped (only skipped rows left: the row cannot be skipped)
        after = (skipped | {here}) if aid == SKIP else (skipped - {here})
        back = pool.row_ids[la.next_row] in after
        if (la.next_row, back) not in views:  # one view per distinct next row
            views[la.next_row, back] = row_view(pool, la.next_row, display, folder, back,
                                                predictions)
        nxt[aid] = {"row": views[la.next_row, back]}
    # undo takes back the annotator's own newest label in force, whoever labelled since
    # (`LabelStore.undo_last`); the pool file's labels are nobody's to undo
    newest = next((e for e in reversed(prog.labels) if bool(who)
                   and e.annotator != FILE_ANNOTATOR and same_annotator(e.annotator, who)),
                  None)
    ok_undo = newest is not None and (reopens or not prog.session.done)
    undo_help = ("Cancels your newest label (an undo event; nothing is deleted)." if ok_undo
                 else f"The session is {prog.session.status}: a lead reviews or corrects its "
                      "labels now." if newest is not None
                 else "You have no label in force to undo in this project.")
    note = (f"Undo takes back your newest label: row_id {newest.row_id} = "
            f"{display.label(newest.label)} (event {newest.seq})." if ok_undo else "")
    wait = f"The session is {prog.session.status}: no row to label."
    if handed is not None and r is None and not prog.session.done:
        wait = handed[2]
    return {
        "seq": prog.last_seq,
        "row": None if r is None else row_view(pool, r, display, folder,
                                               pool.row_ids[r] in skipped, predictions),
        "wait": wait,
        "next": nxt,
        "answers": answers,
        "undo": {"key": undo_key, "enabled": ok_undo, "help": undo_help, "note": note},
        "enabled": bool(who),
        "disabled_text": "Enter your name in the sidebar to label: it goes into the "
                         "evidence record.",
        "guard_ms": GUARD_MS,
        "client": client, "run": _run_number(),
        "echo": echo,  # the last trigger taken from this client (its `sent` number)
        # this browser's acknowledgements only (ids start with its client id), the newest
        "results": dict(list((k, v) for k, v in results.items()
                             if client and k.startswith(f"{client}:"))[-60:]),
    }


def _saved_before(events, press, classes, who, key: str = "row_id") -> bool:
    """`_already_saved` for a press as sent: its class read from ``classes`` (a press
    whose class no longer reads was not saved as it is)."""
    kind = press.get("kind")
    try:
        label = _class_of(press, classes) if kind in ("label", "review") else None
    except CertlibError:
        return False
    return _already_saved(events, press, kind, label, who, key)


def _already_saved(events, press, kind, label, who, key: str = "row_id") -> bool:
    """Whether the event after the press's view is the press itself: saved before this
    server lost its acknowledgement (a restart), so not saved twice nor refused.
    ``key``: the event's attribute naming what was answered (an audit's ``item_id``)."""
    seq = press.get("seq")
    if not isinstance(seq, int) or not 0 <= seq < len(events):
        return False
    e = events[seq]
    if e.kind != kind or not same_annotator(e.annotator, who):
        return False
    if kind == "undo":
        return True
    return str(getattr(e, key)) == str(press.get("row")) and (
        kind == "skip" or python_scalar(e.label) == python_scalar(label))


_SAVED = {"ok": True, "text": "saved"}


def _refusal(exc) -> dict:
    text = str(exc)
    return {"ok": False, "text": text[:1].upper() + text[1:]}  # a sentence on the page


def take_presses(presses, results: dict, state, seq_of, act, refresh, saved_before, stale,
                 fresh=None):
    """The server's side of the panel's protocol, for any store: take each press not yet
    in ``results`` (press id -> {"ok", "text"}), in order.  A press on the view the store
    is at (``seq_of(state)``; or, given ``fresh``, one ``fresh(state, press)`` accepts)
    goes to ``act(state, press)``, which returns the new state
    or raises (a refusal, said); one on an older view is acknowledged as saved when
    ``saved_before(state, press)`` finds it already in the store (sent again after a
    restart), else refused with ``stale(press)``.  Returns the last state."""
    for press in presses if isinstance(presses, list) else []:
        key = press.get("id") if isinstance(press, dict) else None
        if not isinstance(key, str) or key in results:
            continue
        seq = press.get("seq")
        if (seq != seq_of(state)) if fresh is None else not fresh(state, press):
            results[key] = _SAVED if saved_before(state, press) else \
                {"ok": False, "text": stale(press)}
            continue
        try:
            act(state, press)
        except StaleStateError:
            results[key] = {"ok": False, "text": stale(press)}
            continue
        except CertlibError as exc:
            results[key] = _refusal(exc)
            continue
        results[key] = _SAVED  # in the store: whatever reading it back does
        state = refresh(state)
    while len(results) > _RESULTS_KEPT:
        results.pop(next(iter(results)))
    return state


def _class_of(press, classes):
    aid = str(press.get("answer", ""))
    i = int(aid[1:]) if aid[:1] == "c" and aid[1:].isdigit() else -1
    if not 0 <= i < len(classes):
        raise CertlibError(f"unknown answer {aid!r}: nothing was saved")
    if "value" in press and str(press["value"]) != _value_text(classes[i]):
        raise CertlibError(f"the classes changed since that item was drawn (class "
                           f"{press['value']} is now {_value_text(classes[i])} in this "
                           "place), so nothing was saved: check the item and answer again")
    return classes[i]


def apply_presses(store, project_id: int, pool, who: str, presses, results: dict,
                  since=None, team=None, reopens: bool = True):
    """The Label page's presses (`take_presses`): a dict with ``id``, ``kind`` ("label",
    "skip" or "undo"), ``seq`` (the newest event of the view it answers), and for a label
    or skip ``row`` (`row_key`) and ``answer`` (``c<i>``, class i of the pool, or
    "skip").  A press on another row than the store's next one is refused.  Returns the
    project's progress afterwards.  ``team``: a `certlib.labelling.team.TeamStore` when
    several annotators share the project (`apply_team_presses`, with ``reopens`` as in
    `panel_data`)."""
    if team is not None:
        return apply_team_presses(store, team, project_id, pool, who, presses, results,
                                  since, reopens)

    def act(prog, press):
        kind, seq = press.get("kind"), press.get("seq")
        if kind == "undo":
            store.undo_last(project_id, who, expect_seq=seq)
        elif kind in ("label", "skip"):
            r = prog.next_row
            if r is None or row_key(pool, r) != str(press.get("row")):
                raise CertlibError(f"row_id {press.get('row')} is not the row to label now, so "
                                   "that answer saved nothing: check the row shown and answer "
                                   "again.")
            if kind == "skip":
                store.skip_row(project_id, pool.row_ids[r], who, pool=pool, expect_seq=seq)
            else:
                store.append_label(project_id, pool.row_ids[r],
                                   _class_of(press, pool.classes), who, pool=pool,
                                   expect_seq=seq)
        else:
            raise CertlibError(f"unknown press {kind!r}: nothing was saved")

    def saved_before(prog, press):
        return _saved_before(prog.events, press, pool.classes, who)

    return _take_on_project(store, project_id, pool, who, presses, results, since, act,
                            saved_before)


def _team_row(prog, pool, press):
    """The position of the row a press answers, or None when the pool has no such row."""
    try:
        return pool.position(str(press.get("row")))
    except (CertlibError, KeyError, ValueError):
        return None


def apply_team_presses(store, team, project_id: int, pool, who: str, presses,
                       results: dict, since=None, reopens: bool = True):
    """`apply_presses` for one annotator of a team: a press answers the row it names,
    the row that was on this annotator's screen, whatever the others saved since (the
    certificate holds for labels read in any order, paper section 3), as long as that
    row is still unread and no other annotator holds it (`TeamStore.hold`); so two
    annotators at the same pace do not refuse each other's presses.  After a label or a
    skip the row the screen shows next (the press's ``ahead``) becomes this annotator's;
    after an undo, the row undone.  A press sent again after a restart is known by the
    label it already wrote."""

    def fresh(prog, press):
        kind = press.get("kind")
        if kind == "undo":  # the store undoes this annotator's own newest label, once:
            # an undo sent again after a restart is known by the event it wrote
            return isinstance(press.get("seq"), int) and not _already_saved(
                prog.events, press, "undo", None, who)
        r = _team_row(prog, pool, press)
        return r is not None and not prog.session.is_read(r)

    def act(prog, press):
        kind = press.get("kind")
        if kind == "undo":
            if prog.session.done and not reopens:
                raise CertlibError(f"the session is {prog.session.status}, so the undo "
                                   "saved nothing: a lead reviews or corrects its labels now.")
            ev = store.undo_last(project_id, who)
            if ev.row_id is not None:
                team.hold(project_id, who, ev.row_id)  # the row undone comes back to them
            return
        if kind not in ("label", "skip"):
            raise CertlibError(f"unknown press {kind!r}: nothing was saved")
        if prog.session.done:  # certified or the budget used up meanwhile
            raise CertlibError(f"the session is {prog.session.status} now, so that answer "
                               "saved nothing.")
        r = _team_row(prog, pool, press)
        rid = pool.row_ids[r]
        if rid in team.held_by_others(project_id, who):
            raise CertlibError(f"row_id {press.get('row')} is with another annotator now "
                               "(your hold on it ran out), so that answer saved nothing: "
                               "answer the row shown now.")
        if kind == "skip":
            store.skip_row(project_id, rid, who, pool=pool)
        else:
            store.append_label(project_id, rid, _class_of(press, pool.classes), who,
                               pool=pool)
        ahead = press.get("ahead")
        if ahead is not None:
            a = _team_row(prog, pool, {"row": ahead})
            if a is not None and a != r:
                team.hold(project_id, who, pool.row_ids[a])  # the row now on their screen

    def saved_before(prog, press):
        kind = press.get("kind")
        if kind == "undo":
            return _already_saved(prog.events, press, "undo", None, who)
        r = _team_row(prog, pool, press)
        if kind not in ("label", "skip") or r is None:
            return False
        rid = pool.row_ids[r]
        try:
            label = _class_of(press, pool.classes) if kind == "label" else None
        except CertlibError:
            return False
        events = prog.labels if kind == "label" else prog.events
        return any(e.kind == kind and e.row_id == rid and same_annotator(e.annotator, who)
                   and (kind == "skip" or python_scalar(e.label) == python_scalar(label))
                   for e in events)

    def stale(press):
        r = _team_row(None, pool, press)
        if r is None:
            return f"row_id {press.get('row')} is not in this pool: nothing was saved."
        return (f"row_id {press.get('row')} was labelled meanwhile (another annotator's "
                "label, or your own press from another tab), so that answer saved nothing: "
                "answer the row shown now.")

    return take_presses(presses, results, store.resume(project_id, pool, since=since),
                        lambda prog: prog.last_seq, act,
                        lambda prog: store.resume(project_id, pool, since=prog),
                        saved_before, stale, fresh=fresh)


def stale_message(store, project_id, who: str, seen_seq, what: str = "row") -> str:
    """Why a press on an older view of the project saved nothing, naming who changed it
    since: the annotator's own previous press (a quick second key press, or another tab)
    is not "someone else", and is told its first press was saved.
    ``what``: the thing labelled (a row; an item on the Audit page)."""
    try:
        newer = [e for e in store.events(project_id) if e.seq > int(seen_seq)]
    except (AttributeError, CertlibError, TypeError, ValueError):
        newer = []
    others = sorted({str(e.annotator) for e in newer if not same_annotator(e.annotator, who)})
    if newer and not others:
        return ("Your previous press was saved; this one came before the page had shown its "
                "result (a quick second press, or this project open in another tab of "
                f"yours), so it saved nothing. The page now shows the project as it is: check "
                f"the {what} before you answer.")
    by = f" ({', '.join(others)})" if others else " (another annotator's label, probably)"
    return (f"Someone else{by} changed this project since the page was drawn, so nothing "
            f"was saved. The page now shows the project as it is: check the {what} and "
            "answer again.")


def _take_on_project(store, project_id, pool, who, presses, results, since, act,
                     saved_before):
    """`take_presses` on a labelling project: its progress is the state."""
    def stale(press):
        seq = press.get("seq")
        return stale_message(store, project_id, who, seq if isinstance(seq, int) else 0)

    return take_presses(presses, results, store.resume(project_id, pool, since=since),
                        lambda prog: prog.last_seq, act,
                        lambda prog: store.resume(project_id, pool, since=prog),
                        saved_before, stale)


# ------------------------------------------------------------------ blind review
def review_panel_data(prog, pool, who: str, display, folder, keys, client, results: dict,
                      echo=None) -> dict:
    """The panel's data for the second annotator's blind review on the Label page: the
    first row waiting for ``who`` (its extra columns only: no candidate's prediction, no
    first label), the class answers (``keys``: None when the label panel holds the keys)
    and, for each, the next row waiting after that review."""
    from certlib.labelling.events import Event
    from certlib.labelling.reviews import open_for, review_items

    mine = open_for(prog.reviews, who) if who else ()
    keys = keys or [None] * len(pool.classes)
    answers = [{"id": _answer_id(i), "label": str(display.label(c)) or f"class {c}",
                "key": k, "value": _value_text(c)}
               for i, (c, k) in enumerate(zip(pool.classes, keys))]

    def view(item):
        v = row_view(pool, pool.position(item.row_id), display, folder, True)
        return dict(v, table=None)  # blind: neither the first label nor the models

    nxt = {}
    if mine:
        for i, c in enumerate(pool.classes):
            ev = Event(prog.last_seq + 1, "review", mine[0].row_id, python_scalar(c), who, "")
            after = open_for(review_items(prog.events + (ev,)), who)
            nxt[_answer_id(i)] = ({"row": view(after[0])} if after else
                                  {"row": None, "wait": "Saving your review: no row waits for "
                                                        "you then."})
    return {
        "kind": "review", "seq": prog.last_seq, "row": view(mine[0]) if mine else None,
        "wait": "No row waits for your review.", "next": nxt, "answers": answers,
        "undo": None, "enabled": bool(who), "refresh": False,  # its press reruns the page
        "disabled_text": "Enter your name in the sidebar to review.",
        "guard_ms": GUARD_MS, "client": client, "echo": echo, "run": _run_number(),
        "results": dict(list((k, v) for k, v in results.items()
                             if client and k.startswith(f"{client}:"))[-60:]),
    }


def apply_review_presses(store, project_id: int, pool, who: str, presses, results: dict,
                         since=None):
    """The review panel's presses (`take_presses`): ``kind`` "review", ``row`` the row
    reviewed (`row_key`), ``answer`` ``c<i>``.  A review of another row than the first one
    waiting for ``who`` is refused.  Returns the project's progress afterwards."""
    from certlib.labelling.reviews import open_for

    def act(prog, press):
        if press.get("kind") != "review":
            raise CertlibError(f"unknown press {press.get('kind')!r}: nothing was saved")
        mine = open_for(prog.reviews, who)
        if not mine or str(mine[0].row_id) != str(press.get("row")):
            raise CertlibError(f"row_id {press.get('row')} is not the row to review now, so "
                               "that answer saved nothing: check the row shown and answer "
                               "again.")
        store.append_review(project_id, mine[0].row_id, _class_of(press, pool.classes), who,
                            pool=pool, expect_seq=press.get("seq"))

    def saved_before(prog, press):
        return _saved_before(prog.events, press, pool.classes, who)

    return _take_on_project(store, project_id, pool, who, presses, results, since, act,
                            saved_before)


# ------------------------------------------------------------------ the Audit page
def item_view(q, project, folder=None) -> dict:
    """What the panel draws for an audit queue item: its content (the extra columns, as
    `row_view` draws a row's: an image path inside ``folder`` as the image), then why it
    is asked, its judge score and slice (``meta``, below the content), and the two
    models' predictions."""
    fields, shown = _content(split_values(q.extra, folder))
    meta = [["position", f"item {q.pos + 1:,} of the stream, routed with pi = {q.pi:.3g}; "
                         "needed by " + ", ".join(str(x) for x in q.needed_by)]]
    if q.judge is not None:
        meta.append([str(project.judge_column), f"{q.judge:.4g}"])
    if q.slice is not None:
        meta.append([str(project.slice_column), str(q.slice)])
    return {"key": str(q.item_id), "title": f"item_id {q.item_id}", "fields": fields,
            "images": shown, "meta": meta, "no_skip": True,
            "table": {"head": ["model", "prediction"],
                      "rows": [["incumbent", str(q.incumbent)], ["candidate", str(q.candidate)]]}}


def audit_panel_data(status, ahead: dict, who: str, keys, undo_key, client, results: dict,
                     echo=None, *, folder=None) -> dict:
    """The panel's data for an audit as ``status`` shows it; ``ahead``:
    `certlib.audit.store.AuditStore.lookahead` of it; ``folder``: where the items' image
    paths resolve (None: they show as text)."""
    q = status.queue[0] if status.queue else None
    answers = [{"id": _answer_id(i), "label": f"class {c}", "key": k,
                "value": _value_text(c)} for i, (c, k) in enumerate(zip(status.classes, keys))]
    nxt = {}
    for i, c in enumerate(status.classes):
        if c not in ahead:
            continue
        item, verdict = ahead[c]
        nxt[_answer_id(i)] = ({"row": item_view(item, status.project, folder)}
                              if item is not None
                              else {"row": None, "wait": "Saving your label: nothing is left "
                                                         f"to label then (verdict {verdict})."})
    newest = status.newest_label
    mine = bool(who) and newest is not None and same_annotator(newest.annotator, who)
    help_ = ("No label to undo yet." if newest is None else
             "Cancels your newest label (an undo event; nothing is deleted)." if mine else
             f"The newest label (item_id {newest.item_id}) is {newest.annotator}'s; only "
             "they can undo it.")
    note = ("" if newest is None else
            f"Undo takes back the newest label: item_id {newest.item_id} = {newest.label} "
            f"({newest.annotator}, event {newest.seq})"
            + ("." if mine or not who else f"; only {newest.annotator} can undo it."))
    return {
        "seq": status.last_seq,
        "row": None if q is None else item_view(q, status.project, folder),
        "wait": "Nothing to label: " + ("the audit has its verdict."
                                        if status.result.verdict != "continue"
                                        else "append more traffic."),
        "next": nxt, "answers": answers,
        "undo": {"key": undo_key, "enabled": mine, "help": help_, "note": note},
        "enabled": bool(who),
        "disabled_text": "Enter your name in the sidebar to label: it goes into the "
                         "evidence record.",
        "guard_ms": GUARD_MS, "client": client, "echo": echo, "run": _run_number(),
        "results": dict(list((k, v) for k, v in results.items()
                             if client and k.startswith(f"{client}:"))[-60:]),
    }


def apply_audit_presses(store, project_id: int, who: str, presses, results: dict):
    """The Audit page's presses (`take_presses`): ``kind`` "label" (``row``: the item id,
    ``answer``: ``c<i>``, class i of the status) or "undo".  A label for another item than
    the queue's first is refused.  Returns the audit's status afterwards."""
    def act(status, press):
        kind, seq = press.get("kind"), press.get("seq")
        if kind == "undo":
            store.undo(project_id, who, expect_seq=seq)
        elif kind == "label":
            q = status.queue[0] if status.queue else None
            if q is None or str(q.item_id) != str(press.get("row")):
                raise CertlibError(f"item_id {press.get('row')} is not the item to label now, "
                                   "so that answer saved nothing: check the item shown and "
                                   "answer again.")
            store.label(project_id, q.item_id, _class_of(press, list(status.classes)), who,
                        expect_seq=seq)
        else:
            raise CertlibError(f"unknown press {kind!r}: nothing was saved")

    def saved_before(status, press):
        return _saved_before(status.events, press, list(status.classes), who, key="item_id")

    def stale(press):
        seq = press.get("seq")
        return stale_message(store, project_id, who, seq if isinstance(seq, int) else 0,
                             what="item")

    return take_presses(presses, results, store.status(project_id),
                        lambda status: status.last_seq, act,
                        lambda status: store.status(project_id), saved_before, stale)


def presses_callback(key: str, prefix: str, apply, flash: str, keep: str | None = None):
    """The ``on_presses`` callback of the panel keyed ``key``: the browser's unacknowledged
    answers go to ``apply(presses, results)`` (an ``apply_*_presses``); the client, the
    trigger's number (echoed in the data: data equal to the last sent is not sent again,
    and the browser must hear back even when nothing changed) and the acknowledgements
    are kept under ``<prefix>_client``, ``_echo``, ``_results`` (`panel_state`), the
    result of ``apply`` under ``keep``, a refusal of the whole batch under ``flash``."""
    def callback() -> None:
        ss = st.session_state
        sent = (ss.get(key) or {}).get("presses")
        if not isinstance(sent, dict):
            return
        ss[f"{prefix}_client"] = str(sent.get("client") or "")
        ss[f"{prefix}_echo"] = sent.get("sent")
        results = ss.setdefault(f"{prefix}_results", {})
        try:
            out = apply(sent.get("presses"), results)
        except CertlibError as exc:  # the project or pool went away meanwhile
            ss[flash] = str(exc)
            return
        if keep:
            ss[keep] = out
    return callback


def panel_state(prefix: str) -> tuple:
    """(client, acknowledgements, echo) kept by `presses_callback` for a data builder."""
    ss = st.session_state
    return ss.get(f"{prefix}_client"), ss.get(f"{prefix}_results", {}), ss.get(f"{prefix}_echo")


def label_panel(key: str, data: dict, on_presses, on_refresh):
    """Mount the panel (inside the page's fragment): ``on_presses`` runs when the browser
    sends answers (read them from ``st.session_state[key]["presses"]``), ``on_refresh``
    when the panel has been quiet a moment after saving (the rest of the page may redraw)."""
    return _component(key=key, data=data, on_presses_change=on_presses,
                      on_refresh_change=on_refresh)
