#!/usr/bin/env bash
# The whole test suite on a fresh machine.  Installs Debian's chromium for the
# browser tests (Playwright never downloads a browser) and python3-venv where it
# is missing, creates or reuses .venv (or uses an activated venv), installs the
# dashboard's requirements and certlib with its test extra at the versions in
# constraints.txt (CERTLIB_UNPINNED=1: the versions pip resolves today), runs
# ruff and the strict type check of the library (both configured in pyproject.toml),
# builds the documentation into site/ with warnings as errors, then runs pytest.
# Extra arguments go to pytest (-m "not slow": the quick lane).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/venv.sh
[ -x /usr/bin/chromium ] || apt_install chromium
PY="$(project_python)"
PIN=(-c constraints.txt)
[ "${CERTLIB_UNPINNED:-0}" = 1 ] && PIN=()
"$PY" -m pip install -q --disable-pip-version-check "${PIN[@]}" -r requirements.txt -e ".[test]"
"$PY" -m ruff check .
"$PY" -m mypy
NO_MKDOCS_2_WARNING=1 "$PY" -m mkdocs build --strict --quiet
"$PY" -m pytest -q "$@"
