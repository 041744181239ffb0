"""Importing a core module loads only what it needs: the
package's public names are imported on first use, so labelling code and the
CLI's start-up do not pay for polars or the audit."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded(code: str) -> set:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                          "print(' '.join(sorted(m for m in sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("module", ["certlib", "certlib.core.weights", "certlib.labelling.session",
                                    "certlib.labelling.replay", "certlib.cli"])
def test_core_modules_do_not_load_polars_or_the_audit(module):
    mods = _loaded(f"import {module}")
    assert "polars" not in mods, module
    assert "certlib.audit" not in mods, module
    if module in ("certlib", "certlib.core.weights", "certlib.labelling.session"):
        assert "scipy" not in mods, module  # HiGHS and scipy.special load when used


def test_public_names_resolve_on_first_use():
    import certlib

    for name in certlib.__all__:
        assert getattr(certlib, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        certlib.no_such_name  # noqa: B018
    mods = _loaded("import certlib\ncertlib.load_pool")
    assert "polars" in mods


def test_replay_stays_the_function_whatever_is_imported_first():
    """``certlib.replay`` is the function even after ``certlib.labelling.replay``, the module,
    has been imported by another module (a lazy name would be overwritten)."""
    mods = _loaded("import certlib.teaching.bound_traces, certlib\n"
                   "assert callable(certlib.replay), certlib.replay")
    assert "certlib.labelling.replay" in mods
