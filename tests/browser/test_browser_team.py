"""A team on one server, in headless Chromium, signed in through a real OpenID Connect
provider on 127.0.0.1 (tests/oidc/provider.js; tests/oidc_support.py): roles from the
secrets, a lead assigning two annotators to a project, both labelling it at once with
the keyboard, and the store recording who.

Needs Debian's chromium at /usr/bin/chromium, Node 20+ and the provider's npm packages
(run_tests.sh runs ``npm ci --prefix tests/oidc``).
"""

from __future__ import annotations

import pytest

from browser_support import (Server, idle, launch, panel_message, panel_row,
                             record_rows_at_keydown, require_chromium, rows_seen, wait_text)
from oidc_support import ACCOUNTS, oidc_provider, secrets_env, sign_in, sign_out, write_secrets

sync_api = require_chromium()
pytestmark = pytest.mark.slow

ROLES = """
[certlib.roles]
leads = ["lead@example.org", "eve@example.org"]
annotators = ["ana@example.org", "bob@example.org"]
"""


@pytest.fixture(scope="module")
def team_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("team")
    srv = Server(tmp / "labels.db")
    with oidc_provider([srv.port]) as op:
        srv.env.update(secrets_env(write_secrets(tmp / "secrets.toml", op, srv.port,
                                                 extra=ROLES)))
        srv.start()
        try:
            yield srv
        finally:
            srv.stop()


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


def _signed_in(browser, srv, email, path="/"):
    ctx = browser.new_context(viewport={"width": 1300, "height": 1400})
    page = ctx.new_page()
    page.goto(srv.url + path)
    wait_text(page, "Sign in with your organisation")
    sign_in(page, email)
    wait_text(page, f"Signed in as {email}")
    if path != "/":  # the provider sends the browser back to the app's root
        page.goto(srv.url + path)
        wait_text(page, f"Signed in as {email}")
    return ctx, page


def _store(srv):
    from certlib.labelling.store import LabelStore
    return LabelStore(srv.env["CERTLIB_STORE"])


def test_sign_in_roles_and_a_team_labelling_one_project(team_app, browser):
    """carol (no role) sees nothing; ana before any assignment sees no project and no lead
    page; the lead starts a project and assigns ana and bob; both label it at once, each
    press answering the row on their own screen, and nearly every press is saved; the
    store records each label under the signed-in identity."""
    srv = team_app
    # no role: nothing but the way out
    ctx, page = _signed_in(browser, srv, "carol@example.org")
    wait_text(page, "No access yet")
    assert page.get_by_text("Plan and certify").count() == 0
    sign_out(page)
    wait_text(page, "Sign in with your organisation")
    ctx.close()
    # listed as a lead, but the provider does not vouch for the address: no role
    ctx, page = _signed_in(browser, srv, "eve@example.org")
    wait_text(page, "does not say it verified this address")
    assert page.get_by_text("Plan and certify").count() == 0
    ctx.close()

    # an annotator before any assignment: no project; a lead page's address shows Label
    ctx_a, ana = _signed_in(browser, srv, "ana@example.org", "/plan")
    wait_text(ana, "For leads only")
    ana.get_by_role("link", name="Open the Label page").click()
    wait_text(ana, "No project is assigned to you yet")
    for lead_page in ("Plan and certify", "Certificate", "Audit a model update", "Pool"):
        assert ana.get_by_text(lead_page, exact=True).count() == 0, lead_page

    # the lead starts a project and assigns ana and bob
    ctx_l, lead = _signed_in(browser, srv, "lead@example.org", "/Label")
    lead.get_by_role("button", name="Start a new project").click()
    wait_text(lead, "0 of 171")
    idle(lead)
    team = lead.get_by_role("combobox", name="Annotators of this project")
    for who in ("ana@example.org", "bob@example.org"):
        team.click()
        team.fill(who)
        lead.get_by_role("option", name=who).click()
    lead.keyboard.press("Escape")
    lead.get_by_role("listbox").wait_for(state="hidden")  # else the click only closes it
    saves = 0
    for saves in range(1, 4):  # noqa: B007 - the count is printed  # a press that arrives while the page runs can be dropped
        lead.get_by_role("button", name="Save the team").click()
        try:
            wait_text(lead, "assigned to ana@example.org, bob@example.org", timeout=20_000)
            break
        except sync_api.TimeoutError:
            continue
    print(f"Save the team: {saves} press(es)")
    (project,) = _store(srv).projects()
    from certlib.labelling.team import TeamStore
    team_store = TeamStore(srv.env["CERTLIB_STORE"])
    for _ in range(60):  # the form's run may still be saving
        if team_store.assigned(project.id):
            break
        lead.wait_for_timeout(500)
    if team_store.assigned(project.id) != ("ana@example.org", "bob@example.org"):
        lead.screenshot(path="/tmp/team_lead.png", full_page=True)
    assert team_store.assigned(project.id) == ("ana@example.org", "bob@example.org")

    # ana and bob open it; the candidates' answers are hidden from them
    ana.goto(srv.url + "/Label")
    ctx_b, bob = _signed_in(browser, srv, "bob@example.org", "/Label")
    pages = {"ana@example.org": ana, "bob@example.org": bob}
    rows = {}
    for who, p in pages.items():
        try:
            wait_text(p, f"Labelling as {who}")
        except Exception:
            p.screenshot(path=f"/tmp/team_{who}.png", full_page=True)
            raise
        rows[who] = panel_row(p)
        record_rows_at_keydown(p)
        assert p.get_by_text("confidence").count() == 0
    assert rows["ana@example.org"] != rows["bob@example.org"]

    # another project's address is refused
    carol_url = srv.url + f"/Label?project={project.id + 7}"
    ctx_x = browser.new_context()
    x = ctx_x.new_page()
    x.goto(carol_url)
    sign_in(x, "ana@example.org")
    wait_text(x, "Signed in as ana@example.org")
    x.goto(carol_url)
    wait_text(x, f"Project {project.id + 7} is not assigned to you")
    ctx_x.close()

    # both press at the same pace, turn by turn, a key every 1.5 s each (a person reading
    # a row); what each panel says after each press is kept
    presses, said = 15, {w: [] for w in pages}
    for i in range(presses):
        for who, p in pages.items():
            p.keyboard.press("0" if i % 3 else "1")
            said[who].append(panel_message(p))
        ana.wait_for_timeout(1500)
    for p in pages.values():
        p.wait_for_timeout(2500)  # the last answers reach the store
    store = _store(srv)
    labels = store.labels(project.id)
    by = {w: [e for e in labels if e.annotator == w] for w in pages}
    for who, p in pages.items():
        seen = [r for r in rows_seen(p)]
        assert len(seen) == presses
        # a refusal is the panel's "still being saved" (the server a press behind on a busy
        # machine), said on screen: measured 15 of 15 saved each idle, 9 to 13 with a
        # CPU burner beside the server, Chromium and the provider on 2 cores
        assert len(by[who]) >= presses // 2, (who, len(by[who]), [m for m in said[who] if m])
        print(f"{who}: {len(by[who])} of {presses} presses saved")
        # no press was refused because the other annotator took its row
        assert not any("meanwhile" in m or "another annotator" in m for m in said[who]), said
        # every label saved is for a row that was on that annotator's screen at the press
        assert {str(e.row_id) for e in by[who]} <= set(seen)
    assert len({e.row_id for e in labels}) == len(labels)  # no row labelled twice
    ev = store.events(project.id)
    subjects = {e.annotator: getattr(e, "subject", None) for e in ev}
    for who in pages:
        assert subjects[who] in (ACCOUNTS[who], None)
    # signing out hands bob's rows back at once; ana's stay hers
    assert {"ana@example.org", "bob@example.org"} <= set(team_store.holders(project.id))
    idle(bob)
    sign_out(bob)
    wait_text(bob, "Sign in with your organisation")
    assert "bob@example.org" not in team_store.holders(project.id)
    assert "ana@example.org" in team_store.holders(project.id)
    for c in (ctx_a, ctx_b, ctx_l):
        c.close()
