"""Helpers for AppTests of the labelling pages."""

from __future__ import annotations


def view_button(at, base: str):
    """The button ``base`` of the view the page shows: the Label and Audit pages key their
    row buttons by the view (``base@seq``, `ui.common.view_key`)."""
    found = [b for b in at.button if isinstance(b.key, str) and b.key.rpartition("@")[0] == base]
    assert len(found) == 1, (base, [b.key for b in at.button])
    return found[0]


def press_twice(at, button):
    """Press ``button``, then press it again as the browser does for a quick second press:
    it re-sends the widget states of the view it still showed (every value, and the
    trigger of that view's button) after the server drew the next view.  Uses AppTest's
    widget-state internals (Streamlit 1.67); skips if they are gone."""
    import pytest

    button.click()
    try:
        ws = at._tree.get_widget_states()
        keep = [w for w in ws.widgets
                if w.WhichOneof("value") != "trigger_value" or w.id == button.id]
        del ws.widgets[:]
        ws.widgets.extend(keep)
        run = at._run
    except AttributeError as exc:  # pragma: no cover - another Streamlit
        pytest.skip(f"AppTest internals changed: {exc}")
    run(ws)
    run(ws)
    return at
