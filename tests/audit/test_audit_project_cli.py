"""`certlib audit-project new|append|label|status|export`."""

from __future__ import annotations

import json

import polars as pl
import pytest

from certlib.audit import audit
from certlib.audit.synthetic import synthetic_stream
from certlib.cli import main


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def files(tmp_path):
    f, g, y = synthetic_stream(6000, 0.3, 0.0, seed=21)
    df = pl.DataFrame({"item_id": [f"q{i}" for i in range(6000)], "pred_incumbent": f,
                       "pred_candidate": g, "note": [f"n{i}" for i in range(6000)]})
    df[:2500].write_csv(tmp_path / "b1.csv")
    df[2500:].write_parquet(tmp_path / "b2.parquet")
    return tmp_path, (f, g, y)


@pytest.mark.parametrize("confidence", [
    "prpl-eb", pytest.param("betting", marks=pytest.mark.slow)])  # a status per label: 2 min
def test_pipeline_feeds_annotator_labels_then_export_verifies(files, capsys, confidence):
    tmp, (f, g, y) = files
    store = ["--store", str(tmp / "s.db")]
    code, out, _ = run(capsys, ["audit-project", "new", "--epsilon", "0.05", "--name",
                                "ranker v2", "--json", "--confidence", confidence] + store)
    assert code == 0 and json.loads(out)["project_id"] == 1
    for b in ("b1.csv", "b2.parquet"):
        code, out, _ = run(capsys, ["audit-project", "append", "1", str(tmp / b), "--json"]
                           + store)
        assert code == 0 and len(json.loads(out)["batch"]["sha256"]) == 64
    labels = 0
    while True:
        code, out, _ = run(capsys, ["audit-project", "status", "1", "--json", "--queue", "1"]
                           + store)
        d = json.loads(out)
        if not d["queue_head"]:
            break
        item = d["queue_head"][0]["item_id"]
        code, out, _ = run(capsys, ["audit-project", "label", "1", item,
                                    str(int(y[int(item[1:])])), "--who", "ana"] + store)
        assert code == 0 and out.startswith(f"event {labels + 1}: label item {item}")
        labels += 1
    ref = audit(f, g, y, epsilon=0.05, confidence=confidence)
    assert d["verdict"] == ref.verdict == "safe" and d["labels_used"] == ref.labels_used
    assert d["stopping_time"] == ref.stopping_time and d["delta_interval"] == list(
        ref.delta_interval)
    assert labels == ref.labels_used and d["batches"][1]["items"] == 3500
    code, out, _ = run(capsys, ["audit-project", "export", "1", "--record", str(tmp / "r.json"),
                                "--stream", str(tmp / "s.csv")] + store)
    assert code == 0
    code, out, _ = run(capsys, ["verify-audit", str(tmp / "r.json"), str(tmp / "s.csv")])
    assert code == 0 and out.startswith("verified")
    # a changed label in the stream file is caught
    s = pl.read_csv(tmp / "s.csv")
    t = json.loads((tmp / "r.json").read_text())["trace"][0][0] - 1
    s.with_columns(pl.when(pl.int_range(pl.len()) == t).then(1 - pl.col("label"))
                   .otherwise(pl.col("label")).alias("label")).write_csv(tmp / "bad.csv")
    code, out, err = run(capsys, ["verify-audit", str(tmp / "r.json"), str(tmp / "bad.csv")])
    assert code == 1 and "trace label of item" in out


def test_status_table_and_undo(files, capsys):
    tmp, (f, g, y) = files
    store = ["--store", str(tmp / "s.db")]
    run(capsys, ["audit-project", "new", "--epsilon", "0.05", "--slices", "note"] + store)
    run(capsys, ["audit-project", "append", "1", str(tmp / "b1.csv")] + store)
    code, out, _ = run(capsys, ["audit-project", "status", "1"] + store)
    assert code == 0 and out.startswith("project        1\nverdict        continue")
    first = out.split("item_id ")[1].split(":")[0]
    run(capsys, ["audit-project", "label", "1", first, "0", "--who", "ana"] + store)
    code, out, err = run(capsys, ["audit-project", "label", "1", "--undo", "--who", "bo"] + store)
    assert code == 2 and "given by 'ana'; only they can undo it" in err, (out, err)
    code, out, _ = run(capsys, ["audit-project", "label", "1", "--undo", "--who", "ana"] + store)
    assert code == 0 and out.startswith(f"event 2: undo item {first}")
    code, out, _ = run(capsys, ["audit-project", "status", "1", "--json"] + store)
    assert json.loads(out)["queue_next"] == first


def test_chain_new_reports_delta_k(tmp_path, capsys):
    store = ["--store", str(tmp_path / "s.db")]
    run(capsys, ["audit-project", "new", "--epsilon", "0.05", "--chain", "m"] + store)
    code, out, _ = run(capsys, ["audit-project", "new", "--epsilon", "0.05", "--chain", "m",
                                "--json"] + store)
    d = json.loads(out)
    assert code == 0 and d["chain_k"] == 2 and abs(d["config"]["delta"] - 0.05 * 6 / (
        3.141592653589793 ** 2 * 4)) < 1e-15


@pytest.mark.parametrize("argv, message", [
    (["new", "--epsilon", "-1"], "`epsilon` must be a positive number"),
    (["new", "--epsilon", "0.05", "--window", "0"], "`window` must be a positive"),
    (["append", "1", "MISSING.csv"], "does not exist"),
    (["append", "9", "b1.csv"], "audit project 9 is not in the store"),
    (["append", "1", "bad.csv"], "column `pred_candidate`, data row 2 (item_id "
                                 "b) is 'x'; the project's earlier batches hold numbers"),
    (["label", "1", "--who", "ana"], "`label` needs ITEM_ID and LABEL (or --undo)"),
    (["label", "1", "nope", "1", "--who", "ana"], "item_id nope is not in audit project 1"),
    (["label", "1", "--undo", "--who", "ana"], "has no label to undo"),
    (["status", "x"], "audit project id 'x' is not a whole number"),
])
def test_bad_input_exits_2_with_one_line(files, capsys, argv, message):
    tmp, _ = files
    store = ["--store", str(tmp / "s.db")]
    run(capsys, ["audit-project", "new", "--epsilon", "0.05"] + store)
    run(capsys, ["audit-project", "append", "1", str(tmp / "b1.csv")] + store)
    (tmp / "bad.csv").write_text("item_id,pred_incumbent,pred_candidate\na,1,1\nb,1,x\n")
    argv = [str(tmp / a) if a.endswith(".csv") else a for a in argv]
    code, out, err = run(capsys, ["audit-project"] + argv + store)
    assert code == 2 and out == ""
    assert err.startswith("certlib: error: ") and err.count("\n") == 1, err
    assert message in err, err
