"""``certlib plan``: the table and --json carry the library's numbers."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

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


def test_accuracy_section_carries_the_library_numbers():
    """The plan's accuracy section and its JSON are `certlib.accuracy_labels` (paper 000
    section 6.2), on a labelled and on an unlabelled pool."""
    for name in ("demo_binary.csv", "demo_unlabelled.csv"):
        path = ROOT / "sample_data" / name
        rc, out, _ = _run(str(path), "--budgets", "50", "--json")
        assert rc == 0
        d = json.loads(out)
        p = certlib.accuracy_labels(certlib.load_pool(path))
        assert d["objective"] == "augrc"
        assert d["accuracy"] == json.loads(json.dumps(p.to_dict()))
        rc, out, _ = _run(str(path), "--budgets", "50")
        lines = out.splitlines()
        start = lines.index("accuracy beside AUGRC, exact choice (paper 000 section 6.2), "
                            "in labels:")
        acc, aug = lines[start + 2].split(), lines[start + 3].split()
        hind = (["-", "-"] if p.accuracy_certificate is None else
                [str(p.accuracy_certificate.upper), str(p.augrc_certificate.upper)])
        rep = ["-", "-"] if p.accuracy_replay is None else [str(p.accuracy_replay),
                                                            str(p.augrc_replay)]
        assert acc[:5] == ["accuracy", str(p.accuracy_prelabel), str(p.disagreement), rep[0],
                           hind[0]]
        assert aug[:5] == ["AUGRC", str(p.augrc_prelabel), str(p.augrc_movable), rep[1],
                           hind[1]]
        text = " ".join(out.split())
        assert f"The {p.disagreement} rows where the candidates disagree" in text
        assert p.augrc_needs_more and "so it needs more labels than accuracy whatever" in text


def test_objective_accuracy_makes_the_plan_about_accuracy():
    from certlib.planning.budget_plan import DEFAULT_ACCURACY_TOLERANCES

    path = ROOT / "sample_data/teaching_k4.csv"
    rc, out, _ = _run(str(path), "--objective", "accuracy", "--budgets", "10,21,171",
                      "--json")
    assert rc == 0
    d = json.loads(out)
    acc = certlib.load_pool(path, objective="accuracy")
    m = certlib.budget_map(acc, DEFAULT_ACCURACY_TOLERANCES, budgets=(10, 21, 171),
                           policy="adaptive-pair-sum")
    assert d["objective"] == "accuracy" and d["map"] == json.loads(json.dumps(m.to_dict()))
    # the section is the same whichever objective the plan is about
    assert d["accuracy"] == json.loads(json.dumps(certlib.accuracy_labels(acc).to_dict()))
    assert max(d["map"]["labels_read"]) <= d["accuracy"]["disagreement"]
    rc, out, _ = _run(str(path), "--objective", "accuracy", "--tolerances", "0")
    assert "objective accuracy (tolerances on the error rate)" in out
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        main(["plan", str(path), "--objective", "auc"])
    assert exc.value.code == 2 and "--objective" in err.getvalue()


def test_a_shared_prediction_pool_says_accuracy_cannot_choose():
    rc, out, _ = _run(str(ROOT / "sample_data/digits_probs.csv"), "--tolerances", "0",
                      "--budgets", "0")
    text = " ".join(out.split())
    assert rc == 0 and "accuracy ties them all, so msp (first in priority) wins it" in text


def _one_line(text):
    return " ".join(text.split())


def test_budget_prints_the_library_sentence():
    """--budget: the sentence of `what_budget_buys` (same pool, policy, draws, seed), in the
    table and as JSON "budget_answer"; the draws are --forecast's, else 200."""
    from certlib.planning.budget_answer import what_budget_buys

    full = ROOT / "sample_data/panels/wine_s1_logreg_k4.csv"
    rc, out, _ = _run(str(full), "--budget", "30", "--tolerances", "0,0.01")
    want = what_budget_buys(certlib.load_pool(full), 30)
    assert rc == 0 and want.basis == "replay"
    assert "what the budget buys: " + want.text() in _one_line(out)
    path = ROOT / "sample_data/demo_unlabelled.csv"
    rc, out, _ = _run(str(path), "--budget", "60", "--tolerances", "0", "--seed", "2",
                      "--policy", "static-pair-sum", "--json")
    d = json.loads(out)["budget_answer"]
    a = what_budget_buys(certlib.load_pool(path), 60, policy="static-pair-sum", seed=2)
    assert d["text"] == a.text() and d["draws"] == 200 and d["basis"] == "forecast"
    assert d == json.loads(json.dumps(a.to_dict()))
    rc, out, _ = _run(str(path), "--budget", "60", "--tolerances", "0", "--forecast", "15",
                      "--json")
    d = json.loads(out)
    assert d["budget_answer"]["draws"] == 15 and d["forecast"][0]["draws"] == 15
    assert d["budget_answer"]["text"] == what_budget_buys(certlib.load_pool(path), 60,
                                                          draws=15).text()
    assert "budget_answer" not in json.loads(_run(str(path), "--json")[1])
    rc, _, err = _run(str(path), "--budget", "-1")
    assert rc == 2 and err.startswith("certlib: error: --budget")


def _project(tmp_path, labels=40):
    """A SQLite label store with one project on demo_unlabelled.csv: the policy's first
    ``labels`` rows answered with demo_binary.csv's labels."""
    from certlib.labelling.store import LabelStore

    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    truth = certlib.load_pool(ROOT / "sample_data/demo_binary.csv")
    store = LabelStore(tmp_path / "labels.db")
    pid = store.open_project(pool, "demo_unlabelled.csv", policy="static-range")
    for _ in range(labels):
        r = store.session(pid, pool).next_row()
        store.append_label(pid, pool.row_ids[r], truth.classes[truth.labels[r]], "ana",
                           pool=pool)
    return store, pid, pool


def test_plan_from_a_projects_labels(tmp_path):
    """--store DB --project N: the project's labels in force replace the file's (none
    here), the policy defaults to the project's, and the numbers are the library's on
    `LabelStore.pool_with_labels`."""
    from certlib.planning.budget_answer import what_budget_buys

    store, pid, pool = _project(tmp_path)
    withp = store.pool_with_labels(pid, pool)
    assert withp.n_labelled == 40
    assert (withp.labels >= 0).tolist() == (store.session(pid, pool).label_codes >= 0).tolist()
    db = str(tmp_path / "labels.db")
    path = str(ROOT / "sample_data/demo_unlabelled.csv")
    rc, out, _ = _run(path, "--store", db, "--project", str(pid), "--budget", "60",
                      "--tolerances", "0,0.01", "--budgets", "40,60", "--json")
    assert rc == 0
    d = json.loads(out)
    m = certlib.budget_map(withp, (0, 0.01), budgets=(40, 60), policy="static-range")
    assert d["map"] == json.loads(json.dumps(m.to_dict())) and d["map"]["known"] == 40
    assert d["project"] == {"id": pid, "name": "demo_unlabelled.csv", "policy": "static-range",
                            "labels": 40}
    assert d["budget_answer"]["text"] == what_budget_buys(withp, 60, policy="static-range").text()
    rc, out, _ = _run(path, "--store", db, "--project", str(pid), "--budget", "30")
    assert rc == 0 and "40 labels known" in out
    assert f"labels    project {pid} (demo_unlabelled.csv): its 40 labels in force" in out
    assert "A budget of 30 labels is below the 40 labels already known, which count as " \
        "read and buy tolerance" in _one_line(out)
    # an explicit --policy wins over the project's
    rc, out, _ = _run(path, "--store", db, "--project", str(pid), "--policy",
                      "adaptive-pair-sum", "--json")
    assert json.loads(out)["map"]["policy"] == "adaptive-pair-sum"


def test_project_errors_are_one_line(tmp_path, monkeypatch):
    store, pid, pool = _project(tmp_path, labels=3)
    db = str(tmp_path / "labels.db")
    path = str(ROOT / "sample_data/demo_unlabelled.csv")
    monkeypatch.chdir(tmp_path / "..")
    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "missing.db"))
    cases = [
        (["--store", db, "--project", str(pid + 1)], "is not in the label store"),
        (["--store", db, "--project", "first"], "a project id is a positive whole number"),
        (["--store", str(tmp_path / "nope.db"), "--project", "1"], "does not exist"),
        (["--project", "1"], "missing.db' does not exist (the default: $CERTLIB_STORE"),
        (["--store", db], "--store names the label store of a project"),
        (["--store", db, "--project", "1", "--objective", "accuracy"],
         "plan it with --objective augrc"),
    ]
    for args, msg in cases:
        rc, _, err = _run(path, *args)
        assert rc == 2 and err.startswith("certlib: error:") and err.count("\n") == 1, err
        assert msg in err, (args, err)
    rc, _, err = _run(str(ROOT / "sample_data/figure2.csv"), "--store", db, "--project", "1")
    assert rc == 2 and "does not match project 1" in err and err.count("\n") == 1
    # the default store: $CERTLIB_STORE
    monkeypatch.setenv("CERTLIB_STORE", db)
    rc, out, _ = _run(path, "--project", str(pid), "--json")
    assert rc == 0 and json.loads(out)["map"]["known"] == 3
