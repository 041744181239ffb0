"""Helpers for AppTests of the labelling pages."""

from __future__ import annotations


def view_button(at, base: str):
    """The button ``base`` of the view the page shows: the Label and Audit pages key their
    row buttons by the view (``base@seq``, `ui.inputs.view_key`)."""
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


def _panel_elements(at, panel: str = "label_panel") -> list:
    """The page's panels keyed ``<panel>_<project id>`` (the Label page's ``label_panel``
    and ``review_panel``, the Audit page's ``audit_panel``)."""
    return [e for e in at.get("bidi_component")
            if e.proto.component_name.endswith("label_panel")
            and e.proto.id.rpartition("-")[2].startswith(f"{panel}_")]


def panel_data(at, panel: str = "label_panel") -> dict | None:
    """The data the Label page sent its labelling panel (`ui.label_panel.panel_data`) in
    the last run, or None when no panel is drawn."""
    import json

    found = _panel_elements(at, panel)
    return json.loads(found[0].proto.json) if found else None


def panel_row(at, panel: str = "label_panel"):
    """The row id (as text) the panel shows, or None when it shows no row."""
    data = panel_data(at, panel)
    return None if data is None or data["row"] is None else data["row"]["key"]


_PRESSES = iter(range(1, 10**9))


def panel_press(at, answer: str, *, client: str = "apptest", seq=None, row=None,
                also=(), panel: str = "label_panel"):
    """Send the panel's trigger as the browser does after a key press: the answer
    (``c<i>``, ``skip`` or ``undo``) to the row and view the panel shows (or ``seq`` /
    ``row``), after the unacknowledged presses ``also``; then run the page.  Builds the
    component's trigger widget state by hand (Streamlit 1.67's CCv2 internals: one
    json_trigger_value widget per component, a list of {event, value}); skips if they
    are gone.  Returns the press sent."""
    import json

    import pytest

    data = panel_data(at, panel)
    assert data is not None, f"no {panel} on the page"
    kind = {"undo": "undo", "skip": "skip"}.get(answer, data.get("kind") or "label")
    press = {"id": f"{client}:{next(_PRESSES)}", "kind": kind,
             "seq": data["seq"] if seq is None else seq}
    if kind != "undo":
        press.update(answer=answer, row=data["row"]["key"] if row is None else row)
        value = next((a.get("value") for a in data["answers"] if a["id"] == answer), None)
        if value is not None:  # as the browser sends it: the class the button named
            press["value"] = value
    try:
        from streamlit.components.v2.bidi_component.main import _make_trigger_id
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        (el,) = _panel_elements(at, panel)
        ws = at._tree.get_widget_states()
        keep = [w for w in ws.widgets if w.WhichOneof("value") != "trigger_value"]
        del ws.widgets[:]
        ws.widgets.extend(keep)
        trig = WidgetState(id=_make_trigger_id(el.proto.id, "events"))
        trig.json_trigger_value = json.dumps(
            [{"event": "presses", "value": {"client": client,
                                            "presses": [*also, press]}}])
        ws.widgets.append(trig)
        run = at._run
    except (AttributeError, ImportError) as exc:  # pragma: no cover
        pytest.skip(f"AppTest or CCv2 internals changed: {exc}")
    run(ws)
    return press


def panel_result(at, press, panel: str = "label_panel") -> dict | None:
    """The server's acknowledgement of ``press`` in the panel's data ({ok, text})."""
    data = panel_data(at, panel)
    return None if data is None else data["results"].get(press["id"])
