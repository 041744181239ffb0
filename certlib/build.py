"""Pools from your own data in Python: a data frame, arrays of predictions, or fitted
models.

Each function builds the table a pool file would hold and reads it with the checks of
the file reader (`certlib.io`, `certlib.columns`), so a pool built here and the same
data written to a file and loaded are the same pool (the same `certlib.pool_hash`), and
bad input gets the reader's one message naming the column and the row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from .columns import CandidateColumns, ColumnMap, _convention, _naming, guess_map, \
    pool_from_mapped
from .core.pool import Pool
from .errors import ColumnError, ParameterError
from .io import _declared, file_layout, pool_from_table

__all__ = ["pool_from_estimators", "pool_from_frame", "pool_from_predictions"]

CandidateSpec = tuple[str, str] | Mapping[str, object]


def _as_polars(df: Any) -> pl.DataFrame:
    if isinstance(df, pl.DataFrame):
        return df
    if type(df).__module__.startswith("pandas") and hasattr(df, "reset_index"):
        names = [str(c) for c in df.columns]
        dup = next((c for c in names if names.count(c) > 1), None)
        if dup is not None:
            raise ColumnError(f"the data frame has two columns named {dup!r}; column "
                              "names must be unique")
        frame = df.reset_index(drop=True) if df.index.name is None else df.reset_index()
        try:
            return pl.from_pandas(frame)
        except Exception:  # noqa: BLE001 - pyarrow raises several types on mixed columns
            # a column mixing numbers and text is text, as a file's would be read
            return pl.DataFrame([_from_pandas_column(str(c), frame[c]) for c in frame.columns])
    raise ParameterError(f"df must be a polars or pandas DataFrame; got {type(df).__name__}")


def _from_pandas_column(name: str, col: Any) -> pl.Series:
    try:
        return pl.Series(name, col)
    except Exception:  # noqa: BLE001 - as in _as_polars
        values = [None if v is None or (isinstance(v, float) and v != v) else str(v)
                  for v in col.tolist()]
        return pl.Series(name, values, dtype=pl.String)


def _candidate(name: str, spec: object) -> CandidateColumns:
    if isinstance(spec, tuple) and len(spec) == 2:
        return CandidateColumns(name, str(spec[0]), str(spec[1]))
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"pred", "conf", "proba"}
        if unknown:
            raise ParameterError(f"candidate {name!r}: unknown keys {sorted(unknown)}; "
                                 "expected pred, conf and proba")
        proba = spec.get("proba", ())
        pairs: tuple[tuple[str, str], ...]
        if isinstance(proba, str):
            pairs = (("1", proba),)
        elif isinstance(proba, Mapping):
            pairs = tuple((str(k), str(v)) for k, v in proba.items())
        elif isinstance(proba, (list, tuple)):
            pairs = tuple((str(i), str(c)) for i, c in enumerate(proba))
        else:
            raise ParameterError(f"candidate {name!r}: proba must be a column, a list of "
                                 f"columns or a dict {{class: column}}; got {proba!r}")
        pred, conf = spec.get("pred"), spec.get("conf")
        return CandidateColumns(name, None if pred is None else str(pred),
                                None if conf is None else str(conf), pairs)
    raise ParameterError(f"candidate {name!r}: expected (prediction column, confidence "
                         f"column) or a dict with pred/conf/proba; got {spec!r}")


def pool_from_frame(df: Any, *, label: str | None = None, id: str | None = None,
                    candidates: Mapping[str, CandidateSpec] | None = None,
                    classes: Sequence[object] | None = None, objective: str = "augrc",
                    name: str = "data frame") -> Pool:
    """A pool from a polars or pandas data frame.

    Parameters
    ----------
    df : polars.DataFrame or pandas.DataFrame
        One row per pool row.
    label : str, optional
        The label column (empty cells: not read yet).  Default: guessed (`guess_map`).
    id : str, optional
        The row id column.  Default: guessed.
    candidates : dict, optional
        Candidate name -> ``(prediction column, confidence column)``, or a dict with
        ``pred``, ``conf`` and ``proba`` (a list of probability columns, one per class
        0, 1, ...; a dict {class: column}; or one column, the probability of class 1),
        in tie-priority order.  Default: the file convention's columns when the frame
        follows it (its labels in ``label`` or, without one, a column named like
        ``y_true``), else guessed from the names (`certlib.columns.guess_map`).
    classes : sequence, optional
        The declared class set.
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.
    name : str, default "data frame"
        What the messages call the frame.

    Returns
    -------
    Pool
        The pool; the other columns are in `Pool.extra`.

    Raises
    ------
    CertlibError
        One error naming the column and the row (a column missing, a cell of the wrong
        type, a label outside the class set, two columns that claim one part of a
        candidate in a guess ...).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": ["a", "b", "c"], "y_true": [1, 0, None],
    ...                    "A_pred": [1, 0, 0], "A_score": [0.9, 0.8, 0.7],
    ...                    "B_pred": [1, 1, 0], "B_score": [0.6, 0.9, 0.8]})
    >>> pool = pool_from_frame(df, label="y_true", id="id",
    ...                        candidates={"A": ("A_pred", "A_score"),
    ...                                    "B": ("B_pred", "B_score")})
    >>> pool.names, pool.n_labelled, pool.row_ids
    (('A', 'B'), 2, ('a', 'b', 'c'))
    >>> pool_from_frame(df).names  # the same, guessed from the column names
    ('A', 'B')
    """
    table = _as_polars(df)
    if candidates is None:
        with _naming(name):
            conv = _convention(name, table.columns, label=label, row_id=id)
        if conv is not None:
            declared = None if classes is None else _declared(classes, "(classes=)")
            with _naming(name):
                return pool_from_table(name, table, conv[0], declared=declared,
                                       objective=objective)
    guess = guess_map(table.columns, name=name)
    cands = (guess.candidates if candidates is None
             else tuple(_candidate(str(k), v) for k, v in candidates.items()))
    cmap = ColumnMap(cands, label if label is not None else guess.label,
                     id if id is not None else guess.row_id,
                     ambiguities=guess.ambiguities if candidates is None else ())
    return pool_from_mapped(name, table, cmap, classes=classes, objective=objective)


def _column(name: str, values: object, n: int | None, what: str) -> NDArray[Any]:
    a = np.asarray(values)
    if a.ndim != 1:
        raise ParameterError(f"{what} of candidate {name!r} must be one value per row (1-D); "
                             f"got shape {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ParameterError(f"{what} of candidate {name!r} has {a.shape[0]} rows; the "
                             f"others have {n}")
    return a


def pool_from_predictions(candidates: Mapping[str, object], *,
                          labels: ArrayLike | None = None,
                          classes: Sequence[object] | None = None,
                          row_ids: ArrayLike | None = None,
                          probabilities: ArrayLike | None = None,
                          objective: str = "augrc") -> Pool:
    """A pool from arrays: each candidate's predictions and confidences, or its class
    probabilities.

    Parameters
    ----------
    candidates : dict
        Candidate name -> ``(predictions, confidences)`` (two arrays, one value per row)
        or a probability matrix (rows x classes, in the order of ``classes``): its
        prediction is the most probable class (ties to the first) and its confidence
        that probability.  In tie-priority order.  With ``probabilities``: name ->
        confidences, further scores of that shared prediction.
    labels : array, optional
        One label per row; None (or NaN) = not read yet.
    classes : sequence, optional
        The class set; the columns of probability matrices are its classes (default
        0, 1, ...).
    row_ids : array, optional
        Unique row ids (default 0, 1, ...).
    probabilities : array, optional
        One probability matrix (rows x classes) of one classifier: the prediction is its
        most probable class and the candidates are the built-in scores msp, neg_entropy
        and margin, as for a file's ``prob_<class>`` columns, then ``candidates``.
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.

    Returns
    -------
    Pool
        The pool.

    Raises
    ------
    CertlibError
        One error naming the candidate (or column) and the row.

    Examples
    --------
    >>> import numpy as np
    >>> pool = pool_from_predictions(
    ...     {"A": ([0, 1, 1], [0.9, 0.6, 0.8]),
    ...      "B": np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]])},
    ...     labels=[0, 1, None])
    >>> pool.names, pool.n_labelled, pool.preds[1].tolist()
    (('A', 'B'), 2, [0, 1, 0])
    >>> pool_from_predictions({}, probabilities=[[0.9, 0.1], [0.4, 0.6]]).names
    ('msp', 'neg_entropy', 'margin')
    """
    cols: dict[str, pl.Series] = {}
    n: int | None = None
    cands: list[CandidateColumns] = []
    class_list = None if classes is None else list(classes)

    def class_names(width: int, who: str) -> list[str]:
        if class_list is None:
            return [str(i) for i in range(width)]
        if len(class_list) != width:
            raise ParameterError(f"{who} has {width} columns; classes has {len(class_list)}")
        return [str(c) for c in class_list]

    if probabilities is not None:
        P = np.asarray(probabilities, dtype=np.float64)
        if P.ndim != 2:
            raise ParameterError(f"probabilities must be rows x classes; got shape {P.shape}")
        n = P.shape[0]
        for k, c in enumerate(class_names(P.shape[1], "probabilities")):
            cols[f"prob_{c}"] = pl.Series(f"prob_{c}", P[:, k])
    for key, spec in candidates.items():
        name = str(key)
        if probabilities is not None:
            cols[f"conf_{name}"] = _series(f"conf_{name}",
                                           _column(name, spec, n, "the confidences"))
            continue
        if isinstance(spec, tuple):
            if len(spec) != 2:
                raise ParameterError(f"candidate {name!r}: expected (predictions, "
                                     f"confidences); got a tuple of {len(spec)}")
            pred = _column(name, spec[0], n, "the predictions")
            n = pred.shape[0]
            pred_col, conf_col = f"{name}: prediction", f"{name}: confidence"
            cols[pred_col] = _series(pred_col, pred)
            cols[conf_col] = _series(conf_col, _column(name, spec[1], n, "the confidences"))
            cands.append(CandidateColumns(name, pred_col, conf_col))
            continue
        M = np.asarray(spec)
        if M.ndim != 2:
            raise ParameterError(f"candidate {name!r}: expected (predictions, confidences) "
                                 f"or a probability matrix (rows x classes); got shape "
                                 f"{M.shape}")
        if n is not None and M.shape[0] != n:
            raise ParameterError(f"the probabilities of candidate {name!r} have {M.shape[0]} "
                                 f"rows; the others have {n}")
        n = M.shape[0]
        pairs = []
        for k, c in enumerate(class_names(M.shape[1], f"the probabilities of {name!r}")):
            col = f"{name}: probability of {c}"
            cols[col] = _series(col, M[:, k])
            pairs.append((c, col))
        cands.append(CandidateColumns(name, proba=tuple(pairs)))
    if n is None or (probabilities is None and len(cands) < 2):
        raise ParameterError(f"candidates gives {len(candidates)} candidate(s): give at "
                             "least two, or probabilities")
    if labels is not None:
        arr = np.asarray(labels, dtype=object)
        if arr.ndim != 1:
            raise ParameterError(f"labels must be one value per row (1-D); got shape "
                                 f"{arr.shape}")
        lab = [None if (v is None or (isinstance(v, float) and v != v)) else v
               for v in arr.tolist()]
        if len(lab) != n:
            raise ParameterError(f"labels has {len(lab)} values; the pool has {n} rows")
        cols["label"] = _series("label", np.asarray(lab, dtype=object))
    if row_ids is not None:
        ids = np.asarray(row_ids, dtype=object)
        if ids.shape != (n,):
            raise ParameterError(f"row_ids has shape {ids.shape}; the pool has {n} rows")
        cols["row_id"] = _series("row_id", ids)
    table = pl.DataFrame(list(cols.values()))
    if probabilities is not None:
        declared = None if classes is None else _declared(classes, "(classes=)")
        return pool_from_table("predictions", table, file_layout(table.columns),
                               declared=declared, objective=objective)
    cmap = ColumnMap(tuple(cands), "label" if labels is not None else None,
                     "row_id" if row_ids is not None else None)
    return pool_from_mapped("predictions", table, cmap, classes=classes, objective=objective)


def _series(name: str, values: NDArray[Any]) -> pl.Series:
    """A column of values as polars holds it when it reads a file: numbers as numbers,
    text as text (a class set mixing both is read as text, as in a file)."""
    if values.dtype.kind in "fiub":
        return pl.Series(name, values)
    vals = [None if v is None or (isinstance(v, float) and v != v) else v
            for v in values.tolist()]
    kinds = {type(v) for v in vals if v is not None}
    if kinds <= {int, bool} or kinds <= {int, float}:
        return pl.Series(name, vals, dtype=pl.Int64 if kinds <= {int, bool} else pl.Float64)
    return pl.Series(name, [None if v is None else str(v) for v in vals], dtype=pl.String)


def pool_from_estimators(X: ArrayLike, y: ArrayLike | None = None, *,
                         estimators: Mapping[str, Any], score: str = "auto",
                         row_ids: ArrayLike | None = None, objective: str = "augrc"
                         ) -> Pool:
    """A pool from fitted scikit-learn style models (``predict``, ``predict_proba``,
    ``decision_function``) on the rows ``X``; nothing is imported from scikit-learn.

    Parameters
    ----------
    X : array-like
        The pool's rows, as the models take them.
    y : array, optional
        Their labels (None or NaN: not read yet).
    estimators : dict
        Candidate name -> fitted model, in tie-priority order.  Models with
        ``predict_proba`` share one ``classes_``.
    score : {"auto", "proba", "decision"}, default "auto"
        The confidence: the probability of the class predicted (``predict_proba``), or
        the decision function (binary: its absolute value, the distance from the
        boundary; multiclass: the largest).  "auto": ``predict_proba`` when the model
        has it, else ``decision_function``.
    row_ids : array, optional
        Unique row ids (default 0, 1, ...).
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.

    Returns
    -------
    Pool
        The pool: predictions from ``predict``, confidences as ``score`` says.

    Raises
    ------
    ParameterError
        Fewer than two models, a model lacks what ``score`` needs, or the models'
        classes (``classes_``, the pool's class set) differ.
    CertlibError
        The file reader's error for bad values.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> models = {"tree": DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[:300], y[:300]),
    ...           "logreg": LogisticRegression(max_iter=5000).fit(X[:300], y[:300])}
    >>> pool = pool_from_estimators(X[300:], y[300:], estimators=models)
    >>> pool.names, pool.n, pool.n_labelled
    (('tree', 'logreg'), 269, 269)
    """
    if score not in ("auto", "proba", "decision"):
        raise ParameterError(f"score must be 'auto', 'proba' or 'decision'; got {score!r}")
    if len(estimators) < 2:
        raise ParameterError(f"estimators gives {len(estimators)} model(s); a pool needs at "
                             "least two to choose between")
    cands: dict[str, object] = {}
    classes_seen: tuple[str, list[object]] | None = None
    for key, est in estimators.items():
        name = str(key)
        has_proba = callable(getattr(est, "predict_proba", None))
        has_dec = callable(getattr(est, "decision_function", None))
        use = ("proba" if has_proba else "decision") if score == "auto" else score
        if use == "proba" and not has_proba or use == "decision" and not has_dec:
            what = "predict_proba" if use == "proba" else "decision_function"
            raise ParameterError(f"estimator {name!r} ({type(est).__name__}) has no {what}; "
                                 "choose another score=")
        pred = np.asarray(est.predict(X))
        P = np.asarray(est.predict_proba(X), dtype=np.float64) if use == "proba" else None
        if hasattr(est, "classes_") or P is not None:
            cls = list(getattr(est, "classes_", range(0 if P is None else P.shape[1])))
            if classes_seen is not None and [str(c) for c in cls] != \
                    [str(c) for c in classes_seen[1]]:
                raise ParameterError(f"estimators {classes_seen[0]!r} and {name!r} have "
                                     f"different classes ({classes_seen[1]} and {cls})")
            classes_seen = classes_seen or (name, cls)
        if P is not None:
            index = {str(c): k for k, c in enumerate(cls)}
            try:
                k = np.asarray([index[str(v)] for v in pred.tolist()], dtype=np.int64)
            except KeyError as exc:
                raise ParameterError(f"estimator {name!r} predicts {exc.args[0]!r}, not in "
                                     f"its classes_ {cls}") from None
            conf = P[np.arange(P.shape[0]), k]
        else:
            d = np.asarray(est.decision_function(X), dtype=np.float64)
            conf = np.abs(d) if d.ndim == 1 else d.max(axis=1)
        cands[name] = (pred, conf)
    classes = None if classes_seen is None or len(classes_seen[1]) < 2 else classes_seen[1]
    return pool_from_predictions(cands, labels=y, classes=classes, row_ids=row_ids,
                                 objective=objective)
