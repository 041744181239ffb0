"""certlib dashboard: the frame shared by every page.

Run: streamlit run app.py --server.address 127.0.0.1

The navigation is built once here (Streamlit's multipage guidance): every page
has a title and an icon, grouped by task.  Page files only draw.
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="certlib", page_icon=":material/verified:", layout="wide")

PAGES = {
    "Model choice": [
        st.Page("pages/home.py", title="Plan and certify", icon=":material/calculate:",
                url_path="plan", default=True),
        st.Page("pages/2_Label.py", title="Label", icon=":material/edit_note:",
                url_path="Label"),
    ],
    "Teach": [
        st.Page("pages/1_Teaching_figure.py", title="Figure 10: bounds as labels arrive",
                icon=":material/school:", url_path="Teaching_figure"),
    ],
}

st.navigation(PAGES).run()
