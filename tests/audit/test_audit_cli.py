"""`certlib audit` and `certlib verify-audit` (SPEC sections 10-11)."""

import json

import numpy as np
import polars as pl
import pytest

from certlib.cli import main
from certlib.audit.synthetic import synthetic_stream

KEYS = {"verdict", "tier", "stopping_time", "labels_used", "rho_interval", "delta_interval",
        "slices"}


gen = synthetic_stream


@pytest.fixture
def stream(tmp_path):
    f, g, y = gen(15000, 0.3, 0.0, seed=1)
    rng = np.random.default_rng(2)
    df = pl.DataFrame({"pred_incumbent": f, "pred_candidate": g, "label": y,
                       "region": rng.choice(["eu", "us"], 15000), "judge": rng.random(15000)})
    path = tmp_path / "s.csv"
    df.write_csv(path)
    return path, df


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_audit_json_keys(stream, capsys):
    code, out, _ = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.05", "--json"])
    d = json.loads(out)
    assert code == 0 and KEYS <= set(d) and d["verdict"] == "safe" and d["tier"] == 1


def test_audit_table_output(stream, capsys):
    code, out, _ = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.05"])
    assert code == 0 and out.startswith("verdict        safe (tier 1)")


def test_audit_parquet_slices_judge(stream, tmp_path, capsys):
    p = tmp_path / "s.parquet"
    stream[1].write_parquet(p)
    code, out, _ = run(capsys, ["audit", str(p), "--epsilon", "0.05", "--slices", "region",
                                "--judge", "judge", "--pi-min", "0.2", "--json"])
    d = json.loads(out)
    assert code == 0 and {s["slice"] for s in d["slices"]} == {"eu", "us"}
    assert d["routing"] == {"kind": "judge", "pi": None, "pi_min": 0.2}


def test_audit_without_labels_names_row(stream, tmp_path, capsys):
    p = tmp_path / "nolab.csv"
    stream[1].drop("label").write_csv(p)
    code, out, _ = run(capsys, ["audit", str(p), "--epsilon", "0.05", "--json"])
    d = json.loads(out)
    df = stream[1]
    row = d["needs_label"]
    assert code == 0 and d["verdict"] == "continue" and d["stopping_time"] is None
    assert df["pred_incumbent"][row] != df["pred_candidate"][row]


def test_audit_partially_labelled_replays_then_names_row(stream, tmp_path, capsys):
    df = stream[1]
    lab = [v if i < 3000 else None for i, v in enumerate(df["label"].to_list())]
    p = tmp_path / "part.csv"
    df.with_columns(pl.Series("label", lab)).write_csv(p)
    _, out, _ = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.01", "--json"])
    full = json.loads(out)
    code, out, _ = run(capsys, ["audit", str(p), "--epsilon", "0.01", "--json"])
    d = json.loads(out)
    assert code == 0 and d["verdict"] == "continue" and d["needs_label"] >= 3000
    assert d["labels_used"] > 0 and full["labels_used"] > d["labels_used"]


@pytest.mark.parametrize("confidence", ["prpl-eb", "betting"])
def test_record_then_verify(stream, tmp_path, capsys, confidence):
    rec = tmp_path / "r.json"
    code, _, _ = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.05", "--slices", "region",
                              "--record", str(rec), "--json", "--confidence", confidence])
    assert code == 0 and rec.exists()
    assert json.loads(rec.read_text())["config"]["confidence"] == confidence
    code, out, _ = run(capsys, ["verify-audit", str(rec), str(stream[0])])
    assert code == 0 and out.startswith("verified")
    d = json.loads(rec.read_text())
    d["labels_used"] += 1
    rec.write_text(json.dumps(d))
    code, out, err = run(capsys, ["verify-audit", str(rec), str(stream[0]), "--json"])
    assert code == 1 and not json.loads(out)["ok"] and "mismatch" in err


def test_ledger_persists_across_promotions(stream, tmp_path, capsys):
    led = tmp_path / "ledger.json"
    for k in (1, 2):
        code, out, _ = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.05", "--ledger",
                                    str(led), "--json"])
        d = json.loads(out)
        assert code == 0 and d["ledger"]["k"] == k
        assert d["delta"] == pytest.approx(0.05 * 6 / (np.pi ** 2 * k * k))
    assert len(json.loads(led.read_text())["entries"]) == 2


def test_window_and_baselines(stream, capsys):
    code, out, _ = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.05", "--window", "2000",
                                "--baselines", "--json"])
    d = json.loads(out)
    assert code == 0 and len(d["windows"]) >= 2 and KEYS <= set(d)
    assert [b["method"] for b in d["baselines"]] == ["discern", "uniform", "ppi", "active"]


def test_error_missing_column(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    pl.DataFrame({"pred_incumbent": [0, 1], "label": [0, 1]}).write_csv(p)
    code, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.05"])
    assert code == 2 and "lacks the column `pred_candidate`" in err


def test_error_missing_slice_column(stream, capsys):
    code, _, err = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.05", "--slices", "nope"])
    assert code == 2 and "lacks the column `nope` named by --slices" in err


def test_error_epsilon(stream, capsys):
    code, _, err = run(capsys, ["audit", str(stream[0]), "--epsilon", "-1"])
    assert code == 2 and "`epsilon` must be a positive number" in err


def test_error_pi(stream, capsys):
    code, _, err = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.1", "--pi", "1.5"])
    assert code == 2 and "`pi` must lie in (0, 1]" in err


def test_error_wrong_file_type(tmp_path, capsys):
    p = tmp_path / "s.txt"
    p.write_text("x")
    code, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.1"])
    assert code == 2 and "expected a .csv or .parquet file" in err


def test_error_missing_file(tmp_path, capsys):
    code, _, err = run(capsys, ["audit", str(tmp_path / "none.csv"), "--epsilon", "0.1"])
    assert code == 2 and "does not exist" in err


def test_error_bad_label_names_row(tmp_path, capsys):
    p = tmp_path / "s.csv"
    pl.DataFrame({"pred_incumbent": [0, 1, 0], "pred_candidate": [1, 1, 0],
                  "label": ["0", "maybe", "1"]}).write_csv(p)
    code, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.1"])
    # the file's label column is text because of one cell: the error names that cell,
    # not the first number written as text
    assert code == 2 and "column `label`, data row 2 is 'maybe'" in err and "row 1 " not in err


def test_error_not_a_record(stream, tmp_path, capsys):
    p = tmp_path / "r.json"
    p.write_text("{}")
    code, _, err = run(capsys, ["verify-audit", str(p), str(stream[0])])
    assert code == 2 and "not a certlib audit record" in err


def test_error_window_with_record(stream, tmp_path, capsys):
    code, _, err = run(capsys, ["audit", str(stream[0]), "--epsilon", "0.1", "--window", "10",
                                "--record", str(tmp_path / "r.json")])
    assert code == 2 and "`--window` cannot be combined" in err


def test_cli_imports_point_one_way():
    """certlib.cli -> certlib.audit.cli -> certlib.cli_output: the audit CLI never imports
    the main CLI back (both print through cli_output)."""
    import ast
    from pathlib import Path

    import certlib.audit.cli

    tree = ast.parse(Path(certlib.audit.cli.__file__).read_text())
    imported = {(node.level, node.module) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom)}
    assert (2, "cli_output") in imported
    assert (2, "cli") not in imported and (0, "certlib.cli") not in imported


@pytest.mark.parametrize("text, code, message", [
    # a blank cell is unlabelled, as in audit projects
    ("pred_incumbent,pred_candidate,label\n0,1,1\n1,1, \n0,0,0\n", 0, None),
    ("pred_incumbent,pred_candidate,label\n0,1,1\n1,1, \n0,0,cat\n", 2,
     "column `label`, data row 3 is 'cat'"),
    # Boolean predictions are numbers too
    ("pred_incumbent,pred_candidate,label\ntrue,false,1\nfalse,false,x\n", 2,
     "column `label`, data row 2 is 'x'"),
    # float() reads "1_0" as 10; in a file it is text
    ("pred_incumbent,pred_candidate,label\n0,1,1_0\n1,1,x\n", 2,
     "column `label`, data row 1 is '1_0'"),
])
def test_label_cells_of_a_text_label_column(tmp_path, capsys, text, code, message):
    p = tmp_path / "s.csv"
    p.write_text(text)
    rc, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.1"])
    assert rc == code and (message is None or message in err)


@pytest.mark.parametrize("text, message", [
    ("pred_incumbent,pred_candidate,label\n0,1,0\n1,1\n0,0,1\n",
     "stream file 's.csv' cannot be parsed: line 3 has 2 fields but the header has 3"),
    ("pred_incumbent,pred_candidate,label\n0,1,0\n1,1,1,0\n",
     "stream file 's.csv' cannot be parsed: line 3 has 4 fields but the header has 3"),
    ("", "stream file 's.csv' has no header row"),
    ("pred_incumbent,pred_candidate,label\n0,1,0\n,1,1\n",
     "stream file 's.csv': column `pred_incumbent` is empty at data row 2"),
    ("pred_incumbent,pred_candidate,label\n0,1,0\n1,1,0.5\n",
     "column `label`, data row 2 is 0.5; every prediction is a whole number"),
])
def test_error_broken_stream_file_names_line_or_cell(tmp_path, capsys, text, message):
    p = tmp_path / "s.csv"
    p.write_text(text)
    code, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.1"])
    assert code == 2 and message in err and "polars" not in err.lower()


def test_a_bad_cell_is_named_as_the_audit_page_names_it(tmp_path, capsys):
    """`certlib audit` and the Audit page refuse a bad stream with one sentence: the
    file's column, the data row counted from 1 and the item_id (the CLI said "`incumbent`
    at row 1", the API's parameter and a row counted from 0)."""
    from certlib.audit.batch import check_batch
    from certlib.errors import CertlibError

    p = tmp_path / "s.csv"
    p.write_text("item_id,pred_incumbent,pred_candidate,label\n10,0,1,0\n11,abc,1,\n12,1,1,1\n")
    rc, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.1"])
    with pytest.raises(CertlibError) as page:
        check_batch(p)
    tail = "column `pred_incumbent`, data row 2 (item_id 11) is 'abc', text, but"
    assert rc == 2 and tail in err and tail in str(page.value)
    assert err.startswith("certlib: error: stream file s.csv: column")
    # a row_id column names the item as row_id (the message said item_id: a re-check)
    p.write_text("row_id,pred_incumbent,pred_candidate,label\n10,0,1,0\n11,abc,1,\n")
    rc, _, err = run(capsys, ["audit", str(p), "--epsilon", "0.1"])
    assert rc == 2 and "data row 2 (row_id 11) is 'abc'" in err, err
    # without an id column the stream is still read (ids are the page's, for batches)
    p.write_text("pred_incumbent,pred_candidate\n0,1\n1,1\n")
    assert run(capsys, ["audit", str(p), "--epsilon", "0.1"])[0] == 0
