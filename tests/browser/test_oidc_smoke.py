"""Sign-in end to end in headless Chromium: Streamlit's ``st.login`` against a real
OpenID Connect provider on 127.0.0.1 (``tests/oidc/provider.js``, oidc-provider on Node),
with a minimal script rather than the dashboard: ana signs in and the app sees her
e-mail and subject, signs out, and bob signs in from a fresh browser context.

Needs Debian's chromium at /usr/bin/chromium, Node 20+ and the provider's npm packages
(run_tests.sh runs ``npm ci --prefix tests/oidc``).
"""

from __future__ import annotations

import time

import pytest

from browser_support import Server, launch, require_chromium, wait_text
from oidc_support import oidc_provider, secrets_env, sign_in, sign_out, write_secrets

sync_api = require_chromium()
pytestmark = pytest.mark.slow

WAIT = 90_000

SCRIPT = """\
import streamlit as st

if not st.user.is_logged_in:
    st.text("state: signed out")
    if st.button("Sign in"):
        st.login()
else:
    st.text(f"email: {st.user.email}")
    st.text(f"sub: {st.user.sub}")
    if st.button("Sign out"):
        st.logout()
"""


@pytest.fixture(scope="module")
def signed_app(tmp_path_factory):
    """The script's server and the provider it signs in with."""
    tmp = tmp_path_factory.mktemp("oidc")
    script = tmp / "signin_app.py"
    script.write_text(SCRIPT)
    srv = Server(tmp / "labels.db", script)
    with oidc_provider([srv.port]) as op:
        srv.env.update(secrets_env(write_secrets(tmp / "secrets.toml", op, srv.port)))
        srv.start()
        try:
            yield srv, op
        finally:
            srv.stop()


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


def _open(browser, url):
    ctx = browser.new_context(viewport={"width": 1000, "height": 800})
    page = ctx.new_page()
    page.goto(url)
    wait_text(page, "state: signed out", WAIT)
    return ctx, page


def test_sign_in_sign_out_and_another_user(signed_app, browser):
    srv, op = signed_app
    t0 = time.monotonic()
    ctx, page = _open(browser, srv.url)
    sign_in(page, "ana@example.org", timeout=WAIT)
    wait_text(page, "email: ana@example.org", WAIT)
    wait_text(page, "sub: ana-1", WAIT)
    t_in = time.monotonic()
    assert any(c["name"].startswith("_streamlit_user") for c in ctx.cookies(srv.url))

    sign_out(page, timeout=WAIT)
    wait_text(page, "state: signed out", WAIT)
    assert page.get_by_text("ana@example.org").count() == 0
    assert not any(c["name"].startswith("_streamlit_user") for c in ctx.cookies(srv.url))
    page.reload()  # still signed out on a fresh run
    wait_text(page, "state: signed out", WAIT)
    t_out = time.monotonic()
    ctx.close()

    ctx, page = _open(browser, srv.url)
    sign_in(page, "bob@example.org", timeout=WAIT)
    wait_text(page, "email: bob@example.org", WAIT)
    wait_text(page, "sub: bob-1", WAIT)
    assert page.get_by_text("ana@example.org").count() == 0
    ctx.close()
    t_end = time.monotonic()
    print(f"\noidc smoke: ana signed in {t_in - t0:.1f} s, signed out {t_out - t_in:.1f} s, "
          f"bob signed in {t_end - t_out:.1f} s")
