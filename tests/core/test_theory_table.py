"""The Theory explorer's shipped table (certlib/teaching/_theory_table.py) is what the
library computes: rendered again by its script and compared with the file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from certlib.teaching import _theory_table as shipped
from certlib.teaching.theory import random_orders, shipped_random_orders

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location(
        "certlib_make_theory_table", ROOT / "scripts" / "make_theory_table.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shipped_table_equals_a_fresh_computation():
    script = _script()
    assert script.TARGET.read_text(encoding="utf-8") == script.render()


def test_shipped_results_equal_the_simulation():
    for n in shipped.RUNS:
        live = random_orders(ns=(n,), **shipped.SETTINGS)
        assert shipped_random_orders(n, **shipped.SETTINGS) == live


def test_other_settings_are_not_shipped():
    assert shipped_random_orders(1000, q=0.35) is None
    assert shipped_random_orders(1000, K=3) is None
    assert shipped_random_orders(1000, seeds=6) is None
    assert shipped_random_orders(1000, policy="static-range") is None
    assert shipped_random_orders(500) is None
