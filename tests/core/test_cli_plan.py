"""``certlib plan``: the table and --json carry the library's numbers."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import certlib
from certlib.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["plan", *args])
    return rc, out.getvalue(), err.getvalue()


def test_json_equals_the_library_on_a_labelled_pool():
    path = ROOT / "sample_data/panels/wine_s1_tree_k8.csv"
    rc, out, _ = _run(str(path), "--tolerances", "0,0.005", "--budgets", "10,30,54",
                      "--policy", "static-range", "--json")
    assert rc == 0
    d = json.loads(out)
    m = certlib.budget_map(certlib.load_pool(path), (0, 0.005), budgets=(10, 30, 54))
    assert d["map"] == json.loads(json.dumps(m.to_dict()))
    assert d["forecast"] is None  # every label known: the replay is exact


def test_forecast_on_an_unlabelled_pool():
    path = ROOT / "sample_data/demo_unlabelled.csv"
    rc, out, _ = _run(str(path), "--tolerances", "0.001", "--forecast", "40", "--seed", "3",
                      "--json")
    assert rc == 0
    d = json.loads(out)
    f = certlib.forecast(certlib.load_pool(path), tolerance=0.001, draws=40, seed=3)
    assert d["forecast"][0]["labels_read"] == list(f.labels_read)
    assert d["forecast"][0]["quantiles"]["0.5"] == f.quantiles[0.5]
    assert d["p_certified"][0] == [f.p_certified(b) for b in d["map"]["budgets"]]
    assert d["map"]["labels_read"] is None
    n = d["map"]["n"]  # every label read certifies whatever they are: only budget n
    assert all(c == ("certified" if b >= n else "unresolved") or c == "ruled_out"
               for b, c in zip(d["map"]["budgets"], d["map"]["cells"][0]))
    assert d["map"]["cells"][0][-1] == "certified" and d["p_certified"][0][-1] == 1.0


def test_table_lists_the_map_and_figure_8():
    rc, out, _ = _run(str(ROOT / "sample_data/demo_binary.csv"), "--tolerances", "0,0.01",
                      "--budgets", "40,100,125")
    assert rc == 0
    assert "prelabel" in out and "budget    125: 0" in out and "budget    100: 0.01" in out
    grid = [ln for ln in out.splitlines() if ln.strip().startswith(("0 ", "0.01 "))]
    assert grid[-2].split()[1:] == ["x", ".", "C"]
    assert grid[-1].split()[1:] == [".", "C", "C"]  # the prelabel bound at 0.01 is 40


def test_bad_input_is_one_line():
    p = str(ROOT / "sample_data/demo_binary.csv")
    for args in (["--tolerances", "0,abc"], ["--budgets", "500"], ["--forecast", "-1"]):
        rc, out, err = _run(p, *args)
        assert rc == 2 and err.startswith("certlib: error:") and err.count("\n") == 1


def test_known_labels_that_certify_are_said(tmp_path):
    """One of 171 labels hidden: the 170 known certify, so a budget of 170 is certified
    and Figure 8 says why ("unknown (unlabelled rows)")."""
    import pandas as pd

    df = pd.read_csv(ROOT / "sample_data/demo_binary.csv")
    df.loc[5, "label"] = None
    path = tmp_path / "near_full.csv"
    df.to_csv(path, index=False)
    rc, out, _ = _run(str(path), "--tolerances", "0,0.01", "--budgets", "100,169,170")
    assert rc == 0
    assert "budget    170: 0 (the 170 labels already known certify it)" in out
    assert "budget    169: unknown (unlabelled rows)" in out
    grid = [ln for ln in out.splitlines() if ln.strip().startswith(("0 ", "0.01 "))]
    assert grid[-2].split()[1:] == [".", ".", "C"]
    rc, out, _ = _run(str(path), "--tolerances", "0,0.01", "--budgets", "100,170", "--json")
    d = json.loads(out)
    assert d["map"]["known"] == 170 and d["map"]["certified_now"] == [True, True]
    # a pool certified with no label read says so, not "the 0 labels already known"
    rc, out, _ = _run(str(ROOT / "sample_data/digits_images.csv"), "--tolerances", "0.01",
                      "--budgets", "0")
    assert rc == 0 and "budget 0: 0.01 (certified with no label read)" in " ".join(out.split())
