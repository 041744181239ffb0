"""Keyboard shortcuts of the labelling buttons: one key per class, Skip and Undo."""

from __future__ import annotations


_RESERVED_KEYS = {"C", "R"}  # Streamlit keeps these for its own menu (st.button docs)


def class_shortcuts(classes) -> list:
    """One keyboard key per class for `st.button(shortcut=...)`: the class itself when it
    is one letter or digit (0/1 for a binary pool), else its first free letter, else a free
    digit; None when no key is left.  C and R are reserved by Streamlit."""
    used, out = set(), []
    for c in classes:
        text = str(c).strip().upper()
        options = [ch for ch in text if ch.isascii() and ch.isalnum()]
        key = next((k for k in options if k not in used and k not in _RESERVED_KEYS), None)
        if len(text) > 1 and text.isdigit():
            key = None  # "10" must not take the key of class 1
        out.append(key)
        if key:
            used.add(key)
    free = iter([d for d in "1234567890" if d not in used])
    return [k if k is not None else next(free, None) for k in out]


def undo_shortcut(class_keys) -> str:
    return "U" if "U" not in class_keys else "Backspace"


def skip_shortcut(class_keys) -> str | None:
    """``S`` unless a class took it (then the Skip button has no key)."""
    return "S" if "S" not in class_keys else None


def shortcut_kwargs(key) -> dict:
    """``{"shortcut": key}`` for `st.button` (Streamlit >= 1.52), nothing when no key is left."""
    return {} if key is None else {"shortcut": key}
