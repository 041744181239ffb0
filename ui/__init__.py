"""Helpers shared by the Streamlit pages (app.py, pages/): choosing a pool and
showing errors.  Thin by design: every number comes from the certlib library."""
