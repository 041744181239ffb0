"""Section 6.1 panel pools from a user's data set (``sample_data/make_sample_data.py``).

A small synthetic data set written to a temporary CSV becomes pool files that
``certlib.load_pool`` reads, with the requested families, a stratified pool and the
same files for the same seed; each bad input gives one message naming the file, the
column and the row, exit status 2, and writes nothing.
"""

from __future__ import annotations

import csv
import doctest
import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from sklearn.datasets import make_classification

from certlib import load_pool
from pool_files import assert_same_pool_file

ROOT = Path(__file__).resolve().parents[2]
SD = ROOT / "sample_data"
NAMES8 = ["eps000", "eps005", "eps010", "eps020", "eps040", "eps080", "eps120", "eps160"]
NAMES4 = ["eps000", "eps010", "eps040", "eps120"]
N_ROWS = 150


def _load_generator():
    # loaded by path and not registered in sys.modules, as the other tests load it
    spec = importlib.util.spec_from_file_location("make_sample_data_panels",
                                                  SD / "make_sample_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gen = _load_generator()


def write_rows(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def synthetic(n: int = N_ROWS, seed: int = 0):
    """Four numeric features, an unbalanced binary label (about 70/30)."""
    X, y = make_classification(n_samples=n, n_features=4, n_informative=3, n_redundant=1,
                               weights=[0.7], random_state=seed)
    return X, y


@pytest.fixture
def data_csv(tmp_path) -> Path:
    X, y = synthetic()
    rows = [[repr(float(v)) for v in x] + [int(t)] for x, t in zip(X, y)]
    return write_rows(tmp_path / "mine.csv", ["f0", "f1", "f2", "f3", "target"], rows)


def run(argv: list[str]) -> int:
    return gen.main([str(a) for a in argv])


def made_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# --------------------------------------------------------------------------- the pools


def test_command_writes_pools_that_certlib_reads(data_csv, tmp_path, capsys):
    out = tmp_path / "pools"
    assert run(["--data", data_csv, "--label", "target", "--families", "tree",
                "--out", out]) == 0
    assert made_files(out) == ["mine_s0_tree_k4.csv", "mine_s0_tree_k8.csv"]
    printed = capsys.readouterr().out
    assert "mine_s0_tree_k8.csv" in printed and "45 pool rows and 105 training rows" in printed
    for K, names in ((8, NAMES8), (4, NAMES4)):
        pool = load_pool(out / f"mine_s0_tree_k{K}.csv")
        assert pool.K == K and list(pool.names) == names
        assert pool.n == 45  # 30% of 150, section 6.1's 70/30 split
        assert (pool.labels >= 0).all()  # fully labelled
    # the k4 pool is the k8 pool's panels 0, 2, 4, 6, as in the shipped files
    k8, k4 = pl.read_csv(out / "mine_s0_tree_k8.csv"), pl.read_csv(out / "mine_s0_tree_k4.csv")
    assert k4.equals(k8.select(k4.columns))


def test_the_requested_families_are_the_candidates(data_csv, tmp_path):
    made = gen.make_panels_from_file(data_csv, tmp_path / "a", label="target",
                                     families=["logreg"])
    assert [p.name for p in made.files] == ["mine_s0_logreg_k8.csv", "mine_s0_logreg_k4.csv"]
    assert made.families == ("logreg",)
    every = gen.make_panels_from_file(data_csv, tmp_path / "b", label="target")
    assert every.families == tuple(gen.FAMILIES) == ("tree", "logreg")
    assert made_files(tmp_path / "b") == sorted(
        f"mine_s0_{f}_k{k}.csv" for f in ("tree", "logreg") for k in (4, 8))
    # the same panels, fitted by another family: equal row ids and labels
    tree = pl.read_csv(tmp_path / "b" / "mine_s0_tree_k8.csv")
    logreg = pl.read_csv(tmp_path / "a" / "mine_s0_logreg_k8.csv")
    assert tree.select("row_id", "label").equals(logreg.select("row_id", "label"))


@pytest.mark.parametrize("pool_size", [None, 40])
def test_the_pool_is_stratified(data_csv, tmp_path, pool_size):
    X, y = synthetic()
    made = gen.make_panels_from_file(data_csv, tmp_path, label="target", families=["tree"],
                                     seeds=[0, 1, 2], pool_size=pool_size)
    assert made.n_pool == (45 if pool_size is None else pool_size)
    assert made.n_train + made.n_pool == made.n_rows == N_ROWS
    share = Counter(y.tolist())
    for seed in (0, 1, 2):
        df = pl.read_csv(tmp_path / f"mine_s{seed}_tree_k8.csv")
        assert df.height == made.n_pool
        ids = df["row_id"].to_numpy()
        assert len(set(ids)) == len(ids) and list(ids) == sorted(ids)
        assert (df["label"].to_numpy() == y[ids]).all()  # row_id is the data row's index
        got = Counter(df["label"].to_list())
        for c, k in share.items():
            assert abs(got[c] - made.n_pool * k / N_ROWS) <= 1, (seed, c, got)


def _same_table(a: Path, b: Path) -> bool:
    """Two pool files written in this run hold the same values, exactly (one machine,
    one run: no tolerance needed; their text is not compared)."""
    return pl.read_csv(a).equals(pl.read_csv(b))


def test_the_same_seed_gives_the_same_files(data_csv, tmp_path):
    for folder in ("a", "b"):
        gen.make_panels_from_file(data_csv, tmp_path / folder, label="target", seeds=[3])
    names = made_files(tmp_path / "a")
    assert names == made_files(tmp_path / "b") and len(names) == 4
    for name in names:
        assert _same_table(tmp_path / "a" / name, tmp_path / "b" / name), name
    gen.make_panels_from_file(data_csv, tmp_path / "c", label="target", seeds=[4],
                              families=["tree"])
    a = pl.read_csv(tmp_path / "a" / "mine_s3_tree_k8.csv")["row_id"]
    c = pl.read_csv(tmp_path / "c" / "mine_s4_tree_k8.csv")["row_id"]
    assert not a.equals(c)  # another seed, another split


def test_arrays_give_the_files_of_the_csv(data_csv, tmp_path):
    X, y = synthetic()
    gen.make_panels_from_file(data_csv, tmp_path / "file", label="target", families=["tree"])
    made = gen.make_panels_from_arrays(X, y, tmp_path / "arrays", families=["tree"],
                                       name="mine")
    assert [p.parent for p in made.files] == [tmp_path / "arrays"] * 2
    for name in ("mine_s0_tree_k8.csv", "mine_s0_tree_k4.csv"):
        assert_same_pool_file(tmp_path / "arrays" / name, tmp_path / "file" / name,
                              conf_atol=0.0)


def test_parquet_gives_the_files_of_the_csv(data_csv, tmp_path):
    parquet = tmp_path / "mine.parquet"
    pl.read_csv(data_csv).write_parquet(parquet)
    gen.make_panels_from_file(data_csv, tmp_path / "csv", label="target", families=["tree"])
    gen.make_panels_from_file(parquet, tmp_path / "pq", label="target", families=["tree"])
    for name in ("mine_s0_tree_k8.csv", "mine_s0_tree_k4.csv"):
        assert _same_table(tmp_path / "pq" / name, tmp_path / "csv" / name), name


def test_the_label_values_and_row_ids_of_the_file_are_kept(tmp_path):
    X, y = synthetic(80)
    rows = [[f"r{i}", *map(repr, x.tolist()), "yes" if t else "no"]
            for i, (x, t) in enumerate(zip(X, y))]
    path = write_rows(tmp_path / "named.csv", ["row_id", "a", "b", "c", "d", "answer"], rows)
    made = gen.make_panels_from_file(path, tmp_path / "out", label="answer",
                                     families=["logreg"], name="run1")
    assert made.classes == ("no", "yes")
    pool = load_pool(tmp_path / "out" / "run1_s0_logreg_k4.csv")
    assert set(pool.classes) == {"no", "yes"}
    assert all(str(r).startswith("r") for r in pool.row_ids)  # the file's ids, not a feature
    df = pl.read_csv(tmp_path / "out" / "run1_s0_logreg_k4.csv")
    truth = {f"r{i}": "yes" if t else "no" for i, t in enumerate(y)}
    assert all(truth[r] == lab for r, lab in zip(df["row_id"], df["label"]))


def test_positive_makes_one_class_versus_the_rest(tmp_path):
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, random_state=1)
    rows = [[*map(repr, x.tolist()), int(t)] for x, t in zip(X, y)]
    path = write_rows(tmp_path / "three.csv", ["a", "b", "c", "d", "y"], rows)
    assert run(["--data", path, "--label", "y", "--positive", "2", "--families", "tree",
                "--out", tmp_path / "out"]) == 0
    df = pl.read_csv(tmp_path / "out" / "three_s0_tree_k8.csv")
    ids = df["row_id"].to_numpy()
    assert (df["label"].to_numpy() == (y[ids] == 2)).all()


def test_one_hot_expands_a_text_feature(tmp_path):
    X, y = synthetic(60)
    colours = ["red", "green", "blue"]
    rows = [[*map(repr, x.tolist()), colours[i % 3], int(t)]
            for i, (x, t) in enumerate(zip(X, y))]
    path = write_rows(tmp_path / "mixed.csv", ["a", "b", "c", "d", "colour", "y"], rows)
    data = gen.read_dataset(path, label="y", one_hot=True)
    assert data.features == ("a", "b", "c", "d", "colour=blue", "colour=green", "colour=red")
    assert run(["--data", path, "--label", "y", "--one-hot", "--families", "tree",
                "--out", tmp_path / "out"]) == 0
    assert made_files(tmp_path / "out") == ["mixed_s0_tree_k4.csv", "mixed_s0_tree_k8.csv"]


def test_the_shipped_defaults_take_families_too(tmp_path):
    """``make_panels(families=...)`` keeps the shipped protocol (wine, split 0)."""
    gen.make_panels(tmp_path, only="wine_s0", families=("logreg",), log=lambda *a: None)
    assert made_files(tmp_path / "panels") == ["wine_s0_logreg_k4.csv", "wine_s0_logreg_k8.csv"]
    for name in made_files(tmp_path / "panels"):
        assert_same_pool_file(tmp_path / "panels" / name, SD / "panels" / name)


def test_the_docstring_examples_run():
    result = doctest.testmod(gen, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8 and result.failed == 0


def test_python_m_help_describes_the_command():
    out = subprocess.run([sys.executable, "-m", "sample_data.make_sample_data", "--help"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for flag in ("--data FILE", "--label COL", "--families", "--seed S", "--pool-size N",
                 "--out DIR", "--positive", "--one-hot"):
        assert flag in out.stdout, flag


# --------------------------------------------------------------------------- bad input


def _bad_files(tmp: Path) -> dict[str, Path]:
    X, y = synthetic(30)
    num = [[*map(repr, x.tolist()), int(t)] for x, t in zip(X, y)]
    header = ["a", "b", "c", "d", "y"]
    text = [list(r) for r in num]
    text[6][1] = "red"  # data row 7, column b
    lonely = [r[:4] + [0] for r in num] + [[1.0, 2.0, 3.0, 4.0, 1]]  # class 1: one row
    hole = [list(r) for r in num]
    hole[11][2] = ""  # data row 12, column c
    nolabel = [list(r) for r in num]
    nolabel[4][4] = ""  # data row 5
    flat = [[1.0, 2.0, 3.0, 4.0, int(t)] for t in y]  # no feature varies
    dup = [[i if i != 9 else 3, *r] for i, r in enumerate(num)]  # row id 3 again at row 10
    return {
        "num": write_rows(tmp / "num.csv", header, num),
        "text": write_rows(tmp / "text.csv", header, text),
        "lonely": write_rows(tmp / "lonely.csv", header, lonely),
        "hole": write_rows(tmp / "hole.csv", header, hole),
        "nolabel": write_rows(tmp / "nolabel.csv", header, nolabel),
        "flat": write_rows(tmp / "flat.csv", header, flat),
        "dup": write_rows(tmp / "dup.csv", ["row_id", *header], dup),
        "three": write_rows(tmp / "three.csv", header, [r[:4] + [i % 3] for i, r in
                                                       enumerate(num)]),
        "json": write_rows(tmp / "data.json", header, num),
    }


BAD = [
    ("missing label column", "num", ["--label", "target"],
     ["data file 'num.csv'", "no label column 'target'", "a, b, c, d, y"]),
    ("a class with one row", "lonely", ["--label", "y"],
     ["class 1 of column 'y'", "'lonely.csv'", "1 row (data row 31)", "at least 2 rows"]),
    ("pool too small", "num", ["--label", "y", "--pool-size", "1"],
     ["a pool of 1 row", "30 rows of data file 'num.csv'", "column 'y'"]),
    ("pool leaves too few training rows", "num", ["--label", "y", "--pool-size", "29"],
     ["a pool of 29 rows leaves 1 row of the 30", "'num.csv'", "column 'y'"]),
    ("non-numeric feature", "text", ["--label", "y"],
     ["feature column 'b' of data file 'text.csv' is not numeric", "data row 7", "'red'",
      "--one-hot"]),
    ("empty feature value", "hole", ["--label", "y"],
     ["feature column 'c' of data file 'hole.csv'", "data row 12"]),
    ("missing label", "nolabel", ["--label", "y"],
     ["column 'y' of data file 'nolabel.csv'", "data row 5", "needs a label"]),
    ("unknown family", "num", ["--label", "y", "--families", "tree", "svm"],
     ["unknown estimator family 'svm'", "tree, logreg"]),
    ("three classes", "three", ["--label", "y"],
     ["column 'y' of data file 'three.csv' holds 3 classes", "--positive"]),
    ("unknown positive class", "num", ["--label", "y", "--positive", "7"],
     ["positive class '7'", "column 'y' of data file 'num.csv'", "0, 1"]),
    ("no feature varies", "flat", ["--label", "y"],
     ["no feature of data file 'flat.csv' varies"]),
    ("duplicate row id", "dup", ["--label", "y"],
     ["column 'row_id' of data file 'dup.csv' repeats row id 3", "data row 10",
      "data row 4"]),
    ("unknown feature column", "num", ["--label", "y", "--features", "a", "zz"],
     ["data file 'num.csv' has no feature column 'zz'"]),
    ("not CSV or Parquet", "json", ["--label", "y"],
     ["data file 'data.json' is not a CSV or Parquet file"]),
    ("bad name", "num", ["--label", "y", "--name", "../up"], ["name '../up'"]),
]


@pytest.mark.parametrize("case,key,args,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_message_status_2_and_nothing_written(tmp_path, capsys, case, key,
                                                               args, expected):
    files = _bad_files(tmp_path)
    out = tmp_path / "out"
    assert run(["--data", files[key], *args, "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and len(err.strip().splitlines()) == 1, err
    for text in expected:
        assert text in err, (text, err)
    assert not out.exists()


def test_a_missing_file_is_named(tmp_path, capsys):
    assert run(["--data", tmp_path / "nowhere.csv", "--label", "y",
                "--out", tmp_path / "out"]) == 2
    assert "data file 'nowhere.csv' does not exist" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_error_leaves_earlier_files_in_place(tmp_path, capsys):
    """A refused run writes nothing, so it does not touch a folder's earlier pools."""
    files = _bad_files(tmp_path)
    out = tmp_path / "out"
    assert run(["--data", files["num"], "--label", "y", "--families", "tree",
                "--out", out]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert run(["--data", files["num"], "--label", "y", "--families", "tree",
                "--pool-size", "29", "--out", out]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary files


def test_out_inside_sample_data_is_refused(tmp_path, capsys):
    files = _bad_files(tmp_path)
    target = SD / "panels_from_test_make_panels"
    assert run(["--data", files["num"], "--label", "y", "--out", target]) == 2
    assert "inside sample_data/" in capsys.readouterr().err
    assert not target.exists()


def test_command_line_misuse_is_status_2(data_csv, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        run(["--data", data_csv, "--out", tmp_path / "out"])  # no --label
    assert exc.value.code == 2 and "--label" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        run(["--label", "target", "--out", tmp_path / "out"])  # no --data
    assert exc.value.code == 2 and "--label needs --data" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        run(["--data", data_csv, "--label", "target", "--seed", "x", "--out", tmp_path])
    assert exc.value.code == 2 and "--seed takes integers" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_arrays_errors_name_the_feature_and_row(tmp_path):
    X, y = synthetic(40)
    X[4, 2] = np.nan
    with pytest.raises(gen.DataError, match=r"feature column 'x2' of the arrays .* data row 5"):
        gen.make_panels_from_arrays(X, y, tmp_path / "out")
    with pytest.raises(ValueError, match=r"X has 40 rows but 'label' has 39 labels"):
        gen.make_panels_from_arrays(np.ones((40, 2)), y[:39], tmp_path / "out")
    with pytest.raises(gen.DataError, match=r"unknown estimator family 'forest'"):
        gen.make_panels_from_arrays(synthetic(40)[0], y, tmp_path / "out", families="forest")
    assert not (tmp_path / "out").exists()
