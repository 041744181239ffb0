"""Pool files (SPEC section 2): layouts, class matching, and one clear error per bad input.

Every bad-input test asserts the exception type and that the message names the
column or row at fault.  Fixture files are written into pytest's tmp_path.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from certlib.errors import (CertlibError, ColumnError, InvalidValueError, LabelError,
                            ParameterError, PoolFileError)
from certlib.io import BUILTIN_SCORES, load_pool, pool_hash
from certlib.core.pool import UNREAD, Pool


def write(tmp_path, text: str, name: str = "pool.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


PAIRS = (
    "row_id,pred_a,conf_a,pred_b,conf_b,label,note\n"
    "10,0,0.9,1,0.2,1,first\n"
    "11,1,0.8,1,0.4,,second\n"
    "12,1,0.1,0,0.7,0,third\n"
    "13,0,0.5,0,0.6,0,fourth\n"
)


# ------------------------------------------------------------------ layouts
def test_pairs_layout(tmp_path):
    pool = load_pool(write(tmp_path, PAIRS))
    assert pool.names == ("a", "b")
    assert pool.classes == (0, 1)
    assert pool.row_ids == (10, 11, 12, 13)
    np.testing.assert_array_equal(pool.preds, [[0, 1, 1, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(pool.confs, [[0.9, 0.8, 0.1, 0.5], [0.2, 0.4, 0.7, 0.6]])
    np.testing.assert_array_equal(pool.labels, [1, UNREAD, 0, 0])
    assert not pool.shared_prediction


def test_same_pool_as_from_arrays(tmp_path):
    pool = load_pool(write(tmp_path, PAIRS))
    ref = Pool.from_arrays([[0, 1, 1, 0], [1, 1, 0, 0]],
                           [[0.9, 0.8, 0.1, 0.5], [0.2, 0.4, 0.7, 0.6]],
                           labels=[1, None, 0, 0], names=["a", "b"], row_ids=[10, 11, 12, 13])
    for field in ("preds", "confs", "weights", "labels"):
        np.testing.assert_array_equal(getattr(pool, field), getattr(ref, field))
    assert (pool.names, pool.classes, pool.row_ids) == (ref.names, ref.classes, ref.row_ids)
    assert pool_hash(pool) == pool_hash(ref)


def test_candidate_order_follows_file(tmp_path):
    text = ("conf_z,pred_y,pred_z,conf_x,conf_y,pred_x\n"
            "0.1,0,1,0.3,0.2,1\n0.4,1,0,0.6,0.5,0\n")
    pool = load_pool(write(tmp_path, text))
    # first appearance of each name in a pred_/conf_ column, left to right
    assert pool.names == ("z", "y", "x")
    np.testing.assert_array_equal(pool.confs[0], [0.1, 0.4])
    np.testing.assert_array_equal(pool.preds[2], [1, 0])


def test_extra_columns_kept(tmp_path):
    pool = load_pool(write(tmp_path, PAIRS))
    assert pool.extra == {"note": ("first", "second", "third", "fourth")}


def test_default_row_ids(tmp_path):
    pool = load_pool(write(tmp_path, "pred_a,conf_a,pred_b,conf_b\n0,1,1,2\n1,3,0,4\n1,5,1,6\n"))
    assert pool.row_ids == (0, 1, 2)
    assert np.all(pool.labels == UNREAD)


def test_shared_prediction_layout_text_classes(tmp_path):
    text = "pred,conf_s1,conf_s2,label\ncat,0.5,0.1,dog\ndog,0.7,0.2,\nbird,0.1,0.9,bird\n"
    pool = load_pool(write(tmp_path, text))
    assert pool.names == ("s1", "s2")
    assert pool.shared_prediction
    assert pool.classes == ("bird", "cat", "dog")
    assert [pool.classes[c] for c in pool.preds[1]] == ["cat", "dog", "bird"]
    assert [pool.classes[c] if c >= 0 else None for c in pool.labels] == ["dog", None, "bird"]


def test_number_like_classes_match(tmp_path):
    # "1", " 1 ", 1.0 and 1 are one class; a float label column matches int predictions
    text = "pred_a,conf_a,pred_b,conf_b,label\n1,0.1,1.0,0.2, 1 \n0,0.3,0.0,0.4,0.0\n"
    pool = load_pool(write(tmp_path, text))
    assert pool.classes == (0, 1)
    np.testing.assert_array_equal(pool.preds, [[1, 0], [1, 0]])
    np.testing.assert_array_equal(pool.labels, [1, 0])


def test_mixed_text_and_number_classes(tmp_path):
    text = "pred_a,conf_a,pred_b,conf_b,label\n1,0.1,cat,0.2,1.0\ncat,0.3,1,0.4,cat\n"
    pool = load_pool(write(tmp_path, text))
    assert set(pool.classes) == {1, "cat"}
    one = pool.classes.index(1)
    assert pool.labels[0] == one and pool.preds[0, 0] == one and pool.preds[1, 1] == one


def test_minus_one_is_a_class_not_unread(tmp_path):
    text = "pred_a,conf_a,pred_b,conf_b,label\n-1,0.1,1,0.2,-1\n1,0.3,-1,0.4,\n"
    pool = load_pool(write(tmp_path, text))
    assert pool.classes == (-1, 1)
    np.testing.assert_array_equal(pool.labels, [0, UNREAD])


def test_declared_classes_from_cli_strings(tmp_path):
    text = "pred_a,conf_a,pred_b,conf_b\n0,0.1,0,0.2\n0,0.3,0,0.4\n"
    pool = load_pool(write(tmp_path, text), classes=["0", "1", "2"])
    assert pool.classes == (0, 1, 2)


def test_tsv(tmp_path):
    pool = load_pool(write(tmp_path, PAIRS.replace(",", "\t"), "pool.tsv"))
    assert pool.names == ("a", "b") and pool.n == 4


def test_quoted_fields_and_blank_lines(tmp_path):
    text = ('pred_a,conf_a,pred_b,conf_b,note\n0,0.1,1,0.2,"a, b"\n\n'
            '1,0.3,0,0.4,"line\nbreak"\n\n')
    pool = load_pool(write(tmp_path, text))
    assert pool.n == 2
    assert pool.extra["note"] == ("a, b", "line\nbreak")
    text = "pred_a,conf_a,pred_b,conf_b\r\n0,0.1,1,0.2\r\n\r\n1,0.3,0,0.4\r\n"
    assert load_pool(write(tmp_path, text)).n == 2


def test_type_change_after_inferred_rows(tmp_path):
    # polars infers the type from the first rows; a later cell must still be read right
    n = 12_000
    lines = ["pred_a,conf_a,pred_b,conf_b,label"]
    lines += [f"{i % 2},{i},{(i + 1) % 2},{n - i},{'' if i % 3 else i % 2}" for i in range(n)]
    lines[-1] = "cat,0.5,0,1.5,cat"
    pool = load_pool(write(tmp_path, "\n".join(lines) + "\n"))
    assert set(pool.classes) == {0, 1, "cat"}
    assert pool.confs[0, -1] == 0.5


def test_prob_layout(tmp_path):
    text = ("prob_cat,prob_dog,prob_owl,label\n"
            "0.2,0.5,0.3,dog\n"
            "0.4,0.4,0.2,\n"
            "1.0,0.0,0.0,owl\n")
    pool = load_pool(write(tmp_path, text))
    assert pool.names == BUILTIN_SCORES
    assert pool.classes == ("cat", "dog", "owl")
    assert pool.shared_prediction
    # argmax, ties to the leftmost column
    assert [pool.classes[c] for c in pool.preds[0]] == ["dog", "cat", "cat"]
    np.testing.assert_allclose(pool.confs[0], [0.5, 0.4, 1.0])
    ent = [sum(p * math.log(p) for p in row if p > 0)
           for row in ([0.2, 0.5, 0.3], [0.4, 0.4, 0.2], [1.0])]
    np.testing.assert_allclose(pool.confs[1], ent)
    assert pool.confs[1, 2] == 0.0  # 0 log 0 = 0
    np.testing.assert_allclose(pool.confs[2], [0.2, 0.0, 1.0])
    np.testing.assert_array_equal(pool.labels, [1, UNREAD, 2])


def test_prob_scores_tie_exactly_under_permutation(tmp_path):
    text = "prob_0,prob_1,prob_2\n0.1,0.2,0.7\n0.7,0.1,0.2\n0.2,0.7,0.1\n"
    pool = load_pool(write(tmp_path, text))
    for j in range(3):
        assert len(set(pool.confs[j].tolist())) == 1
    assert pool.classes == (0, 1, 2)


def test_prob_with_extra_conf_columns(tmp_path):
    text = "prob_0,prob_1,conf_ext,label\n0.3,0.7,5,1\n0.6,0.4,2,0\n"
    pool = load_pool(write(tmp_path, text))
    assert pool.names == BUILTIN_SCORES + ("ext",)
    np.testing.assert_array_equal(pool.confs[3], [5, 2])
    np.testing.assert_array_equal(pool.preds[3], [1, 0])  # the argmax prediction


def test_parquet_round_trip(tmp_path):
    df = pl.DataFrame({
        "row_id": ["r1", "r2", "r3"],
        "pred_m": [0, 1, 1],
        "conf_m": [0.3, 0.2, 0.9],
        "pred_n": [1, 1, 0],
        "conf_n": [0.5, 0.1, 0.4],
        "label": [1.0, None, 0.0],
        "image": ["a.png", "b.png", "c.png"],
    })
    for suffix in (".parquet", ".pq"):
        p = tmp_path / f"pool{suffix}"
        df.write_parquet(p)
        pool = load_pool(p)
        df.write_csv(tmp_path / "same.csv")
        twin = load_pool(tmp_path / "same.csv")
        assert pool.names == ("m", "n") and pool.row_ids == ("r1", "r2", "r3")
        np.testing.assert_array_equal(pool.labels, [1, UNREAD, 0])
        assert pool.extra == {"image": ("a.png", "b.png", "c.png")}
        for field in ("preds", "confs", "weights", "labels"):
            np.testing.assert_array_equal(getattr(pool, field), getattr(twin, field))
        assert pool_hash(pool) == pool_hash(twin)


def test_accuracy_objective(tmp_path):
    pool = load_pool(write(tmp_path, PAIRS), objective="accuracy")
    assert pool.objective == "accuracy" and np.all(pool.weights == 1)


# ------------------------------------------------------------------ hashing
def test_pool_hash_ignores_labels_and_sees_confidences(tmp_path):
    pool = load_pool(write(tmp_path, PAIRS))
    unlabelled = load_pool(write(tmp_path, PAIRS.replace(",1,first", ",,first"), "u.csv"))
    relabelled = pool.with_labels(np.array([0, 1, 1, 1]))
    assert pool_hash(pool) == pool_hash(unlabelled) == pool_hash(relabelled)
    changed = load_pool(write(tmp_path, PAIRS.replace("0.9", "0.95"), "c.csv"))
    assert pool_hash(changed) != pool_hash(pool)
    swapped = load_pool(write(tmp_path, PAIRS.replace(",1,0.2,", ",0,0.2,"), "s.csv"))
    assert pool_hash(swapped) != pool_hash(pool)
    assert len(pool_hash(pool)) == 64



def test_pool_hash_values_are_pinned():
    """Stored projects and evidence records reference these digests: the value of
    `pool_hash` must never change.  The digests below are fixed
    values of the hash's definition (SPEC section 12)."""
    binary = Pool.from_arrays([[0, 1, 1], [1, 1, 0]], [[0.9, 0.5, 0.2], [0.3, 0.8, 0.6]],
                              labels=[1, None, 0], names=["a", "b"])
    assert pool_hash(binary) == "7a2fd62e36e5901856b2cfcb611882edce2513e4f41b30609320ba92d1d4aec9"
    text = Pool.from_arrays([["cat", "dog", "cat"], ["dog", "dog", "cat"]],
                            [[0.9, 0.5, 0.5], [0.3, 0.8, 0.6]], row_ids=["r1", "r2", "r3"],
                            names=["x", "y"], objective="accuracy")
    assert pool_hash(text) == "f8f6ffbaa5238b8a5877e86bd77f558e92ff56a63b831932752c839aa7db9bde"
    sample = load_pool(Path(__file__).resolve().parents[2] / "sample_data" / "demo_unlabelled.csv")
    assert pool_hash(sample) == "fe2a45a1c69ec1828768e3e2effbca0aac95695244c6e61f0f692afda03ee630"


def test_pool_hash_is_importable_from_pool_io_and_the_package():
    import certlib
    import certlib.io
    import certlib.core.pool

    assert certlib.pool_hash is certlib.core.pool.pool_hash is certlib.io.pool_hash


def test_file_class_key_is_the_scalar_form_of_the_column_rule():
    """`certlib.io._canon_series` (vectorised) and `certlib.core._values.file_class_key` (one
    value: declared classes, prob_ suffixes) must give every value the same key."""
    from certlib.core._values import file_class_key
    from certlib.io import _canon_series

    text = ["1", " 2.0 ", "1.50", "cat", "-1", "9007199254740993", "1e3", ""]
    col = _canon_series(pl.Series(text), "c").to_list()
    assert col[:-1] == [str(file_class_key(v)) for v in text[:-1]] and col[-1] is None
    nums = [3, -1, 2**60]
    assert _canon_series(pl.Series(nums), "c").to_list() == [file_class_key(v) for v in nums]
    floats = [1.0, 2.5, -0.0]
    assert _canon_series(pl.Series(floats), "c").to_list() == [
        str(file_class_key(v)) for v in floats]
    # beyond 64 bits (polars reads Int128): the column is text, its numbers their digits
    # (it was a polars traceback on every page)
    wide = [3, 10**23, None]
    assert _canon_series(pl.Series(wide, dtype=pl.Int128), "c").to_list() == [
        str(file_class_key(v)) for v in wide[:-1]] + [None]
    assert file_class_key(10**23) == "100000000000000000000000"


@pytest.mark.parametrize("column", ["row_id", "label", "pred_a"])
def test_an_integer_beyond_64_bits_is_a_text_value_not_a_crash(tmp_path, column):
    """A 24-digit number in a class-like column is read as its digits (a row id or class
    written as text), not cast to int64 (a polars traceback) nor through a float
    (99999999999999991611392)."""
    big = "100000000000000000000000"
    cells = {"row_id": "11", "label": "1", "pred_a": "1"}
    cells[column] = big
    text = ("row_id,pred_a,conf_a,pred_b,conf_b,label\n"
            "10,0,0.9,1,0.2,1\n"
            f"{cells['row_id']},{cells['pred_a']},0.8,1,0.4,{cells['label']}\n"
            "12,1,0.1,0,0.7,0\n")
    if column != "row_id":
        pool = load_pool(write(tmp_path, text), classes=None)
        assert big in pool.classes and 10**23 not in pool.classes
        code = pool.classes.index(big)
        assert (pool.labels[1] if column == "label" else pool.preds[0, 1]) == code
    else:
        pool = load_pool(write(tmp_path, text))
        assert pool.row_ids == ("10", big, "12") and pool.position(big) == 1


def test_an_unsigned_64_bit_parquet_column_beyond_int64(tmp_path):
    top = 2**64 - 1  # a hash-like row id, in Parquet as uint64
    pl.DataFrame({"row_id": pl.Series([1, top], dtype=pl.UInt64),
                  "pred_a": [0, 1], "conf_a": [0.9, 0.8], "pred_b": [1, 1],
                  "conf_b": [0.2, 0.4]}).write_parquet(tmp_path / "pool.parquet")
    pool = load_pool(tmp_path / "pool.parquet")
    assert pool.row_ids == ("1", str(top)) and pool.position(str(top)) == 1
    assert pool.position(top) == 1

# --------------------------------------------------------------- bad input
def raises(exc, path, *words, **kw):
    """Load, expect exactly `exc`, and check the message names every word."""
    with pytest.raises(exc) as info:
        load_pool(path, **kw)
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    assert isinstance(info.value, CertlibError)
    return msg


def test_missing_file(tmp_path):
    raises(PoolFileError, tmp_path / "nope.csv", "nope.csv", "does not exist")


def test_directory(tmp_path):
    d = tmp_path / "dir.csv"
    d.mkdir()
    raises(PoolFileError, d, "not a regular file")


@pytest.mark.parametrize("name", ["pool.xlsx", "pool.pkl", "pool"])
def test_wrong_suffix(tmp_path, name):
    p = tmp_path / name
    p.write_bytes(b"\x80\x04\x95")  # a pickle header: must never be unpickled
    raises(PoolFileError, p, name, "unsupported type", ".csv")


def test_binary_file_named_csv(tmp_path):
    p = tmp_path / "pool.csv"
    p.write_bytes(b"PK\x03\x04\x14\x00\x00\x00binary")
    raises(PoolFileError, p, "pool.csv", "NUL byte", "line 1")


def test_non_utf8_csv(tmp_path):
    p = tmp_path / "pool.csv"
    p.write_bytes(b"pred_a,conf_a,pred_b,conf_b\n0,\xff\xfe,1,0.2\n")
    raises(PoolFileError, p, "UTF-8", "line 2")


def test_csv_named_parquet(tmp_path):
    raises(PoolFileError, write(tmp_path, PAIRS, "pool.parquet"), "pool.parquet", "Parquet")


def test_oversized_file(tmp_path):
    p = write(tmp_path, PAIRS)
    raises(PoolFileError, p, "pool.csv", "max_bytes = 50", max_bytes=50)


def test_bad_max_bytes(tmp_path):
    raises(ParameterError, write(tmp_path, PAIRS), "max_bytes", max_bytes=0)


@pytest.mark.parametrize("text, line, fields", [
    ("pred_a,conf_a,pred_b,conf_b\n0,0.1,1,0.2\n1,0.3,0\n0,0.5,1,0.6\n", 3, 3),
    ("pred_a,conf_a,pred_b,conf_b\n0,0.1,1,0.2\n1,0.3,0,0.4,9\n", 3, 5),
    ('pred_a,conf_a,pred_b,conf_b,n\n0,0.1,1,0.2,"x,y"\n1,0.3,0,0.4\n', 3, 4),
])
def test_ragged_rows(tmp_path, text, line, fields):
    raises(PoolFileError, write(tmp_path, text), f"line {line}", f"{fields} fields", "ragged")


@pytest.mark.parametrize("text, what", [
    ("pred_a;conf_a;pred_b;conf_b\n0;0,1;1;0,2\n", "semicolons"),  # decimal commas
    ("pred_a;conf_a;pred_b;conf_b\n0;0.1;1;0.2\n", "semicolons"),
    ("pred_a\tconf_a\tpred_b\tconf_b\n0\t0.1\t1\t0.2\n", "tabs"),
])
def test_a_file_separated_by_something_else_is_named(tmp_path, text, what):
    """One message that says what the file looks like (it listed the whole header as one
    missing column, or "line 2 has 8 fields but the header has 1")."""
    raises(PoolFileError, write(tmp_path, text), "pool.csv", "has one column",
           f"looks separated by {what}", "comma-separated")


def test_empty_file(tmp_path):
    raises(PoolFileError, write(tmp_path, ""), "pool.csv", "empty")


def test_header_only(tmp_path):
    raises(InvalidValueError, write(tmp_path, "pred_a,conf_a,pred_b,conf_b\n"), "empty",
           "no data rows")


def test_header_only_parquet(tmp_path):
    p = tmp_path / "pool.parquet"
    pl.DataFrame({"pred_a": [], "conf_a": [], "pred_b": [], "conf_b": []},
                 schema={"pred_a": pl.Int64, "conf_a": pl.Float64,
                         "pred_b": pl.Int64, "conf_b": pl.Float64}).write_parquet(p)
    raises(InvalidValueError, p, "empty")


def test_pred_without_conf(tmp_path):
    raises(ColumnError, write(tmp_path, "pred_a,conf_a,pred_b,pred_c,conf_c\n0,1,0,1,2\n"),
           "'conf_b'", "missing")


def test_conf_without_pred(tmp_path):
    raises(ColumnError, write(tmp_path, "pred_a,conf_a,conf_b\n0,1,0\n"), "'pred_b'", "missing")


def test_duplicated_column_csv(tmp_path):
    raises(ColumnError, write(tmp_path, "pred_a,conf_a,pred_b,conf_b,conf_a\n0,1,0,1,2\n"),
           "'conf_a'", "twice")


def test_duplicated_column_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.table([[0], [0.1], [1], [0.2], [0.3]],
                 names=["pred_a", "conf_a", "pred_b", "conf_b", "conf_b"])
    p = tmp_path / "pool.parquet"
    pq.write_table(t, p)
    raises(ColumnError, p, "'conf_b'", "twice")


def test_no_candidate_columns(tmp_path):
    raises(ColumnError, write(tmp_path, "row_id,label,text\n1,0,a\n"), "no candidate columns",
           "pred_<name>")


def test_one_candidate(tmp_path):
    raises(ColumnError, write(tmp_path, "pred_a,conf_a,label\n0,0.1,1\n"), "'a'", "at least two")


def test_shared_pred_one_score(tmp_path):
    raises(ColumnError, write(tmp_path, "pred,conf_a\n0,0.1\n"), "'conf_a'", "at least two")


@pytest.mark.parametrize("cell, shown", [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"),
                                         ("high", "'high'"), ("", "empty")])
def test_bad_confidence(tmp_path, cell, shown):
    text = f"row_id,pred_a,conf_a,pred_b,conf_b\n7,0,0.1,1,0.2\n8,1,{cell},0,0.4\n"
    raises(InvalidValueError, write(tmp_path, text), "'conf_a'", "row_id 8", "data row 2",
           shown)


def test_missing_prediction(tmp_path):
    text = "row_id,pred_a,conf_a,pred_b,conf_b\nx,0,0.1,1,0.2\ny,1,0.3,,0.4\n"
    raises(InvalidValueError, write(tmp_path, text), "'pred_b'", "row_id 'y'", "empty")


def test_prediction_outside_declared_classes(tmp_path):
    text = "pred_a,conf_a,pred_b,conf_b\n0,0.1,1,0.2\n2,0.3,0,0.4\n"
    raises(InvalidValueError, write(tmp_path, text), "'pred_a'", "data row 2", "class set",
           classes=[0, 1])


def test_label_outside_declared_classes(tmp_path):
    text = "pred_a,conf_a,pred_b,conf_b,label\n0,0.1,1,0.2,1\n1,0.3,0,0.4,cat\n"
    raises(LabelError, write(tmp_path, text), "'label'", "'cat'", "data row 2",
           classes=["0", "1"])


def test_duplicate_row_id(tmp_path):
    text = "row_id,pred_a,conf_a,pred_b,conf_b\n5,0,0.1,1,0.2\n6,1,0.3,0,0.4\n5,1,0.5,0,0.6\n"
    raises(InvalidValueError, write(tmp_path, text), "'row_id'", "5", "data rows 1 and 3")


def test_duplicate_text_row_id(tmp_path):
    text = "row_id,pred_a,conf_a,pred_b,conf_b\na,0,0.1,1,0.2\nb,1,0.3,0,0.4\nb,1,0.5,0,0.6\n"
    raises(InvalidValueError, write(tmp_path, text), "'row_id'", "'b'", "data rows 2 and 3")


def test_null_row_id(tmp_path):
    text = "row_id,pred_a,conf_a,pred_b,conf_b\n5,0,0.1,1,0.2\n,1,0.3,0,0.4\n"
    raises(InvalidValueError, write(tmp_path, text), "'row_id'", "data row 2", "empty")


def test_shared_and_pair_predictions_mixed(tmp_path):
    text = "pred,pred_a,conf_a,conf_b\n0,0,0.1,0.2\n"
    raises(ColumnError, write(tmp_path, text), "'pred'", "'pred_a'", "cannot be mixed")


def test_prob_and_pred_mixed(tmp_path):
    raises(ColumnError, write(tmp_path, "prob_0,prob_1,pred,conf_a\n0.5,0.5,0,1\n"),
           "'prob_0'", "'pred'")


def test_prob_out_of_range(tmp_path):
    text = "prob_0,prob_1\n0.5,0.5\n1.2,-0.2\n"
    raises(InvalidValueError, write(tmp_path, text), "'prob_0'", "data row 2", "[0, 1]")


def test_prob_not_summing_to_one(tmp_path):
    text = "row_id,prob_0,prob_1\na,0.5,0.5\nb,0.5,0.4\n"
    raises(InvalidValueError, write(tmp_path, text), "row_id 'b'", "sum", "0.9")


def test_prob_non_numeric(tmp_path):
    raises(InvalidValueError, write(tmp_path, "prob_0,prob_1\n0.5,half\n"), "'prob_1'", "'half'")


def test_single_prob_column(tmp_path):
    raises(ColumnError, write(tmp_path, "prob_0\n1.0\n"), "'prob_0'", "at least two")


def test_prob_conf_name_clash(tmp_path):
    raises(ColumnError, write(tmp_path, "prob_0,prob_1,conf_msp\n0.5,0.5,1\n"), "'conf_msp'")


def test_prob_declared_classes_mismatch(tmp_path):
    raises(ParameterError, write(tmp_path, "prob_0,prob_1\n0.5,0.5\n"), "prob_0",
           classes=[0, 1, 2])


def test_unknown_objective(tmp_path):
    raises(ParameterError, write(tmp_path, PAIRS), "objective", objective="aurc-ish")


def test_single_class_needs_declaration(tmp_path):
    text = "pred_a,conf_a,pred_b,conf_b,label\ncat,0.1,cat,0.2,cat\n"
    raises(ParameterError, write(tmp_path, text), "classes")


# -------------------------------------------------------------- large files
@pytest.mark.slow
def test_large_csv_loads(tmp_path):
    rng = np.random.default_rng(3)
    n, K = 200_000, 8
    cols = {"row_id": np.arange(1, n + 1)}
    for j in range(K):
        cols[f"pred_m{j}"] = rng.integers(0, 2, n)
        cols[f"conf_m{j}"] = rng.random(n)
    cols["label"] = rng.integers(0, 2, n)
    pl.DataFrame(cols).write_csv(tmp_path / "big.csv")
    pool = load_pool(tmp_path / "big.csv")
    assert (pool.K, pool.n) == (K, n)
    assert pool.row_ids[-1] == n
    np.testing.assert_array_equal(pool.confs[K - 1], cols[f"conf_m{K - 1}"])


def test_header_names_are_stripped(tmp_path):
    pool = load_pool(write(tmp_path, " pred_a , conf_a,pred_b,conf_b ,label \n0,0.1,1,0.2,1\n"))
    assert pool.names == ("a", "b") and pool.labels[0] == 1


def test_all_empty_row_is_an_error_not_skipped(tmp_path):
    # a blank line is skipped, but a row of empty cells is a row with no prediction
    for note in ("", ',"q"'):
        head = "pred_a,conf_a,pred_b,conf_b" + (",note" if note else "")
        text = f"{head}\n0,0.1,1,0.2{note}\n,,,{',' if note else ''}\n"
        raises(InvalidValueError, write(tmp_path, text), "is empty", "data row 2")


# ------------------------------------------------------------ property test
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_file_round_trip_equals_from_arrays(tmp_path_factory, data):
    n = data.draw(st.integers(1, 12))
    K = data.draw(st.integers(2, 4))
    preds = data.draw(st.lists(st.lists(st.integers(0, 2), min_size=n, max_size=n),
                               min_size=K, max_size=K))
    # few distinct values, so confidence ties occur
    confs = data.draw(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.5]),
                                        min_size=n, max_size=n), min_size=K, max_size=K))
    labels = data.draw(st.lists(st.sampled_from([None, 0, 1, 2]), min_size=n, max_size=n))
    cols = {}
    for j in range(K):
        cols[f"pred_c{j}"] = preds[j]
        cols[f"conf_c{j}"] = confs[j]
    cols["label"] = pl.Series(labels, dtype=pl.Int64)
    df = pl.DataFrame(cols)
    d = tmp_path_factory.mktemp("rt")
    df.write_csv(d / "p.csv")
    df.write_parquet(d / "p.parquet")
    ref = Pool.from_arrays(preds, confs, labels=[-1 if v is None else v for v in labels],
                           names=[f"c{j}" for j in range(K)], classes=[0, 1, 2])
    for f in ("p.csv", "p.parquet"):
        pool = load_pool(d / f, classes=[0, 1, 2])
        for field in ("preds", "confs", "weights", "labels"):
            np.testing.assert_array_equal(getattr(pool, field), getattr(ref, field))
        assert pool_hash(pool) == pool_hash(ref)


def test_a_64_bit_class_reads_the_same_with_and_without_a_declared_class_set(tmp_path):
    """2**60 as a class: a declared set written as text (what `verify-record` passes)
    gives the same pool and hash (text of 2**53 or more was kept as text: a record made
    on such a pool stopped verifying)."""
    big = 2**60
    lines = ["row_id,pred_a,conf_a,pred_b,conf_b,label"]
    for i in range(9):
        lines.append(f"{i},{[0, 1, big][i % 3]},0.{i + 1},{[0, 1, big][(i + 1) % 3]},0.5,"
                     f"{[0, 1, big][i % 3]}")
    path = write(tmp_path, "\n".join(lines) + "\n")
    plain_pool = load_pool(path)
    for declared in ([0, 1, big], ["0", "1", str(big)]):
        again = load_pool(path, classes=declared)
        assert again.classes == plain_pool.classes == (0, 1, big)
        assert pool_hash(again) == pool_hash(plain_pool)
    assert plain_pool.class_code(big) == plain_pool.class_code(str(big)) == 2


def test_integers_are_never_read_through_a_float():
    from certlib.core._values import class_value, class_value_from_text, file_class_key

    n = 2**60 + 1  # not a float
    assert class_value_from_text(str(n)) == file_class_key(str(n)) == n
    assert class_value_from_text(f" +{n} ") == n
    assert class_value_from_text(str(2**63)) == file_class_key(str(2**63)) == str(2**63)
    assert class_value_from_text("1e20") == "1e20"  # a float written as text stays so
    # the same value twice gives one key: 1e20 as a float and 10**20 as an int
    assert class_value(1e20) == class_value(10**20) == "100000000000000000000"
    pool = Pool.from_arrays([[0.0, 1.0, 1e20]] * 2, [[0.1, 0.2, 0.3]] * 2,
                            labels=[0.0, 1e20, 1.0], row_ids=[1, n, 2**64 - 1])
    assert pool.class_code(10**20) == pool.class_code(1e20) == 2
    assert pool.position(str(n)) == pool.position(n) == 1  # not the row of 2**60
    # uint64 ids beyond int64, given as an array: text, as a Parquet file's are
    ids = np.array([1, 2**64 - 1], dtype=np.uint64)
    as_array = Pool.from_arrays([[0, 1]] * 2, [[0.1, 0.2]] * 2, row_ids=ids)
    assert as_array.row_ids == (1, str(2**64 - 1)) and as_array.position(2**64 - 1) == 1
