"""State kept for the dashboard beyond one run.

Streamlit forgets a widget's value at the end of a run that did not draw it and
empties the address on a page switch, so every value that must outlive them is kept
here, in one of three scopes:

- **shared across pages** (`sticky`): a setting's value in the session under a name
  that several pages' boxes give (the tolerance of *Plan and certify* is the one
  *Replay* starts from); the names of ``URL_SETTINGS`` are also kept in the address
  (`sync_url_settings`), so a reload or a link starts from them;
- **a page's own, kept in the address** (`url_widget` and `url_state`, written back
  by `write_url_state`): a Teach figure's step or labels; `url_widget` keeps the value
  in the session too, so a visit to another page does not lose it;
- **a page's open item, kept in the address and the session** (`url_kept`,
  `set_url_kept`): the open labelling project, the open audit, the annotator's name.

They stay separate functions because their precedence differs and the page tests pin
each one: `url_kept` lets the address win over the session (a sent link opens its
project), `url_state` seeds the session once and the session wins after, `sticky`
drops values outside a box's range without forgetting them for other pages, and
the ``URL_SETTINGS`` leave the address at their defaults.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import certlib

# settings that pages share (`sticky`): one name per setting
TOLERANCE, POLICY, RULE, SEED = "tolerance", "policy", "rule", "seed"
PRESENT = "present"  # the Teach pages' presentation mode (ui.teach), 1 or 0
DEFAULT_POLICY = "adaptive-pair-sum"
MAX_TOLERANCE = 0.5  # every page's tolerance box
RULES = ("shared", "centered", "separate")
URL_SETTINGS = {  # name: (default, the values any page can take)
    TOLERANCE: (0.0, lambda v: 0 <= v <= MAX_TOLERANCE),
    POLICY: (DEFAULT_POLICY, lambda v: v in certlib.policy_names()),
    RULE: ("shared", lambda v: v in RULES),
    SEED: (0, lambda v: 0 <= v < 2 ** 53),  # a browser's integers end there
    PRESENT: (0, lambda v: v in (0, 1)),
}


def url_state(key: str, default, parse=str):
    """Seed session-state ``key`` once per session from the address (``?key=...``), so a
    reload shows the same step or choice; ``parse`` turns the text into a value and
    raises (anything) when it is not one: then ``default``.  Widgets keyed ``key`` are
    created without a value of their own.  `write_url_state` puts the values back."""
    if key not in st.session_state:
        raw = st.query_params.get(key)
        try:
            st.session_state[key] = default if raw is None else parse(raw)
        except Exception:  # noqa: BLE001 - a hand-edited address: fall back, never crash
            st.session_state[key] = default
    return st.session_state[key]


def write_url_state(*keys: str) -> None:
    """The current values of ``keys`` into the address (see `url_state`, `url_widget`)."""
    for k in keys:
        if k in st.session_state:
            text = str(st.session_state[k])
            if st.query_params.get(k) != text:  # write only a change (each is sent out)
                st.query_params[k] = text


def url_widget(key: str, default, parse=str, options=None, low=None, high=None) -> dict:
    """The keyword arguments (``key`` and ``value``, or ``index`` into ``options``) for
    a page's own widget whose value is kept in the address (a reload or a sent link
    shows it; `write_url_state` writes it after the widget is drawn) and in the session
    (`sticky`: a visit to another page keeps it, and the widget always shows the value
    in use).  The address is read when the session has no value yet; text ``parse``
    rejects (raises) is ignored; a value not among ``options`` or outside ``low``..``high``
    gives way to ``default``."""
    kept = st.session_state.setdefault("_sticky", {})
    raw = st.query_params.get(key)
    if key not in kept and key not in st.session_state and raw is not None:
        try:
            value = parse(raw)
            kept[key] = value
        except Exception:  # noqa: BLE001 - a hand-edited address: ignore it, never crash
            pass
    return sticky(key, default, options=options, low=low, high=high,
                  index=options is not None)


_UNSET = object()


def sticky(key: str, default, shared: str | None = None, options=None, low=None,
           high=None, index: bool = False) -> dict:
    """The keyword arguments (``key`` and ``value``, or ``index`` into ``options`` with
    ``index=True``) for a setting's widget whose value outlives a page switch.

    Streamlit drops a widget's state at the end of a run that did not draw it, so every
    page switch put its settings back to their defaults.  The value is kept in the
    session under ``shared`` (default: ``key``): pages that give the same ``shared``
    name share the setting (the tolerance chosen on *Plan and certify* is the one
    *Replay*, *Certificate* and a new labelling project start from); a name that
    changes for the same box (a budget kept per pool, after a pool change) gives the box
    that name's value.  The settings named in ``URL_SETTINGS`` also live in the address
    (`sync_url_settings`), so a reload or a shared link starts from them.  A value this
    widget cannot take (not among ``options``, outside ``low``..``high``) gives way to
    ``default`` here, and stays the kept value for the other pages until the user
    chooses another one here.

    The widget is always given its current value as its value: the browser falls back
    to that when it redraws a page whose switch it gave up (a page link clicked while
    the page reran) -- given only a key, the boxes then showed Streamlit's own defaults
    (0, the first option) beside results computed from other values."""
    kept = st.session_state.setdefault("_sticky", {})
    names = st.session_state.setdefault("_sticky_names", {})
    fallback = st.session_state.setdefault("_sticky_fallback", {})
    name = shared or key
    if name in URL_SETTINGS:
        _url_setting(name, kept)  # a new session (a reload, a link) starts from the address
    if key in st.session_state and names.get(key, name) != name:
        del st.session_state[key]  # the box now stands for another name (another pool)
        fallback.pop(key, None)
    names[key] = name
    if key in st.session_state:  # drawn in the last run: the widget's own state
        value = st.session_state[key]
        chosen = fallback.get(key, _UNSET) != value  # not the fallback shown untouched
    else:  # a page switch: the kept value
        value, chosen = kept.get(name, default), True
    if (options is None or value in options) and (low is None or value >= low) and \
            (high is None or value <= high):
        if chosen:
            kept[name] = value
            fallback.pop(key, None)
    else:
        value = fallback[key] = default
    if name in URL_SETTINGS:
        _url_setting(name, kept)
    if index:
        return {"key": key, "index": list(options).index(value)}
    return {"key": key, "value": value}


def stands_for(key: str, default: str) -> str:
    """The shared name the box ``key`` stood for when `sticky` last gave its arguments
    (``default`` before that)."""
    return st.session_state.get("_sticky_names", {}).get(key, default)


def sync_url_settings() -> None:
    """The shared settings of ``URL_SETTINGS`` between the session and the address
    (`_url_setting` for each).  app.py calls it on every page, since a page switch
    empties the address of what the new page does not write."""
    kept = st.session_state.setdefault("_sticky", {})
    for name in URL_SETTINGS:
        _url_setting(name, kept)


def _url_setting(name: str, kept: dict) -> None:
    """One shared setting between the session and the address: not chosen in this
    session yet, it is read from the address (text that is no value any page takes is
    dropped from it); chosen, it is written back, or left out at its default."""
    default, valid = URL_SETTINGS[name]
    raw = st.query_params.get(name)
    if name not in kept:
        if raw is None:
            return
        try:
            value = type(default)(raw)
            if not valid(value):
                raise ValueError(raw)
        except ValueError:
            st.query_params.pop(name, None)
            return
        kept[name] = value
    text = None if kept[name] == default else str(kept[name])
    if text is None and raw is not None:
        st.query_params.pop(name, None)
    elif text is not None and raw != text:  # write only a change (each is sent out)
        st.query_params[name] = text


def url_kept(name: str) -> tuple[str | None, bool]:
    """A page's own value kept in the address (``?name=``: a reload or a sent link opens
    it) and in the session, because Streamlit empties the address on a page switch: the
    open labelling project, the open audit, the annotator's name.  Returns the value
    (None: none) and whether it came back from the session, not from the address (a
    visit to another page, and back).  `set_url_kept` changes or forgets it."""
    kept = st.session_state.setdefault("_url_kept", {})
    raw = st.query_params.get(name)
    if raw is not None:
        kept[name] = raw
        return raw, False
    if name in kept:
        st.query_params[name] = kept[name]
        return kept[name], True
    return None, False


def set_url_kept(name: str, value: str | None) -> None:
    """Keep ``value`` under ``name`` in the address and the session (`url_kept`); None
    forgets it in both."""
    kept = st.session_state.setdefault("_url_kept", {})
    if value is None:
        kept.pop(name, None)
        st.query_params.pop(name, None)
    else:
        kept[name] = str(value)
        if st.query_params.get(name) != str(value):  # write only a change
            st.query_params[name] = str(value)


def choose_shared(settings: Mapping[str, object]) -> None:
    """Choose values of shared settings (``settings``: `sticky` name -> value) as if
    they had been chosen in their boxes: the next page drawn starts from them."""
    st.session_state.setdefault("_sticky", {}).update(settings)
