#!/usr/bin/env bash
# The whole test suite on a fresh machine.  Installs Debian's chromium for the
# browser tests (Playwright never downloads a browser) and python3-venv where it
# is missing, creates or reuses .venv (or uses an activated venv), installs the
# dashboard's requirements and certlib with its test extra at the versions in
# constraints.txt (CERTLIB_UNPINNED=1: the versions pip resolves today), runs
# ruff (configured in pyproject.toml), then pytest.  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/venv.sh
[ -x /usr/bin/chromium ] || apt_install chromium
PY="$(project_python)"
PIN=(-c constraints.txt)
[ "${CERTLIB_UNPINNED:-0}" = 1 ] && PIN=()
"$PY" -m pip install -q --disable-pip-version-check "${PIN[@]}" -r requirements.txt -e ".[test]"
"$PY" -m ruff check .
"$PY" -m pytest -q "$@"
