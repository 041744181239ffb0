"""Input boxes and press guards shared by the pages.

Number boxes take any number and bring one outside their range to the nearer end,
saying so (`number_box`, `budget_input`, `brought_in`); the tolerance, policy and seed
boxes are the shared settings of `ui.state`.  A press that did not reach its callback
is found (`lost_press`), and a button acting on one view of a project carries that
view in its key (`view_key`), so a press on an older view is refused as stale.
"""

from __future__ import annotations

import math

import streamlit as st

import certlib
from ui.state import (DEFAULT_POLICY, MAX_TOLERANCE, POLICY, SEED, TOLERANCE, set_url_kept,
                      stands_for, sticky, url_kept)

def _number_text(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:.15g}"  # 0.5000001 is not "0.5"


def _typed(key: str, shared: str | None):
    """The number a box holds from the last run, when it still stands for the same
    setting (`sticky` forgets it when the name changed, e.g. with the pool)."""
    typed = st.session_state.get(key)
    if stands_for(key, shared or key) != (shared or key) or isinstance(typed, bool) \
            or not isinstance(typed, (int, float)):
        return None
    return typed


def _bring_in(key: str, shared: str | None, low, high, step) -> tuple:
    """Before a box is drawn: a number it holds outside ``low``..``high`` is replaced by
    the nearer end, so the box shows what is used.  Returns (number typed, end), or
    (None, None) when nothing is to be said: the number was in range, or the box's - / +
    button went one ``step`` past the end (Streamlit's bound disabled it there).  A number
    to be said is noted for `brought_in`."""
    typed = _typed(key, shared)
    if typed is None:
        return None, None
    end = low if low is not None and typed < low else \
        high if high is not None and typed > high else None
    if end is None:
        return None, None
    st.session_state[key] = end
    if step and math.isclose(abs(typed - end), step, rel_tol=1e-9):
        return None, None
    st.session_state.setdefault("_brought_in", {})[key] = typed
    return typed, end


def number_box(container, label: str, key: str, default, *, low=None, high=None,
               shared: str | None = None, what: str = "", **kwargs):
    """A `sticky` number box that takes any number and brings one outside ``low``..``high``
    to the nearer end, in the box itself, saying so once ("-5 is below 0, so 0 is used").
    Streamlit's own ``min_value``/``max_value`` turned the box red and kept the last valid
    number in use while the box showed the new one, and a button pressed then (Start)
    used the old number without a word.  ``what`` names the quantity in the message."""
    typed, end = _bring_in(key, shared, low, high, kwargs.get("step"))
    value = container.number_input(label, **kwargs,
                                   **sticky(key, default, shared, low=low, high=high))
    if typed is not None:
        side = "below the smallest" if end == low else "above the largest"
        container.warning(f"{what or label}: {_number_text(typed)} is {side} value allowed, "
                          f"so {_number_text(end)} is used.")
    return value


def held_back(action: str = "started") -> str:
    """What a page says when `brought_in` holds a press back."""
    return (f"Nothing was {action}: a number was outside what its box allows, so the box "
            "now holds the nearest allowed one. Check it and press again.")


def brought_in(*keys: str) -> dict:
    """{key: number typed} for the boxes among ``keys`` that `number_box` or
    `budget_input` brought into range since the last call.  A page with a button that
    acts on its boxes (Start) calls it on every run, after drawing them, and does not act
    in a run where a box was just changed under the user's eyes."""
    notes = st.session_state.get("_brought_in", {})
    return {k: notes.pop(k) for k in keys if k in notes}


def tolerance_input(container, key: str, label: str = "AUGRC tolerance tau (0 = exact)") -> float:
    """The shared tolerance box (0 to 0.5; `sticky`)."""
    return number_box(container, label, key, 0.0, low=0.0, high=MAX_TOLERANCE,
                      shared=TOLERANCE, what="The tolerance", step=0.0005, format="%g")


def policy_input(container, key: str) -> str:
    """The shared policy box (`sticky`)."""
    names = list(certlib.policy_names())
    return container.selectbox("Policy", names,
                               **sticky(key, DEFAULT_POLICY, POLICY, names, index=True))


def seed_input(container, key: str, label: str = "Seed (random policies)") -> int:
    """The shared seed box (`sticky`)."""
    return int(number_box(container, label, key, 0, low=0, shared=SEED, what="The seed",
                          step=1))


def default_budget(pool) -> int:
    """The budget a planning box starts from: half the pool, or on a partly labelled
    pool the labels already known (they count as read) plus half the unread rows."""
    known = pool.n_labelled if not pool.fully_labelled else 0
    return max(1, known + (pool.n - known) // 2)


def budget_input(container, label: str, n: int, value: int, key: str,
                 shared: str | None = None, zero: str = "0") -> int:
    """A budget box that takes any whole number and brings one outside 0..n to the nearer
    end, in the box, saying so once (Streamlit's own bounds kept the last valid answer on
    the page while the box showed the new number in red).  ``zero`` says what 0 means
    ("0 (no budget)").  Its value outlives a page switch and is shared with the boxes of
    the same ``shared`` name (`sticky`)."""
    typed, _ = _bring_in(key, shared, 0, n, 1)
    budget = int(container.number_input(label, step=1, **sticky(key, value, shared)))
    if typed is not None and typed < 0:
        container.warning(f"A budget is a number of labels; {typed:,} is below 0, so "
                          f"{zero} is used.")
    elif typed is not None and typed > n:
        container.info(f"The pool has {n:,} rows, so a budget of {typed:,} buys no more than "
                       f"{n:,}; {n:,} is used.")
    return budget


def acted() -> None:
    """Called by a button's callback: the press reached the server and did its work."""
    st.session_state["_acted"] = True


def lost_press(*prefixes: str) -> bool:
    """Whether a button whose key starts with one of ``prefixes`` (``cls_0@``, ``review_``
    ...) was pressed in this run but its callback did not run (call after drawing them,
    on every run).  A session Streamlit starts anew -- after a server restart the browser
    reconnects to a fresh one -- knows no callback until its first run has drawn the
    buttons, so the first press after a restart was dropped without a word (the label was
    never saved; measured in a browser probe); a press on a view this session never drew
    is found too (`_undrawn_presses`)."""
    if st.session_state.pop("_acted", False):
        return False
    drawn = (k for k in st.session_state if isinstance(k, str) and k.startswith(prefixes))
    return (any(st.session_state.get(k) is True for k in drawn)
            or any(k.startswith(prefixes) for k in _undrawn_presses()))


def _undrawn_presses() -> set[str]:
    """The keys of buttons the browser says were pressed in this run that no run of this
    session has drawn (Streamlit hides them from ``st.session_state`` and runs no
    callback): a press on the view the browser showed before the server restarted,
    when someone else has labelled since, so this run draws the buttons of a newer view
    and the press would otherwise pass without a word.  Read from Streamlit's
    widget states, which it offers no public way to read; an empty set wherever its
    internals differ from 1.62-1.67's."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        states = get_script_run_ctx().session_state._state._new_widget_state.states
        sent = {wid: getattr(w, "value", None) for wid, w in list(states.items())}
        return {wid.split("-", 2)[-1] for wid, w in sent.items()  # Serialized(proto)
                if hasattr(w, "WhichOneof") and w.WhichOneof("value") == "trigger_value"
                and w.trigger_value}
    except Exception:  # noqa: BLE001 - a missed warning, never a broken page
        return set()


def view_key(base: str, seq: int) -> str:
    """The key of a button that acts on one view of a project (``base@seq``, ``seq`` the
    newest event the view shows).  With a fixed key a press made on the previous view --
    a quick second key press, sent before the browser showed the next row -- reached the
    callback of the newest run, whose ``expect_seq`` was already the new one, and
    labelled a row the annotator never saw (a double press does that).  A
    press on an older view now names an older button, whose callback (Streamlit keeps
    it after the button is gone) carries the old ``expect_seq``: the store refuses it as
    stale and the page says so.  Every button that acts on one view of a project takes
    such a key: the row's class, Skip, Undo and Revisit buttons, the review answers and
    decisions, Queue for review and Extend budget (a double click extended twice)."""
    return f"{base}@{seq}"


LOST_PRESS = ("That press did not reach the page, so nothing was saved: the connection to the "
              "server was renewed (it restarted, or the network dropped), or the page had "
              "moved on before the press arrived. Check what it shows and press again.")


def keep_annotator(key: str) -> None:
    """Keep the name typed in the text input ``key`` (`url_kept` ``annotator``: the
    address, so a reload or a server restart keeps it, and the session, so a visit to
    another page does); an empty name is forgotten."""
    set_url_kept("annotator", st.session_state[key].strip() or None)


def annotator_input(key: str, container=None) -> str:
    """The sidebar's "Your name (annotator)" box, kept in the address and the session
    (`keep_annotator`); returns the name."""
    box = container if container is not None else st.sidebar
    name = box.text_input("Your name (annotator)", key=key,
                          value=url_kept("annotator")[0] or "",
                          on_change=keep_annotator, args=(key,))
    return name.strip()
