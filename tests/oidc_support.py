"""Sign-in for the browser tests: a real OpenID Connect provider on 127.0.0.1 and
Streamlit's own ``st.login`` against it.

The provider is the npm package ``oidc-provider`` (``tests/oidc/provider.js``; run_tests.sh
installs it with ``npm ci --prefix tests/oidc``; needs Node 20+).  Its development login
form signs anyone in as a test account by e-mail, any password:

========================  ==========
login (e-mail)            ``sub``
========================  ==========
``lead@example.org``      ``lead-1``
``ana@example.org``       ``ana-1``
``bob@example.org``       ``bob-1``
``carol@example.org``     ``carol-1``
``eve@example.org``       ``eve-1`` (``email_verified`` false)
========================  ==========

Each has the claims ``email``, ``email_verified`` and ``name``, in the ID token too, so
``st.user.email`` is set.  Typical use (the app's port must be known before the provider
starts: it is the client's redirect URI)::

    srv = Server(store)                              # browser_support: picks a free port
    with oidc_provider([srv.port]) as op:
        secrets = write_secrets(tmp_path / "secrets.toml", op, srv.port)
        srv.env.update(secrets_env(secrets))         # STREAMLIT_SECRETS_FILES
        srv.start()
        page.goto(srv.url)
        sign_in(page, "ana@example.org")
        ...
        sign_out(page)

The secrets file lives outside the project (Streamlit's ``secrets.files`` option, given
by the environment variable ``STREAMLIT_SECRETS_FILES`` or the flag ``--secrets.files``),
so the tests never write into the project's ``.streamlit/``.
"""

from __future__ import annotations

import os
import re
import secrets as _secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from browser_support import ROOT, free_port

PROVIDER_DIR = ROOT / "tests" / "oidc"
PROVIDER_JS = PROVIDER_DIR / "provider.js"

#: the provider's test accounts: e-mail -> sub
ACCOUNTS = {
    "lead@example.org": "lead-1",
    "ana@example.org": "ana-1",
    "bob@example.org": "bob-1",
    "carol@example.org": "carol-1",
    "eve@example.org": "eve-1",  # email_verified false
}


def redirect_uri(app_port: int) -> str:
    """Streamlit's OIDC callback of an app on ``app_port`` at 127.0.0.1."""
    return f"http://127.0.0.1:{app_port}/oauth2callback"


@dataclass
class Provider:
    """A running provider (`start_provider`); ``stop()`` ends it."""

    issuer: str
    port: int
    client_id: str
    client_secret: str
    redirect_uris: list[str]
    proc: subprocess.Popen = field(repr=False)
    _stderr: list[str] = field(default_factory=list, repr=False)

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    @property
    def stderr(self) -> str:
        """What the provider has written to stderr so far (warnings, errors)."""
        return "".join(self._stderr)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def _drain(stream, sink: list[str]) -> None:
    for line in iter(stream.readline, ""):
        sink.append(line)
    stream.close()


def start_provider(app_ports: Iterable[int] = (), *, redirect_uris: Iterable[str] = (),
                   client_id: str = "certlib-dashboard", client_secret: str | None = None,
                   port: int | None = None, timeout: float = 20.0) -> Provider:
    """Start ``tests/oidc/provider.js`` on 127.0.0.1 (a free port unless ``port``) with one
    client whose redirect URIs are ``redirect_uri(p)`` for each of ``app_ports`` plus
    ``redirect_uris``; return once it prints ``READY``.  Raises RuntimeError with the
    provider's stderr if it does not within ``timeout`` seconds (or if node or the npm
    packages are missing).  Stop it with ``Provider.stop()``, or use `oidc_provider`."""
    uris = [redirect_uri(p) for p in app_ports] + list(redirect_uris)
    if not uris:
        raise ValueError("start_provider needs at least one app port or redirect URI")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is missing: the sign-in tests need Node 20+ and npm")
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        raise RuntimeError("tests/oidc/node_modules is missing: run "
                           "`npm ci --prefix tests/oidc` (run_tests.sh does)")
    port = free_port() if port is None else port
    issuer = f"http://127.0.0.1:{port}"
    client_secret = client_secret or _secrets.token_hex(16)
    cmd = [node, str(PROVIDER_JS), "--port", str(port), "--issuer", issuer,
           "--client-id", client_id, "--client-secret", client_secret]
    for uri in uris:
        cmd += ["--redirect-uri", uri]
    proc = subprocess.Popen(cmd, cwd=PROVIDER_DIR, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NODE_ENV="test"))
    prov = Provider(issuer, port, client_id, client_secret, uris, proc)
    threading.Thread(target=_drain, args=(proc.stderr, prov._stderr), daemon=True).start()
    ready = threading.Event()

    def _watch_stdout():
        for line in iter(proc.stdout.readline, ""):
            if line.startswith("READY "):
                ready.set()
        proc.stdout.close()

    threading.Thread(target=_watch_stdout, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not ready.wait(0.1):
        if proc.poll() is not None or time.monotonic() > deadline:
            died = proc.poll() is not None
            prov.stop()
            time.sleep(0.2)  # let the reader thread collect the last of stderr
            why = f"exited with {proc.returncode}" if died else f"not ready in {timeout:g} s"
            raise RuntimeError(f"the OIDC test provider {why}:\n{prov.stderr}")
    return prov


@contextmanager
def oidc_provider(app_ports: Iterable[int] = (), **kwargs) -> Iterator[Provider]:
    """`start_provider` as a context manager: the provider stops on exit."""
    prov = start_provider(app_ports, **kwargs)
    try:
        yield prov
    finally:
        prov.stop()


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_secrets(path: Path, provider: Provider, app_port: int, *,
                  cookie_secret: str | None = None, extra: str = "") -> Path:
    """Write a Streamlit secrets file with the ``[auth]`` section for an app on
    127.0.0.1:``app_port`` signing in with ``provider``; ``extra`` (TOML) is appended.
    Returns ``path``; give it to Streamlit with `secrets_env` or `secrets_args`."""
    path = Path(path)
    cookie_secret = cookie_secret or _secrets.token_hex(32)
    text = "\n".join([
        "[auth]",
        f"redirect_uri = {_toml_str(redirect_uri(app_port))}",
        f"cookie_secret = {_toml_str(cookie_secret)}",
        f"client_id = {_toml_str(provider.client_id)}",
        f"client_secret = {_toml_str(provider.client_secret)}",
        f"server_metadata_url = {_toml_str(provider.metadata_url)}",
        # Streamlit's default prompt ("select_account") is refused by oidc-provider
        'client_kwargs = { prompt = "login" }',
        "",
    ])
    path.write_text(text + (("\n" + extra.strip() + "\n") if extra.strip() else ""))
    return path


def secrets_env(path: Path) -> dict[str, str]:
    """Environment for ``streamlit run`` to read its secrets from ``path`` only (not from
    the project's or the user's ``.streamlit/secrets.toml``)."""
    path = str(Path(path).resolve())
    if any(c.isspace() for c in path):  # the variable is a whitespace-separated list
        raise ValueError(f"secrets path with a space: {path!r}; use secrets_args")
    return {"STREAMLIT_SECRETS_FILES": path}


def secrets_args(path: Path) -> list[str]:
    """The same as `secrets_env`, as ``streamlit run`` flags."""
    return ["--secrets.files", str(Path(path).resolve())]


def _origin(url: str) -> str:
    m = re.match(r"https?://[^/]+", url)
    if m is None:
        raise ValueError(f"the page is not on the app: {url}")
    return m.group(0)


def _on_app(url: str, app_url: str) -> bool:
    return url == app_url or url.startswith(app_url + "/")


def _back_on_app(url: str, app_url: str) -> bool:
    return _on_app(url, app_url) and "/oauth2callback" not in url and "/auth/" not in url


def sign_in(page, email: str, *, button: str | re.Pattern = "Sign in",
            timeout: float = 60_000) -> None:
    """With ``page`` on the app (signed out), press the app's button whose text contains
    ``button``, sign in on the provider's development login form as ``email`` (and grant
    its consent page), and wait until the browser is back on the app.  Does not wait for
    the app's own rerun: wait for what the signed-in app shows."""
    app_url = _origin(page.url)
    page.get_by_role("button", name=button).first.click(timeout=timeout)
    page.wait_for_url(lambda u: not _on_app(u, app_url), timeout=timeout)
    deadline = time.monotonic() + timeout / 1000
    while True:
        page.wait_for_load_state("domcontentloaded", timeout=timeout)
        if _on_app(page.url, app_url):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"sign-in as {email} did not get back to {app_url}: "
                               f"at {page.url}")
        login = page.locator('input[name="login"]')
        consent = page.locator('form:has(input[name="prompt"][value="consent"]) button')
        error = page.get_by_text("oops! something went wrong")
        login.or_(consent).or_(error).first.wait_for(timeout=timeout)
        if error.count():
            raise RuntimeError(f"the OIDC provider refused the sign-in as {email}: "
                               + page.locator("body").inner_text())
        # each form posts and is redirected to the next page: wait for that navigation
        # (an error page can come back at the form's own address)
        with page.expect_navigation(wait_until="commit", timeout=timeout):
            if login.count():
                login.fill(email)
                page.locator('input[name="password"]').fill("test")  # any password
                page.get_by_role("button", name="Sign-in").click(timeout=timeout)
            else:
                consent.first.click(timeout=timeout)  # "Continue"
    page.wait_for_url(lambda u: _back_on_app(u, app_url), timeout=timeout)


def sign_out(page, *, button: str | re.Pattern = re.compile("Sign out|Log out", re.I),
             timeout: float = 60_000) -> None:
    """Press the app's sign-out button (``st.logout``); Streamlit sends the browser to the
    provider's end-session page, which asks to confirm: confirm it, and wait until the
    browser is back on the app.  The provider's session ends too, so the next `sign_in`
    in the same browser context shows its login form again."""
    app_url = _origin(page.url)
    page.get_by_role("button", name=button).first.click(timeout=timeout)
    page.wait_for_url(lambda u: not _on_app(u, app_url), timeout=timeout)
    page.wait_for_load_state("domcontentloaded", timeout=timeout)
    if not _on_app(page.url, app_url):
        yes = page.get_by_role("button", name="Yes, sign me out")
        yes.click(timeout=timeout)
    page.wait_for_url(lambda u: _back_on_app(u, app_url), timeout=timeout)
