"""Column maps: the names guess_map recognises, one file per model joined on its id,
zips, the one error of each bad input, progress, and the uploads that keep their map
(certlib.columns, certlib.labelling.saved_pools)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import certlib
from certlib.columns import (Ambiguity, CandidateColumns, ColumnMap, MappedPool, expand_zips,
                             guess_map, join_tables, needs_map, pool_from_mapped,
                             read_sources)
from certlib.errors import CertlibError, ColumnError, InvalidValueError, PoolFileError
from certlib.io import _Reporter, _size, load_pool
from certlib.labelling.saved_pools import SavedPools

CONVENTION = (b"row_id,label,pred_A,conf_A,pred_B,conf_B\n"
              b"r1,1,0,0.9,1,0.8\nr2,0,0,0.8,0,0.9\nr3,,1,0.7,0,0.6\nr4,1,1,0.5,1,0.5\n")
RENAMED = (b"id,y_true,A_pred,A_score,B_pred,B_score\n"
           b"r1,1,0,0.9,1,0.8\nr2,0,0,0.8,0,0.9\nr3,,1,0.7,0,0.6\nr4,1,1,0.5,1,0.5\n")


def names(m: ColumnMap) -> list[str]:
    return [c.name for c in m.candidates]


def zipped(**members: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name.replace("__", "/"), data)
    return buf.getvalue()


def one_error(sources, **kw) -> CertlibError:
    """The error read_sources raises: exactly one CertlibError (pytest.raises)."""
    with pytest.raises(CertlibError) as info:
        read_sources(sources, **kw)
    return info.value


# ---------------------------------------------------------------- guess_map: names
@pytest.mark.parametrize("label", ["label", "y_true", "target", "gt", "truth", "Y_TRUE",
                                   "ground_truth", "y"])
@pytest.mark.parametrize("row_id", ["id", "row_id", "sample_id", "ID", "idx"])
def test_guess_finds_the_label_and_the_id_by_their_common_names(label, row_id):
    m = guess_map([row_id, "note", label, "A_pred", "A_score", "B_pred", "B_score"])
    assert (m.label, m.row_id) == (label, row_id)
    assert names(m) == ["A", "B"] and m.ambiguities == ()


@pytest.mark.parametrize("cols,expected", [
    (["A_pred", "A_score", "B_pred", "B_score"],
     [("A", "A_pred", "A_score", ()), ("B", "B_pred", "B_score", ())]),
    (["pred_A", "conf_A", "B_pred", "B_conf"],
     [("A", "pred_A", "conf_A", ()), ("B", "B_pred", "B_conf", ())]),
    (["modelA_pred", "score_modelA", "modelB_prediction", "modelB_confidence"],
     [("modelA", "modelA_pred", "score_modelA", ()),
      ("modelB", "modelB_prediction", "modelB_confidence", ())]),
    (["A_proba", "B_proba"], [("A", None, None, (("1", "A_proba"),)),
                              ("B", None, None, (("1", "B_proba"),))]),
    (["prob_A", "prob_B"], [("A", None, None, (("1", "prob_A"),)),
                            ("B", None, None, (("1", "prob_B"),))]),
    (["A_proba_0", "A_proba_1", "A_proba_2", "B_pred", "B_score"],
     [("A", None, None, (("0", "A_proba_0"), ("1", "A_proba_1"), ("2", "A_proba_2"))),
      ("B", "B_pred", "B_score", ())]),
    (["A_proba_cat", "A_proba_dog", "B_proba_cat", "B_proba_dog"],
     [("A", None, None, (("cat", "A_proba_cat"), ("dog", "A_proba_dog"))),
      ("B", None, None, (("cat", "B_proba_cat"), ("dog", "B_proba_dog")))]),
    # one classifier's prediction, two scores of it
    (["pred", "score_msp", "score_energy"],
     [("msp", "pred", "score_msp", ()), ("energy", "pred", "score_energy", ())]),
    # a prediction and a probability of class 1: the prediction column is the prediction
    (["A_pred", "A_proba", "B_pred", "B_score"],
     [("A", "A_pred", None, (("1", "A_proba"),)), ("B", "B_pred", "B_score", ())]),
])
def test_guess_reads_each_naming_style(cols, expected):
    m = guess_map(["id", "y_true"] + cols)
    got = [(c.name, c.pred, c.conf, c.proba) for c in m.candidates]
    assert got == expected
    assert m.ambiguities == ()


def test_columns_without_a_model_name_are_the_default_candidate():
    m = guess_map(["id", "prediction", "score"], default_name="resnet")
    assert [(c.name, c.pred, c.conf) for c in m.candidates] == [("resnet", "prediction",
                                                                "score")]
    m = guess_map(["id", "y_pred", "y_score"], default_name="m")
    assert [(c.name, c.pred, c.conf) for c in m.candidates] == [("m", "y_pred", "y_score")]


def test_candidates_keep_the_order_of_their_first_column():
    m = guess_map(["B_score", "A_pred", "A_score", "B_pred"])
    assert names(m) == ["B", "A"]


def test_label_named_label_wins_else_the_leftmost_label_like_column():
    assert guess_map(["target", "A_pred", "A_score", "label"]).label == "label"
    assert guess_map(["target", "y_true", "A_pred", "A_score"]).label == "target"
    assert guess_map(["y_true", "target", "A_pred", "A_score"]).label == "y_true"
    assert guess_map(["sample_id", "id", "A_pred"]).row_id == "sample_id"
    assert guess_map(["sample_id", "row_id", "A_pred"]).row_id == "row_id"


# ---------------------------------------------------------------- ambiguity
@pytest.mark.parametrize("cols,part,both", [
    (["A_pred", "pred_A", "A_score"], "prediction", ("A_pred", "pred_A")),
    (["A_pred", "A_score", "A_conf"], "confidence", ("A_score", "A_conf")),
    (["A_pred", "score_A", "A_confidence"], "confidence", ("score_A", "A_confidence")),
    (["A_proba", "prob_A"], "probability of class 1", ("A_proba", "prob_A")),
    (["A_proba_0", "A_proba_1", "prob_A_1"], "probability of class 1",
     ("A_proba_1", "prob_A_1")),
])
def test_two_columns_claiming_one_part_are_recorded_not_chosen(cols, part, both):
    m = guess_map(cols + ["B_pred", "B_score"])
    assert m.ambiguities == (Ambiguity("A", part, both),)
    data = (",".join(cols + ["B_pred", "B_score"]) + "\n"
            + ",".join(["0.5"] * len(cols) + ["1", "0.5"]) + "\n").encode()
    err = one_error([("mine.csv", data)])
    assert isinstance(err, ColumnError)
    text = str(err)
    assert "'mine.csv'" in text and all(repr(c) in text for c in both)
    # a person's choice settles it, and the other column is named, not dropped
    chosen = m.with_choice("A", part, both[1])
    assert chosen.ambiguities == ()
    got = read_sources([("mine.csv", data)], column_map=chosen)
    assert both[0] in got.pool.extra
    assert any(repr(both[0]) in w for w in got.warnings)


def test_an_ambiguous_guess_is_refused_by_every_reader():
    df = pl.DataFrame({"A_pred": [0, 1], "pred_A": [0, 1], "A_score": [0.9, 0.8],
                       "B_pred": [1, 1], "B_score": [0.7, 0.6]})
    with pytest.raises(ColumnError, match="'A_pred' and 'pred_A'"):
        pool_from_mapped("t.csv", df, guess_map(df.columns))
    with pytest.raises(ColumnError, match="'A_pred' and 'pred_A'"):
        certlib.pool_from_frame(df)
    # naming the candidates decides
    pool = certlib.pool_from_frame(df, candidates={"A": ("pred_A", "A_score"),
                                                   "B": ("B_pred", "B_score")})
    assert pool.names == ("A", "B")


def test_two_label_like_columns_use_the_first_and_name_the_other():
    data = b"id,y_true,target,A_pred,A_score,B_pred,B_score\n1,1,0,0,.9,1,.8\n2,,1,1,.5,1,.4\n"
    got = read_sources([("two.csv", data)])
    assert got.pool.n_labelled == 1
    assert got.pool.extra["target"] == (0, 1)
    assert len(got.warnings) == 1 and "'target'" in got.warnings[0] \
        and "'two.csv'" in got.warnings[0]


# ---------------------------------------------------------------- labels by another name
@pytest.mark.parametrize("label", ["y_true", "target", "ground_truth", "true_label"])
def test_a_label_column_not_called_label_keeps_its_labels(label, tmp_path):
    data = CONVENTION.replace(b"label", label.encode())
    got = read_sources([("p.csv", data)])
    assert got.pool.n_labelled == 3 and label not in got.pool.extra
    assert got.warnings == ()
    frame = pl.read_csv(io.BytesIO(data))
    assert certlib.pool_from_frame(frame).n_labelled == 3
    saved = SavedPools(tmp_path).add("p.csv", data)
    assert saved.pool is not None and saved.pool.n_labelled == 3
    assert SavedPools(tmp_path).load(saved.digest).n_labelled == 3
    # the same pool as the file that calls its labels "label"
    assert certlib.pool_hash(got.pool) == certlib.pool_hash(
        read_sources([("p.csv", CONVENTION)]).pool)


@pytest.mark.parametrize("label", ["gt", "truth", "Label", "y", "class"])
def test_a_generic_label_like_name_in_a_convention_file_is_shown_and_named(label):
    """In a file of the convention's columns (SPEC section 2: other columns are shown)
    a generic name may hold anything (a class column of 'animal', 'plant'): it is not
    taken as the label, and a label-like one is named in a warning."""
    data = CONVENTION.replace(b"label", label.encode())
    got = read_sources([("p.csv", data)])
    assert got.pool.n_labelled == 0 and label in got.pool.extra
    if label not in ("y", "class"):
        assert len(got.warnings) == 1 and f"{label!r}" in got.warnings[0]
        assert "no column is" in got.warnings[0]


def test_a_label_column_by_another_name_keeps_its_labels_in_a_prob_file():
    data = b"prob_0,prob_1,y_true\n0.2,0.8,1\n0.6,0.4,\n0.5,0.5,0\n"
    got = read_sources([("p.csv", data)])
    assert got.pool.names == ("msp", "neg_entropy", "margin")
    assert got.pool.n_labelled == 2


def test_an_unused_label_like_column_stays_in_extra_and_is_named():
    m = ColumnMap((CandidateColumns("A", "A_pred", "A_score"),
                   CandidateColumns("B", "B_pred", "B_score")), row_id="id")
    got = read_sources([("r.csv", RENAMED)], column_map=m)
    assert got.pool.n_labelled == 0
    assert got.pool.extra["y_true"] == (1, 0, None, 1)
    assert got.warnings and "'y_true'" in got.warnings[0] and "'r.csv'" in got.warnings[0]


def test_needs_map():
    assert not needs_map(["pred_a", "conf_a", "pred_b", "conf_b", "label"])
    assert needs_map(["pred_a", "conf_a", "pred_b", "conf_b", "y_true"])
    assert needs_map(["a_pred", "a_score", "b_pred", "b_score"])
    assert not needs_map(["prob_0", "prob_1", "y_true"])  # a map cannot say what it does


# ---------------------------------------------------------------- renamed == convention
def test_renamed_columns_with_their_map_are_the_convention_pool(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(CONVENTION)
    ref = load_pool(path)
    guessed = read_sources([("r.csv", RENAMED)])
    explicit = read_sources([("r.csv", RENAMED)], column_map=ColumnMap(
        (CandidateColumns("A", "A_pred", "A_score"), CandidateColumns("B", "B_pred", "B_score")),
        label="y_true", row_id="id"))
    for got in (guessed, explicit):
        assert certlib.pool_hash(got.pool) == certlib.pool_hash(ref)
        assert got.pool.labels.tolist() == ref.labels.tolist()
        assert got.pool.classes == ref.classes and got.pool.row_ids == ref.row_ids
    assert guessed.column_map == explicit.column_map


tables = st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(0, 2), min_size=n, max_size=n), min_size=2, max_size=3),
    st.lists(st.lists(st.sampled_from([0.1, 0.25, 0.5, 1 / 3, 0.75, 0.9, 2.0]), min_size=n,
                      max_size=n), min_size=3, max_size=3),
    st.lists(st.sampled_from([None, 0, 1, 2]), min_size=n, max_size=n),
    st.booleans()))


def csv_text(cols: dict[str, list]) -> bytes:
    head = ",".join(cols)
    n = len(next(iter(cols.values())))
    rows = [",".join("" if v[i] is None else repr(v[i]) if isinstance(v[i], float)
                     else str(v[i]) for v in cols.values()) for i in range(n)]
    return ("\n".join([head] + rows) + "\n").encode()


@settings(max_examples=40, deadline=None)
@given(tables)
def test_any_renamed_table_reads_as_its_convention_file(t):
    preds, confs, labels, with_ids = t
    n = len(labels)
    conv: dict[str, list] = {"row_id": [f"r{i}" for i in range(n)]} if with_ids else {}
    mine: dict[str, list] = {"sample_id": list(conv["row_id"])} if with_ids else {}
    for k, p in enumerate(preds):
        conv[f"pred_m{k}"], conv[f"conf_m{k}"] = p, confs[k]
        mine[f"m{k}_pred"], mine[f"m{k}_score"] = p, confs[k]
    conv["label"] = mine["target"] = labels
    assume(len({v for p in preds for v in p} | {v for v in labels if v is not None}) > 1)
    ref = read_sources([("c.csv", csv_text(conv))])
    got = read_sources([("m.csv", csv_text(mine))])
    assert got.column_map is not None and ref.column_map is None
    assert certlib.pool_hash(got.pool) == certlib.pool_hash(ref.pool)
    assert got.pool.labels.tolist() == ref.pool.labels.tolist()


# ---------------------------------------------------------------- one file per model
A = b"id,prediction,score,label\n1,0,0.9,0\n2,1,0.8,\n3,1,0.5,1\n"
B = b"id,prediction,score\n3,1,0.5\n1,1,0.6\n2,1,0.7\n"
C = b"sample_id,prediction,score\n2,0,0.1\n3,0,0.2\n1,0,0.3\n"


def test_files_join_on_their_id_in_upload_order_rows_in_the_first_files_order():
    got = read_sources([("a.csv", A), ("b.csv", B), ("c.csv", C)])
    pool = got.pool
    assert pool.names == ("a", "b", "c")  # upload order: the tie priority
    assert pool.row_ids == (1, 2, 3)  # the first file's order
    assert pool.confs.tolist() == [[0.9, 0.8, 0.5], [0.6, 0.7, 0.5], [0.3, 0.1, 0.2]]
    assert pool.n_labelled == 2
    assert got.files == ("a.csv", "b.csv", "c.csv")
    # the other order: another tie priority and another row order
    other = read_sources([("b.csv", B), ("a.csv", A)]).pool
    assert other.names == ("b", "a") and other.row_ids == (3, 1, 2)
    # the tie at row 3 (0.5 and 0.5) goes to the earlier file
    assert pool.confs[0, 2] == pool.confs[1, 2]


def test_the_same_files_as_one_convention_file():
    joined = read_sources([("a.csv", A), ("b.csv", B)]).pool
    one = read_sources([("p.csv", b"row_id,label,pred_a,conf_a,pred_b,conf_b\n"
                                  b"1,0,0,0.9,1,0.6\n2,,1,0.8,1,0.7\n3,1,1,0.5,1,0.5\n")]).pool
    assert certlib.pool_hash(joined) == certlib.pool_hash(one)
    assert joined.labels.tolist() == one.labels.tolist()


def test_a_zip_of_files_is_the_files():
    z = zipped(**{"models__a.csv": A, "models__b.csv": B, "__MACOSX__._a.csv": b"junk"})
    got = read_sources([("models.zip", z)])
    assert got.pool.names == ("a", "b")
    assert got.files == ("models.zip/models/a.csv", "models.zip/models/b.csv")
    ref = read_sources([("a.csv", A), ("b.csv", B)]).pool
    assert certlib.pool_hash(got.pool) == certlib.pool_hash(ref)


def test_join_tables_labels_agree_across_kinds():
    a = pl.DataFrame({"id": [1, 2], "pred": [0, 1], "score": [0.9, 0.8], "label": [1, None]})
    b = pl.DataFrame({"id": [2, 1], "pred": [1, 1], "score": [0.7, 0.6],
                      "label": [0.0, 1.0]})
    table, cmap = join_tables([("a.csv", a, guess_map(a.columns, default_name="a")),
                               ("b.csv", b, guess_map(b.columns, default_name="b"))])
    assert table[cmap.label].to_list() == [1, 0]


# ---------------------------------------------------------------- one error each
TWO = b"id,y_true,A_pred,A_score,B_pred,B_score\n1,0,0,0.9,1,0.8\n2,1,1,0.7,1,0.6\n"


@pytest.mark.parametrize("sources,kind,needles", [
    # a mapped column of the wrong type
    ([("s.csv", TWO.replace(b"0.7", b"high"))], InvalidValueError,
     ["'s.csv'", "'A_score'", "data row 2", "'high'"]),
    ([("s.csv", b"id,A_proba,B_proba\n1,0.3,0.5\n2,1.5,0.2\n")], InvalidValueError,
     ["'s.csv'", "'A_proba'", "data row 2", "1.5", "[0, 1]"]),
    ([("s.csv", b"id,A_proba_0,A_proba_1,B_pred,B_score\n1,0.3,0.5,1,0.2\n")],
     InvalidValueError, ["'s.csv'", "A_proba_0", "data row 1", "sum to"]),
    ([("s.csv", b"id,A_pred,A_proba,B_pred,B_score\n1,1,0.3,1,0.2\n2,2,0.3,1,0.2\n")],
     InvalidValueError, ["'s.csv'", "'A_pred'", "data row 2", "0 or 1"]),
    ([("s.csv", TWO.replace(b"1,0,0,0.9", b"1,0,,0.9"))], InvalidValueError,
     ["'s.csv'", "'A_pred'", "data row 1"]),
    # ids that do not join
    ([("a.csv", A), ("b.csv", b"id,prediction,score\n1,0,.9\n3,1,.7\n")], InvalidValueError,
     ["'b.csv'", "id 2", "data row 2 of 'a.csv'"]),
    ([("a.csv", A), ("b.csv", B + b"4,1,0.2\n")], InvalidValueError,
     ["'b.csv'", "id 4", "data row 4", "'a.csv' does not have"]),
    ([("a.csv", A), ("b.csv", B + b"2,1,0.2\n")], InvalidValueError,
     ["'b.csv'", "'id'", "value 2", "data rows 3 and 4"]),
    ([("a.csv", A), ("b.csv", b"id,prediction,score\n7,0,.9\n8,1,.7\n9,1,.7\n")],
     InvalidValueError, ["'b.csv'", "id 1"]),
    ([("a.csv", A), ("b.csv", b"prediction,score\n0,.9\n1,.7\n1,.7\n")], ColumnError,
     ["'b.csv'", "no row id column", "prediction"]),
    # a cell of a later file, in that file's own rows
    ([("a.csv", A), ("b.csv", B.replace(b"1,1,0.6", b"1,1,oops"))], InvalidValueError,
     ["'b.csv'", "'score'", "data row 2", "id 1", "'oops'"]),
    # labels that differ
    ([("a.csv", A), ("b.csv", b"id,prediction,score,label\n1,1,.6,1\n2,1,.7,\n3,1,.5,1\n")],
     InvalidValueError, ["'a.csv'", "'b.csv'", "id 1"]),
    # a zip holding a non-pool file
    ([("m.zip", zipped(**{"a.csv": A, "notes.txt": b"hello"}))], PoolFileError,
     ["'m.zip'", "'notes.txt'", "not a pool file"]),
    ([("m.zip", b"PK not a zip")], PoolFileError, ["'m.zip'", "not a readable zip"]),
    ([("m.zip", zipped())], PoolFileError, ["'m.zip'", "holds no file"]),
    # two files giving the same model name
    ([("x/a.csv", A), ("y/a.csv", B)], ColumnError, ["'x/a.csv'", "'y/a.csv'", "'a'"]),
    ([("one.csv", b"id,M_pred,M_score\n1,0,.9\n"), ("two.csv", b"id,M_pred,M_score\n1,0,.8\n")],
     ColumnError, ["'one.csv'", "'two.csv'", "'M'"]),
    # a file with no candidate columns
    ([("a.csv", A), ("b.csv", b"id,x,y\n1,2,3\n2,2,3\n3,2,3\n")], ColumnError,
     ["'b.csv'", "no candidate columns"]),
    # a file that is not a table
    ([("s.csv", b"\x00\x01junk")], PoolFileError, ["'s.csv'"]),
    ([("s.txt", TWO)], PoolFileError, ["'s.txt'"]),
    # the file convention's own word when the file is near it
    ([("s.csv", b"pred_A,conf_A,pred_B\n0,.9,1\n")], ColumnError, ["'s.csv'", "conf_B"]),
])
def test_each_bad_input_is_one_error_naming_file_column_and_row(sources, kind, needles):
    err = one_error(sources)
    assert isinstance(err, kind), (type(err), err)
    for needle in needles:
        assert needle in str(err), (needle, str(err))


TWO_MAP = ColumnMap((CandidateColumns("A", "A_pred", "A_score"),
                     CandidateColumns("B", "B_pred", "B_score")), label="y_true", row_id="id")


@pytest.mark.parametrize("cmap,needles", [
    # a map naming a column not in the file
    (ColumnMap((CandidateColumns("A", "A_pred", "nope"),
                CandidateColumns("B", "B_pred", "B_score"))), ["'nope'", "'s.csv'", "'A'"]),
    (ColumnMap(TWO_MAP.candidates, label="truth"), ["'truth'", "'s.csv'", "the label"]),
    # a column mapped twice
    (ColumnMap((CandidateColumns("A", "A_pred", "A_pred"),
                CandidateColumns("B", "B_pred", "B_score"))),
     ["'A_pred'", "'s.csv'", "mapped twice", "prediction of 'A'", "confidence of 'A'"]),
    (ColumnMap((CandidateColumns("A", "A_pred", "A_score"),
                CandidateColumns("B", "B_pred", "A_score"))),
     ["'A_score'", "mapped twice", "confidence of 'B'"]),
    (ColumnMap(TWO_MAP.candidates, label="id", row_id="id"),
     ["'id'", "mapped twice", "the label", "the row id"]),
    (ColumnMap((CandidateColumns("A", "A_pred", "A_score"),
                CandidateColumns("B", "B_pred", "B_score")), label="A_score"),
     ["'A_score'", "mapped twice"]),
    (ColumnMap((CandidateColumns("A", proba=(("1", "A_score"), ("1.0", "B_score"))),
                CandidateColumns("B", "B_pred", "B_score"))), ["class 1"]),
    # maps that are not a pool
    (ColumnMap((CandidateColumns("A", "A_pred", "A_score"),)), ["'s.csv'", "at least two"]),
    (ColumnMap((CandidateColumns("A", "A_pred", "A_score"),
                CandidateColumns("A", "B_pred", "B_score"))), ["'s.csv'", "'A'", "unique"]),
    (ColumnMap((CandidateColumns("A", "A_pred"), CandidateColumns("B", "B_pred", "B_score"))),
     ["'s.csv'", "'A'", "no confidence"]),
])
def test_a_map_that_does_not_fit_is_one_error(cmap, needles):
    err = one_error([("s.csv", TWO)], column_map=cmap)
    assert isinstance(err, ColumnError)
    for needle in needles:
        assert needle in str(err), (needle, str(err))


def test_a_shared_prediction_may_serve_several_candidates():
    data = b"pred,s1,s2,label\n0,.9,.1,0\n1,.8,.2,1\n"
    cmap = ColumnMap((CandidateColumns("s1", "pred", "s1"), CandidateColumns("s2", "pred", "s2")),
                     label="label")
    pool = read_sources([("p.csv", data)], column_map=cmap).pool
    assert pool.names == ("s1", "s2") and pool.shared_prediction


def test_a_label_outside_the_declared_classes_names_its_file_and_row():
    err = one_error([("a.csv", A), ("b.csv", b"id,prediction,score,label\n1,0,.9,7\n2,0,.1,\n"
                                              b"3,1,.7,\n")], classes=[0, 1])
    assert "'b.csv'" in str(err) and "7" in str(err) and "data row 1" in str(err)


def test_column_map_json_round_trip_and_bad_json():
    m = ColumnMap((CandidateColumns("A", proba=(("0", "a0"), ("1", "a1"))),
                   CandidateColumns("B", "b", "c")), label="y", row_id="id")
    assert ColumnMap.from_json(m.to_json()) == m
    for bad in ("[]", "{}", '{"candidates": [{"name": "A", "pred": 3}]}', "not json"):
        with pytest.raises(CertlibError, match="not a column map"):
            ColumnMap.from_json(bad)


def test_expand_zips_refuses_a_zip_larger_than_the_limit():
    with pytest.raises(PoolFileError, match="unpacks to"):
        expand_zips([("m.zip", zipped(**{"a.csv": A}))], max_bytes=10)


# ---------------------------------------------------------------- uploads
BAD_UPLOADS = [
    [("s.csv", TWO.replace(b"0.7", b"high"))],
    [("s.csv", b"A_pred,pred_A,A_score,B_pred,B_score\n0,0,.9,1,.8\n")],
    [("a.csv", A), ("b.csv", b"id,prediction,score\n1,0,.9\n3,1,.7\n")],
    [("a.csv", A), ("b.csv", B + b"2,1,0.2\n")],
    [("m.zip", zipped(**{"a.csv": A, "b.txt": B}))],
    [("x/a.csv", A), ("y/a.csv", B)],
]


@pytest.mark.parametrize("files", BAD_UPLOADS)
def test_a_bad_upload_writes_nothing(tmp_path, files):
    folder = SavedPools(tmp_path / "data")
    with pytest.raises(CertlibError):
        folder.add_files(files)
    assert not (tmp_path / "data").exists()
    # nor beside an earlier upload
    kept = folder.add("good.csv", CONVENTION)
    before = sorted(p.name for p in (tmp_path / "data").iterdir())
    with pytest.raises(CertlibError):
        folder.add_files(files)
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == before
    assert [s.digest for s in folder.recent()] == [kept.digest]


def test_files_one_per_model_saved_and_read_again(tmp_path):
    folder = SavedPools(tmp_path)
    saved = folder.add_files([("a.csv", A), ("b.csv", B)])
    assert saved.name == "a.csv + b.csv" and saved.pool is not None
    again = SavedPools(tmp_path).read(saved.digest)
    assert again.files == ("a.csv", "b.csv")
    assert certlib.pool_hash(again.pool) == certlib.pool_hash(saved.pool)
    assert again.pool.labels.tolist() == saved.pool.labels.tolist()


def test_the_same_file_uploaded_again_reuses_its_saved_map(tmp_path):
    data = b"A_pred,pred_A,A_score,B_pred,B_score,y_true\n0,1,.9,1,.8,1\n1,0,.7,1,.6,\n"
    folder = SavedPools(tmp_path)
    with pytest.raises(ColumnError, match="'A_pred' and 'pred_A'"):
        folder.add("m.csv", data)
    chosen = guess_map(["A_pred", "pred_A", "A_score", "B_pred", "B_score", "y_true"]) \
        .with_choice("A", "prediction", "pred_A")
    first = folder.add("m.csv", data, column_map=chosen)
    assert folder.column_map(first.digest) == chosen
    again = SavedPools(tmp_path).add("renamed.csv", data)  # no map given
    assert again.digest == first.digest
    assert again.column_map == chosen
    assert again.pool is not None and first.pool is not None
    assert again.pool.preds.tolist() == first.pool.preds.tolist()
    assert again.pool.preds[0].tolist() == [1, 0]  # pred_A, not A_pred
    assert again.pool.n_labelled == 1
    assert folder.load(first.digest).preds[0].tolist() == [1, 0]
    assert any("'A_pred'" in w for w in again.warnings)


def test_a_file_that_follows_the_convention_saves_no_map(tmp_path):
    saved = SavedPools(tmp_path).add("p.csv", CONVENTION)
    assert saved.column_map is None and SavedPools(tmp_path).column_map(saved.digest) is None


# ---------------------------------------------------------------- progress
class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []

    def __call__(self, what: str, fraction: float) -> None:
        assert isinstance(what, str) and isinstance(fraction, float)
        self.calls.append((what, fraction))

    def check(self) -> list[str]:
        fractions = [f for _, f in self.calls]
        assert fractions, "never called"
        assert all(0.0 <= f <= 1.0 for f in fractions)
        assert fractions == sorted(fractions), fractions
        assert fractions[-1] == 1.0 and fractions.count(1.0) == 1
        return [w for w, _ in self.calls]


def stage_order(words: list[str], stages: list[str]) -> None:
    """Each stage appears, in this order, as the start of some call's words."""
    pos = -1
    for stage in stages:
        found = [i for i, w in enumerate(words) if w.startswith(stage) and i > pos]
        assert found, (stage, words)
        pos = found[0]


def test_progress_of_several_files_in_stage_order():
    rec = Recorder()
    read_sources([("a.csv", A), ("b.csv", B), ("c.csv", C)], progress=rec)
    words = rec.check()
    stage_order(words, ["reading a.csv (", "reading b.csv (", "reading c.csv (",
                        "checking columns of a.csv", "checking columns of b.csv",
                        "checking columns of c.csv", "joining 3 files on id",
                        "building the pool", "read a.csv + b.csv + c.csv: 3 rows"])


def test_progress_of_one_file_a_zip_and_load_pool(tmp_path):
    rec = Recorder()
    read_sources([("r.csv", RENAMED)], progress=rec)
    stage_order(rec.check(), ["reading r.csv (", "checking columns of r.csv",
                              "building the pool of r.csv", "read r.csv: 4 rows"])
    rec = Recorder()
    read_sources([("m.zip", zipped(**{"a.csv": A, "b.csv": B}))], progress=rec)
    stage_order(rec.check(), ["opening m.zip", "reading m.zip/a.csv", "reading m.zip/b.csv",
                              "joining 2 files", "building the pool"])
    path = tmp_path / "pool.csv"
    path.write_bytes(CONVENTION)
    rec = Recorder()
    load_pool(path, progress=rec)
    stage_order(rec.check(), [f"reading pool.csv ({len(CONVENTION)} bytes)",
                              "checking columns of pool.csv", "building the pool of pool.csv",
                              "read pool.csv: 4 rows, 2 candidates"])


def test_progress_of_uploads_ends_with_saving(tmp_path):
    folder = SavedPools(tmp_path)
    rec = Recorder()
    saved = folder.add("r.csv", RENAMED, progress=rec)
    stage_order(rec.check(), ["reading r.csv", "checking columns of r.csv",
                              "building the pool of r.csv", "saving r.csv", "saved r.csv"])
    rec = Recorder()
    folder.add_files([("a.csv", A), ("b.csv", B)], progress=rec)
    stage_order(rec.check(), ["reading a.csv", "reading b.csv", "joining 2 files",
                              "saving a.csv + b.csv"])
    rec = Recorder()
    folder.read(saved.digest, progress=rec)
    stage_order(rec.check(), ["reading r.csv", "building the pool"])


def test_progress_stops_at_the_error_and_none_is_never_called():
    rec = Recorder()
    with pytest.raises(CertlibError):
        read_sources([("a.csv", A), ("b.csv", B + b"2,1,0.2\n")], progress=rec)
    assert rec.calls and all(f < 1.0 for _, f in rec.calls)
    quiet = _Reporter(None)
    quiet("anything", 0.5)  # nothing to call: no error
    assert quiet.part(0.0, 0.5) is None
    assert isinstance(read_sources([("a.csv", A), ("b.csv", B)], progress=None), MappedPool)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 2), st.booleans()), max_size=20))
def test_reporter_fractions_never_decrease_and_stay_in_their_part(calls):
    seen: list[float] = []
    outer = _Reporter(lambda _w, f: seen.append(f))
    inner = _Reporter(outer.part(0.25, 0.75))
    for f, use_inner in calls:
        (inner if use_inner else outer)("x", f)
    assert seen == sorted(seen)
    assert all(0.0 <= f <= 1.0 for f in seen)
    inner_only = _Reporter(lambda _w, f: seen.append(f))
    seen.clear()
    sub = _Reporter(inner_only.part(0.25, 0.75))
    for f, _ in calls:
        sub("x", f)
    assert all(0.25 <= f <= 0.75 for f in seen)


@pytest.mark.parametrize("n,text", [(0, "0 bytes"), (999, "999 bytes"), (1000, "1.0 kB"),
                                    (3400, "3.4 kB"), (190_000_000, "190 MB"),
                                    (999_999, "1.0 MB"), (2 * 1024**3, "2.1 GB")])
def test_sizes_for_people(n, text):
    assert _size(n) == text


def test_a_large_table_reads_with_few_progress_calls():
    n = 20_000
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"id": np.arange(n), "A_pred": rng.integers(0, 2, n),
                       "A_score": rng.random(n), "B_pred": rng.integers(0, 2, n),
                       "B_score": rng.random(n)})
    buf = io.BytesIO()
    df.write_csv(buf)
    rec = Recorder()
    got = read_sources([("big.csv", buf.getvalue())], progress=rec)
    assert got.pool.n == n and len(rec.calls) < 20
    assert rec.calls[0][0].startswith("reading big.csv (") and " kB)" in rec.calls[0][0]


def test_load_pool_reads_a_label_by_another_name_and_warns_of_a_second(tmp_path):
    """`certlib.load_pool` on a file in the convention's columns whose label column is
    called y_true keeps its labels (they were dropped in silence), and a second
    label-like column is named in a warning."""
    import warnings

    import certlib

    path = tmp_path / "own.csv"
    path.write_text("row_id,pred_a,conf_a,pred_b,conf_b,y_true,target_v1\n"
                    "1,0,0.9,1,0.8,1,x\n2,1,0.7,1,0.6,,y\n3,0,0.5,0,0.4,0,z\n")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pool = certlib.load_pool(path)
    assert pool.n_labelled == 2 and "y_true" not in pool.extra
    assert [str(w.message) for w in got] == [
        "column 'target_v1' of 'own.csv' looks like labels but is not read as the label "
        "('y_true' is): it is shown with the rows only"]
    assert "target_v1" in pool.extra
    with open(path, "rb") as f:
        same = certlib.columns.read_sources([("own.csv", f.read())]).pool
    assert certlib.pool_hash(same) == certlib.pool_hash(pool)


def test_the_same_zip_under_another_name_is_read_again_not_refused(tmp_path):
    """A browser names a second download 'models (1).zip': the same bytes, so the same
    saved entry, but the saved map names 'models.zip/...' columns; it gives way."""
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.csv", "id,prediction,score\n1,0,0.9\n2,1,0.8\n3,1,0.4\n")
        z.writestr("b.csv", "id,prediction,score\n3,1,0.7\n2,0,0.6\n1,1,0.5\n")
    folder = SavedPools(tmp_path)
    first = folder.add("models.zip", buf.getvalue())
    again = folder.add("models (1).zip", buf.getvalue())
    assert again.digest == first.digest
    assert again.pool is not None and again.pool.names == ("a", "b")
    assert certlib.pool_hash(again.pool) != "" and again.pool.n == 3


def test_a_models_own_prediction_beside_its_class_probabilities_is_kept():
    """A_pred beside A_proba_0..2: the model's own predictions (thresholded as deployed,
    not always the most probable class), its confidence the probability of the class it
    predicts: the same pool as the convention file with those two columns."""
    data = (b"id,y_true,A_pred,A_proba_0,A_proba_1,A_proba_2,B_pred,B_score\n"
            b"1,0,1,0.5,0.3,0.2,0,0.9\n"      # A predicts 1 although 0 is more probable
            b"2,2,2,0.1,0.1,0.8,2,0.7\n"
            b"3,,0,0.6,0.3,0.1,1,0.6\n")
    m = guess_map(["id", "y_true", "A_pred", "A_proba_0", "A_proba_1", "A_proba_2",
                   "B_pred", "B_score"])
    assert m.candidates[0].pred == "A_pred" and len(m.candidates[0].proba) == 3
    got = read_sources([("own.csv", data)])
    assert got.warnings == ()
    same = (b"row_id,label,pred_A,conf_A,pred_B,conf_B\n"
            b"1,0,1,0.3,0,0.9\n2,2,2,0.8,2,0.7\n3,,0,0.6,1,0.6\n")
    conv = read_sources([("conv.csv", same)])
    assert got.pool.preds.tolist() == conv.pool.preds.tolist()
    assert got.pool.confs.tolist() == conv.pool.confs.tolist()
    assert got.pool.n_labelled == 2
    bad = data.replace(b"3,,0,0.6", b"3,,7,0.6")
    with pytest.raises(CertlibError, match=r"'A_pred'.*7.*data row 3.*a class of its "
                                           r"probability columns"):
        read_sources([("own.csv", bad)])
