"""Your own columns: which column is the label, the row id and each candidate's
prediction and confidence, when a table does not follow the file convention
(`certlib.io`, SPEC section 2).

A `ColumnMap` names the parts; `guess_map` proposes one from common names (``y_true``,
``target``, ``gt``; ``<model>_pred``, ``pred_<model>``, ``<model>_score``,
``<model>_proba``, ...); `pool_from_mapped` builds the pool, and `join_tables` joins one
table per model on their id column.  Every column a map does not use is carried along
for display, and a label-like column left unused is named in `ColumnMap.warnings`:
nothing is dropped in silence.

A candidate is given by

* a prediction and a confidence column (higher = more confident), or
* probability columns, one per class (``<model>_proba_<class>``): the prediction is the
  most probable class (ties to the leftmost column) and the confidence its probability,
  or
* one probability column, the probability of class 1 of a binary {0, 1} task
  (``<model>_proba``): the prediction is 1 when it is above 1/2, and the confidence the
  probability of the class predicted (``p`` or ``1 - p``; ``1 - p`` is one IEEE
  subtraction, the same bits on every machine).

A prediction column with a probability column of one class takes the prediction from
the column and the confidence from the probability of the class predicted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from numpy.typing import NDArray

from .core._values import file_class_key
from .core.pool import Pool
from .errors import ColumnError, InvalidValueError, ParameterError
from .io import Layout, file_layout, pool_from_table

__all__ = ["CandidateColumns", "ColumnMap", "MappedPool", "expand_zips", "guess_map",
           "join_tables", "needs_map", "pool_from_mapped", "read_sources"]

LABEL_NAMES: tuple[str, ...] = ("label", "y_true", "target", "gt", "truth", "ground_truth",
                                "true_label", "y", "labels", "class", "true")
ID_NAMES: tuple[str, ...] = ("row_id", "id", "idx", "index", "sample_id", "item_id", "uid",
                             "example_id", "key")
_PRED = {"pred", "preds", "prediction", "predictions", "predicted", "yhat", "ypred"}
_CONF = {"conf", "confidence", "score", "scores", "certainty"}
_PROBA = {"proba", "prob", "probs", "probability", "probabilities"}
_SPLIT = re.compile(r"[_\-.\s]+")
_LABEL_LIKE = re.compile(r"(^|[_\-.\s])(label|labels|truth|target|gt|y_true|ground)"
                         r"($|[_\-.\s])", re.IGNORECASE)


@dataclass(frozen=True)
class CandidateColumns:
    """The columns of one candidate.

    Parameters
    ----------
    name : str
        The candidate's name in the pool.
    pred : str, optional
        Its prediction column.
    conf : str, optional
        Its confidence column (higher = more confident).
    proba : tuple of (class, column), optional
        Its probability columns, one per class; or one column, the probability of class
        1 of a binary {0, 1} task.
    """

    name: str
    pred: str | None = None
    conf: str | None = None
    proba: tuple[tuple[str, str], ...] = ()

    def columns(self) -> tuple[str, ...]:
        """The columns the candidate reads, in order.

        Returns
        -------
        tuple of str
            Prediction, confidence and probability columns that are set.
        """
        return tuple(c for c in (self.pred, self.conf) if c) + tuple(c for _, c in self.proba)

    def describe(self) -> str:
        """One line for the Pool page and the command line.

        Returns
        -------
        str
            E.g. ``"A: prediction a_pred, confidence a_score"``.
        """
        parts = []
        if self.pred:
            parts.append(f"prediction {self.pred}")
        elif self.proba:
            parts.append("prediction = the most probable class" if len(self.proba) > 1
                         else "prediction = 1 when the probability is above 1/2")
        if self.conf:
            parts.append(f"confidence {self.conf}")
        if self.proba:
            cols = ", ".join(c for _, c in self.proba)
            parts.append(f"probabilities {cols}" if len(self.proba) > 1
                         else f"probability of class 1 {cols}")
            if not self.conf:
                parts.append("confidence = the probability of the class predicted")
        return f"{self.name}: " + ", ".join(parts)


@dataclass(frozen=True)
class ColumnMap:
    """Which column of a table is the label, the row id and each candidate's parts.

    Parameters
    ----------
    candidates : tuple of CandidateColumns
        In tie-priority order (earlier wins a tie).
    label : str, optional
        The label column (empty cells: not read yet).
    row_id : str, optional
        The row id column (unique, non-empty).
    warnings : tuple of str, optional
        What the map leaves out that a reader should know (a label-like column unused).

    Examples
    --------
    >>> m = ColumnMap((CandidateColumns("A", "a_pred", "a_score"),
    ...                CandidateColumns("B", "b_pred", "b_score")), label="y_true")
    >>> ColumnMap.from_json(m.to_json()) == m
    True
    """

    candidates: tuple[CandidateColumns, ...]
    label: str | None = None
    row_id: str | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def to_json(self) -> str:
        """The map as JSON (saved with an upload).

        Returns
        -------
        str
            JSON text; `from_json` reads it back.
        """
        return json.dumps({
            "label": self.label, "row_id": self.row_id,
            "candidates": [{"name": c.name, "pred": c.pred, "conf": c.conf,
                            "proba": [list(p) for p in c.proba]} for c in self.candidates]})

    @classmethod
    def from_json(cls, text: str) -> ColumnMap:
        """The map `to_json` wrote.

        Parameters
        ----------
        text : str
            JSON text.

        Returns
        -------
        ColumnMap
            The map (without warnings: `check` finds them again).

        Raises
        ------
        ParameterError
            The text is not a map.
        """
        try:
            d = json.loads(text)
            cands = tuple(CandidateColumns(str(c["name"]), c.get("pred"), c.get("conf"),
                                           tuple((str(k), str(v)) for k, v in c.get("proba", ())))
                          for c in d["candidates"])
            return cls(cands, d.get("label"), d.get("row_id"))
        except (ValueError, KeyError, TypeError):
            raise ParameterError(f"not a column map: {text[:80]!r}") from None

    def used(self) -> set[str]:
        """Every column the map reads.

        Returns
        -------
        set of str
            Label, row id and the candidates' columns.
        """
        out = {c for cand in self.candidates for c in cand.columns()}
        return out | {c for c in (self.label, self.row_id) if c}

    def describe(self) -> list[str]:
        """The map in lines for people: label, row id, then one line per candidate.

        Returns
        -------
        list of str
            The lines.
        """
        return ([f"label: {self.label or '(none: every row unread)'}",
                 f"row id: {self.row_id or '(none: rows numbered 0, 1, ...)'}"]
                + [c.describe() for c in self.candidates])

    def check(self, name: str, columns: Sequence[str]) -> ColumnMap:
        """This map, checked against a table's columns, with its warnings.

        Parameters
        ----------
        name : str
            The table's file name, for messages.
        columns : sequence of str
            The table's columns.

        Returns
        -------
        ColumnMap
            The same map with ``warnings`` set (label-like columns left unused).

        Raises
        ------
        ColumnError
            A column named by the map is not in the table, a column plays two parts, a
            candidate has no prediction or no confidence, two candidates share a name,
            or fewer than two candidates are given.
        """
        have = set(columns)
        where = f"in {name!r}"
        if len(self.candidates) < 2:
            raise ColumnError(f"the column map of {name!r} gives {len(self.candidates)} "
                              "candidate(s); a pool needs at least two to choose between")
        names = [c.name for c in self.candidates]
        for c in self.candidates:
            if not c.name.strip():
                raise ColumnError(f"a candidate of the column map of {name!r} has no name")
            if names.count(c.name) > 1:
                raise ColumnError(f"two candidates of the column map of {name!r} are named "
                                  f"{c.name!r}; candidate names must be unique")
            if not c.proba and not (c.pred and c.conf):
                missing = "confidence" if c.pred else "prediction"
                raise ColumnError(f"candidate {c.name!r} of the column map of {name!r} has no "
                                  f"{missing} column (or probability columns)")
            if len(c.proba) == 1 and c.conf:
                raise ColumnError(f"candidate {c.name!r} of the column map of {name!r}: a "
                                  "confidence column and a probability column; give one")
            if len(c.proba) > 1 and c.pred:
                raise ColumnError(f"candidate {c.name!r} of the column map of {name!r}: with "
                                  "probability columns per class the prediction is their "
                                  f"most probable class; leave the prediction ({c.pred!r}) "
                                  "out")
        seen: dict[str, str] = {}
        preds = {c.pred for c in self.candidates if c.pred}
        for part, col in ([("label", self.label), ("row id", self.row_id)]
                          + [(f"{c.name}'s columns", x) for c in self.candidates
                             for x in c.columns()]):
            if col is None:
                continue
            if col not in have:
                raise ColumnError(f"column {col!r} ({part} in the column map) is not {where}; "
                                  f"its columns are {list(columns)}")
            if col in seen and seen[col] != part and not (col in preds
                                                          and "columns" in seen[col]
                                                          and "columns" in part):
                raise ColumnError(f"column {col!r} {where} is mapped twice: as {seen[col]} and "
                                  f"as {part}")
            seen.setdefault(col, part)
        unused = [c for c in columns if c not in self.used() and _label_like(c)]
        warn = tuple(f"column {c!r} of {name!r} looks like labels but is not used as the "
                     "label: it is shown with the rows only" for c in unused)
        return ColumnMap(self.candidates, self.label, self.row_id, warn)


def _label_like(col: str) -> bool:
    return col.strip().lower() in LABEL_NAMES or bool(_LABEL_LIKE.search(col))


def _role(col: str) -> tuple[str, str, str | None] | None:
    """(role, model name, class or None) of a column named the way people name them, or
    None.  Roles: "pred", "conf", "proba"."""
    tokens = _SPLIT.split(col.strip())
    low = [t.lower() for t in tokens]
    if len(low) >= 2 and low[0] == "y" and low[1] in {"pred", "score", "proba", "prob"}:
        tokens, low = [tokens[0] + "_" + tokens[1]] + tokens[2:], ["y" + low[1]] + low[2:]
        low[0] = {"ypred": "pred", "yscore": "score", "yproba": "proba", "yprob": "prob"}[low[0]]

    def kind(t: str) -> str | None:
        return ("pred" if t in _PRED else "conf" if t in _CONF
                else "proba" if t in _PROBA else None)

    def is_class(t: str) -> bool:
        return isinstance(file_class_key(t), int)

    if len(low) == 1:
        k = kind(low[0])
        return (k, "", None) if k else None
    k = kind(low[0])
    if k:  # pred_A, proba_A_1, proba_1 (a class)
        rest = tokens[1:]
        if k == "proba" and is_class(rest[-1]):
            return k, "_".join(rest[:-1]), rest[-1]
        return k, "_".join(rest), None
    k = kind(low[-1])
    if k:  # A_pred, A_score, A_proba
        return k, "_".join(tokens[:-1]), None
    if len(low) >= 3 and kind(low[-2]) == "proba" and is_class(tokens[-1]):  # A_proba_1
        return "proba", "_".join(tokens[:-2]), tokens[-1]
    return None


def needs_map(columns: Sequence[str]) -> bool:
    """Whether a table's columns need a map: they follow no layout of the file
    convention, or a label-like column is there without a ``label`` column.

    Parameters
    ----------
    columns : sequence of str
        The table's columns.

    Returns
    -------
    bool
        True when `guess_map` and a person should say which column is which.

    Examples
    --------
    >>> needs_map(["pred_a", "conf_a", "pred_b", "conf_b", "label"])
    False
    >>> needs_map(["pred_a", "conf_a", "pred_b", "conf_b", "y_true"])
    True
    """
    try:
        file_layout(columns)
    except ColumnError:
        return True
    return "label" not in columns and any(_label_like(c) for c in columns)


def guess_map(columns: Sequence[str], *, name: str = "the table",
              default_name: str = "model") -> ColumnMap:
    """A column map proposed from common column names.

    The label is the first column named like ``label``, ``y_true``, ``target``, ``gt`` or
    ``truth`` (any case); the row id one named ``row_id``, ``id``, ``idx``, ``index``,
    ``sample_id`` ...; a candidate is every model name found in ``<model>_pred`` /
    ``pred_<model>`` (prediction), ``<model>_score`` / ``_conf`` / ``score_<model>``
    (confidence) and ``<model>_proba[_<class>]`` / ``prob_<model>`` (probabilities), in
    the order its first column appears.  Columns without a model name (``prediction``,
    ``score``) are the candidate ``default_name``; a confidence without a prediction of
    its own uses a shared ``pred``/``prediction`` column when there is one.

    Parameters
    ----------
    columns : sequence of str
        The table's columns.
    name : str, default "the table"
        The table's file name, for messages.
    default_name : str, default "model"
        The name of a candidate whose columns carry no model name (a file per model:
        its file's stem).

    Returns
    -------
    ColumnMap
        The proposal; `ColumnMap.check` it before use (it may have fewer than two
        candidates).

    Examples
    --------
    >>> m = guess_map(["id", "y_true", "modelA_pred", "modelA_score", "pred_B", "conf_B"])
    >>> m.label, m.row_id, [c.name for c in m.candidates]
    ('y_true', 'id', ['modelA', 'B'])
    >>> print(guess_map(["id", "A_proba", "B_proba"]).candidates[1].describe())
    B: prediction = 1 when the probability is above 1/2, probability of class 1 B_proba, \
confidence = the probability of the class predicted
    """
    lower = {c.strip().lower(): c for c in reversed(list(columns))}
    label = next((lower[n] for n in LABEL_NAMES if n in lower), None)
    row_id = next((lower[n] for n in ID_NAMES if n in lower), None)
    parts: dict[str, dict[str, object]] = {}
    for col in columns:
        if col in (label, row_id):
            continue
        r = _role(col)
        if r is None:
            continue
        role, model, cls = r
        d = parts.setdefault(model, {"pred": None, "conf": None, "proba": []})
        if role == "proba":
            d["proba"].append((cls if cls is not None else "1", col))  # type: ignore[attr-defined]
        elif d[role] is None:
            d[role] = col
    shared = parts.get("", {}).get("pred")
    cands = []
    for model, d in parts.items():
        pred, conf = d["pred"], d["conf"]
        proba = tuple(d["proba"])  # type: ignore[call-overload]
        if model == "" and pred and not conf and not proba:
            continue  # the shared prediction of the others
        if not pred and not proba and conf and shared and model:
            pred = shared
        if len(proba) > 1 and pred:
            pred = None  # the most probable class is the prediction
        if len(proba) == 1 and conf:
            proba = ()  # the score given is the confidence
        if (pred and conf) or proba:
            cands.append(CandidateColumns(model or default_name, pred and str(pred),  # type: ignore[arg-type]
                                          conf and str(conf), proba))  # type: ignore[arg-type]
    return ColumnMap(tuple(cands), label, row_id)


# ------------------------------------------------------------- building the pool
def _probabilities(df: pl.DataFrame, cand: CandidateColumns, rows: str
                   ) -> tuple[NDArray[np.float64], list[str]]:
    cols = [c for _, c in cand.proba]
    mats = []
    for c in cols:
        s = df[c]
        f = s.cast(pl.Float64, strict=False) if s.dtype != pl.Float64 else s
        bad = (f.is_null() | f.is_nan() | (f < 0) | (f > 1)).fill_null(True).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidValueError(f"column {c!r} of {rows} holds {s[i]!r} at data row "
                                    f"{i + 1}; a probability (a number in [0, 1]) was "
                                    f"expected for candidate {cand.name!r}")
        mats.append(f.to_numpy().astype(np.float64))
    return np.column_stack(mats), cols


def _derive(name: str, df: pl.DataFrame, cmap: ColumnMap) -> tuple[pl.DataFrame, Layout]:
    """The table with each probability candidate's prediction and confidence as columns,
    and the layout that reads it."""
    add: dict[str, object] = {}
    cands = []
    for c in cmap.candidates:
        if not c.proba:
            cands.append((c.name, c.pred, c.conf))
            continue
        P, cols = _probabilities(df, c, repr(name))
        if P.shape[1] == 1:
            p = P[:, 0]
            if c.pred:
                pred_col = c.pred
                pred = pl.Series(df[c.pred]).cast(pl.Float64, strict=False).to_numpy()
                conf = np.where(pred == 1, p, 1.0 - p)
            else:
                pred_col = f"{c.name}: prediction from {cols[0]}"
                add[pred_col] = (p > 0.5).astype(np.int64)
                conf = np.where(p > 0.5, p, 1.0 - p)
        else:
            classes = [file_class_key(k) for k, _ in c.proba]
            arg = np.argmax(P, axis=1)  # the first maximum: the leftmost column
            pred_col = f"{c.name}: prediction from {', '.join(cols)}"
            add[pred_col] = (np.asarray(classes, dtype=object)[arg].tolist()
                             if not all(isinstance(k, int) for k in classes)
                             else np.asarray(classes, dtype=np.int64)[arg])
            conf = P[np.arange(P.shape[0]), arg]
        conf_col = c.conf or f"{c.name}: confidence from {', '.join(cols)}"
        if not c.conf:
            add[conf_col] = conf
        cands.append((c.name, pred_col, conf_col))
    if add:
        df = df.with_columns([pl.Series(k, v) for k, v in add.items()])
    used = cmap.used()
    extra = [c for c in df.columns if c not in used and c not in add]
    return df, Layout("pairs", cands, [], [], cmap.label, cmap.row_id, extra)


def pool_from_mapped(name: str, df: pl.DataFrame, cmap: ColumnMap, *,
                     classes: Sequence[object] | None = None, objective: str = "augrc"
                     ) -> Pool:
    """The pool of a table read with a column map.

    Parameters
    ----------
    name : str
        The table's file name, for messages.
    df : polars.DataFrame
        The table (`certlib.io.read_table`).
    cmap : ColumnMap
        Which column is which (`guess_map`, corrected by a person).
    classes : sequence, optional
        The declared class set.
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.

    Returns
    -------
    Pool
        The pool; columns the map does not use are in `Pool.extra`.

    Raises
    ------
    CertlibError
        One error naming the file, the column and the row: `ColumnError` for a map that
        does not fit the columns (`ColumnMap.check`), `InvalidValueError` for a cell of the
        wrong type, `LabelError` for a label outside the class set.

    Examples
    --------
    >>> table = pl.DataFrame({"id": ["a", "b"], "y_true": [1, None],
    ...                       "m1_pred": [1, 0], "m1_score": [0.9, 0.6],
    ...                       "m2_proba": [0.2, 0.7]})
    >>> pool = pool_from_mapped("t.csv", table, guess_map(table.columns))
    >>> pool.names, pool.n_labelled, pool.row_ids
    (('m1', 'm2'), 1, ('a', 'b'))
    """
    from .io import _declared

    cmap = cmap.check(name, df.columns)
    declared = None if classes is None else _declared(classes, "(classes=)")
    table, layout = _derive(name, df, cmap)
    return pool_from_table(name, table, layout, declared=declared, objective=objective)


def join_tables(tables: Sequence[tuple[str, pl.DataFrame, ColumnMap]]
                ) -> tuple[pl.DataFrame, ColumnMap]:
    """One table from one table per model (or per group of models), joined on their row
    id columns; candidates in the order of the tables (the tie priority).

    Parameters
    ----------
    tables : sequence of (file name, table, column map)
        Each map names the table's row id column; label columns, where several tables
        have one, must agree.

    Returns
    -------
    tuple of (polars.DataFrame, ColumnMap)
        The joined table (in the first table's row order; every column renamed
        ``"<file>: <column>"``, the label and row id once) and its map.

    Raises
    ------
    ColumnError
        A table has no row id column, or two tables give a candidate the same name.
    InvalidValueError
        A row id is empty or repeated in a table, or is in one table and not in
        another (the message names both files and the id), or two tables' labels of a
        row differ.

    Examples
    --------
    >>> a = pl.DataFrame({"id": [1, 2], "prediction": [0, 1], "score": [0.9, 0.8]})
    >>> b = pl.DataFrame({"id": [2, 1], "prediction": [1, 1], "score": [0.7, 0.6]})
    >>> table, cmap = join_tables([("a.csv", a, guess_map(a.columns, default_name="a")),
    ...                            ("b.csv", b, guess_map(b.columns, default_name="b"))])
    >>> table["b.csv: score"].to_list(), [c.name for c in cmap.candidates]
    ([0.6, 0.7], ['a', 'b'])
    """
    from .io import _row_ids

    if len(tables) < 1:
        raise ParameterError("join_tables needs at least one table")
    names = [t[0] for t in tables]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InvalidValueError(f"the file {dup!r} is given twice")
    seen_cands: dict[str, str] = {}
    keyed = []
    for fname, df, cmap in tables:
        if cmap.row_id is None:
            raise ColumnError(f"{fname!r} has no row id column (id, row_id, ...): files "
                              "joined into one pool are matched on it")
        for c in cmap.candidates:
            if c.name in seen_cands:
                raise ColumnError(f"two files give a candidate named {c.name!r} "
                                  f"({seen_cands[c.name]!r} and {fname!r}); rename one")
            seen_cands[c.name] = fname
        try:
            ids = _row_ids(df, cmap.row_id)
        except InvalidValueError as exc:
            raise InvalidValueError(f"{fname!r}: {exc}") from None
        assert ids is not None
        keyed.append([str(v) for v in (ids.tolist() if isinstance(ids, np.ndarray) else ids)])
    first_name, first = names[0], keyed[0]
    pos0 = {v: i for i, v in enumerate(first)}
    cols: dict[str, pl.Series] = {}
    cands: list[CandidateColumns] = []
    label_col = None
    label_from: list[tuple[str, pl.Series]] = []
    for (fname, df, cmap), ids in zip(tables, keyed):
        pos = {v: i for i, v in enumerate(ids)}
        missing = next((v for v in first if v not in pos), None)
        if missing is not None:
            raise InvalidValueError(f"{fname!r} has no row with id {missing!r} (it is at data "
                                    f"row {pos0[missing] + 1} of {first_name!r}); every "
                                    "file must hold the same rows")
        extra = next((v for v in ids if v not in pos0), None)
        if extra is not None:
            raise InvalidValueError(f"{fname!r} has a row with id {extra!r} (data row "
                                    f"{pos[extra] + 1}) that {first_name!r} does not have; "
                                    "every file must hold the same rows")
        order = np.asarray([pos[v] for v in first], dtype=np.int64)
        aligned = df[order]
        if not cols:
            cols[cmap.row_id or "row_id"] = aligned[cmap.row_id]
        rename = {c: f"{fname}: {c}" for c in df.columns if c not in (cmap.row_id, cmap.label)}
        for c, new in rename.items():
            cols[new] = aligned[c]
        if cmap.label is not None:
            label_from.append((fname, aligned[cmap.label]))
        for c in cmap.candidates:
            cands.append(CandidateColumns(
                c.name, c.pred and rename[c.pred], c.conf and rename[c.conf],
                tuple((k, rename[v]) for k, v in c.proba)))
    if label_from:
        label_col = "label"
        while label_col in cols:
            label_col += "_"
        base_name, base = label_from[0]
        merged = base.cast(pl.String).str.strip_chars()
        for fname, s in label_from[1:]:
            other = s.cast(pl.String).str.strip_chars()
            clash = (merged.is_not_null() & other.is_not_null()
                     & (merged != other)).fill_null(False).to_numpy()
            if clash.any():
                i = int(np.flatnonzero(clash)[0])
                raise InvalidValueError(
                    f"the label of row id {first[i]!r} is {merged[i]!r} in {base_name!r} "
                    f"and {other[i]!r} in {fname!r}; the files must agree")
            merged = pl.select(pl.coalesce(merged, other)).to_series()
        cols[label_col] = merged.alias(label_col)
    id_col = tables[0][2].row_id
    table = pl.DataFrame([v.alias(k) for k, v in cols.items()])
    return table, ColumnMap(tuple(cands), label_col, id_col)


# ------------------------------------------------------------- files in, a pool out
@dataclass(frozen=True)
class MappedPool:
    """A pool read from one or more files, with the map that read it.

    Parameters
    ----------
    pool : Pool
        The pool.
    column_map : ColumnMap or None
        The map (joined over the files), or None for a file that follows the file
        convention.
    files : tuple of str
        The files read, in order (a zip's members by their names inside it).
    """

    pool: Pool
    column_map: ColumnMap | None
    files: tuple[str, ...]

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the map leaves out that a reader should know (`ColumnMap.warnings`)."""
        return () if self.column_map is None else self.column_map.warnings


def _stem(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def expand_zips(sources: Sequence[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The files of ``sources``, a zip replaced by its members in their order.

    Parameters
    ----------
    sources : sequence of (name, content)
        Pool files and zips of pool files.

    Returns
    -------
    list of (name, content)
        Each member of a zip is named ``"<zip>/<member>"``; folders and the metadata
        macOS adds (``__MACOSX/``, ``._*``) are skipped.

    Raises
    ------
    PoolFileError
        A zip that cannot be read, holds a file that is not a pool file (named), or
        holds none.
    """
    import io
    import zipfile

    from .errors import PoolFileError

    out: list[tuple[str, bytes]] = []
    for name, data in sources:
        if not name.lower().endswith(".zip"):
            out.append((name, data))
            continue
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                members = [m for m in z.infolist() if not m.is_dir()
                           and not m.filename.startswith("__MACOSX/")
                           and not m.filename.rsplit("/", 1)[-1].startswith("._")]
                if not members:
                    raise PoolFileError(f"zip file {name!r} holds no file")
                for m in members:
                    suffix = "." + m.filename.rsplit(".", 1)[-1].lower() \
                        if "." in m.filename else ""
                    if suffix not in (".csv", ".tsv", ".parquet", ".pq"):
                        raise PoolFileError(
                            f"zip file {name!r} holds {m.filename!r}, which is not a pool "
                            "file (.csv, .tsv, .parquet or .pq); nothing was read")
                    out.append((f"{name}/{m.filename}", z.read(m)))
        except zipfile.BadZipFile:
            raise PoolFileError(f"zip file {name!r} is not a readable zip") from None
    return out


def read_sources(sources: Sequence[tuple[str, bytes]], *,
                 column_map: ColumnMap | None = None,
                 classes: Sequence[object] | None = None, objective: str = "augrc"
                 ) -> MappedPool:
    """The pool of one file, or of several files (one per model) joined on their id
    column; zips are opened.

    Parameters
    ----------
    sources : sequence of (name, content)
        The files, in candidate order (the tie priority).
    column_map : ColumnMap, optional
        The map of a single file (of the joined table, for several).  Default: none
        for a file that follows the file convention without a label-like column left
        out; else `guess_map` (each file's, its candidate named after the file when its
        columns carry no model name).
    classes : sequence, optional
        The declared class set.
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.

    Returns
    -------
    MappedPool
        The pool and the map that read it.

    Raises
    ------
    CertlibError
        One error naming the file, the column and the row (or the id that does not
        join); nothing is half-read.

    Examples
    --------
    >>> a = b"id,prediction,score,label\\n1,0,0.9,0\\n2,1,0.8,\\n"
    >>> b = b"id,prediction,score\\n2,1,0.7\\n1,1,0.6\\n"
    >>> got = read_sources([("a.csv", a), ("b.csv", b)])
    >>> got.pool.names, got.pool.row_ids, got.pool.n_labelled
    (('a', 'b'), (1, 2), 1)
    """
    from .io import file_layout, read_table_bytes

    files = expand_zips(sources)
    if not files:
        raise ParameterError("no file given")
    tables = [(name, read_table_bytes(name, data)) for name, data in files]
    if len(tables) == 1:
        name, df = tables[0]
        if column_map is None and not needs_map(df.columns):
            from .io import _declared

            declared = None if classes is None else _declared(classes, "(classes=)")
            pool = pool_from_table(name, df, file_layout(df.columns), declared=declared,
                                   objective=objective)
            return MappedPool(pool, None, (name,))
        if column_map is not None:
            cmap = column_map.check(name, df.columns)
        else:
            try:
                cmap = guess_map(df.columns, name=name,
                                 default_name=_stem(name)).check(name, df.columns)
            except ColumnError:
                if any(c == "pred" or c.startswith(("pred_", "conf_", "prob_"))
                       for c in df.columns):
                    file_layout(df.columns)  # the file convention's own word, if it fails
                raise
        pool = pool_from_mapped(name, df, cmap, classes=classes, objective=objective)
        return MappedPool(pool, cmap, (name,))
    maps = []
    for name, df in tables:
        m = guess_map(df.columns, name=name, default_name=_stem(name))
        if not m.candidates:
            raise ColumnError(f"{name!r}: no candidate columns found (a prediction and a "
                              "score, or probabilities, e.g. prediction,score or "
                              f"<model>_pred,<model>_score); its columns are {df.columns}")
        maps.append((name, df, m))
    joined, guessed = join_tables(maps)
    where = " + ".join(n for n, _ in tables)
    cmap = (column_map or guessed).check(where, joined.columns)
    pool = pool_from_mapped(where, joined, cmap, classes=classes, objective=objective)
    return MappedPool(pool, cmap, tuple(n for n, _ in tables))
