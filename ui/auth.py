"""Who is using the dashboard.

Signed in: when ``.streamlit/secrets.toml`` has an ``[auth]`` section, every visitor signs
in through the deployment's OpenID Connect provider (Streamlit's ``st.login``); their
identity is the provider's subject and e-mail, and their role comes from the
``[certlib.roles]`` lists of e-mail addresses (`certlib.labelling.team.Roles`): a lead sees
every page, an annotator the Label page for the projects assigned to them.

Local mode: without ``[auth]``, the dashboard is for one machine (the shipped config binds
127.0.0.1) and an annotator is a name typed in the sidebar; every page says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from certlib.errors import CertlibError
from certlib.labelling.events import Identity
from certlib.labelling.team import Roles, TeamStore
from ui.text import plain

__all__ = ["User", "auth_configured", "gate", "roles", "signed_in_user"]


@dataclass(frozen=True)
class User:
    """A signed-in visitor: e-mail (lower case), the provider's subject and issuer, the
    role (``"lead"``, ``"annotator"`` or None) and a display name."""

    email: str
    subject: str
    issuer: str | None
    role: str | None
    name: str
    verified: bool = True

    @property
    def lead(self) -> bool:
        return self.role == "lead"

    @property
    def annotator(self) -> Identity:
        """The identity the label store records on every event this user appends: the
        e-mail shown, the provider's subject and issuer beside it."""
        return Identity(self.email, subject=self.subject or None, issuer=self.issuer)


def _secrets() -> dict:
    try:
        return dict(st.secrets)
    except (FileNotFoundError, OSError):  # no secrets file: local mode
        return {}
    except Exception as exc:  # a secrets file that is not TOML: said, then local mode off
        st.error(f"The secrets file cannot be read: {plain(exc)}")
        st.stop()


def auth_configured() -> bool:
    """Whether the deployment has sign-in (an ``[auth]`` section in the secrets)."""
    return "auth" in _secrets()


def roles() -> Roles:
    """The ``[certlib.roles]`` lists; a malformed list stops the page with one message."""
    section = _secrets().get("certlib", {})
    try:
        return Roles.from_mapping(dict(section.get("roles", {})))
    except CertlibError as exc:
        st.error(f"The roles in .streamlit/secrets.toml cannot be read: {plain(exc)}. "
                 "Nobody can sign in until a lead fixes them (see the team guide).")
        st.stop()
        raise  # st.stop raises; this line is for the type checker


def _accept_unverified() -> bool:
    """``[certlib] accept_unverified_email = true``: for a provider that vouches for every
    e-mail it sends without an ``email_verified`` claim (docs/team.md says when)."""
    return _secrets().get("certlib", {}).get("accept_unverified_email") is True


def signed_in_user() -> User | None:
    """The signed-in visitor, or None (local mode, or not signed in).  Roles go by
    e-mail, so an e-mail the provider does not say it verified (``email_verified``) gives
    no role: on a provider where anyone can register any address, it would make anyone
    a lead."""
    if not auth_configured() or not st.user.is_logged_in:
        return None
    email = str(st.user.get("email") or "").strip().lower()
    subject = str(st.user.get("sub") or "")
    verified = st.user.get("email_verified") is True or _accept_unverified()
    return User(email=email, subject=subject, issuer=st.user.get("iss"),
                role=roles().role_of(email) if email and verified else None,
                name=str(st.user.get("name") or email), verified=verified)


def _sign_out(email: str, store_path) -> None:
    try:
        TeamStore(store_path).release(None, email)  # their rows go back to the team now
    except CertlibError:
        pass  # a store that cannot be written: the holds run out by themselves
    st.logout()


def gate() -> User | None:
    """Before any page: in local mode, say so and return None; with sign-in, show the
    sign-in screen until the visitor is signed in with a role, then their `User`."""
    if not auth_configured():
        st.sidebar.caption(
            ":material/lock_open: **Local mode**: no sign-in. Anyone who can open this "
            "address labels under any name; the dashboard listens on this machine only. "
            "For a team, set up sign-in (Documentation: Team).")
        return None
    if not st.user.is_logged_in:
        st.title("certlib")
        st.markdown("This dashboard is for its team only. Sign in with your organisation's "
                    "account; your labels are recorded under it.")
        st.button("Sign in", type="primary", on_click=st.login, key="sign_in")
        st.stop()
    user = signed_in_user()
    assert user is not None
    from certlib.labelling.store import default_store_path
    box = st.sidebar.container()
    box.caption(f":material/person: Signed in as **{plain(user.email or user.subject)}**"
                + (f" ({user.role})" if user.role else ""))
    box.button("Sign out", key="sign_out", on_click=_sign_out,
               args=(user.email, default_store_path()))
    if not user.email:
        st.error("Your identity provider did not send an e-mail address, and roles are "
                 "given by e-mail: ask the person who set up sign-in to release the e-mail "
                 "claim to this application.")
        st.stop()
    if user.role is None:
        st.title("No access yet")
        if not user.verified:
            st.markdown(f"You are signed in as **{plain(user.email)}**, but your identity "
                        "provider does not say it verified this address (its "
                        "`email_verified` claim), and roles are given by address. Ask the "
                        "person who set up sign-in (see the team guide).")
        else:
            st.markdown(f"You are signed in as **{plain(user.email)}**, which has no role on "
                        "this server. Ask a lead to add your address to the team.")
        st.stop()
    return user
