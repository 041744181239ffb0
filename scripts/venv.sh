# Sourced by run_app.sh and run_tests.sh: choose the Python to install into.
#
# An activated virtual environment ($VIRTUAL_ENV) is used as it is (CI makes a
# fresh one); otherwise the project's own .venv is created or reused, so that the
# commands work where pip refuses the system Python (PEP 668) and where it does
# not.  Where `python3 -m venv` cannot work (Debian without python3-venv), the
# package is installed with apt-get, as the browser is.

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

project_python() {
  if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    echo "$VIRTUAL_ENV/bin/python"
    return
  fi
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    local base="${PYTHON:-$(command -v python3 || command -v python)}"
    rm -rf .venv
    if ! "$base" -m venv .venv >/dev/null 2>&1; then
      rm -rf .venv
      local ver
      ver="$("$base" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
      apt_install python3-venv "python${ver}-venv" >&2 || apt_install python3-venv >&2
      "$base" -m venv .venv >&2
    fi
  fi
  echo "$PWD/.venv/bin/python"
}
