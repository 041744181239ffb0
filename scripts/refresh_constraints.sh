#!/usr/bin/env bash
# Run the whole suite with the versions pip resolves today (no pins) and, when it
# passes, write them to constraints.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
CERTLIB_UNPINNED=1 bash run_tests.sh "$@"
. scripts/venv.sh
PY="$(project_python)"
{
  echo "# Exact versions of the last green run of the whole suite (bash run_tests.sh)."
  echo "# Refresh: bash scripts/refresh_constraints.sh"
  "$PY" -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^certlib'
} > constraints.txt
echo "constraints.txt refreshed ($(grep -vc '^#' constraints.txt) packages)"
