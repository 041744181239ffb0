"""Deterministic generator for everything in ``sample_data/``.

Usage (from the repository root)::

    python sample_data/make_sample_data.py            # regenerate all files
    python sample_data/make_sample_data.py --out DIR  # write into DIR instead
    python sample_data/make_sample_data.py --only wine_s0_tree   # one panel pair
    python sample_data/make_sample_data.py --splits 3,4,5 --out DIR   # held-out panels only
    python -m sample_data.make_sample_data --data FILE --label COL --out DIR   # your data

Running it twice on the same machine (same numpy / scikit-learn builds)
rewrites every file byte-identically: all randomness is seeded, rows and
columns are written in a fixed order, and floats are written with Python's
``repr`` (shortest round-trip form), so equal confidences stay exactly equal
after a CSV round trip.  Only data that ships *inside* scikit-learn is used
(``load_breast_cancer``, ``load_wine``, ``load_digits``); nothing is downloaded.

What it writes (see ``README.md`` next to this file):

* ``panels/<dataset>_s<split>_<model>_k<K>.csv`` -- 36 "panel pools" following
  section 6.1 of the certificate paper (feature-subset panels, trees or
  logistic regressions, K = 4 or 8), fully labelled.
* ``teaching_k4.csv`` -- copy of ``panels/breast_cancer_s1_tree_k4.csv``
  (the Figure 10 teaching condition on a shipped data set).
* ``demo_binary.csv`` / ``demo_unlabelled.csv`` -- breast cancer, four diverse
  scikit-learn candidates, with display columns; the second has no labels.
* ``digits_probs.csv`` -- 10-class digits, logistic-regression probabilities
  ``prob_0..prob_9`` (shared-prediction / confidence-score choice).
* ``figure2.csv`` / ``worst_case.csv`` -- paper Figure 2's four rows and the worst-case
  rank example (n = 20, C(0) = 19), from ``certlib.teaching.worked_examples``.
* ``digits_images.csv`` + ``digits_images/<row_id>.png`` -- the ``digits_probs`` rows
  unlabelled, with each 8 x 8 digit as a small PNG (``image`` column).
* ``audit_stream.csv`` -- 20,000-item update-audit stream for the Discern audit:
  traffic drawn from the 1,797 digits, two logistic regressions (incumbent vs.
  candidate, out-of-fold), the true digit, a slice, a judge score and each item's
  image (``digits_images/<index>.png``, written for every digit).

Panel protocol (paper section 6.1, "Panel construction"), as implemented here:

1. Stratified 70/30 train/evaluation split, ``random_state`` = split seed
   (0, 1, 2).  Binary labels: breast cancer as shipped (1 = benign), wine
   ``1{class == 0}``, digits ``1{digit is odd}``.
2. Quartile indicators from the *training* rows: for every feature and every
   distinct training quartile q in {Q1, Q2, Q3}, the indicator ``x > q``.
   Indicators that are constant on the training rows or duplicate an earlier
   indicator of the same feature (tied quartiles) are dropped.
3. Indicators are ordered by decreasing absolute class-conditional mean
   difference on the training rows (stable: ties keep feature/quartile order).
4. Minority-count error of an indicator subset S = sum over the distinct
   training patterns of S of min(#label 0, #label 1).  E_full uses all
   indicators.
5. Fixed-order backward search, one per eps in {0,.005,.01,.02,.04,.08,.12,.16}:
   starting from all indicators, visit them from the weakest (end of the
   order) to the strongest and remove one whenever the error stays
   ``<= E_full + floor(eps * n_train)``.  Because the error can only grow when
   indicators are removed, one pass already leaves a set from which no
   retained indicator can be removed within the budget.  (``<=`` rather than
   ``<``: with ``<`` no indicator could ever be removed at eps = 0.)
6. Each panel (its retained indicators, strongest first) gets a
   ``DecisionTreeClassifier(min_samples_leaf=2, random_state=0)`` or a
   ``LogisticRegression(C=1, max_iter=1000)``; prediction = ``predict``,
   confidence = maximum class probability.  K = 8 uses all panels in eps
   order, K = 4 uses panel indices 0, 2, 4, 6.  Duplicate panels produced by
   the search are kept as separate candidates (the paper merges exact
   duplicates only for its Figure 9/10 rule comparison).

Panels from your own data (``--data FILE --label COL --out DIR``, or
``make_panels_from_file`` / ``make_panels_from_arrays`` from Python): the same
protocol on a CSV or Parquet file or on arrays.  The label column must hold two
classes, or name one with ``--positive CLASS`` for that class (1) versus the
rest (0), as Wine is used above; every other column is a numeric feature
(``--features`` picks some; a ``row_id`` column names the rows instead, else
the row id is the 0-based index of the data row); text features are refused
unless ``--one-hot`` turns each into one 0/1 column per value.  The pool is a
stratified ``--pool-size`` rows (default 30%) for each ``--seed`` (default 0);
each family in ``--families`` (default all: ``tree``, ``logreg``) gives
``<name>_s<seed>_<family>_k8.csv`` and ``..._k4.csv`` in DIR, labels and
predictions in the file's own class values.  Everything is checked and fitted
before the first file is written, and each file is written under a temporary
name and renamed: bad input writes nothing.
"""

# No ``from __future__ import annotations``: the tests load this file by path without
# registering it in ``sys.modules``, and dataclasses cannot resolve string annotations
# of a module missing there.  Python >= 3.10 evaluates ``X | None`` at run time anyway.

import argparse
import csv
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_wine,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

HERE = Path(__file__).resolve().parent

DATASETS = ("breast_cancer", "wine", "digits")
SPLITS = (0, 1, 2)
EPSILONS = (0.0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.12, 0.16)
PANEL_NAMES = tuple(f"eps{round(e * 1000):03d}" for e in EPSILONS)  # eps000 .. eps160
K4_INDICES = (0, 2, 4, 6)
TREE_SEED = 0
POOL_FRACTION = 0.3  # the 70/30 train/evaluation split of section 6.1
# the estimator families a panel can receive (section 6.1), as fitted by ``fit_panel``
FAMILIES = {
    "tree": f"DecisionTreeClassifier(min_samples_leaf=2, random_state={TREE_SEED})",
    "logreg": "LogisticRegression(C=1, max_iter=1000)",
}
MODELS = tuple(FAMILIES)
TEACHING_SOURCE = "breast_cancer_s1_tree_k4.csv"


# --------------------------------------------------------------------------
# writing


def fmt(v) -> str:
    """Deterministic text for one cell: ints as ints, floats via repr."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not np.isfinite(f):
            raise ValueError(f"non-finite value {f!r}")
        return repr(f)
    return str(v)


def write_csv(path: Path, header: list[str], columns: list) -> None:
    """Write columns (equal-length sequences) under ``header``; LF line ends."""
    n = len(columns[0])
    assert all(len(c) == n for c in columns), "ragged columns"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for i in range(n):
            w.writerow([fmt(c[i]) for c in columns])


# --------------------------------------------------------------------------
# panel pools (paper section 6.1)


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "breast_cancer":
        d = load_breast_cancer()
        return d.data, d.target.astype(np.int64)
    if name == "wine":
        d = load_wine()
        return d.data, (d.target == 0).astype(np.int64)
    if name == "digits":
        d = load_digits()
        return d.data, (d.target % 2).astype(np.int64)
    raise ValueError(name)


def split_indices(y: np.ndarray, seed: int,
                  pool_size: float | int = POOL_FRACTION) -> tuple[np.ndarray, np.ndarray]:
    """Sorted training and evaluation indices of a stratified split.

    ``pool_size`` is scikit-learn's ``test_size``: a fraction, or a number of rows.
    """
    idx = np.arange(len(y))
    tr, ev = train_test_split(idx, test_size=pool_size, stratify=y, random_state=seed)
    return np.sort(tr), np.sort(ev)


def quartile_indicators(Xtr: np.ndarray, ytr: np.ndarray):
    """Thresholds (feature, q) of the training-quartile indicators, ordered."""
    specs = []
    for f in range(Xtr.shape[1]):
        seen = []
        for q in np.quantile(Xtr[:, f], [0.25, 0.5, 0.75]):
            col = Xtr[:, f] > q
            if col.all() or not col.any():
                continue
            if any(np.array_equal(col, s) for s in seen):
                continue
            seen.append(col)
            specs.append((f, float(q)))
    Btr = np.column_stack([Xtr[:, f] > q for f, q in specs]).astype(np.uint8)
    diff = np.abs(Btr[ytr == 1].mean(axis=0) - Btr[ytr == 0].mean(axis=0))
    order = np.argsort(-diff, kind="stable")
    return [specs[i] for i in order]


def indicator_matrix(X: np.ndarray, specs) -> np.ndarray:
    return np.column_stack([X[:, f] > q for f, q in specs]).astype(np.uint8)


def minority_error(B: np.ndarray, y: np.ndarray, keep: np.ndarray) -> int:
    """Sum over distinct patterns of B[:, keep] of the minority-label count."""
    if not keep.any():
        pos = int(y.sum())
        return min(pos, len(y) - pos)
    packed = np.packbits(B[:, keep], axis=1)
    _, inv = np.unique(packed, axis=0, return_inverse=True)
    inv = inv.ravel()
    pos = np.bincount(inv, weights=y, minlength=inv.max() + 1)
    tot = np.bincount(inv, minlength=inv.max() + 1)
    return int(np.minimum(pos, tot - pos).sum())


def backward_search(B: np.ndarray, y: np.ndarray, eps: float) -> np.ndarray:
    m = B.shape[1]
    keep = np.ones(m, dtype=bool)
    bound = minority_error(B, y, keep) + int(np.floor(eps * len(y)))
    for j in range(m - 1, -1, -1):  # weakest first
        keep[j] = False
        if minority_error(B, y, keep) > bound:
            keep[j] = True
    return keep


def fit_panel(model: str, Btr, ytr, Bev):
    """Prediction and max-probability confidence on the evaluation rows."""
    if Btr.shape[1] == 0:  # empty panel: constant majority prediction
        p1 = ytr.mean()
        pred = np.full(len(Bev), int(p1 > 0.5), dtype=np.int64)
        return pred, np.full(len(Bev), max(p1, 1 - p1))
    if model == "tree":
        clf = DecisionTreeClassifier(min_samples_leaf=2, random_state=TREE_SEED)
    elif model == "logreg":
        clf = LogisticRegression(C=1.0, max_iter=1000)
    else:
        raise ValueError(f"unknown family {model!r}; the families are {', '.join(FAMILIES)}")
    clf.fit(Btr, ytr)
    proba = clf.predict_proba(Bev)
    pred = clf.classes_[np.argmax(proba, axis=1)].astype(np.int64)
    return pred, proba.max(axis=1)


def build_panels(dataset: str, split: int):
    """Panels (retained indicator masks) and split for one dataset/split."""
    X, y = load_binary(dataset)
    tr, ev = split_indices(y, split)
    return panels_of(X, y, tr, ev)


def panels_of(X: np.ndarray, y: np.ndarray, tr: np.ndarray, ev: np.ndarray) -> dict:
    """Panels (retained indicator masks) of binary data ``X``, ``y`` split into ``tr``, ``ev``.

    Steps 2-5 of the protocol: every indicator comes from the training rows only.
    """
    specs = quartile_indicators(X[tr], y[tr])
    Btr = indicator_matrix(X[tr], specs)
    Bev = indicator_matrix(X[ev], specs)
    keeps = [backward_search(Btr, y[tr], e) for e in EPSILONS]
    return dict(y=y, tr=tr, ev=ev, Btr=Btr, Bev=Bev, keeps=keeps)


def fit_candidates(P: dict, model: str) -> tuple[list, list]:
    """Predictions (classes 0/1) and confidences of ``model`` on every panel of ``P``."""
    preds, confs = [], []
    for keep in P["keeps"]:
        p, c = fit_panel(model, P["Btr"][:, keep], P["y"][P["tr"]], P["Bev"][:, keep])
        preds.append(p)
        confs.append(c)
    return preds, confs


def pool_tables(row_ids, labels, preds, confs) -> dict:
    """``{K: (header, columns)}`` of the K=8 and K=4 pools (section 6.1's panel indices)."""
    tables = {}
    for K, sel in ((8, tuple(range(8))), (4, K4_INDICES)):
        header = ["row_id", "label"]
        cols = [row_ids, labels]
        for j in sel:
            header += [f"pred_{PANEL_NAMES[j]}", f"conf_{PANEL_NAMES[j]}"]
            cols += [preds[j], confs[j]]
        tables[K] = (header, cols)
    return tables


def panel_summary(stem: str, P: dict, preds, confs) -> dict:
    """Pool size, panel sizes and duplicate counts of one condition (the log line)."""
    # duplicates: identical (pred, conf) columns on the evaluation pool
    def dup_count(sel):
        seen = {(preds[j].tobytes(), confs[j].tobytes()) for j in sel}
        return len(sel) - len(seen)
    return dict(
        stem=stem,
        n=len(P["ev"]),
        n_train=len(P["tr"]),
        sizes=[int(k.sum()) for k in P["keeps"]],
        dup_panels_k8=len(P["keeps"]) - len({k.tobytes() for k in P["keeps"]}),
        dup_cands_k8=dup_count(range(8)),
        dup_cands_k4=dup_count(K4_INDICES),
    )


def summary_line(summ: dict) -> str:
    return (f"  {summ['stem']}: n={summ['n']} panel sizes={summ['sizes']} "
            f"dup panels={summ['dup_panels_k8']} dup cands k8/k4="
            f"{summ['dup_cands_k8']}/{summ['dup_cands_k4']}")


def panel_pools(dataset: str, split: int, model: str, out: Path, panels=None) -> dict:
    """Write the K=8 and K=4 pools of one condition; return a summary."""
    P = panels if panels is not None else build_panels(dataset, split)
    y, ev = P["y"], P["ev"]
    preds, confs = fit_candidates(P, model)
    stem = f"{dataset}_s{split}_{model}"
    for K, (header, cols) in pool_tables(ev, y[ev], preds, confs).items():
        write_csv(out / "panels" / f"{stem}_k{K}.csv", header, cols)
    return panel_summary(stem, P, preds, confs)


def make_panels(out: Path, only: str | None = None, log=print,
                splits=SPLITS, datasets=DATASETS, families=MODELS) -> list[dict]:
    """Write the panel pools of ``datasets`` x ``splits`` x ``families`` into ``out/panels``.

    The defaults are the shipped pools (split seeds 0, 1, 2, both families).  Other
    split seeds give held-out pools with exactly the same protocol, e.g.
    ``make_panels(tmp, splits=(3, 4, 5))``: they check out of sample the policies
    whose defaults were chosen on the shipped pools.
    """
    families = check_families(families)
    summaries = []
    for ds in datasets:
        for s in splits:
            models = [m for m in families
                      if only is None or f"{ds}_s{s}_{m}".startswith(only)]
            if not models:
                continue
            P = build_panels(ds, s)
            for m in models:
                summ = panel_pools(ds, s, m, out, panels=P)
                log(summary_line(summ))
                summaries.append(summ)
    return summaries


# --------------------------------------------------------------------------
# panel pools from a user's data set (the same protocol, section 6.1)

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
CSV_SUFFIXES = (".csv", ".tsv")
PARQUET_SUFFIXES = (".parquet", ".pq")
MIN_CLASS_ROWS = 2  # one training row and one pool row of every class
MAX_SEED = 2**32 - 1  # scikit-learn's random_state range


class DataError(ValueError):
    """Bad input for panels from a user's data: the message names the file, column, row."""


@dataclass(frozen=True)
class PanelData:
    """A data set checked once for the section 6.1 panels; the fitting code trusts it.

    ``X`` is float64 with finite values, ``y`` holds 0 and 1 (``classes[y]`` are the
    label values written to the pool files), every class has at least two rows, and
    ``row_ids`` are unique.
    """

    X: np.ndarray
    y: np.ndarray
    classes: tuple
    row_ids: tuple
    features: tuple
    source: str
    label: str


@dataclass(frozen=True)
class PanelFiles:
    """What ``make_panels_from_file`` or ``make_panels_from_arrays`` wrote.

    ``files`` are in writing order: for each seed, for each family, K = 8 then K = 4.
    ``summaries`` hold one log record per seed and family (panel sizes, duplicates).
    """

    files: tuple
    n_rows: int
    n_train: int
    n_pool: int
    families: tuple
    seeds: tuple
    classes: tuple
    summaries: tuple


def check_families(families) -> tuple:
    """The family names, known and without repeats, in the order given."""
    if isinstance(families, str):
        families = (families,)
    got = tuple(dict.fromkeys(families))
    if not got:
        raise DataError(f"no estimator family given; expected some of {', '.join(FAMILIES)}")
    for f in got:
        if f not in FAMILIES:
            raise DataError(f"unknown estimator family {f!r}; the families are "
                            f"{', '.join(FAMILIES)}")
    return got


def check_seeds(seeds) -> tuple:
    """Split seeds as ints in scikit-learn's ``random_state`` range, without repeats."""
    if isinstance(seeds, (int, np.integer)):
        seeds = (seeds,)
    got = tuple(dict.fromkeys(seeds))
    if not got:
        raise DataError("no split seed given; expected at least one")
    for s in got:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) \
                or not 0 <= s <= MAX_SEED:
            raise DataError(f"split seed {s!r} is not an integer from 0 to {MAX_SEED}")
    return tuple(int(s) for s in got)


def _row(i: int) -> str:
    return f"data row {i + 1}"


def _classes_text(values) -> str:
    shown = ", ".join(repr(v) for v in values[:6])
    return shown + (f", ... ({len(values)} classes)" if len(values) > 6 else "")


def _same_class(value, positive) -> bool:
    """Whether a label is the positive class: equal, equal as text, or the same number
    (``--positive 1`` on a float column 1.0)."""
    if value == positive or str(value) == str(positive):
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(str(positive)) == value
        except ValueError:
            return False
    return False


def _binary_labels(values: list, *, where: str, label: str, positive) -> tuple:
    """``(y, classes)``: labels as 0/1 and the label values 0 and 1 stand for."""
    n = len(values)
    for i, v in enumerate(values):
        if v is None or (isinstance(v, (float, np.floating)) and not math.isfinite(v)):
            raise DataError(f"column {label!r} of {where} is empty or not finite at {_row(i)} "
                            f"({v!r}); every row needs a label")
    if positive is not None:
        hit = np.array([_same_class(v, positive) for v in values])
        if not hit.any():
            try:
                found = sorted(set(values))
            except TypeError:
                found = list(dict.fromkeys(values))
            raise DataError(f"positive class {positive!r} does not occur in column {label!r} "
                            f"of {where}; its classes are {_classes_text(found)}")
        y = hit.astype(np.int64)
        classes = (0, 1)
        names = (f"every class but {positive!r}", f"{positive!r} (the positive class)")
    else:
        try:
            found = sorted(set(values))
        except TypeError:
            raise DataError(f"column {label!r} of {where} mixes kinds of values (numbers and "
                            f"text); the labels must be of one kind") from None
        if len(found) != 2:
            what = "one class" if len(found) == 1 else f"{len(found)} classes"
            hint = ("" if len(found) == 1 else "; the section 6.1 panels are binary: "
                    "name one class with --positive CLASS (positive= in Python) for "
                    "that class versus the rest")
            raise DataError(f"column {label!r} of {where} holds {what} "
                            f"({_classes_text(found)}); expected two classes{hint}")
        index = {v: k for k, v in enumerate(found)}
        y = np.array([index[v] for v in values], dtype=np.int64)
        classes = tuple(found)
        names = tuple(repr(v) for v in found)
    for k in (0, 1):
        rows = np.flatnonzero(y == k)
        if len(rows) < MIN_CLASS_ROWS:
            at = f" ({_row(int(rows[0]))})" if len(rows) else ""
            raise DataError(f"class {names[k]} of column {label!r} in {where} has "
                            f"{len(rows)} row{'' if len(rows) == 1 else 's'}{at} of {n}; a "
                            f"stratified split needs at least {MIN_CLASS_ROWS} rows of every "
                            f"class")
    return y, classes


def _unique_row_ids(values: list, *, where: str, column: str) -> tuple:
    seen: dict = {}
    for i, v in enumerate(values):
        if v is None:
            raise DataError(f"column {column!r} of {where} is empty at {_row(i)}; every row "
                            f"needs a row id")
        if v in seen:
            raise DataError(f"column {column!r} of {where} repeats row id {v!r} at {_row(i)} "
                            f"(first at {_row(seen[v])}); row ids must be unique")
        seen[v] = i
    return tuple(values)


def _finite_column(x: np.ndarray, *, where: str, column: str) -> np.ndarray:
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):
        i = int(bad[0])
        raise DataError(f"feature column {column!r} of {where} is empty or not finite at "
                        f"{_row(i)} ({x[i]!r}); every feature value must be a finite number")
    return x


def make_dataset(X, y, *, features: Sequence[str] | None = None, row_ids=None,
                 positive=None, source: str = "the arrays", label: str = "label") -> PanelData:
    """Check arrays once into a `PanelData` (the messages name ``source`` and ``label``)."""
    try:
        Xa = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"X of {source} is not numeric: every feature value must be a "
                        f"number (one-hot encode text features first)") from None
    if Xa.ndim != 2:
        raise DataError(f"X of {source} has {Xa.ndim} dimension(s); expected a 2-d array "
                        f"(rows x features)")
    values = list(np.asarray(y, dtype=object).ravel()) if np.ndim(y) else []
    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    n, p = Xa.shape
    if len(values) != n:
        raise DataError(f"{source}: X has {n} rows but {label!r} has {len(values)} labels; "
                        f"expected one label per row")
    if n == 0:
        raise DataError(f"{source} has no data rows")
    if p == 0:
        raise DataError(f"{source} has no feature column besides the label {label!r}")
    names = tuple(features) if features is not None else tuple(f"x{j}" for j in range(p))
    if len(names) != p:
        raise DataError(f"{source}: {len(names)} feature names for {p} feature columns")
    for j, name in enumerate(names):
        _finite_column(Xa[:, j], where=source, column=name)
    ys, classes = _binary_labels(values, where=source, label=label, positive=positive)
    ids = tuple(range(n)) if row_ids is None else _unique_row_ids(
        [v.item() if isinstance(v, np.generic) else v for v in np.asarray(row_ids, dtype=object)],
        where=source, column="row_id")
    if len(ids) != n:
        raise DataError(f"{source}: {len(ids)} row ids for {n} rows")
    Xa = np.array(Xa, dtype=np.float64)
    Xa.flags.writeable = False
    ys.flags.writeable = False
    return PanelData(X=Xa, y=ys, classes=classes, row_ids=ids, features=names,
                     source=source, label=label)


def _read_frame(path: Path):
    """The file as a polars DataFrame; any reading problem is one `DataError`."""
    import polars as pl

    where = f"data file {path.name!r}"
    if not path.is_file():
        raise DataError(f"{where} does not exist ({path})")
    suffix = path.suffix.lower()
    try:
        if suffix in CSV_SUFFIXES:
            # the whole file decides each column's type: a text cell on the last row
            # makes the column text, not a parse error
            return pl.read_csv(path, infer_schema_length=None,
                               separator="\t" if suffix == ".tsv" else ",")
        if suffix in PARQUET_SUFFIXES:
            return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{where} cannot be read: {first}") from None
    raise DataError(f"{where} is not a CSV or Parquet file: expected a name ending in "
                    f"{', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}")


def _feature_matrix(df, features: Sequence[str], *, where: str, one_hot: bool):
    """Float64 columns and their names; text columns refused or one-hot encoded."""
    import polars as pl

    cols, names = [], []
    for c in features:
        s = df[c]
        if s.dtype == pl.Boolean or s.dtype.is_numeric():
            if s.null_count():
                i = int(s.is_null().arg_true()[0])
                raise DataError(f"feature column {c!r} of {where} is empty at {_row(i)}; "
                                f"every feature value must be a finite number")
            cols.append(_finite_column(s.cast(pl.Float64).to_numpy(), where=where, column=c))
            names.append(c)
        elif s.dtype in (pl.String, pl.Categorical) or isinstance(s.dtype, pl.Enum):
            text = s.cast(pl.String)
            if text.null_count():
                i = int(text.is_null().arg_true()[0])
                raise DataError(f"feature column {c!r} of {where} is empty at {_row(i)}; "
                                f"every feature value must be a finite number")
            number = text.str.strip_chars().cast(pl.Float64, strict=False)
            bad = number.is_null()
            if not bad.any():  # numbers stored as text (a Parquet string column)
                cols.append(_finite_column(number.to_numpy(), where=where, column=c))
                names.append(c)
            elif one_hot:
                for v in sorted(text.unique().to_list()):
                    cols.append((text == v).cast(pl.Float64).to_numpy())
                    names.append(f"{c}={v}")
            else:
                i = int(bad.arg_true()[0])
                raise DataError(f"feature column {c!r} of {where} is not numeric: {_row(i)} "
                                f"holds {text[i]!r}; drop the column (--features), encode it, "
                                f"or pass --one-hot (one_hot=True in Python) for one 0/1 "
                                f"column per value")
        else:
            raise DataError(f"feature column {c!r} of {where} holds {s.dtype} values; "
                            f"expected numbers (or text with --one-hot)")
    return np.column_stack(cols), names


def read_dataset(path, *, label: str, features: Sequence[str] | None = None,
                 positive=None, one_hot: bool = False) -> PanelData:
    """Read and check a CSV or Parquet file into a `PanelData` (see make_panels_from_file)."""
    path = Path(path)
    where = f"data file {path.name!r}"
    df = _read_frame(path)
    columns = list(df.columns)
    if label not in columns:
        raise DataError(f"{where} has no label column {label!r}; its columns are "
                        f"{', '.join(columns)}")
    id_column = "row_id" if "row_id" in columns and label != "row_id" and (
        features is None or "row_id" not in features) else None
    if features is None:
        features = [c for c in columns if c not in (label, id_column)]
    else:
        features = list(dict.fromkeys(features))
        for c in features:
            if c == label:
                raise DataError(f"feature column {c!r} of {where} is its label column; a "
                                f"feature cannot be the label")
            if c not in columns:
                raise DataError(f"{where} has no feature column {c!r}; its columns are "
                                f"{', '.join(columns)}")
    if not features:
        raise DataError(f"{where} has no feature column besides the label {label!r}")
    if df.height == 0:
        raise DataError(f"{where} has no data rows")
    X, names = _feature_matrix(df, features, where=where, one_hot=one_hot)
    row_ids = None
    if id_column is not None:
        row_ids = _unique_row_ids(df[id_column].to_list(), where=where, column=id_column)
    return make_dataset(X, df[label].to_list(), features=names, row_ids=row_ids,
                        positive=positive, source=where, label=label)


def _pool_count(data: PanelData, pool_size) -> int:
    """Rows in each pool; both sides of the split need a row of each class."""
    n = len(data.y)
    what = f"column {data.label!r}"
    if pool_size is None:
        n_pool = math.ceil(POOL_FRACTION * n)  # scikit-learn rounds the test side up
    elif isinstance(pool_size, (bool, np.bool_)) or not isinstance(pool_size, (int, np.integer)):
        raise DataError(f"pool size {pool_size!r} is not a number of rows; expected an "
                        f"integer")
    else:
        n_pool = int(pool_size)
    if n_pool < 2:
        raise DataError(f"a pool of {_rows(n_pool)} is too small to split the {n} rows of "
                        f"{data.source} by {what}; the pool needs at least 2 rows (one per "
                        f"class)")
    if n - n_pool < 2:
        raise DataError(f"a pool of {_rows(n_pool)} leaves {_rows(n - n_pool)} of the {n} in "
                        f"{data.source} for training; a split stratified by column "
                        f"{data.label!r} needs at least 2 training rows (one per class)")
    return n_pool


def _rows(k: int) -> str:
    return f"{k} row" if k == 1 else f"{k} rows"


def _output_name(name: str | None, path: Path | None) -> str:
    if name is None:
        stem = path.stem if path is not None else "data"
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_.-") or "data"
    if not NAME_RE.fullmatch(name):
        raise DataError(f"name {name!r} cannot start a file name; expected letters, digits, "
                        f"'_', '.' or '-', starting with a letter or digit")
    return name


def _output_dir(out) -> Path:
    out = Path(out)
    resolved = out.resolve()
    if resolved == HERE or HERE in resolved.parents:
        raise DataError(f"output folder {str(out)!r} is inside sample_data/, whose files are "
                        f"the shipped samples; give a folder outside sample_data/")
    if out.exists() and not out.is_dir():
        raise DataError(f"output folder {str(out)!r} is a file; expected a folder")
    return out


def _write_atomically(tables: dict[Path, tuple]) -> None:
    """Write every table under a temporary name, then rename them all into place."""
    temps: list[tuple[Path, Path]] = []
    try:
        for path, (header, cols) in tables.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(fd)
            temps.append((Path(tmp), path))
            write_csv(Path(tmp), header, cols)
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)


def write_panels(data: PanelData, out, *, name: str, families=None, seeds=(0,),
                 pool_size: int | None = None,
                 log: Callable[[str], Any] = lambda line: None) -> PanelFiles:
    """Fit every pool of ``data`` in memory, then write them into ``out`` (one step)."""
    families = check_families(MODELS if families is None else families)
    seeds = check_seeds(seeds)
    n_pool = _pool_count(data, pool_size)
    out = _output_dir(out)
    classes = np.empty(2, dtype=object)
    classes[:] = list(data.classes)
    ids = np.empty(len(data.row_ids), dtype=object)
    ids[:] = list(data.row_ids)
    tables: dict[Path, tuple] = {}
    summaries = []
    for seed in seeds:
        tr, ev = split_indices(data.y, seed, n_pool if pool_size is not None else POOL_FRACTION)
        for k in (0, 1):
            if not (data.y[tr] == k).any():
                raise DataError(
                    f"split seed {seed}: the {len(tr)} training rows of {data.source} hold "
                    f"no row of class {data.classes[k]!r} (column {data.label!r}); give a "
                    f"smaller pool size")
        if not quartile_indicators_exist(data.X[tr]):
            raise DataError(f"split seed {seed}: no feature of {data.source} varies on the "
                            f"{len(tr)} training rows, so there is no quartile indicator to "
                            f"build a panel from")
        P = panels_of(data.X, data.y, tr, ev)
        for fam in families:
            preds, confs = fit_candidates(P, fam)
            stem = f"{name}_s{seed}_{fam}"
            pool = pool_tables(ids[ev], classes[data.y[ev]],
                               [classes[p] for p in preds], confs)
            for K, table in pool.items():
                tables[out / f"{stem}_k{K}.csv"] = table
            summ = panel_summary(stem, P, preds, confs)
            log(summary_line(summ))
            summaries.append(summ)
    _write_atomically(tables)
    return PanelFiles(files=tuple(tables), n_rows=len(data.y), n_train=len(tr),
                      n_pool=len(ev), families=families, seeds=seeds, classes=data.classes,
                      summaries=tuple(summaries))


def quartile_indicators_exist(Xtr: np.ndarray) -> bool:
    """Whether some feature varies on the training rows (then an indicator exists)."""
    return bool((Xtr.max(axis=0) > Xtr.min(axis=0)).any())


def make_panels_from_file(path, out, *, label: str, families: Sequence[str] | None = None,
                          seeds: int | Sequence[int] = 0, pool_size: int | None = None,
                          name: str | None = None, positive=None,
                          features: Sequence[str] | None = None, one_hot: bool = False,
                          log: Callable[[str], Any] = lambda line: None) -> PanelFiles:
    """Build paper 000's section 6.1 panel pools from a CSV or Parquet file.

    The file is read and checked whole, every pool is fitted in memory, and only then
    are the files written (each under a temporary name, then renamed): bad input
    raises one `DataError` and writes nothing.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` (``.tsv``) or ``.parquet`` (``.pq``) file, one row per example.
    out : str or path-like
        The folder to write into (created if missing); not inside ``sample_data/``.
    label : str
        The label column.  It must hold two classes, or use ``positive``.
    families : sequence of str, optional
        Estimator families to fit on every panel, from ``FAMILIES`` (``"tree"``,
        ``"logreg"``); default all of them.
    seeds : int or sequence of int, default 0
        Split seeds (``random_state`` of the stratified split); the paper uses 0, 1, 2.
    pool_size : int, optional
        Rows in each pool (the evaluation side of the split); default 30% of the rows,
        rounded up, as in section 6.1.
    name : str, optional
        Start of every file name; default the file's stem.
    positive : optional
        A label value: that class becomes 1 and every other class 0 (section 6.1's
        Wine: class 0 versus the rest).  Compared as written, so ``"3"`` matches the
        number 3.
    features : sequence of str, optional
        The feature columns; default every column but the label and ``row_id``.  A
        ``row_id`` column that is not a feature gives the pool's row ids (unique);
        without one a row's id is its 0-based index in the file.
    one_hot : bool, default False
        Turn a text feature column ``c`` into one 0/1 column ``c=<value>`` per distinct
        value (sorted).  Without it a text feature is an error.
    log : callable, optional
        Called with one line per seed and family (pool size, panel sizes, duplicates).

    Returns
    -------
    PanelFiles
        The files written, in order: for each seed and family
        ``<name>_s<seed>_<family>_k8.csv`` and ``..._k4.csv``; the row counts; the
        label values the classes 0 and 1 stand for.

    Raises
    ------
    DataError
        One message naming the file, the column and, where it applies, the data row
        (1-based): an unreadable file, a missing label or feature column, a text or
        empty or non-finite feature value, a missing label, one class or more than two
        (without ``positive``), a class with fewer than two rows, a pool or training
        side with fewer than two rows, an unknown family, a bad seed or name.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> lines = ["f0,f1,f2,f3,target"] + [",".join(map(str, [*x, t])) for x, t in zip(X, y)]
    >>> _ = (folder / "mine.csv").write_text("\\n".join(lines) + "\\n")
    >>> made = make_panels_from_file(folder / "mine.csv", folder / "pools", label="target",
    ...                              families=["tree"])
    >>> [p.name for p in made.files]
    ['mine_s0_tree_k8.csv', 'mine_s0_tree_k4.csv']
    >>> made.n_train, made.n_pool
    (70, 30)
    """
    path = Path(path)
    data = read_dataset(path, label=label, features=features, positive=positive,
                        one_hot=one_hot)
    return write_panels(data, out, name=_output_name(name, path), families=families,
                        seeds=seeds, pool_size=pool_size, log=log)


def make_panels_from_arrays(X, y, out, *, families: Sequence[str] | None = None,
                            seeds: int | Sequence[int] = 0, pool_size: int | None = None,
                            name: str = "data", positive=None,
                            feature_names: Sequence[str] | None = None, row_ids=None,
                            log: Callable[[str], Any] = lambda line: None) -> PanelFiles:
    """Build paper 000's section 6.1 panel pools from arrays.

    As `make_panels_from_file`, with the data given as arrays.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Numeric features, finite.
    y : array-like of shape (n,)
        Labels: two classes, or any number with ``positive``.
    out : str or path-like
        The folder to write into (created if missing); not inside ``sample_data/``.
    families : sequence of str, optional
        From ``FAMILIES`` (``"tree"``, ``"logreg"``); default all of them.
    seeds : int or sequence of int, default 0
        Split seeds of the stratified split.
    pool_size : int, optional
        Rows in each pool; default 30% of the rows, rounded up.
    name : str, default "data"
        Start of every file name.
    positive : optional
        A label value: that class becomes 1, every other class 0.
    feature_names : sequence of str, optional
        Used in messages; default ``x0, x1, ...``.
    row_ids : array-like of shape (n,), optional
        Unique row ids written to the pools; default ``0 .. n-1``.
    log : callable, optional
        Called with one line per seed and family.

    Returns
    -------
    PanelFiles
        The files written and the row counts.

    Raises
    ------
    DataError
        As `make_panels_from_file`; the messages name "the arrays".

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.datasets import load_iris
    >>> iris = load_iris()
    >>> made = make_panels_from_arrays(iris.data, iris.target, tempfile.mkdtemp(),
    ...                                positive=2, seeds=[0, 1], name="iris")
    >>> [p.name for p in made.files][:4]
    ['iris_s0_tree_k8.csv', 'iris_s0_tree_k4.csv', 'iris_s0_logreg_k8.csv', 'iris_s0_logreg_k4.csv']
    >>> len(made.files), made.n_pool, made.classes
    (8, 45, (0, 1))
    """
    data = make_dataset(X, y, features=feature_names, row_ids=row_ids, positive=positive)
    return write_panels(data, out, name=_output_name(name, None), families=families,
                        seeds=seeds, pool_size=pool_size, log=log)


# --------------------------------------------------------------------------
# demo pools


DEMO_DISPLAY = ("mean radius", "mean texture", "mean area")


def make_demo(out: Path) -> None:
    d = load_breast_cancer()
    X, y = d.data, d.target.astype(np.int64)
    tr, ev = split_indices(y, 0)
    models = [
        ("logreg", make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))),
        ("tree", DecisionTreeClassifier(max_depth=4, min_samples_leaf=5, random_state=0)),
        ("naive_bayes", GaussianNB()),
        ("knn", make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=7))),
    ]
    header = ["row_id", "label"]
    cols = [ev, y[ev]]
    for name, clf in models:
        clf.fit(X[tr], y[tr])
        proba = clf.predict_proba(X[ev])
        header += [f"pred_{name}", f"conf_{name}"]
        cols += [clf.classes_[np.argmax(proba, axis=1)].astype(np.int64), proba.max(axis=1)]
    names = list(d.feature_names)
    for feat in DEMO_DISPLAY:
        header.append(feat.replace(" ", "_"))
        cols.append(X[ev, names.index(feat)])
    write_csv(out / "demo_binary.csv", header, cols)
    cols_u = list(cols)
    cols_u[1] = [None] * len(ev)
    write_csv(out / "demo_unlabelled.csv", header, cols_u)


def make_digits_probs(out: Path) -> None:
    d = load_digits()
    X, y = d.data / 16.0, d.target.astype(np.int64)
    tr, ev = split_indices(y, 0)
    clf = LogisticRegression(C=1.0, max_iter=5000).fit(X[tr], y[tr])
    proba = clf.predict_proba(X[ev])
    assert list(clf.classes_) == list(range(10))
    header = ["row_id", "label"] + [f"prob_{c}" for c in range(10)]
    cols = [ev, y[ev]] + [proba[:, c] for c in range(10)]
    write_csv(out / "digits_probs.csv", header, cols)


AUDIT_ITEMS = 20_000
AUDIT_FOLDS = 5
# the incumbent was fitted on a fifth of the digits it may learn from, the candidate
# retrained once half as many again were labelled: an update worth auditing
AUDIT_FRACTIONS = {"incumbent": 0.2, "candidate": 0.3}
INK_SLICES = ("ink_low", "ink_midlow", "ink_midhigh", "ink_high")


def _out_of_fold(X: np.ndarray, y: np.ndarray, fraction: float) -> tuple:
    """Predictions and class probabilities of a logistic regression for every digit from
    the model fitted without its fold (5-fold, stratified, seed 0), on ``fraction`` of
    the other folds (seeded draw): no digit is predicted by a model that saw it."""
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(0)
    pred = np.empty(len(y), dtype=np.int64)
    proba = np.empty((len(y), 10))
    for tr, te in StratifiedKFold(AUDIT_FOLDS, shuffle=True, random_state=0).split(X, y):
        tr = np.sort(rng.choice(tr, int(fraction * len(tr)), replace=False))
        clf = LogisticRegression(C=1.0, max_iter=5000).fit(X[tr], y[tr])
        pred[te] = clf.predict(X[te])
        proba[te] = clf.predict_proba(X[te])
    return pred, proba


def make_audit_stream(out: Path) -> dict:
    """audit_stream.csv: 20,000 items of traffic drawn (with repeats, seeded) from the
    1,797 scikit-learn digits; the incumbent's and the candidate's out-of-fold
    predictions (`_out_of_fold`), the true digit, a slice by the digit's amount of ink,
    a judge score (the candidate's uncertainty) and the content an annotator judges:
    the digit's image (``digits_images/<index>.png``; every digit's PNG is written)."""
    d = load_digits()
    X, y = d.data / 16.0, d.target.astype(np.int64)
    write_digit_pngs(out, d, range(len(y)))
    f, _ = _out_of_fold(X, y, AUDIT_FRACTIONS["incumbent"])
    g, proba = _out_of_fold(X, y, AUDIT_FRACTIONS["candidate"])
    # 1 - the candidate's top probability, to 4 decimals: a routing score, not a measurement
    judge = np.round(1.0 - proba.max(axis=1), 4)
    ink = d.data.sum(axis=1)
    cuts = np.quantile(ink, [0.25, 0.5, 0.75])
    slices = np.array(INK_SLICES)[np.searchsorted(cuts, ink, side="right")]
    idx = np.random.default_rng(0).integers(0, len(y), AUDIT_ITEMS)
    header = ["row_id", "pred_incumbent", "pred_candidate", "label", "slice", "judge", "image"]
    write_csv(out / "audit_stream.csv", header,
              [np.arange(AUDIT_ITEMS), f[idx], g[idx], y[idx], slices[idx], judge[idx],
               [f"digits_images/{i}.png" for i in idx.tolist()]])
    fi, gi, yi = f[idx], g[idx], y[idx]
    return dict(n=AUDIT_ITEMS, digits=int(np.unique(idx).size),
                disagreement=float((fi != gi).mean()),
                err_incumbent=float((fi != yi).mean()), err_candidate=float((gi != yi).mean()))


# --------------------------------------------------------------------------
# teaching examples (paper Figure 2, the worst case) and digits with images

WORST_CASE_N = 20
DIGIT_PNG_SCALE = 4  # each of the 8 x 8 pixels drawn as a 4 x 4 block: a crisp 32 x 32 PNG


def _pool_columns(pool):
    """Header and columns of a certlib Pool in the pred/conf format (row ids, labels)."""
    header, cols = ["row_id", "label"], [list(pool.row_ids),
                                         [pool.classes[c] if c >= 0 else None
                                          for c in pool.labels.tolist()]]
    for j, name in enumerate(pool.names):
        header += [f"pred_{name}", f"conf_{name}"]
        cols += [[pool.classes[c] for c in pool.preds[j].tolist()],
                 [int(w) for w in pool.weights[j]]]  # no ties: the weight is a confidence
    return header, cols


def make_teaching_examples(out: Path) -> None:
    """figure2.csv and worst_case.csv, built by certlib.teaching.worked_examples (one
    definition)."""
    sys.path.insert(0, str(HERE.parent))
    from certlib.teaching.worked_examples import figure2_pool, worst_case_pool

    for name, pool in (("figure2.csv", figure2_pool()),
                       ("worst_case.csv", worst_case_pool(WORST_CASE_N))):
        write_csv(out / name, *_pool_columns(pool))


def png_gray(pixels: np.ndarray) -> bytes:
    """A minimal 8-bit grayscale PNG (zlib level 9, no metadata): deterministic bytes."""
    import struct
    import zlib

    h, w = pixels.shape
    raw = b"".join(b"\x00" + bytes(pixels[r].astype(np.uint8).tolist()) for r in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_digit_pngs(out: Path, d, indices) -> None:
    """digits_images/<i>.png for each digit index i of ``load_digits()`` (``d``): the
    8 x 8 digit, ink dark on white (pixel values 0-16 scaled to 0-255), each pixel a
    DIGIT_PNG_SCALE-square block."""
    folder = out / "digits_images"
    folder.mkdir(parents=True, exist_ok=True)
    for i in indices:
        img = 255 - np.round(d.images[i] * 255 / 16).astype(np.int64)
        img = np.kron(img, np.ones((DIGIT_PNG_SCALE, DIGIT_PNG_SCALE), dtype=np.int64))
        (folder / f"{i}.png").write_bytes(png_gray(img))


def make_digits_images(out: Path) -> None:
    """digits_images.csv: the digits_probs rows unlabelled (an annotator's pool), with an
    ``image`` column naming digits_images/<row_id>.png, the 8 x 8 digit (ink dark on
    white, pixel values 0-16 scaled to 0-255)."""
    d = load_digits()
    X, y = d.data / 16.0, d.target.astype(np.int64)
    tr, ev = split_indices(y, 0)
    clf = LogisticRegression(C=1.0, max_iter=5000).fit(X[tr], y[tr])
    proba = clf.predict_proba(X[ev])
    write_digit_pngs(out, d, ev)
    paths = [f"digits_images/{i}.png" for i in ev]
    header = ["row_id", "label"] + [f"prob_{c}" for c in range(10)] + ["image"]
    cols = [ev, [None] * len(ev)] + [proba[:, c] for c in range(10)] + [paths]
    write_csv(out / "digits_images.csv", header, cols)


# --------------------------------------------------------------------------


EPILOG = """\
your own data (paper section 6.1's protocol on it):
  python -m sample_data.make_sample_data --data my.csv --label target --out pools/
  python -m sample_data.make_sample_data --data my.parquet --label y --positive 3 \\
      --families tree --seed 0 1 2 --pool-size 500 --out pools/
writes OUT/<name>_s<seed>_<family>_k8.csv and _k4.csv per seed and family: row_id,
label, then pred_<panel>/conf_<panel> for the panels eps000 .. eps160 (k4: eps000,
eps010, eps040, eps120), the pool file format certlib reads.  Bad input prints one
message naming the file, column and row, exits with status 2 and writes nothing.
"""


def _words(values) -> list[str]:
    """Tokens of nargs="+" options, with commas also separating ("tree,logreg")."""
    return [w for v in values for w in v.split(",") if w.strip()]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m sample_data.make_sample_data",
        description="Deterministic generator for everything in sample_data/, and for "
                    "paper 000's section 6.1 panel pools from your own data (--data).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="output directory (default: sample_data/; required with --data)")
    ap.add_argument("--families", nargs="+", default=None, metavar="FAMILY",
                    help=f"estimator families fitted on every panel: "
                         f"{', '.join(f'{k} = {v}' for k, v in FAMILIES.items())} "
                         f"(default: all).  Without --data it writes only these panel pools")
    shipped = ap.add_argument_group("the shipped sample data (without --data)")
    shipped.add_argument("--only", default=None,
                         help="only panel pools whose stem starts with this (e.g. "
                              "wine_s0_tree); skips the other files")
    shipped.add_argument("--splits", default=None,
                         help="comma-separated split seeds (e.g. 3,4,5): write ONLY the panel "
                              "pools of these splits into OUT/panels (held-out pools; "
                              "requires --out outside sample_data/)")
    own = ap.add_argument_group("your own data")
    own.add_argument("--data", type=Path, default=None, metavar="FILE",
                     help="a CSV (.csv, .tsv) or Parquet (.parquet, .pq) file, one row per "
                          "example: a label column and numeric feature columns")
    own.add_argument("--label", default=None, metavar="COL",
                     help="the label column: two classes, or any number with --positive")
    own.add_argument("--positive", default=None, metavar="CLASS",
                     help="this label value becomes class 1 and every other one class 0 "
                          "(as section 6.1 does for Wine: class 0 versus the rest)")
    own.add_argument("--features", nargs="+", default=None, metavar="COL",
                     help="the feature columns (default: every column but the label and "
                          "row_id; a row_id column gives the pools' row ids)")
    own.add_argument("--one-hot", action="store_true",
                     help="turn each text feature column c into 0/1 columns c=<value> "
                          "(default: a text feature is an error)")
    own.add_argument("--seed", nargs="+", default=None, metavar="S",
                     help="split seeds, one pool per seed (default: 0; the paper: 0 1 2)")
    own.add_argument("--pool-size", type=int, default=None, metavar="N",
                     help="rows in each pool, stratified by the label (default: 30%% of the "
                          "rows, rounded up); the rest are training rows")
    own.add_argument("--name", default=None,
                     help="start of the file names (default: the data file's stem)")
    return ap


def _main_own_data(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--data``: the panels of the user's file into ``--out``."""
    for flag, value in (("--only", args.only), ("--splits", args.splits)):
        if value is not None:
            ap.error(f"{flag} belongs to the shipped sample data; it cannot go with --data")
    if args.label is None:
        ap.error("--data needs --label COL, the label column")
    if args.out is None:
        ap.error("--data needs --out DIR, the folder for the pool files")
    families = None if args.families is None else _words(args.families)
    seeds: Sequence[int] = (0,)
    if args.seed is not None:
        try:
            seeds = [int(w) for w in _words(args.seed)]
        except ValueError:
            ap.error(f"--seed takes integers; got {' '.join(args.seed)!r}")
    t0 = time.perf_counter()
    try:
        made = make_panels_from_file(
            args.data, args.out, label=args.label, families=families, seeds=seeds,
            pool_size=args.pool_size, name=args.name, positive=args.positive,
            features=args.features, one_hot=args.one_hot, log=print)
    except DataError as exc:
        print(f"{ap.prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(made.files)} pool files ({made.n_pool} pool rows and {made.n_train} "
          f"training rows of {made.n_rows}; classes 0, 1 = {made.classes[0]!r}, "
          f"{made.classes[1]!r}) in {args.out}:")
    for path in made.files:
        print(f"  {path.name}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.data is not None:
        return _main_own_data(ap, args)
    for flag, value in (("--label", args.label), ("--positive", args.positive),
                        ("--features", args.features), ("--seed", args.seed),
                        ("--pool-size", args.pool_size), ("--name", args.name)):
        if value is not None:
            ap.error(f"{flag} needs --data FILE (it describes your own data set)")
    if args.one_hot:
        ap.error("--one-hot needs --data FILE (it describes your own data set)")
    try:
        families = MODELS if args.families is None else check_families(_words(args.families))
    except DataError as exc:
        ap.error(str(exc))
    t0 = time.perf_counter()
    out = HERE if args.out is None else args.out
    if args.splits is not None:
        try:
            splits = tuple(int(x) for x in args.splits.split(",") if x.strip())
        except ValueError:
            ap.error(f"--splits must be comma-separated integers; got {args.splits!r}")
        if not splits:
            ap.error("--splits needs at least one split seed")
        if out.resolve() == HERE:
            ap.error("--splits writes held-out pools; give --out DIR outside sample_data/")
        print(f"panel pools, splits {splits}:")
        make_panels(out, args.only, splits=splits, families=families)
        print(f"done in {time.perf_counter() - t0:.1f} s")
        return 0
    print("panel pools:")
    make_panels(out, args.only, families=families)
    if args.only is None and args.families is None:
        shutil.copyfile(out / "panels" / TEACHING_SOURCE, out / "teaching_k4.csv")
        make_demo(out)
        make_digits_probs(out)
        make_teaching_examples(out)
        make_digits_images(out)
        a = make_audit_stream(out)
        print(f"audit stream: n={a['n']} ({a['digits']} distinct digits) "
              f"disagreement={a['disagreement']:.4f} "
              f"err incumbent={a['err_incumbent']:.4f} candidate={a['err_candidate']:.4f}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
