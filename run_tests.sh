#!/usr/bin/env bash
# The whole test suite on a fresh machine.  Installs Debian's chromium for the
# browser tests (Playwright never downloads a browser) and python3-venv where it
# is missing, creates or reuses .venv (or uses an activated venv), installs the
# dashboard's requirements and certlib with its test extra at the versions in
# constraints.txt (CERTLIB_UNPINNED=1: the versions pip resolves today), installs the
# OpenID Connect provider the sign-in tests run (tests/oidc, the npm package
# oidc-provider at the versions in its package-lock.json; needs Node.js 20+ and npm,
# which it does not install), runs ruff and the strict type check of the library
# (both configured in pyproject.toml),
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
if ! command -v node >/dev/null || ! command -v npm >/dev/null \
   || ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
  echo "run_tests.sh: Node.js 20+ and npm are needed (the sign-in tests run an OpenID" \
       "Connect provider, tests/oidc); found node $(node --version 2>/dev/null || echo none)," \
       "npm $(npm --version 2>/dev/null || echo none)" >&2
  exit 1
fi
# npm ci only when the lock file is newer than the install: it empties node_modules first
if [ ! -d tests/oidc/node_modules/oidc-provider ] \
   || [ tests/oidc/package-lock.json -nt tests/oidc/node_modules/.package-lock.json ]; then
  npm ci --prefix tests/oidc --no-audit --no-fund --loglevel=error >/dev/null
fi
"$PY" -m ruff check .
"$PY" -m mypy
NO_MKDOCS_2_WARNING=1 "$PY" -m mkdocs build --strict --quiet
"$PY" -m pytest -q "$@"
