"""certlib.cli.main for prelabel / replay / certificate (SPEC section 10).

The pool is paper 000 Figure 2 (section 3) with row ids 10..13, so the numbers in the
output are known: prelabel 2, static range reads 3,4,1,2 (ids 12,13,10,11), C(y) = 3.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from certlib.cli import main

REPO = Path(__file__).resolve().parents[2]

PRELABEL_KEYS = {"n", "K", "candidates", "tolerance", "prelabel_bound", "prelabel_fraction"}
REPLAY_KEYS = {"policy", "rule", "labels_read", "selected", "full_pool_winner", "certified",
               "order"}
CERT_KEYS = {"winner", "lower", "upper", "exact", "lp_value", "witness"}


def write_pool(path: Path, labels=(1, 0, 0, 0)) -> Path:
    rows = ["row_id,label,pred_A,conf_A,pred_B,conf_B,note"]
    confs_a, confs_b = (0.4, 0.3, 0.2, 0.1), (0.3, 0.4, 0.1, 0.2)
    preds_a, preds_b = (0, 0, 1, 0), (0, 0, 0, 1)
    for i in range(4):
        lab = "" if labels[i] is None else labels[i]
        rows.append(f"{10 + i},{lab},{preds_a[i]},{confs_a[i]},{preds_b[i]},{confs_b[i]},r{i}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture
def pool_csv(tmp_path):
    return write_pool(tmp_path / "fig2.csv")


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, argv):
    code, out, err = run(capsys, argv + ["--json"])
    assert code == 0, err
    assert err == ""
    return json.loads(out)


# ------------------------------------------------------------------------ success
def test_prelabel_json_and_table(capsys, pool_csv):
    d = run_json(capsys, ["prelabel", str(pool_csv)])
    assert PRELABEL_KEYS <= set(d)
    assert (d["n"], d["K"], d["candidates"], d["prelabel_bound"]) == (4, 2, ["A", "B"], 2)
    assert d["prelabel_fraction"] == pytest.approx(0.5) and d["tolerance"] == 0
    code, out, err = run(capsys, ["prelabel", str(pool_csv)])
    assert code == 0 and err == ""
    assert "prelabel" in out and "2 labels" in out and "A" in out and "B" in out
    d = run_json(capsys, ["prelabel", str(pool_csv), "--tolerance", "0.5"])
    assert d["prelabel_bound"] == 0 and d["tolerance"] == 0.5


def test_replay_json_and_table(capsys, pool_csv):
    d = run_json(capsys, ["replay", str(pool_csv)])
    assert REPLAY_KEYS <= set(d)
    assert d["policy"] == "static-range" and d["rule"] == "shared"
    assert d["labels_read"] == 4 and d["certified"] is True
    assert d["selected"] == d["full_pool_winner"] == "B"
    assert d["order"] == [12, 13, 10, 11]  # row ids, not positions
    d = run_json(capsys, ["replay", str(pool_csv), "--policy", "random", "--rule", "separate",
                          "--seed", "5", "--budget", "1"])
    assert (d["policy"], d["rule"], d["labels_read"], d["certified"]) == \
        ("random", "separate", 1, False)
    assert len(d["order"]) == 1 and d["order"][0] in (10, 11, 12, 13)
    code, out, err = run(capsys, ["replay", str(pool_csv)])
    assert code == 0 and err == ""
    assert "static-range" in out and "4 of 4" in out and "B" in out and "12, 13, 10, 11" in out


def test_certificate_json_and_table(capsys, pool_csv):
    d = run_json(capsys, ["certificate", str(pool_csv)])
    assert CERT_KEYS <= set(d)
    assert (d["winner"], d["lower"], d["upper"], d["exact"]) == ("B", 3, 3, True)
    assert d["lp_value"] == pytest.approx(2.5)
    assert sorted(d["witness"]) == [10, 11, 12]
    code, out, err = run(capsys, ["certificate", str(pool_csv)])
    assert code == 0 and err == ""
    assert "minimum certificate" in out and "3 labels" in out and "2.5" in out


def test_certificate_partial_equals_the_library(capsys, tmp_path):
    """``certificate --partial``: the labels of a labelling run merged into the pool file
    (the rest blank) give the Label page's hindsight, `certify_partial`; without the flag
    the error names the way."""
    import certlib

    demo = REPO / "sample_data" / "demo_binary.csv"
    full = certlib.load_pool(demo)
    rep = certlib.replay(full, policy="adaptive-pair-sum")
    lines = demo.read_text().splitlines()
    head = lines[0].split(",")
    rid, lab = head.index("row_id"), head.index("label")
    read = {str(r) for r in rep.order}
    out_lines = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        if cells[rid] not in read:
            cells[lab] = ""
        out_lines.append(",".join(cells))
    path = tmp_path / "run.csv"
    path.write_text("\n".join(out_lines) + "\n")
    pool = certlib.load_pool(path)
    assert pool.n_labelled == rep.labels_read
    want = certlib.certify_partial(pool)
    d = run_json(capsys, ["certificate", str(path), "--partial"])
    assert d["partial"] is True
    assert (d["lower"], d["upper"], d["winner"], d["labels_read"]) == (
        want.lower, want.upper, want.selected, rep.labels_read)
    code, out, err = run(capsys, ["certificate", str(path), "--partial"])
    assert code == 0 and err == ""
    assert f"of the {rep.labels_read:,} labels read, {want.upper:,} of them would have " in out
    code, out, err = run(capsys, ["certificate", str(path)])
    assert_one_line_error(code, out, err, "certify needs every label", "--partial")


def test_certificate_work_limit_and_solver_minimum(capsys):
    """--work-limit bounds the search; when the proof stays open HiGHS's optimum is
    shown apart from the proved enclosure (SPEC 7 'beyond the paper')."""
    pool = str(REPO / "sample_data" / "panels" / "digits_s2_tree_k8.csv")
    d = run_json(capsys, ["certificate", pool, "--work-limit", "50"])
    assert (d["lower"], d["upper"], d["exact"], d["solver_minimum"]) == (204, 205, False, 205)
    assert d["work"] >= 50 and d["time_limited"] is False
    code, out, err = run(capsys, ["certificate", pool, "--work-limit", "50"])
    assert code == 0 and err == ""
    assert "205 by HiGHS, proved [204, 205]" in out
    d = run_json(capsys, ["certificate", pool])  # the default work limit proves it
    assert (d["lower"], d["upper"], d["exact"], d["solver_minimum"]) == (205, 205, True, None)
    code, out, err = run(capsys, ["certificate", pool, "--work-limit", "-1"])
    assert code == 2 and "work_limit" in err


def test_python_m_certlib_prelabel_json(pool_csv):
    p = subprocess.run([sys.executable, "-m", "certlib", "prelabel", str(pool_csv), "--json"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert PRELABEL_KEYS <= set(d) and d["prelabel_bound"] == 2


# ------------------------------------------------------------------------ bad input
def assert_one_line_error(code, out, err, *words):
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], (w, err)


def test_missing_file(capsys, tmp_path):
    missing = tmp_path / "nope.csv"
    for cmd in ("prelabel", "replay", "certificate"):
        assert_one_line_error(*run(capsys, [cmd, str(missing)]), "nope.csv")


@pytest.mark.parametrize("args,word", [
    (["--budget", "-1"], "budget"),
    (["--tolerance", "abc"], "tolerance"),
    (["--tolerance", "-0.1"], "tolerance"),
    (["--tolerance", "nan"], "tolerance"),
])
def test_bad_replay_parameters(capsys, pool_csv, args, word):
    assert_one_line_error(*run(capsys, ["replay", str(pool_csv)] + args), word)


@pytest.mark.parametrize("cmd", ["prelabel", "certificate"])
def test_bad_tolerance_other_commands(capsys, pool_csv, cmd):
    assert_one_line_error(*run(capsys, [cmd, str(pool_csv), "--tolerance", "-1"]), "tolerance")


@pytest.mark.parametrize("args", [["--policy", "greedy"], ["--rule", "joint"],
                                  ["--budget", "two"], ["--seed", "x"]])
def test_argparse_rejects_bad_choices(capsys, pool_csv, args):
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(pool_csv)] + args)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("certlib replay: error:")


@pytest.mark.parametrize("cmd", ["replay", "certificate"])
def test_unlabelled_pool_needs_labels(capsys, tmp_path, cmd):
    path = write_pool(tmp_path / "part.csv", labels=(1, None, 0, 0))
    assert_one_line_error(*run(capsys, [cmd, str(path)]), "11")
    # prelabel needs no label
    assert run_json(capsys, ["prelabel", str(path)])["prelabel_bound"] == 2


def test_bad_pool_content(capsys, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("label,pred_A,conf_A,pred_B,conf_B\n0,0,0.5,1,nan\n1,1,0.2,0,0.3\n")
    assert_one_line_error(*run(capsys, ["prelabel", str(path)]), "conf_B")


def test_centered_rule_on_categorical_pool_is_bad_input(capsys, tmp_path):
    """SPEC section 5: centering needs binary labels or one shared prediction."""
    path = tmp_path / "cat.csv"
    path.write_text("label,pred_A,conf_A,pred_B,conf_B\n0,0,0.5,1,0.4\n1,1,0.2,2,0.3\n"
                    "2,2,0.9,2,0.1\n")
    assert_one_line_error(*run(capsys, ["replay", str(path), "--rule", "centered"]), "centered")
    assert run_json(capsys, ["replay", str(path)])["certified"] is True
    # a declared class set that misses a predicted class is bad input naming the column
    assert_one_line_error(*run(capsys, ["replay", str(path), "--classes", "0,1"]), "pred_")


def test_objective_accuracy_worst_case(capsys, tmp_path):
    """Paper section 4.2, worst-case rank example through the command line: AUGRC needs
    n - 1 labels at y = 0, accuracy none."""
    n = 6
    lines = ["label,pred_A,conf_A,pred_B,conf_B"]
    conf_a = [1] + [n + 1 - i for i in range(1, n)]  # A ranks rows 2..n, 1
    for i in range(n):
        lines.append(f"0,0,{conf_a[i]},0,{n - i}")
    path = tmp_path / "worst.csv"
    path.write_text("\n".join(lines) + "\n")
    d = run_json(capsys, ["certificate", str(path)])
    assert (d["winner"], d["lower"], d["upper"]) == ("A", n - 1, n - 1)
    d = run_json(capsys, ["prelabel", str(path), "--objective", "accuracy"])
    assert d["prelabel_bound"] == 0
    d = run_json(capsys, ["replay", str(path), "--objective", "accuracy"])
    assert (d["labels_read"], d["certified"], d["selected"]) == (0, True, "A")
