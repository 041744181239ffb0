"""Links and buttons from one page of the dashboard to another."""

from __future__ import annotations

import streamlit as st

from ui.state import choose_shared


def page_link(page: str, label: str, icon: str | None = None) -> None:
    """A link to another page of the dashboard (``views/NAME.py``).  When the page runs
    on its own (outside app.py's navigation, e.g. in AppTest) there is nothing to link
    to, so nothing is drawn."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(page, label=label, icon=icon)
    except (StreamlitAPIException, KeyError):  # KeyError: streamlit 1.62's AppTest
        pass


def page_button(page: str, label: str, key: str, settings: dict, icon: str | None = None,
                container=None) -> None:
    """A button that opens another page with some of its settings chosen: ``settings``
    maps `sticky` names to values, e.g. the Certificate page's label source."""
    from streamlit.errors import StreamlitAPIException

    if (container or st).button(label, key=key, icon=icon):
        choose_shared(settings)
        try:
            st.switch_page(page)
        except StreamlitAPIException:  # the page runs on its own (AppTest): stay
            pass
