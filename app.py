"""certlib dashboard: the frame shared by every page.

Run: streamlit run app.py   (or: bash run_app.sh; .streamlit/config.toml binds 127.0.0.1)

The navigation is built once here (Streamlit's multipage guidance): every page
has a title and an icon, grouped by task in the order a user follows them: pick
a pool, plan a budget, label, read the certificate.  The active pool is shared
by every page (ui.pool_picker.choose_pool).  Page files only draw.  With sign-in
configured (ui.auth), a visitor signs in first, and an annotator's navigation is the
Label page alone.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui.auth import gate
from ui.state import sync_url_settings


def _icon():
    """The page icon drawn here: a Material icon name or an emoji makes every browser
    fetch the icon from an outside host, a request no private deployment should make."""
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.ellipse((4, 4, 60, 60), fill=(46, 125, 50, 255))
    draw.line((18, 33, 28, 44, 47, 21), fill=(255, 255, 255, 255), width=7, joint="curve")
    return img


st.set_page_config(page_title="certlib", page_icon=_icon(), layout="wide")

# The page files live in views/, not in the pages/ folder Streamlit's own multipage
# scheme reads: with a pages/ folder, when a fresh server's first request is a page's
# address (/replay), Streamlit 1.67 lists the folder's file names in the sidebar instead of
# this navigation (measured in Chromium).  The addresses are the url paths below.
PAGES_DIR = Path(__file__).resolve().parent / "views"
# the documentation site, built by `mkdocs build` (run_app.sh does it once) and served
# from ./static, a link to site/ (.streamlit/config.toml turns static serving on)
DOCS_INDEX = Path(__file__).resolve().parent / "site" / "index.html"
MODEL_CHOICE = [
    ("pool.py", "Pool", ":material/table:", "pool"),
    ("plan_certify.py", "Plan and certify", ":material/calculate:", "plan"),
    ("budget.py", "Budget map and forecast", ":material/grid_on:", "budget"),
    ("replay.py", "Replay a policy", ":material/slideshow:", "replay"),
    ("label.py", "Label", ":material/edit_note:", "Label"),
    ("certificate.py", "Certificate", ":material/workspace_premium:", "certificate"),
]
TEACH = [
    ("teach_figure1.py", "Figure 1: same predictions", ":material/looks_one:", "figure1"),
    ("teach_figure2.py", "Figure 2: the test step by step", ":material/looks_two:", "figure2"),
    ("teach_figure3.py", "Figure 3: covering every rival", ":material/looks_3:", "figure3"),
    ("teach_figure10.py", "Figure 10: bounds as labels arrive", ":material/school:",
     "Teaching_figure"),
    ("teach_theory.py", "Theory explorer", ":material/functions:", "theory"),
]
AUDIT = [("audit.py", "Audit a model update", ":material/rule:", "audit")]


def _leads_only():
    st.title("For leads only")
    st.markdown("This page is for the team's leads. Your page is **Label**, with the "
                "projects assigned to you.")
    st.page_link(label[1], label="Open the Label page", icon=":material/edit_note:")


def _pages(entries, default=None):
    return [st.Page(f"views/{f}", title=t, icon=i, url_path=u, default=(u == default))
            for f, t, i, u in entries if (PAGES_DIR / f).exists()]


user = gate()  # local mode (None), or a signed-in user with a role (else it stops here)
st.session_state["_user"] = user
if user is not None and not user.lead:
    # an annotator's dashboard is the Label page, for the projects assigned to them, at
    # the root and at its own address (a lead's link); a lead page's address says so
    label = [st.Page("views/label.py", title="Label", icon=":material/edit_note:",
                     url_path=path, default=path == "home") for path in ("home", "Label")]
    page = st.navigation(label + [st.Page(_leads_only, title=t, url_path=u)
                                  for _, t, _, u in MODEL_CHOICE + TEACH + AUDIT
                                  if u != "Label"], position="hidden")
else:
    page = st.navigation({
        "Model choice": _pages(MODEL_CHOICE, default="plan"),
        "Teach": _pages(TEACH),
        "Update audit": _pages(AUDIT),
    })
if DOCS_INDEX.exists():
    st.sidebar.markdown("[:material/menu_book: Documentation](app/static/index.html)")
else:
    st.sidebar.caption("Documentation: `mkdocs build` writes it into site/ "
                       "(`bash run_app.sh` does it once).")
st.session_state["_page"] = page.url_path  # an upload's error stays on its own page
sync_url_settings()  # the shared settings stay in the address on every page (reloads keep them)
# every run of any page counts: a page can tell "the run just before this one was mine"
st.session_state["_run"] = st.session_state.get("_run", 0) + 1
page.run()
