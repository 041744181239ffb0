"""The Label page for a signed-in team (AppTest; the visitor's `ui.auth.User` is set as
app.py sets it after a real sign-in, which tests/browser/test_browser_team.py drives
through a real OpenID Connect provider), and the local-mode notice of every page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from certlib.labelling.store import LabelStore
from certlib.labelling.team import TeamStore
from page_support import panel_data, panel_press, view_button
from ui.auth import User

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "views" / "label.py")
ROLES = {"roles": {"leads": ["lead@example.org"],
                   "annotators": ["ana@example.org", "bob@example.org"]}}
LEAD = User("lead@example.org", "lead-1", "http://idp", "lead", "Lead")
ANA = User("ana@example.org", "ana-1", "http://idp", "annotator", "Ana")


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "labels.db"
    monkeypatch.setenv("CERTLIB_STORE", str(path))
    return path


def _page(user, query=None):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.secrets["auth"] = {"client_id": "x"}
    at.secrets["certlib"] = ROLES
    at.session_state["_user"] = user
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _lead_starts_and_assigns(annotators, show=False):
    at = _page(LEAD)
    view_button(at, "start").click().run()
    assert not at.exception, at.exception
    at.multiselect[0].set_value(annotators)
    if show:
        at.checkbox[[c.label for c in at.checkbox].index(
            "Show the candidates' predictions to annotators")].check()
    at.button(key=[b.key for b in at.button if "Save the team" in b.key][0]).click().run()
    assert not at.exception, at.exception
    return at


def test_annotator_without_a_project_sees_only_that(store_path):
    at = _page(ANA)
    assert any("No project is assigned to you yet" in i.value for i in at.info)
    assert not at.get("bidi_component")
    assert not [b for b in at.button if str(b.key).startswith("start@")]  # no new project either


def test_lead_assigns_and_the_annotator_labels_blind(store_path):
    _lead_starts_and_assigns(["ana@example.org"])
    (project,) = LabelStore(store_path).projects()
    team = TeamStore(store_path)
    assert team.assigned(project.id) == ("ana@example.org",)
    assert team.pool_ref(project.id) == "sample:unlabelled"
    at = _page(ANA)
    data = panel_data(at)
    assert data["row"] is not None and data["row"]["table"] is None  # answers hidden
    assert all(n["row"] is None or n["row"]["table"] is None for n in data["next"].values())
    assert not [b for b in at.button
                if str(b.key).startswith(("start@", "new_project", "resume_project"))]
    assert not [n for n in at.number_input if "budget" in (n.key or "")]
    # which model leads, the bounds and everyone's labels are the lead's to read
    assert not at.get("plotly_chart") and not at.dataframe
    assert any(i.value.startswith("Running: 0 labels read") for i in at.info)
    assert not any("best guess" in i.value for i in at.info)
    panel_press(at, "c1")
    assert not at.exception, at.exception
    ev = LabelStore(store_path).events(project.id)
    assert [(e.kind, e.annotator, e.subject) for e in ev] == [
        ("label", "ana@example.org", "ana-1")]


def test_lead_can_show_the_answers(store_path):
    _lead_starts_and_assigns(["ana@example.org"], show=True)
    data = panel_data(_page(ANA))
    assert data["row"]["table"]["head"] == ["candidate", "prediction", "confidence"]


def test_annotator_cannot_open_another_project(store_path):
    _lead_starts_and_assigns(["bob@example.org"])
    at = _page(ANA)
    assert any("No project is assigned to you yet" in i.value for i in at.info)
    at = _page(ANA, {"project": "1"})
    assert not at.get("bidi_component")
    assert not any("Project 1 on" in c.value for c in at.caption)


def test_malformed_roles_stop_with_one_message(store_path):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.secrets["auth"] = {"client_id": "x"}
    at.secrets["certlib"] = {"roles": {"lead": ["lead@example.org"]}}
    at.session_state["_user"] = LEAD
    at.run()
    assert not at.exception, at.exception
    # the lead's Team box reads the roles: refused there with one message, nothing saved
    view_button(at, "start").click().run()
    assert not at.exception, at.exception
    assert any("roles in .streamlit/secrets.toml cannot be read" in e.value for e in at.error)


def test_every_page_says_local_mode_without_sign_in(store_path):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("Local mode" in c.value for c in at.sidebar.caption)


def test_an_annotator_neither_queues_reviews_nor_decides_them(store_path):
    """On a certified project the lead sees "Queue ... for review"; an annotator does not
    (queueing, correcting and keeping are a lead's decisions), nor the Certificate link."""
    from certlib import load_pool

    pool, truth = load_pool("sample_data/demo_unlabelled.csv"), load_pool(
        "sample_data/demo_binary.csv")
    store = LabelStore(store_path)
    pid = store.open_project(pool, "Breast cancer, unlabelled (annotator)")
    prog = store.resume(pid, pool)
    while (r := prog.next_row) is not None:
        store.append_label(pid, pool.row_ids[r], truth.classes[truth.labels[r]],
                           "ana@example.org", pool=pool)
        prog = store.resume(pid, pool, since=prog)
    assert prog.session.certified
    TeamStore(store_path).assign(pid, ["ana@example.org"], by="lead@example.org",
                                 pool_ref="sample:unlabelled")
    lead = _page(LEAD, {"project": str(pid)})
    assert any(b.label.startswith("Queue th") for b in lead.button)
    assert any(b.key == "to_certificate" for b in lead.button)
    at = _page(ANA)
    assert any("Certified after" in s.value for s in at.success)
    assert not any(b.label.startswith("Queue th") for b in at.button)
    assert not any(b.key == "to_certificate" for b in at.button)
    assert not at.get("download_button")
    # a stray undo would reopen a certificate the lead has read: off for the annotator
    undo = panel_data(at)["undo"]
    assert not undo["enabled"] and "session is certified" in undo["help"]
