#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs Debian's chromium (for the
# browser tests; Playwright never downloads a browser), the Python requirements
# and certlib itself, then runs pytest.  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
PY="${PYTHON:-$(command -v python3 || command -v python)}"
"$PY" -m pip install -q --disable-pip-version-check -r requirements.txt
"$PY" -m pip install -q --disable-pip-version-check -e .
"$PY" -m pytest -q "$@"
