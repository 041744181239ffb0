#!/usr/bin/env bash
# Start the dashboard on the shipped sample data: creates or reuses .venv (or
# uses an activated venv), installs requirements.txt, builds the documentation
# into site/ the first time (the sidebar links to it), runs Streamlit on
# 127.0.0.1.  Extra arguments go to `streamlit run`.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/venv.sh
PY="$(project_python)"
"$PY" -m pip install -q --disable-pip-version-check -r requirements.txt
if [ ! -f site/index.html ]; then
  echo "Building the documentation into site/ (once)..."
  { "$PY" -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[docs]" &&
    NO_MKDOCS_2_WARNING=1 "$PY" -m mkdocs build --quiet; } ||
    echo "The documentation could not be built; the dashboard runs without it."
fi
exec "$PY" -m streamlit run app.py --server.address 127.0.0.1 "$@"
