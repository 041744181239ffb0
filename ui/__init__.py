"""Pieces shared by the Streamlit pages (app.py, views/), one concept per module:
`text` (text made inert, outward rounding), `pool_picker` (the active pool and
uploads), `state` (values kept across runs, pages and reloads), `inputs` (number boxes
and press guards), `cache` (cached library calls keyed by the pool), `keys` (keyboard
shortcuts), `links` (links to other pages), `label_panel` (the labelling panel, in the
browser) and `label_errors` (label-error sections).  Thin by design: every number
comes from the certlib library."""
