"""Where the repository is, and modules outside packages loaded by their path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def repo_module(relpath: str, name: str) -> ModuleType:
    """Import the file ``ROOT / relpath`` as module ``name`` (once per process).

    Used for the sample-data generator (``sample_data/make_sample_data.py``) and the
    browser tests' helpers (``tests/browser_support.py``), which are scripts and test
    support, not packages.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {relpath}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def sample_data_generator() -> ModuleType:
    """``sample_data/make_sample_data.py`` (``make_panels`` builds paper section 6.1 pools)."""
    return repo_module("sample_data/make_sample_data.py", "certlib_make_sample_data")


def browser_support() -> ModuleType:
    """``tests/browser_support.py``: Chromium's path and flags and the panel's selectors,
    shared with the browser tests so that the bench drives the page the tests check."""
    return repo_module("tests/browser_support.py", "certlib_browser_support")
