#!/usr/bin/env bash
# Start the dashboard on the shipped sample data: creates or reuses .venv (or
# uses an activated venv), installs requirements.txt, runs Streamlit on
# 127.0.0.1.  Extra arguments go to `streamlit run`.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/venv.sh
PY="$(project_python)"
"$PY" -m pip install -q --disable-pip-version-check -r requirements.txt
exec "$PY" -m streamlit run app.py --server.address 127.0.0.1 "$@"
