"""Every CSV the product writes neutralises spreadsheet formulas with one writer
(`certlib.spreadsheet`), and its read-back gives exactly the values written: the labels
CSV, an audit's stream file (`certlib verify-audit` reads it back), the Certificate
page's witness rows.  Row ids such as -1 stay as written, so they join the pool."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certlib.audit.batch import read_stream
from certlib.audit.store import AuditStore
from certlib.core.pool import Pool
from certlib.labelling.record import labels_csv, spreadsheet_safe
from certlib.labelling.store import LabelStore
from certlib.spreadsheet import (FORMULA_START, csv_text, original_cell, original_frame,
                                 read_csv, safe_cell)

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ['=HYPERLINK("http://x","y")', "=cmd|' /C calc'!A0", "+1+1", "-1+1", "@SUM(A1)",
           "\t=1", "'=1", "\r=1", "-dog"]
NUMBERS = [-1, -0.5, "-1", "-0.5", "7"]


def runs_in_a_spreadsheet(cell: str) -> bool:
    """Whether a cell as read from the file would start a formula (or hide its first
    character) in a spreadsheet: it starts with a formula character and is not a plain
    number."""
    try:
        float(cell)
        return False
    except ValueError:
        return cell.startswith(FORMULA_START[:-1])


def raw_cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]


def test_safe_cell_prefixes_formulas_and_keeps_numbers():
    for cell in HOSTILE:
        assert safe_cell(cell) == "'" + cell
        assert spreadsheet_safe(cell) == "'" + cell  # the record module's name for it
        assert original_cell(safe_cell(cell)) == cell
    for value in NUMBERS:
        assert safe_cell(value) == value and original_cell(value) == value
    for cell in ("ana", "", "1e5", "a=b", " =1"):
        assert safe_cell(cell) == cell


def test_csv_text_and_read_csv_round_trip():
    data = {"row_id": [-1, 2, 3] + [10 + i for i in range(len(HOSTILE))],
            "text": ["-1", "-0.5", "x"] + HOSTILE, "score": [-0.5, math.nan, None]
            + [0.1] * len(HOSTILE), "'@col": ["a"] * (3 + len(HOSTILE))}
    text = csv_text(data)
    assert not any(runs_in_a_spreadsheet(c) for c in raw_cells(text))
    df = read_csv(text.encode())
    assert df.columns == list(data)
    assert df["row_id"].to_list() == data["row_id"]  # numbers stay numbers
    assert df["text"].to_list() == data["text"]
    assert df["score"].to_list()[3:] == data["score"][3:] and df["score"][2] is None
    assert math.isnan(df["score"][1])
    assert read_csv(text.encode(), text=True)["row_id"].to_list() == [
        str(v) for v in data["row_id"]]
    with pytest.raises(ValueError, match="different lengths"):
        csv_text({"a": [1], "b": [1, 2]})


def text_pool(ids) -> Pool:
    n = len(ids)
    return Pool.from_arrays([[i % 2 for i in range(n)], [(i + 1) % 2 for i in range(n)]],
                            [[(i + 1) / (n + 1) for i in range(n)]] * 2, classes=[0, 1],
                            names=["A", "B"], row_ids=list(ids))


def test_labels_csv_with_hostile_cells_reads_back_and_joins_the_pool(tmp_path):
    """The labels CSV: hostile row ids, labels and annotator names are neutralised;
    read back, every value is the one stored and every row id is one of the pool's."""
    ids = HOSTILE + ["-1", "-0.5", "ok"]
    pool = Pool.from_arrays([["=cat", "-dog"] * 6, ["-dog", "=cat"] * 6],
                            [[(i + 1) / 13 for i in range(12)]] * 2, names=["A", "B"],
                            row_ids=ids)
    store = LabelStore(tmp_path / "l.db")
    pid = store.create_project(pool, "evil", policy="random")
    who = ["@ana", "=bob", "-carl", "'dee"]
    for i, rid in enumerate(ids):
        store.append_label(pid, rid, ["=cat", "-dog"][i % 2], who[i % 4], pool=pool)
    prog = store.progress(pid, pool)
    text = labels_csv(prog)
    assert not any(runs_in_a_spreadsheet(c) for c in raw_cells(text))
    back = read_csv(text.encode(), text=True)
    assert back.columns == ["row_id", "label", "annotator", "time"]
    assert back["row_id"].to_list() == [e.row_id for e in prog.labels]
    assert back["label"].to_list() == [e.label for e in prog.labels]
    assert back["annotator"].to_list() == [e.annotator for e in prog.labels]
    assert all(pool.row_ids[pool.position(r)] == r for r in back["row_id"].to_list())
    # a numeric pool: row id -1 and label -1 are written as numbers and read back so
    nums = Pool.from_arrays([[-1, 1, 1, -1], [1, 1, -1, -1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            names=["A", "B"], row_ids=[-1, 2, 3, 4])
    pid = store.create_project(nums, "nums", policy="random")
    store.append_label(pid, -1, -1, "ana", pool=nums)
    back = read_csv(labels_csv(store.progress(pid, nums)).encode())
    assert back["row_id"].to_list() == [-1] and back["label"].to_list() == [-1]
    assert nums.position(back["row_id"][0]) == 0


ID_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                  min_size=1, max_size=12)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ids=st.lists(st.one_of(ID_TEXT, st.sampled_from(HOSTILE + ["-1", "-0.5"])),
                    min_size=2, max_size=6, unique=True))
def test_row_ids_of_any_text_join_the_pool_after_read_back(tmp_path_factory, ids):
    """Property: whatever text the row ids are, the labels CSV read back (every column as
    text, as a pool's text ids are) gives exactly the ids labelled, each one of the
    pool's."""
    try:
        pool = text_pool(ids)
    except ValueError:  # ids the pool refuses (blank, duplicates once stripped, ...)
        return
    store = LabelStore(tmp_path_factory.mktemp("p") / "l.db")
    pid = store.create_project(pool, "p", policy="random")
    for rid in list(pool.row_ids):
        store.append_label(pid, rid, 1, "ana", pool=pool)
    prog = store.progress(pid, pool)
    text = labels_csv(prog)
    assert not any(runs_in_a_spreadsheet(c) for c in raw_cells(text)[4::4])  # the ids
    back = read_csv(text.encode(), text=True)["row_id"].to_list()
    assert back == [e.row_id for e in prog.labels]
    assert [pool.position(r) for r in back] == [pool.position(e.row_id) for e in prog.labels]


def test_audit_stream_csv_is_neutralised_and_verifies(tmp_path):
    """The audit's stream download: hostile item ids, text predictions, slices and an
    extra column are neutralised; `read_stream` (certlib verify-audit, the Audit page's
    verifier) reads back the stored values, so the exported record verifies."""
    from certlib.audit.record import read_record, verify_record

    n = 60
    classes = ["=cat", "-dog", "@cow"]
    batch = {"item_id": [HOSTILE[i % len(HOSTILE)] + str(i) for i in range(n)],
             "pred_incumbent": [classes[i % 3] for i in range(n)],
             "pred_candidate": [classes[(i // 2) % 3] for i in range(n)],
             "label": [classes[(i * 7) % 3] if i % 4 else None for i in range(n)],
             "region": ["+north", "=south"] * (n // 2),
             "@note": ["=HYPERLINK(\"http://x\",\"y\")", "-1"] * (n // 2)}
    store = AuditStore(tmp_path / "a.db")
    aid = store.create(epsilon=0.3, slice_column="region", name="evil", who="ana")
    store.append_batch(aid, batch, who="ana")
    text = store.stream_csv(aid)
    assert not any(runs_in_a_spreadsheet(c) for c in raw_cells(text))
    back = read_csv(text.encode(), text=True)
    assert back.columns == ["item_id", "pred_incumbent", "pred_candidate", "label", "region",
                            "@note"]
    stored_ids = [str(i) for i in store.stream(aid)[5]]  # as the batch check keeps them
    assert back["item_id"].to_list() == stored_ids and "=cmd|' /C calc'!A01" in stored_ids
    for col in ("pred_incumbent", "pred_candidate", "region", "@note"):
        assert back[col].to_list() == [str(v) for v in batch[col]], col
    assert back["label"].to_list() == [v if v is not None else None for v in batch["label"]]
    rec_path, stream_path = tmp_path / "audit.json", tmp_path / "stream.csv"
    rec = store.export(aid, rec_path, stream_path)
    cols = read_stream(stream_path, slices="region")
    assert cols.incumbent.tolist() == batch["pred_incumbent"]
    assert cols.slices.tolist() == batch["region"]
    # what `certlib verify-audit RECORD STREAM` does with the two files
    ver = verify_record(read_record(rec_path), cols.incumbent, cols.candidate, cols.labels,
                        slices=cols.slices)
    assert rec["audit_project"]["name"] == "evil" and ver.ok, ver.mismatches


def test_certificate_page_witness_download_reads_back(tmp_path, monkeypatch):
    """The Certificate page's "Download row ids (CSV)" on a pool whose row ids are
    hostile text: neutralised, and read back they are the witness the page shows."""
    st_testing = pytest.importorskip("streamlit.testing.v1")
    import streamlit

    from certlib.labelling.saved_pools import SavedPools

    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "labels.db"))
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "data"))
    n = 40
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["row_id", "label", "pred_a", "conf_a", "pred_b", "conf_b"])
    for i in range(n):
        rid = HOSTILE[i % len(HOSTILE)] + str(i) if i % 5 else str(-i)
        w.writerow([rid, i % 2, (i // 3) % 2, round((i * 37 % n + 1) / (n + 1), 3),
                    i % 2 if i % 7 else 1 - i % 2, round((i * 11 % n + 1) / (n + 1), 3)])
    saved = SavedPools(tmp_path / "data").add("evil.csv", out.getvalue().encode())
    seen = []
    original = streamlit.download_button

    def spy(label, data=None, *args, **kwargs):
        if label == "Download row ids (CSV)":
            seen.append(data)
        return original(label, data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", spy)
    at = st_testing.AppTest.from_file(str(ROOT / "views" / "certificate.py"),
                                      default_timeout=120)
    at.session_state["pool_ref"] = f"upload:{saved.digest}"
    at.run()
    assert not at.exception, at.exception
    (text,) = seen
    shown = next(d.value for d in at.dataframe if d.value.columns[0] == "row_id")
    assert not any(runs_in_a_spreadsheet(c) for c in raw_cells(text))
    assert read_csv(text.encode(), text=True)["row_id"].to_list() == shown["row_id"].tolist()
    assert any(r.startswith("=") for r in shown["row_id"]) or any(
        r.startswith(("+", "-", "@", "\t", "'")) for r in shown["row_id"])


def test_original_frame_drops_one_quote():
    import polars as pl

    df = original_frame(pl.DataFrame({"'=x": ["''a", "'b", "c"], "n": [1, 2, 3]}))
    assert df.columns == ["=x", "n"] and df["=x"].to_list() == ["'a", "b", "c"]
