"""Pieces shared by the Streamlit pages (app.py, views/), one concept per module:
`text` (text made inert, outward rounding), `pool_picker` (the active pool and
uploads), `state` (values kept across runs, pages and reloads), `inputs` (number boxes
and press guards), `cache` (cached library calls keyed by the pool), `keys` (keyboard
shortcuts), `links` (links to other pages), `label_panel` (the labelling panel, in the
browser), `label_errors` (label-error sections), `known_labels` (the planning pages'
"Labels known" box) and `live_forecast` with its `forecast_worker` process (the Label
page's forecast).  Thin by design: every number comes from the certlib library."""
