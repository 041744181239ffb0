"""Pools from data in Python (certlib.build): a pandas or polars frame, arrays of
predictions or probabilities, fitted models; each is the pool of the same data written
to a file and loaded (the same certlib.pool_hash)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certlib
from certlib import pool_from_estimators, pool_from_frame, pool_from_predictions
from certlib.columns import read_sources
from certlib.core.derived_scores import builtin_scores
from certlib.errors import CertlibError, ColumnError, InvalidValueError, ParameterError


def load_csv(text: str, **kw) -> certlib.Pool:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "pool.csv"
        path.write_text(text)
        return certlib.load_pool(path, **kw)


def csv_of(cols: dict[str, list]) -> str:
    """A CSV file of the columns; floats written with repr (they read back the same)."""
    n = len(next(iter(cols.values())))

    def cell(v) -> str:
        return "" if v is None else repr(v) if isinstance(v, float) else str(v)

    rows = [",".join(cell(v[i]) for v in cols.values()) for i in range(n)]
    return "\n".join([",".join(cols)] + rows) + "\n"


def same_pool(a: certlib.Pool, b: certlib.Pool) -> None:
    assert certlib.pool_hash(a) == certlib.pool_hash(b)
    assert a.labels.tolist() == b.labels.tolist()
    assert a.classes == b.classes and a.names == b.names and a.row_ids == b.row_ids


# ---------------------------------------------------------------- frames
frames = st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(0, 2), min_size=n, max_size=n), min_size=2, max_size=3),
    st.lists(st.lists(st.sampled_from([0.1, 0.25, 0.5, 1 / 3, 0.75, 0.9, -2.5]), min_size=n,
                      max_size=n), min_size=3, max_size=3),
    st.lists(st.sampled_from([None, 0, 1, 2]), min_size=n, max_size=n),
    st.sampled_from(["none", "text", "int"])))


@settings(max_examples=60, deadline=None)
@given(frames)
def test_a_frame_is_the_pool_of_its_csv_file(t):
    preds, confs, labels, ids = t
    n = len(labels)
    cols: dict[str, list] = {}
    if ids == "text":
        cols["row_id"] = [f"r{i}" for i in range(n)]
    elif ids == "int":
        cols["row_id"] = [10 * i + 3 for i in range(n)]
    for k, p in enumerate(preds):
        cols[f"pred_m{k}"], cols[f"conf_m{k}"] = p, confs[k]
    cols["label"] = labels
    seen = {v for p in preds for v in p} | {v for v in labels if v is not None}
    kw = {} if len(seen) > 1 else {"classes": [0, 1, 2]}  # one class: declare the set
    ref = load_csv(csv_of(cols), **kw)
    same_pool(pool_from_frame(pl.DataFrame(cols, strict=False), **kw), ref)
    same_pool(pool_from_frame(pd.DataFrame(cols), **kw), ref)
    # the row ids as the pandas index, named
    if ids != "none":
        indexed = pd.DataFrame({k: v for k, v in cols.items() if k != "row_id"},
                               index=pd.Index(cols["row_id"], name="row_id"))
        same_pool(pool_from_frame(indexed, **kw), ref)


def test_a_frame_with_its_own_names_and_explicit_columns():
    df = pd.DataFrame({"sample": ["a", "b", "c"], "truth": [1, 0, None],
                       "p1": [1, 0, 0], "s1": [0.9, 0.8, 0.7],
                       "p2": [1, 1, 0], "s2": [0.6, 0.9, 0.8]})
    pool = pool_from_frame(df, label="truth", id="sample",
                           candidates={"A": ("p1", "s1"), "B": {"pred": "p2", "conf": "s2"}})
    ref = load_csv("row_id,label,pred_A,conf_A,pred_B,conf_B\n"
                   "a,1,1,0.9,1,0.6\nb,0,0,0.8,1,0.9\nc,,0,0.7,0,0.8\n")
    same_pool(pool, ref)
    assert pool.n_labelled == 2


def test_a_frame_with_a_label_by_another_name_keeps_its_labels():
    df = pl.DataFrame({"pred_A": [0, 1, 1], "conf_A": [0.9, 0.8, 0.7],
                       "pred_B": [1, 1, 0], "conf_B": [0.6, 0.9, 0.8],
                       "y_true": [1, None, 0], "target": [0, 0, 0]})
    pool = pool_from_frame(df)
    assert pool.n_labelled == 2 and pool.extra["target"] == (0, 0, 0)
    assert pool_from_frame(df, label="target").n_labelled == 3


def test_a_pandas_column_mixing_numbers_and_text_is_text_as_in_a_file():
    df = pd.DataFrame({"pred_A": [1, "cat", 0], "conf_A": [0.9, 0.8, 0.7],
                       "pred_B": ["cat", "cat", 1], "conf_B": [0.6, 0.9, 0.8],
                       "label": [1, None, "cat"]})
    ref = load_csv("pred_A,conf_A,pred_B,conf_B,label\n1,0.9,cat,0.6,1\n"
                   "cat,0.8,cat,0.9,\n0,0.7,1,0.8,cat\n")
    same_pool(pool_from_frame(df), ref)


def test_a_frame_with_probability_columns():
    df = pl.DataFrame({"id": [1, 2, 3], "y": [0, 1, None],
                       "A_proba_0": [0.7, 0.2, 0.5], "A_proba_1": [0.3, 0.8, 0.5],
                       "B_pred": [0, 0, 1], "B_score": [0.5, 0.6, 0.9]})
    pool = pool_from_frame(df)
    assert pool.names == ("A", "B") and pool.n_labelled == 2
    assert pool.preds[0].tolist() == [0, 1, 0]  # a tie goes to the leftmost class
    assert pool.confs[0].tolist() == [0.7, 0.8, 0.5]
    explicit = pool_from_frame(df, candidates={"A": {"proba": ["A_proba_0", "A_proba_1"]},
                                               "B": ("B_pred", "B_score")})
    same_pool(explicit, pool)


@pytest.mark.parametrize("kw,kind,needles", [
    (dict(candidates={"A": ("p1", "nope"), "B": ("p2", "s2")}), ColumnError,
     ["'nope'", "data frame"]),
    (dict(candidates={"A": ("p1", "s1")}), ColumnError, ["at least two"]),
    (dict(candidates={"A": ("p1", "s1"), "B": ("p2", "note")}), InvalidValueError,
     ["'note'", "data row 1", "data frame"]),
    (dict(candidates={"A": ("p1", "s1"), "B": {"pred": "p2", "score": "s2"}}), ParameterError,
     ["'B'", "score"]),
    (dict(candidates={"A": ("p1", "s1"), "B": 3}), ParameterError, ["'B'"]),
])
def test_a_frame_that_does_not_fit_is_one_error(kw, kind, needles):
    df = pd.DataFrame({"p1": [1, 0], "s1": [0.9, 0.8], "p2": [1, 1], "s2": [0.6, 0.9],
                       "note": ["x", "y"]})
    with pytest.raises(kind) as info:
        pool_from_frame(df, **kw)
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))


def test_pool_from_frame_refuses_other_objects():
    with pytest.raises(ParameterError, match="DataFrame"):
        pool_from_frame({"pred_A": [1]})


# ---------------------------------------------------------------- arrays
def test_predictions_are_the_pool_of_their_file():
    pool = pool_from_predictions({"A": ([0, 1, 1], [0.9, 0.6, 0.8]),
                                  "B": (np.array([1, 1, 0]), np.array([0.5, 0.7, 0.8]))},
                                 labels=[0, 1, None], row_ids=["x", "y", "z"])
    ref = load_csv("row_id,pred_A,conf_A,pred_B,conf_B,label\n"
                   "x,0,0.9,1,0.5,0\ny,1,0.6,1,0.7,1\nz,1,0.8,0,0.8,\n")
    same_pool(pool, ref)


def test_text_classes_and_nan_labels():
    pool = pool_from_predictions({"A": (np.array(["cat", "dog"]), [0.9, 0.6]),
                                  "B": (["dog", "dog"], [0.5, 0.7])},
                                 labels=np.array(["dog", None], dtype=object))
    ref = load_csv("pred_A,conf_A,pred_B,conf_B,label\ncat,0.9,dog,0.5,dog\n"
                   "dog,0.6,dog,0.7,\n")
    same_pool(pool, ref)
    floats = pool_from_predictions({"A": ([0, 1], [0.9, 0.6]), "B": ([1, 1], [0.5, 0.7])},
                                   labels=np.array([1.0, np.nan]))
    assert floats.n_labelled == 1 and floats.classes == (0, 1)


probability_rows = st.lists(
    st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.5, 0.3]), min_size=3, max_size=3)
    .filter(lambda r: r[0] + r[1] <= 1.0)
    .map(lambda r: [r[0], r[1], 1.0 - r[0] - r[1]]),
    min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(probability_rows, st.lists(st.sampled_from([None, 0, 1, 2]), min_size=8, max_size=8))
def test_probabilities_derive_the_scores_a_prob_file_derives(rows, labels):
    P = np.asarray(rows, dtype=np.float64)
    n = P.shape[0]
    labels = labels[:n]
    extra = np.linspace(0.0, 1.0, n)
    cols = {"prob_0": P[:, 0].tolist(), "prob_1": P[:, 1].tolist(), "prob_2": P[:, 2].tolist(),
            "conf_energy": extra.tolist(), "label": labels}
    ref = load_csv(csv_of(cols))
    got = pool_from_predictions({"energy": extra}, probabilities=P, labels=labels)
    same_pool(got, ref)
    assert got.names == ("msp", "neg_entropy", "margin", "energy")
    # one candidate's probability matrix: the argmax and the msp score of that file
    mat = pool_from_predictions({"M": P, "N": P[:, ::-1]}, labels=labels)
    assert mat.preds[0].tolist() == ref.preds[0].tolist()
    assert mat.confs[0].tobytes() == builtin_scores(P)[0].tobytes() \
        == ref.confs[0].tobytes()
    # and the pool of the per-model probability columns of a file
    per_model = read_sources([("m.csv", csv_of(
        {**{f"M_proba_{k}": P[:, k].tolist() for k in range(3)},
         **{f"N_proba_{k}": P[:, 2 - k].tolist() for k in range(3)},
         "label": labels}).encode())]).pool
    same_pool(mat, per_model)
    # the class set is the matrix's, whichever classes the rows predict
    assert mat.classes == ref.classes == (0, 1, 2)


def test_probability_matrices_with_class_names():
    P = np.array([[0.7, 0.3], [0.2, 0.8]])
    pool = pool_from_predictions({"A": P, "B": P[:, ::-1]}, classes=["cat", "dog"],
                                 labels=["dog", None])
    assert pool.classes == ("cat", "dog")
    assert pool.preds.tolist() == [[0, 1], [1, 0]]
    with pytest.raises(ParameterError, match="2 columns; classes has 3"):
        pool_from_predictions({"A": P, "B": P}, classes=[0, 1, 2])


@pytest.mark.parametrize("args,kw,kind,needles", [
    (({"A": ([0, 1], [0.9, 0.8])},), {}, ParameterError, ["at least two"]),
    (({},), {}, ParameterError, ["at least two"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": ([0, 1, 1], [0.9, 0.8, 0.7])},), {}, ParameterError,
     ["'B'", "3 rows", "2"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": ([0, 1], [0.9, np.nan])},), {}, InvalidValueError,
     ["'B: confidence'", "data row 2"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": np.array([[0.5, 0.7], [0.2, 0.8]])},), {},
     InvalidValueError, ["'B'", "sum to", "data row 1"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": np.array([[1.5, -0.5], [0.2, 0.8]])},), {},
     InvalidValueError, ["'B: probability of 0'", "data row 1", "[0, 1]"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": ([0, 1], [0.9, 0.8])},), dict(labels=[0]),
     ParameterError, ["labels", "2 rows"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": ([0, 1], [0.9, 0.8])},), dict(labels=[0, 5],
                                                                      classes=[0, 1]),
     CertlibError, ["5", "data row 2"]),
    (({"A": ([0, 1], [0.9, 0.8]), "B": ([0, 1], [0.9, 0.8])},), dict(row_ids=[1, 1]),
     InvalidValueError, ["row ids must be unique"]),
    (({"A": [0.9, 0.8]},), dict(probabilities=[[0.5, 0.6], [0.1, 0.9]]), InvalidValueError,
     ["sum to", "data row 1"]),
])
def test_bad_arrays_are_one_error(args, kw, kind, needles):
    with pytest.raises(kind) as info:
        pool_from_predictions(*args, **kw)
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))


# ---------------------------------------------------------------- models
class Threshold:
    """A fitted model by hand: predicts 1 above a threshold on the first feature."""

    classes_ = np.array([0, 1])

    def __init__(self, t: float, proba: bool = True) -> None:
        self.t = t
        if not proba:
            self.predict_proba = None  # not callable: no probabilities

    def predict(self, X):
        return (np.asarray(X)[:, 0] > self.t).astype(int)

    def decision_function(self, X):
        return np.asarray(X)[:, 0] - self.t

    def predict_proba(self, X):
        p = 1.0 / (1.0 + np.exp(-(np.asarray(X)[:, 0] - self.t)))
        return np.column_stack([1.0 - p, p])


def test_hand_written_models():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, np.nan, 1])
    a, b = Threshold(0.5), Threshold(1.5, proba=False)
    pool = pool_from_estimators(X, y, estimators={"a": a, "b": b})
    P = a.predict_proba(X)
    ref = pool_from_predictions(
        {"a": (a.predict(X), P[np.arange(4), a.predict(X)]),
         "b": (b.predict(X), np.abs(b.decision_function(X)))},
        labels=[0, 1, None, 1], classes=[0, 1])
    same_pool(pool, ref)
    assert pool.n_labelled == 3
    dec = pool_from_estimators(X, estimators={"a": a, "b": b}, score="decision",
                               row_ids=["w", "x", "y", "z"])
    assert dec.confs[0].tolist() == np.abs(a.decision_function(X)).tolist()
    assert dec.row_ids == ("w", "x", "y", "z") and dec.n_labelled == 0


def test_models_that_do_not_fit_are_one_error():
    X = np.array([[0.0], [1.0]])
    with pytest.raises(ParameterError, match="'b'.*predict_proba"):
        pool_from_estimators(X, estimators={"a": Threshold(0.5), "b": Threshold(1, False)},
                             score="proba")
    other = Threshold(0.5)
    other.classes_ = np.array([0, 1, 2])
    with pytest.raises(ParameterError, match="different classes"):
        pool_from_estimators(X, estimators={"a": Threshold(0.5), "b": other})
    with pytest.raises(ParameterError, match="at least two"):
        pool_from_estimators(X, estimators={"a": Threshold(0.5)})
    with pytest.raises(ParameterError, match="score must be"):
        pool_from_estimators(X, estimators={"a": Threshold(0.5), "b": Threshold(1)},
                             score="margin")


def test_scikit_learn_models():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    assert sklearn.__version__
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    X, y = X[order], y[order]
    models = {"tree": DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[:80], y[:80]),
              "logreg": LogisticRegression(max_iter=2000).fit(X[:80], y[:80]),
              "svm": LinearSVC(random_state=0).fit(X[:80], y[:80])}
    labels = y[80:].astype(float)
    labels[::3] = np.nan
    pool = pool_from_estimators(X[80:], labels, estimators=models)
    assert pool.names == ("tree", "logreg", "svm") and pool.classes == (0, 1, 2)
    assert pool.n == 70 and pool.n_labelled == int(np.isfinite(labels).sum())
    lr = models["logreg"]
    k = lr.predict(X[80:])
    assert pool.confs[1].tolist() == lr.predict_proba(X[80:])[np.arange(70), k].tolist()
    assert pool.confs[2].tolist() == models["svm"].decision_function(X[80:]).max(axis=1).tolist()


def test_importing_certlib_build_imports_neither_sklearn_nor_pandas():
    code = ("import sys, certlib.build; "
            "print(sorted(m for m in ('sklearn', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_the_python_page_examples_run(monkeypatch, capsys):
    """docs/python.md, "Your own data in Python": its code blocks, run in order."""
    pytest.importorskip("sklearn")
    import re

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    page = (root / "docs" / "python.md").read_text()
    section = page.split("## Your own data in Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), namespace)
    assert namespace["got"].pool.names == ("a", "b")
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "  0% reading a.csv (45 bytes)" and printed[-1].startswith("100% ")


def test_bad_frames_and_arrays_get_one_message():
    """A pandas frame with two columns of one name, and labels that are not one value
    per row, are refused with a CertlibError (an AttributeError and a class set of
    '[0]', '[1]' before)."""
    import pandas as pd

    from certlib.errors import CertlibError

    df = pd.DataFrame([[0, 0.9, 1, 0.8]], columns=["A_pred", "A_pred", "B_pred", "B_score"])
    with pytest.raises(CertlibError, match="two columns named 'A_pred'"):
        certlib.pool_from_frame(df)
    with pytest.raises(CertlibError, match="1-D"):
        certlib.pool_from_predictions({"a": ([0, 1, 1], [0.9, 0.8, 0.7]),
                                       "b": ([1, 1, 0], [0.6, 0.5, 0.4])},
                                      labels=[[0], [1], [1]])
