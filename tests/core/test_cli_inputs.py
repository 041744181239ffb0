"""The pool commands read a user's own files (``--label``, ``--id``, ``--candidate``,
several files, zips), name duplicate candidates (``--merge-duplicates``) and draw a
progress bar on a terminal only (``--quiet``: none).

Every number the commands print is compared with the library's on the pool read the
same way (`certlib.columns.read_sources`, `certlib.merge_duplicates`).
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import certlib
from certlib.cli import candidate_columns, main
from certlib.cli_progress import ProgressBar, progress_bar
from certlib.columns import read_sources
from certlib.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
WINE = ROOT / "sample_data" / "panels" / "wine_s0_tree_k8.csv"  # 8 candidates, 3 groups


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, argv):
    code, out, err = run(capsys, argv + ["--json"])
    assert code == 0, err
    return json.loads(out), err


# ------------------------------------------------------------------ files of one's own
OWN = """sample,truth,m1,s1,m2,s2,p0,p1,gt
a,0,0,0.9,1,0.6,0.7,0.3,0
b,1,1,0.8,1,0.9,0.2,0.8,1
c,1,0,0.3,1,0.4,0.6,0.4,1
d,0,0,0.6,0,0.65,0.9,0.1,0
e,,1,0.7,1,0.8,0.3,0.7,
"""


@pytest.fixture
def own(tmp_path):
    path = tmp_path / "own.csv"
    path.write_text(OWN)
    return path


def test_flags_map_the_columns_and_say_so(capsys, own):
    argv = ["prelabel", str(own), "--label", "truth", "--id", "sample",
            "--candidate", "first=m1,s1", "--candidate", "second=m2,s2",
            "--candidate", "third=proba:p0,p1"]
    d, err = run_json(capsys, argv)
    cmap = certlib.ColumnMap.from_json(json.dumps(d["column_map"]))
    want = read_sources([("own.csv", own.read_bytes())], column_map=cmap).pool
    assert d["candidates"] == ["first", "second", "third"] == list(want.names)
    assert d["prelabel_bound"] == certlib.prelabel_bound(want).prelabel_bound
    assert d["column_map"]["label"] == "truth" and d["column_map"]["row_id"] == "sample"
    assert d["column_map"]["candidates"][2]["proba"] == [["0", "p0"], ["1", "p1"]]
    assert d["duplicates"] == [] and d["duplicates_merged"] is False
    # the unused label-like column is named on stderr, once, as a warning
    assert err.count("certlib: warning: column 'gt'") == 1
    code, out, err = run(capsys, argv)
    assert code == 0
    assert "columns     as given by --label, --id and --candidate (the rest guessed):" in out
    assert "            label: truth" in out and "            row id: sample" in out
    assert "third: prediction = the most probable class, probabilities p0, p1" in out
    assert "warning" not in out and "column 'gt'" in err


def test_a_guessed_map_is_shown(capsys, tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("id,y_true,A_pred,A_score,B_pred,B_score\n1,0,0,0.9,1,0.8\n"
                    "2,1,1,0.7,1,0.6\n3,,0,0.5,0,0.4\n")
    code, out, err = run(capsys, ["prelabel", str(path)])
    assert code == 0 and err == ""
    assert "columns     guessed from the column names (--label, --id, --candidate set them):" \
        in out
    assert "A: prediction A_pred, confidence A_score" in out
    d, _ = run_json(capsys, ["prelabel", str(path)])
    assert d["candidates"] == ["A", "B"] and d["column_map"]["label"] == "y_true"


def test_a_convention_file_says_nothing_more(capsys):
    demo = str(ROOT / "sample_data" / "demo_binary.csv")
    code, out, err = run(capsys, ["prelabel", demo])
    assert code == 0 and err == ""
    assert "columns" not in out and "duplicates" not in out
    d, err = run_json(capsys, ["prelabel", demo])
    assert d["column_map"] is None and d["duplicates"] == [] and err == ""
    assert d["files"] == ["demo_binary.csv"]


def test_the_candidate_forms():
    assert candidate_columns("A=p,c") == certlib.columns.CandidateColumns("A", "p", "c")
    assert candidate_columns("A=proba:q").proba == (("1", "q"),)
    c = candidate_columns("A=p,proba:q")
    assert (c.pred, c.conf, c.proba) == ("p", None, (("1", "q"),))
    assert candidate_columns("A=proba:x,y,z").proba == (("0", "x"), ("1", "y"), ("2", "z"))
    assert candidate_columns("A=proba:x,y", classes=["n", "p"]).proba == (("n", "x"), ("p", "y"))
    assert candidate_columns("A=proba:cat=x,dog=y").proba == (("cat", "x"), ("dog", "y"))
    for bad in ("A", "A=", "=p,c", "A=p", "A=p,c,d", "A=proba:", "A=proba:x,", "A=p,proba:",
                "A=proba:a=x,y", "A=proba:x,proba:y"):
        with pytest.raises(ParameterError, match="--candidate"):
            candidate_columns(bad)
    with pytest.raises(ParameterError, match="3 classes"):
        candidate_columns("A=proba:x,y", classes=["0", "1", "2"])


@pytest.mark.parametrize("flags,message", [
    (["--candidate", "a=m1,s1", "--candidate", "b=m9,s2"],
     "column 'm9' (the prediction of 'b' in the column map) is not in 'own.csv'"),
    (["--candidate", "a=m1"], "--candidate must be NAME=PRED_COL,CONF_COL"),
    (["--label", "nope", "--candidate", "a=m1,s1", "--candidate", "b=m2,s2"],
     "column 'nope' (the label in the column map) is not in 'own.csv'"),
    (["--label", "truth"], "gives 0 candidate(s)"),
    (["--candidate", "a=m1,s1"], "gives 1 candidate(s)"),
])
def test_a_bad_map_exits_2_with_one_line(capsys, own, flags, message):
    code, out, err = run(capsys, ["prelabel", str(own), *flags])
    assert code == 2 and out == ""
    lines = [ln for ln in err.splitlines() if not ln.startswith("certlib: warning:")]
    assert len(lines) == 1 and lines[0].startswith("certlib: error: ")
    assert message in lines[0]


def test_a_bad_cell_names_file_column_and_row(capsys, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,y_true,A_pred,A_score,B_pred,B_score\n1,0,0,0.9,1,0.8\n"
                    "2,1,1,oops,1,0.6\n")
    code, out, err = run(capsys, ["prelabel", str(path)])
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "bad.csv" in err and "'A_score'" in err and "'oops'" in err and "row 2" in err


# ------------------------------------------------------------------ several files
def _per_model(tmp_path, id_col="id"):
    a = tmp_path / "a.csv"
    a.write_text(f"{id_col},y_true,prediction,score\n1,0,0,0.9\n2,1,1,0.8\n3,1,0,0.3\n"
                 "4,0,0,0.6\n5,1,1,0.7\n")
    b = tmp_path / "b.csv"
    b.write_text(f"{id_col},prediction,score\n5,1,0.2\n4,0,0.6\n3,1,0.5\n2,1,0.8\n1,0,0.9\n")
    c = tmp_path / "c.csv"  # a's predictions and order, other numbers: a duplicate of a
    c.write_text(f"{id_col},prediction,score\n1,0,9\n2,1,8\n3,0,3\n4,0,6\n5,1,7\n")
    return a, b, c


def test_several_files_are_joined_and_equal_the_library(capsys, tmp_path):
    a, b, c = _per_model(tmp_path)
    d, err = run_json(capsys, ["replay", str(a), str(b), str(c)])
    got = read_sources([(p.name, p.read_bytes()) for p in (a, b, c)])
    r = certlib.replay(got.pool)
    assert (d["selected"], d["labels_read"], d["order"]) == (r.selected, r.labels_read,
                                                             list(r.order))
    assert d["files"] == ["a.csv", "b.csv", "c.csv"] and d["candidates"] == ["a", "b", "c"]
    assert d["duplicates"][0]["candidates"] == ["a", "c"]
    code, out, _ = run(capsys, ["replay", str(a), str(b), str(c)])
    assert f"pool              {a} + {b} + {c}: n = 5 rows, K = 3 candidates" in out


def test_a_zip_of_files_per_model(capsys, tmp_path):
    files = _per_model(tmp_path)
    z = tmp_path / "models.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for p in files:
            zf.write(p, p.name)
    d, _ = run_json(capsys, ["certificate", str(z)])
    assert d["files"] == ["models.zip/a.csv", "models.zip/b.csv", "models.zip/c.csv"]
    got = read_sources([("models.zip", z.read_bytes())])
    cert = certlib.certify(got.pool)
    assert (d["winner"], d["lower"], d["upper"]) == (cert.winner, cert.lower, cert.upper)


def test_several_files_with_flags(capsys, tmp_path):
    a, b, c = _per_model(tmp_path, id_col="sample")  # "sample" is not a guessed id name
    code, _, err = run(capsys, ["prelabel", str(a), str(b)])
    assert code == 2 and "no row id column" in err
    argv = ["prelabel", str(a), str(b), str(c), "--id", "sample", "--label", "y_true",
            "--candidate", "B=b.csv:prediction,b.csv:score",
            "--candidate", "A=a.csv:prediction,a.csv:score"]
    d, err = run_json(capsys, argv)
    assert d["candidates"] == ["B", "A"] and d["column_map"]["row_id"] == "sample"
    assert d["column_map"]["candidates"][0]["conf"] == "b.csv: score"
    # c's columns are left out: named on stderr
    assert "c.csv: score" in err
    code, _, err = run(capsys, ["prelabel", str(a), str(b), "--id", "sample",
                                "--candidate", "A=prediction,score",
                                "--candidate", "B=b.csv:prediction,b.csv:score"])
    assert code == 2 and "is in several files (a.csv, b.csv); write FILE:COL" in err
    code, _, err = run(capsys, ["prelabel", str(a), str(b), "--id", "nope"])
    assert code == 2 and "'a.csv' has no column 'nope' (the row id column" in err


def test_a_bad_cell_in_a_second_file_names_it(capsys, tmp_path):
    a, b, _ = _per_model(tmp_path)
    b.write_text("id,prediction,score\n5,1,0.2\n4,0,x\n3,1,0.5\n2,1,0.8\n1,0,0.9\n")
    code, out, err = run(capsys, ["prelabel", str(a), str(b)])
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "b.csv" in err and "score" in err and "'x'" in err


# ------------------------------------------------------------------ duplicates
@pytest.mark.parametrize("command", ["prelabel", "replay", "certificate", "plan"])
def test_every_pool_command_names_the_duplicates(capsys, command):
    extra = ["--tolerances", "0", "--budgets", "10,54"] if command == "plan" else []
    d, err = run_json(capsys, [command, str(WINE), *extra])
    pool = certlib.load_pool(WINE)
    want = certlib.find_duplicates(pool)
    assert d["duplicates"] == want.to_dict() and d["duplicates_merged"] is False
    assert err == ""
    code, out, _ = run(capsys, [command, str(WINE), *extra])
    assert code == 0
    lines = out.splitlines()
    first = lines.index("duplicates  eps000 and eps005 are the same candidate for AUGRC: eps005 "
                        "can never win (eps000 comes first in tie priority)")
    assert lines[first + 1] == ("            eps020 and eps040 are the same candidate for AUGRC:"
                                " eps040 can never win (eps020 comes first in tie priority)")
    assert lines[-1] == ("            (--merge-duplicates leaves the later ones out before "
                         "computing)")


@pytest.mark.parametrize("command", ["prelabel", "replay", "certificate", "plan"])
def test_merge_duplicates_computes_on_the_merged_pool(capsys, command):
    extra = ["--tolerances", "0", "--budgets", "10,54"] if command == "plan" else []
    d, _ = run_json(capsys, [command, str(WINE), "--merge-duplicates", *extra])
    merged = certlib.merge_duplicates(certlib.load_pool(WINE))
    assert d["duplicates_merged"] is True and len(d["duplicates"]) == 3
    if command == "prelabel":
        assert d["candidates"] == list(merged.names)
        assert d["prelabel_bound"] == certlib.prelabel_bound(merged).prelabel_bound
    elif command == "replay":
        r = certlib.replay(merged)
        assert d["candidates"] == list(merged.names) and d["order"] == list(r.order)
    elif command == "certificate":
        c = certlib.certify(merged)
        assert (d["winner"], d["lower"], d["upper"]) == (c.winner, c.lower, c.upper)
    else:
        m = certlib.budget_map(merged, (0,), budgets=(10, 54), policy="adaptive-pair-sum")
        assert d["map"] == json.loads(json.dumps(m.to_dict()))
    code, out, _ = run(capsys, [command, str(WINE), "--merge-duplicates", *extra])
    assert code == 0
    assert out.splitlines()[-1] == ("            merged before computing (--merge-duplicates): "
                                    "eps005, eps040, eps120, eps160 left out, 4 candidates "
                                    "computed")


def test_merging_down_to_one_candidate_exits_2(capsys, tmp_path):
    a, _, c = _per_model(tmp_path)
    code, out, err = run(capsys, ["prelabel", str(a), str(c), "--merge-duplicates"])
    assert code == 2 and out == ""
    assert err == ("certlib: error: every candidate of the pool is the same candidate for AUGRC:"
                   " merged, only 'a' is left, and it wins with no label read; a pool needs at "
                   "least two candidates to choose between\n")


def test_accuracy_duplicates_are_named_for_accuracy(capsys):
    path = ROOT / "sample_data" / "panels" / "breast_cancer_s0_logreg_k8.csv"
    d, _ = run_json(capsys, ["prelabel", str(path), "--objective", "accuracy"])
    assert d["duplicates"][0]["message"].endswith(
        "are the same candidate for accuracy: eps010 can never win (eps005 comes first in "
        "tie priority)")
    d, _ = run_json(capsys, ["prelabel", str(path)])
    assert d["duplicates"] == []


# ------------------------------------------------------------------ progress
def test_the_bar_draws_over_itself_and_erases():
    import io

    out = io.StringIO()
    bar = ProgressBar(out, interval=0)
    bar("reading a.csv (2 MB)", 0.0)
    bar("reading a.csv (2 MB)", 0.5)
    bar("building the pool", 0.8)
    text = out.getvalue()
    assert "\n" not in text and text.count("\r") == 3
    assert "reading a.csv (2 MB) [" in text and " 50%" in text and "building the pool" in text
    bar("done", 1.0)
    last = out.getvalue()[len(text):]
    assert last.strip() == "" and last.startswith("\r") and last.endswith("\r")
    bar.close()  # idempotent: nothing more
    assert out.getvalue()[len(text):] == last
    assert progress_bar(quiet=True, stream=out) is None and progress_bar(stream=out) is None


def _run_on_pty(argv, *, stderr_tty=True, stdout_tty=False):
    """Run the command line in a subprocess with stderr (or stdout) on a pseudo-terminal;
    return (stdout, stderr) as text, what the terminal received included."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "certlib", *argv], cwd=ROOT, env=env,
                            stdout=slave if stdout_tty else subprocess.PIPE,
                            stderr=slave if stderr_tty else subprocess.PIPE)
    os.close(slave)
    got = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed (Linux: EIO)
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err, got)
    tty = got.decode()
    if stderr_tty:
        return (out or b"").decode(), tty
    return tty, (err or b"").decode()


DEMO = "sample_data/demo_binary.csv"


def test_the_bar_appears_on_a_terminal_and_json_stays_clean():
    out, err = _run_on_pty(["prelabel", DEMO, "--json"])
    assert "reading demo_binary.csv" in err and "[" in err and "%" in err
    # drawn over itself with carriage returns, erased with blanks at the end
    assert "\n" not in err and err.endswith("\r") and err.split("\r")[-2].strip() == ""
    d = json.loads(out)  # stdout: one JSON object, nothing else
    assert d["prelabel_bound"] == 47


def test_no_bar_when_stderr_is_a_pipe_or_quiet():
    out, err = _run_on_pty(["prelabel", DEMO, "--json"], stderr_tty=False, stdout_tty=True)
    assert err == ""
    assert "reading" not in out and json.loads(out.replace("\r\n", "\n"))["K"] == 4
    out, err = _run_on_pty(["prelabel", DEMO, "--quiet"])
    assert err == "" and out.startswith("pool        sample_data/demo_binary.csv")


def test_a_bad_cell_with_flags_names_its_own_file_and_row(tmp_path, capsys):
    """With --label/--id the files are joined by the library's one join: a bad cell of
    the second file is named by that file, its data row and id (it was named as the
    joined table's, in the first file's row order)."""
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text("id,y_true,prediction,score\n1,0,0,0.9\n2,1,1,0.8\n3,,1,0.4\n")
    b.write_text("id,prediction,score\n3,1,0.7\n2,0,0.6\n1,1,abc\n")
    for flags in (["--label", "y_true"], ["--id", "id"]):
        code, _, err = run(capsys, ["prelabel", str(a), str(b), *flags])
        assert code == 2, err
        assert "'b.csv'" in err and "'abc'" in err and "data row 3" in err, err
