"""Your own columns: which column is the label, the row id and each candidate's
prediction and confidence, when a table does not follow the file convention
(`certlib.io`, SPEC section 2).

A `ColumnMap` names the parts; `guess_map` proposes one from common names (``y_true``,
``target``, ``gt``; ``<model>_pred``, ``pred_<model>``, ``<model>_score``,
``<model>_proba``, ...); `pool_from_mapped` builds the pool, and `join_tables` joins one
table per model on their id column.  Every column a map does not use is carried along
for display, and a label-like or candidate-like column left unused is named in
`ColumnMap.warnings`: nothing is dropped in silence.  Two columns that claim the same
part of one candidate (``A_pred`` and ``pred_A``, ``A_score`` and ``A_conf``) are not
decided by a guess: `guess_map` records them in `ColumnMap.ambiguities` and a map with
ambiguities is refused until a person chooses (`ColumnMap.with_choice`).

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
the column (0 or 1) and the confidence from the probability of the class predicted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl
from numpy.typing import NDArray

from .core._values import file_class_key
from .core.derived_scores import row_sums
from .core.pool import Pool
from .errors import CertlibError, ColumnError, InvalidValueError, ParameterError, PoolFileError
from .io import (CONVENTION_LABEL_NAMES, DEFAULT_MAX_BYTES, LABEL_NAMES, PROB_SUM_TOLERANCE,
                 Layout, Progress, _canon_series, _check_in, _declared, _float_column,
                 _label_like, _pick,
                 _Reporter, _row_ids, _Rows, _size, _unify, file_layout, pool_from_table,
                 read_table_bytes)

__all__ = ["Ambiguity", "CandidateColumns", "ColumnMap", "MappedPool", "expand_zips",
           "guess_map", "join_tables", "needs_map", "pool_from_mapped", "read_sources"]

ID_NAMES: tuple[str, ...] = ("row_id", "id", "idx", "index", "sample_id", "item_id", "uid",
                             "example_id", "key")
_PRED = {"pred", "preds", "prediction", "predictions", "predicted", "yhat", "ypred"}
_CONF = {"conf", "confidence", "score", "scores", "certainty"}
_PROBA = {"proba", "prob", "probs", "probability", "probabilities"}
_SPLIT = re.compile(r"[_\-.\s]+")
_PART_WORDS = {"pred": "prediction", "conf": "confidence", "proba": "probability"}
_POOL_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")


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

    Examples
    --------
    >>> CandidateColumns("A", "a_pred", "a_score").columns()
    ('a_pred', 'a_score')
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
class Ambiguity:
    """Columns that each claim the same part of one candidate (``A_pred`` and
    ``pred_A``): a guess does not choose between them, a person does.

    Parameters
    ----------
    candidate : str
        The candidate's name.
    part : str
        ``"prediction"``, ``"confidence"`` or ``"probability of class <c>"``.
    columns : tuple of str
        The columns, in table order (the guess proposes the first).

    Examples
    --------
    >>> guess_map(["A_pred", "pred_A", "A_score", "B_pred", "B_score"]).ambiguities
    (Ambiguity(candidate='A', part='prediction', columns=('A_pred', 'pred_A')),)
    """

    candidate: str
    part: str
    columns: tuple[str, ...]

    def message(self, name: str) -> str:
        """The sentence that refuses the guess.

        Parameters
        ----------
        name : str
            The table's file name.

        Returns
        -------
        str
            It names the file, the candidate and every column.
        """
        cols = " and ".join(repr(c) for c in self.columns)
        return (f"{name!r}: columns {cols} both look like the {self.part} of candidate "
                f"{self.candidate!r}; say which one to use (a column map)")


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
        What the map leaves out that a reader should know (a label-like or
        candidate-like column unused); set by `check`.
    ambiguities : tuple of Ambiguity, optional
        Parts of a candidate that several columns claim (`guess_map`); a map with any
        is refused by `check` until `with_choice` settles them.

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
    ambiguities: tuple[Ambiguity, ...] = field(default=(), compare=False)

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

        def col(v: object) -> str | None:
            if v is None or isinstance(v, str):
                return v
            raise TypeError(v)

        try:
            d = json.loads(text)
            cands = tuple(CandidateColumns(str(c["name"]), col(c.get("pred")),
                                           col(c.get("conf")),
                                           tuple((str(k), str(v)) for k, v in c.get("proba", ())))
                          for c in d["candidates"])
            return cls(cands, col(d.get("label")), col(d.get("row_id")))
        except (ValueError, KeyError, TypeError, AttributeError):
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

    def with_choice(self, candidate: str, part: str, column: str) -> ColumnMap:
        """This map with a person's choice for one part of one candidate, and the
        ambiguity about that part settled.

        Parameters
        ----------
        candidate : str
            The candidate's name.
        part : str
            ``"prediction"``, ``"confidence"`` or ``"probability of class <c>"`` (as
            `Ambiguity.part`).
        column : str
            The column to use.

        Returns
        -------
        ColumnMap
            The new map (its other ambiguities kept).

        Raises
        ------
        ParameterError
            No candidate has that name, or ``part`` is none of these.

        Examples
        --------
        >>> m = guess_map(["A_pred", "pred_A", "A_score", "B_pred", "B_score"])
        >>> m = m.with_choice("A", "prediction", "pred_A")
        >>> m.candidates[0].pred, m.ambiguities
        ('pred_A', ())
        """
        names = [c.name for c in self.candidates]
        if candidate not in names:
            raise ParameterError(f"the column map has no candidate {candidate!r}; its "
                                 f"candidates are {names}")
        cands = list(self.candidates)
        k = names.index(candidate)
        c = cands[k]
        if part == "prediction":
            cands[k] = replace(c, pred=column)
        elif part == "confidence":
            cands[k] = replace(c, conf=column)
        elif part.startswith("probability of class "):
            cls = part[len("probability of class "):]
            key = file_class_key(cls)
            kept = [(k2, v) for k2, v in c.proba if file_class_key(k2) != key]
            cands[k] = replace(c, proba=tuple(kept) + ((cls, column),))
        else:
            raise ParameterError(f"part must be 'prediction', 'confidence' or 'probability "
                                 f"of class <c>'; got {part!r}")
        left = tuple(a for a in self.ambiguities
                     if not (a.candidate == candidate and a.part == part))
        return ColumnMap(tuple(cands), self.label, self.row_id, self.warnings, left)

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
            The same map with ``warnings`` set: label-like columns and columns named like
            a candidate's part (``B_proba``) that the map leaves unused.

        Raises
        ------
        ColumnError
            The map has ambiguities (`guess_map`: two columns claim one part), a column
            named by the map is not in the table, a column plays two parts (a prediction
            shared by several candidates excepted), a candidate has no prediction or no
            confidence, two probability columns of a candidate name one class, two
            candidates share a name, or fewer than two candidates are given.

        Examples
        --------
        >>> m = ColumnMap((CandidateColumns("A", "a_pred", "a_score"),
        ...                CandidateColumns("B", "b_pred", "b_score")))
        >>> m.check("t.csv", ["a_pred", "a_score", "b_pred", "b_score", "target"]).warnings
        ("column 'target' of 't.csv' looks like labels but is not used as the label: it is \
shown with the rows only",)
        """
        if self.ambiguities:
            raise ColumnError(self.ambiguities[0].message(name))
        have = set(columns)
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
            keys = [file_class_key(k) for k, _ in c.proba]
            if len(set(keys)) != len(keys):
                dup = next(k for k in keys if keys.count(k) > 1)
                cols = [col for (_, col), k in zip(c.proba, keys) if k == dup]
                raise ColumnError(f"candidate {c.name!r} of the column map of {name!r}: "
                                  f"columns {cols} are both the probability of class {dup!r}")
        # (kind, words): a prediction column may serve several candidates (one
        # classifier, several scores); any other column plays one part only
        parts: list[tuple[str, str, str | None]] = [
            ("label", "the label", self.label), ("row id", "the row id", self.row_id)]
        for c in self.candidates:
            parts += [("pred", f"the prediction of {c.name!r}", c.pred),
                      ("conf", f"the confidence of {c.name!r}", c.conf)]
            parts += [("proba", f"the probability of class {k} of {c.name!r}", col)
                      for k, col in c.proba]
        seen: dict[str, tuple[str, str]] = {}
        for kind, words, col in parts:
            if col is None:
                continue
            if col not in have:
                raise ColumnError(f"column {col!r} ({words} in the column map) is not in "
                                  f"{name!r}; its columns are {list(columns)}")
            if col in seen and not (kind == "pred" and seen[col][0] == "pred"):
                raise ColumnError(f"column {col!r} of {name!r} is mapped twice: as "
                                  f"{seen[col][1]} and as {words}")
            seen.setdefault(col, (kind, words))
        return ColumnMap(self.candidates, self.label, self.row_id,
                         _unused_warnings(name, columns, self.used()))


def _unused_warnings(name: str, columns: Sequence[str], used: set[str]) -> tuple[str, ...]:
    out = []
    for c in columns:
        if c in used:
            continue
        if _label_like(c):
            out.append(f"column {c!r} of {name!r} looks like labels but is not used as the "
                       "label: it is shown with the rows only")
        elif (r := _role(c)) is not None:
            out.append(f"column {c!r} of {name!r} looks like a {_PART_WORDS[r[0]]} column but "
                       "is not used: it is shown with the rows only")
    return tuple(out)




def _is_int_class(t: str) -> bool:
    return isinstance(file_class_key(t), int)


def _role(col: str) -> tuple[str, str, str | None] | None:
    """(role, model name, class or None) of a column named the way people name them, or
    None.  Roles: "pred", "conf", "proba"."""
    tokens = _SPLIT.split(col.strip())
    low = [t.lower() for t in tokens]
    if len(low) >= 2 and low[0] == "y" and low[1] in {"pred", "score", "proba", "prob"}:
        # y_pred, y_score, y_proba: the parts of a model without a name
        tokens, low = [tokens[0] + "_" + tokens[1]] + tokens[2:], [low[1]] + low[2:]

    def kind(t: str) -> str | None:
        return ("pred" if t in _PRED else "conf" if t in _CONF
                else "proba" if t in _PROBA else None)

    if len(low) == 1:
        k = kind(low[0])
        return (k, "", None) if k else None
    k = kind(low[0])
    if k:  # pred_A, proba_A_1, proba_1 (a class)
        rest = tokens[1:]
        if k == "proba" and _is_int_class(rest[-1]):
            return k, "_".join(rest[:-1]), rest[-1]
        return k, "_".join(rest), None
    k = kind(low[-1])
    if k:  # A_pred, A_score, A_proba
        return k, "_".join(tokens[:-1]), None
    if len(low) >= 3 and kind(low[-2]) == "proba":  # A_proba_1, A_proba_cat
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
        True when a person should see which column is which (`guess_map`).  A file that
        follows a layout with its labels in ``y_true`` is read without a map all the same
        (the label-like column is its label: `read_sources`); a ``prob_<class>`` file is
        never said to need one, as a map cannot say what its layout does (the built-in
        scores).

    Examples
    --------
    >>> needs_map(["pred_a", "conf_a", "pred_b", "conf_b", "label"])
    False
    >>> needs_map(["pred_a", "conf_a", "pred_b", "conf_b", "y_true"])
    True
    >>> needs_map(["prob_0", "prob_1", "y_true"])
    False
    """
    try:
        layout = file_layout(columns)
    except ColumnError:
        return True
    return (layout.mode != "prob" and "label" not in columns
            and any(_label_like(c) for c in columns))


@dataclass
class _Found:
    """The columns found for one model name, in table order."""

    pred: list[str] = field(default_factory=list)
    conf: list[str] = field(default_factory=list)
    proba: dict[int | str, list[tuple[str, str]]] = field(default_factory=dict)


def guess_map(columns: Sequence[str], *, name: str = "the table",
              default_name: str = "model") -> ColumnMap:
    """A column map proposed from common column names.

    The label is the column ``label`` (any case), else the first column, left to right,
    named ``y_true``, ``target``, ``gt``, ``truth``, ``ground_truth``, ``true_label``,
    ``y``, ``labels``, ``class`` or ``true``; the row id likewise ``row_id``, else the
    first of ``id``, ``idx``, ``index``, ``sample_id``, ``item_id``, ``uid``,
    ``example_id``, ``key``.  A candidate is every model name found in ``<model>_pred``
    / ``pred_<model>`` (prediction), ``<model>_score`` / ``<model>_conf`` /
    ``score_<model>`` (confidence) and ``<model>_proba[_<class>]`` / ``prob_<model>``
    (probabilities), in the order its first column appears.  Columns without a model
    name (``prediction``, ``score``) are the candidate ``default_name``; a confidence
    without a prediction of its own uses a shared ``pred``/``prediction`` column when
    there is one.  Two columns that claim the same part of one candidate are not
    decided here: the first is proposed and both are recorded in
    `ColumnMap.ambiguities`, which `ColumnMap.check` refuses.

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
        candidates, or ambiguities).

    Examples
    --------
    >>> m = guess_map(["id", "y_true", "modelA_pred", "modelA_score", "pred_B", "conf_B"])
    >>> m.label, m.row_id, [c.name for c in m.candidates]
    ('y_true', 'id', ['modelA', 'B'])
    >>> print(guess_map(["id", "A_proba", "B_proba"]).candidates[1].describe())
    B: prediction = 1 when the probability is above 1/2, probability of class 1 B_proba, \
confidence = the probability of the class predicted
    """
    columns = list(columns)
    label = _pick(columns, LABEL_NAMES)
    row_id = _pick(columns, ID_NAMES)
    found: dict[str, _Found] = {}
    for col in columns:
        if col in (label, row_id):
            continue
        r = _role(col)
        if r is None:
            continue
        role, model, cls = r
        f = found.setdefault(model, _Found())
        if role == "pred":
            f.pred.append(col)
        elif role == "conf":
            f.conf.append(col)
        else:
            k = "1" if cls is None else cls
            f.proba.setdefault(file_class_key(k), []).append((k, col))
    ambiguities: list[Ambiguity] = []
    shared = found[""].pred if "" in found else []
    cands = []
    for model, f in found.items():
        pred = f.pred
        if model == "" and pred and not f.conf and not f.proba:
            continue  # the shared prediction of the others
        if not pred and not f.proba and f.conf and shared and model:
            pred = shared
        proba = f.proba
        if len(proba) == 1 and f.conf:
            proba = {}  # the score given is the confidence (the probability: a warning)
        if not ((pred and f.conf) or proba):
            continue
        cand_name = model or default_name
        for part, cols in (("prediction", pred), ("confidence", f.conf)):
            if len(cols) > 1:
                ambiguities.append(Ambiguity(cand_name, part, tuple(cols)))
        for pairs in proba.values():
            if len(pairs) > 1:
                ambiguities.append(Ambiguity(cand_name, f"probability of class {pairs[0][0]}",
                                             tuple(c for _, c in pairs)))
        cands.append(CandidateColumns(cand_name, pred[0] if pred else None,
                                      f.conf[0] if f.conf else None,
                                      tuple(pairs[0] for pairs in proba.values())))
    return ColumnMap(tuple(cands), label, row_id, ambiguities=tuple(ambiguities))


# ------------------------------------------------------------- building the pool
@contextmanager
def _naming(name: str) -> Iterator[None]:
    """Prefix an error's message with the file's name when it does not name it yet."""
    try:
        yield
    except CertlibError as exc:
        msg = str(exc)
        if name in msg:
            raise
        raise type(exc)(f"{name!r}: {msg}") from None


def _probabilities(name: str, df: pl.DataFrame, cand: CandidateColumns, rows: _Rows
                   ) -> tuple[NDArray[np.float64], list[str]]:
    cols = [c for _, c in cand.proba]
    mats = []
    for c in cols:
        a = _float_column(df[c], c, rows, f"probability of candidate {cand.name!r}")
        bad = (a < 0) | (a > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidValueError(f"column {c!r} of {name!r} holds {float(a[i])} at "
                                    f"{rows(i)}; a probability of candidate {cand.name!r} "
                                    "must be in [0, 1]")
        mats.append(a + 0.0)  # + 0.0: "-0" is the probability 0, as in a prob_ file
    P = np.column_stack(mats)
    if P.shape[1] > 1:
        total = row_sums(P)
        off = np.abs(total - 1.0) > PROB_SUM_TOLERANCE
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise InvalidValueError(f"the probabilities of candidate {cand.name!r} in "
                                    f"{name!r} ({', '.join(cols)}) sum to {float(total[i])!r} at "
                                    f"{rows(i)}; each row must sum to 1 (within "
                                    f"{PROB_SUM_TOLERANCE})")
    return P, cols


def _derive(name: str, df: pl.DataFrame, cmap: ColumnMap) -> tuple[pl.DataFrame, Layout]:
    """The table with each probability candidate's prediction and confidence as columns,
    and the layout that reads it."""
    add: dict[str, pl.Series] = {}
    cands: list[tuple[str, str | None, str | None]] = []
    rows = _Rows(_row_ids(df, cmap.row_id), cmap.row_id)
    for c in cmap.candidates:
        if not c.proba:
            cands.append((c.name, c.pred, c.conf))
            continue
        P, cols = _probabilities(name, df, c, rows)
        if P.shape[1] == 1:
            p = P[:, 0]
            if c.pred:
                pred_col = c.pred
                pred_s = _canon_series(df[c.pred], c.pred)
                binary = pred_s.is_in([0, 1]).fill_null(False) if pred_s.dtype == pl.Int64 \
                    else pl.Series([False] * df.height)
                if not bool(binary.all()):
                    i = int(np.flatnonzero(~binary.to_numpy())[0])
                    raise InvalidValueError(
                        f"column {c.pred!r} of {name!r} holds {df[c.pred][i]!r} at {rows(i)}; "
                        f"with one probability column ({cols[0]!r}, the probability of class "
                        f"1) the prediction of candidate {c.name!r} must be 0 or 1")
                conf = np.where(pred_s.to_numpy() == 1, p, 1.0 - p)
            else:
                pred_col = f"{c.name}: prediction from {cols[0]}"
                add[pred_col] = pl.Series(pred_col, (p > 0.5).astype(np.int64))
                conf = np.where(p > 0.5, p, 1.0 - p)
        elif c.pred:
            # the model's own prediction (thresholded as it was deployed, perhaps not at
            # the most probable class); its confidence the probability of that class
            pos = {file_class_key(k): j for j, (k, _) in enumerate(c.proba)}
            pred_s = _canon_series(df[c.pred], c.pred)
            idx = np.asarray([pos.get(file_class_key(v), -1) if v is not None else -1
                              for v in pred_s.to_list()], dtype=np.int64)
            if (idx < 0).any():
                i = int(np.flatnonzero(idx < 0)[0])
                raise InvalidValueError(
                    f"column {c.pred!r} of {name!r} holds {df[c.pred][i]!r} at {rows(i)}; the "
                    f"prediction of candidate {c.name!r} must be a class of its probability "
                    f"columns {[k for k, _ in c.proba]}")
            pred_col = c.pred
            conf = P[np.arange(P.shape[0]), idx]
        else:
            classes = [file_class_key(k) for k, _ in c.proba]
            arg = np.argmax(P, axis=1)  # the first maximum: the leftmost column
            pred_col = f"{c.name}: prediction from {', '.join(cols)}"
            if all(isinstance(k, int) for k in classes):
                add[pred_col] = pl.Series(pred_col, np.asarray(classes, dtype=np.int64)[arg])
            else:
                text = [str(k) for k in classes]
                add[pred_col] = pl.Series(pred_col, [text[j] for j in arg.tolist()],
                                          dtype=pl.String)
            conf = P[np.arange(P.shape[0]), arg]
        conf_col = f"{c.name}: confidence from {', '.join(cols)}"
        add[conf_col] = pl.Series(conf_col, conf.astype(np.float64))
        cands.append((c.name, pred_col, conf_col))
    if add:
        df = df.with_columns(list(add.values()))
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
    with _naming(name):
        cmap = cmap.check(name, df.columns)
        declared = None if classes is None else _declared(classes, "(classes=)")
        table, layout = _derive(name, df, cmap)
        if declared is None and any(len(c.proba) > 1 for c in cmap.candidates):
            declared = _class_union(table, layout, cmap)
        return pool_from_table(name, table, layout, declared=declared, objective=objective)


def _class_union(table: pl.DataFrame, layout: Layout, cmap: ColumnMap) -> list[int | str]:
    """The class set of a table with probability columns per class: their classes and
    every prediction and label, ordered as `Pool.from_arrays` orders an inferred set (a
    class no row predicts is still a class, as the ``prob_`` columns of a file declare)."""
    keys: set[int | str] = {file_class_key(k) for c in cmap.candidates if len(c.proba) > 1
                            for k, _ in c.proba}
    cols = [c[1] for c in layout.candidates if c[1]] + ([layout.label] if layout.label else [])
    for col in dict.fromkeys(cols):
        keys |= set(_canon_series(table[col], col).drop_nulls().unique().to_list())
    return sorted(keys, key=lambda v: (0, v, "") if isinstance(v, int) else (1, 0, str(v)))


def _check_cells(name: str, df: pl.DataFrame, cmap: ColumnMap,
                 declared: list[int | str] | None) -> None:
    """The cells one file of several gives, checked in that file's own row numbers
    before the join (a joined table's row i is the first file's)."""
    with _naming(name):
        rows = _Rows(_row_ids(df, cmap.row_id), cmap.row_id)
        class_cols = [c.pred for c in cmap.candidates if c.pred]
        for c in cmap.candidates:
            if c.conf:
                _float_column(df[c.conf], c.conf, rows, "confidence")
            if c.proba:
                _probabilities(name, df, c, rows)
        series = []
        for col in class_cols:
            s = _canon_series(df[col], col)
            null = s.is_null().to_numpy()
            if null.any():
                raise InvalidValueError(f"column {col!r} is empty at "
                                        f"{rows(int(np.flatnonzero(null)[0]))}; every row "
                                        "needs a prediction")
            series.append(s)
        if cmap.label is not None:
            class_cols.append(cmap.label)
            series.append(_canon_series(df[cmap.label], cmap.label))
        if declared is not None and series:
            series, as_declared, _ = _unify(series, declared)
            assert as_declared is not None
            for s, col in zip(series, class_cols):
                what = "label" if col == cmap.label else "prediction"
                _check_in(s, as_declared, col, rows, InvalidValueError, what)


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
    if len(tables) < 1:
        raise ParameterError("join_tables needs at least one table")
    names = [t[0] for t in tables]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InvalidValueError(f"two of the files are named {dup!r} (from two folders, or "
                                f"the same file twice); rename one: a file's name names its "
                                "columns and its candidate")
    seen_cands: dict[str, str] = {}
    keyed: list[list[str]] = []
    shown: list[list[object]] = []  # the ids as read, for messages
    id_cols: list[str] = []
    for fname, df, cmap in tables:
        if cmap.row_id is None:
            raise ColumnError(f"{fname!r} has no row id column (id, row_id, ...): files "
                              "joined into one pool are matched on it; its columns are "
                              f"{df.columns}")
        for c in cmap.candidates:
            if c.name in seen_cands:
                raise ColumnError(f"two files give a candidate named {c.name!r} "
                                  f"({seen_cands[c.name]!r} and {fname!r}); rename one")
            seen_cands[c.name] = fname
        with _naming(fname):
            ids = _row_ids(df, cmap.row_id)
        assert ids is not None  # the column is there
        shown.append(ids.tolist() if isinstance(ids, np.ndarray) else list(ids))
        keyed.append([str(v) for v in shown[-1]])
        id_cols.append(cmap.row_id)
    first_name, first = names[0], keyed[0]
    pos0 = {v: i for i, v in enumerate(first)}
    cols: dict[str, pl.Series] = {}
    cands: list[CandidateColumns] = []
    label_from: list[tuple[str, pl.Series]] = []
    for (fname, df, cmap), keys, orig, id_col in zip(tables, keyed, shown, id_cols):
        pos = {v: i for i, v in enumerate(keys)}
        missing = next((i for i, v in enumerate(first) if v not in pos), None)
        if missing is not None:
            raise InvalidValueError(f"{fname!r} has no row with {id_col} {shown[0][missing]!r} "
                                    f"(it is at data row {missing + 1} of {first_name!r}); "
                                    "every file must hold the same rows")
        extra = next((i for i, v in enumerate(keys) if v not in pos0), None)
        if extra is not None:
            raise InvalidValueError(f"{fname!r} has a row with {id_col} {orig[extra]!r} (data "
                                    f"row {extra + 1}) that {first_name!r} does not have; "
                                    "every file must hold the same rows")
        aligned = df[np.asarray([pos[v] for v in first], dtype=np.int64)]
        if not cols:
            cols[id_cols[0]] = aligned[id_col]
        rename = {c: f"{fname}: {c}" for c in df.columns if c not in (id_col, cmap.label)}
        for old, new in rename.items():
            cols[new] = aligned[old]
        if cmap.label is not None:
            label_from.append((fname, _canon_series(aligned[cmap.label], cmap.label)))
        for c in cmap.candidates:
            cands.append(CandidateColumns(
                c.name, None if c.pred is None else rename[c.pred],
                None if c.conf is None else rename[c.conf],
                tuple((k, rename[v]) for k, v in c.proba)))
    label_col = None
    if label_from:
        label_col = "label"
        while label_col in cols:
            label_col += "_"
        # one kind for every file's labels: integers, or text when any file has text
        if any(s.dtype != pl.Int64 for _, s in label_from):
            label_from = [(f, s.cast(pl.String)) for f, s in label_from]
        base_name, merged = label_from[0]
        for fname, other in label_from[1:]:
            clash = (merged.is_not_null() & other.is_not_null()
                     & (merged != other)).fill_null(False).to_numpy()
            if clash.any():
                i = int(np.flatnonzero(clash)[0])
                raise InvalidValueError(
                    f"the label of the row with {id_cols[0]} {shown[0][i]!r} is {merged[i]!r} "
                    f"in {base_name!r} and {other[i]!r} in {fname!r}; the files must agree")
            merged = pl.select(pl.coalesce(merged, other)).to_series()
        cols[label_col] = merged
    table = pl.DataFrame([v.alias(k) for k, v in cols.items()])
    return table, ColumnMap(tuple(cands), label_col, id_cols[0])


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
    warnings : tuple of str, optional
        What the reading left out that a person should know: label-like or
        candidate-like columns unused (they are in `Pool.extra`).

    Examples
    --------
    >>> got = read_sources([("p.csv", b"pred_a,conf_a,pred_b,conf_b,y_true\\n0,.9,1,.8,1\\n")])
    >>> got.pool.n_labelled, got.column_map, got.warnings
    (1, None, ())
    """

    pool: Pool
    column_map: ColumnMap | None
    files: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def _stem(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def expand_zips(sources: Sequence[tuple[str, bytes]], *,
                max_bytes: int = DEFAULT_MAX_BYTES) -> list[tuple[str, bytes]]:
    """The files of ``sources``, a zip replaced by its members in their order.

    Parameters
    ----------
    sources : sequence of (name, content)
        Pool files and zips of pool files.
    max_bytes : int, default DEFAULT_MAX_BYTES (2 GiB)
        The largest a zip's members may be in all, unpacked.

    Returns
    -------
    list of (name, content)
        Each member of a zip is named ``"<zip>/<member>"``; folders and the metadata
        macOS adds (``__MACOSX/``, ``._*``) are skipped.

    Raises
    ------
    PoolFileError
        A zip that cannot be read, holds a file that is not a pool file (named), holds
        none, or unpacks to more than ``max_bytes``.

    Examples
    --------
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("a.csv", "id,prediction,score\\n1,0,0.9\\n")
    ...     z.writestr("b.csv", "id,prediction,score\\n1,1,0.8\\n")
    >>> [name for name, _ in expand_zips([("models.zip", buf.getvalue())])]
    ['models.zip/a.csv', 'models.zip/b.csv']
    """
    import io
    import zipfile

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
                    if not m.filename.lower().endswith(_POOL_SUFFIXES):
                        raise PoolFileError(
                            f"zip file {name!r} holds {m.filename!r}, which is not a pool "
                            "file (.csv, .tsv, .parquet or .pq); nothing was read")
                total = sum(m.file_size for m in members)
                if total > max_bytes:
                    raise PoolFileError(f"zip file {name!r} unpacks to {total} bytes; the "
                                        f"limit is max_bytes = {max_bytes}")
                for m in members:
                    out.append((f"{name}/{m.filename}", z.read(m)))
        except (zipfile.BadZipFile, EOFError, NotImplementedError) as exc:
            raise PoolFileError(f"zip file {name!r} is not a readable zip ({exc})") from None
    return out


def _convention(name: str, columns: Sequence[str], *, label: str | None = None,
                row_id: str | None = None) -> tuple[Layout, tuple[str, ...]] | None:
    """The file convention's layout of a table, its labels taken from a label-like
    column when it has no ``label`` column (``y_true``: a label by another name is
    still the label), and the warnings; None when the columns follow no layout."""
    try:
        layout = file_layout(columns)
    except ColumnError:
        return None
    if label is None and layout.label is None:
        label = next((c for c in columns if c in layout.extra
                      and c in CONVENTION_LABEL_NAMES), None)
    if label is not None:
        if label not in columns:
            raise ColumnError(f"the label column {label!r} is not in {name!r}; its columns "
                              f"are {list(columns)}")
        layout.label = label
    if row_id is not None:
        if row_id not in columns:
            raise ColumnError(f"the row id column {row_id!r} is not in {name!r}; its "
                              f"columns are {list(columns)}")
        layout.row_id = row_id
    layout.extra = [c for c in layout.extra if c not in (layout.label, layout.row_id)]
    used = f"{layout.label!r} is" if layout.label else "no column is"
    warn = tuple(f"column {c!r} of {name!r} looks like labels but is not used as the label "
                 f"({used}): it is shown with the rows only"
                 for c in layout.extra if _label_like(c))
    return layout, warn


def read_sources(sources: Sequence[tuple[str, bytes]], *,
                 column_map: ColumnMap | None = None,
                 classes: Sequence[object] | None = None, objective: str = "augrc",
                 progress: Progress | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES, row_id: str | None = None,
                 label: str | None = None,
                 candidates: Sequence[CandidateColumns] | None = None) -> MappedPool:
    """The pool of one file, or of several files (one per model) joined on their id
    column; zips are opened (``max_bytes``: the most a zip may unpack to).

    One file that follows the file convention is read by it, a label column of
    another name (``y_true``, ``target``, ...) being its label; any other file is read
    with `guess_map`'s map (refused when two columns claim one part: give the map).
    Several files are joined on their id columns (`join_tables`): the candidates in file
    order (the tie priority), the rows in the first file's order.

    Parameters
    ----------
    sources : sequence of (name, content)
        The files, in candidate order (the tie priority).
    column_map : ColumnMap, optional
        The map of a single file (of the joined table, for several: its columns are
        named ``"<file>: <column>"``).  Default: as above.
    classes : sequence, optional
        The declared class set.
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.
    progress : callable, optional
        Called with what is being done, naming the file (``"reading scores.csv (190
        MB)"``, ``"checking columns of scores.csv"``, ``"joining 3 files on id"``,
        ``"building the pool"``, then what was read) and the fraction done,
        non-decreasing, ending with 1.0 (`certlib.io.Progress`).
    max_bytes : int, default DEFAULT_MAX_BYTES
        The most a zip may unpack to.
    row_id, label : str, optional
        Several files: the id column every file is joined on, and the label column
        (read from each file that has it); default guessed per file.
    candidates : sequence of CandidateColumns, optional
        Several files: the candidates, their columns written ``COL`` (when one file has
        it) or ``FILE:COL``; default each file's guess.

    Returns
    -------
    MappedPool
        The pool, the map that read it and the warnings.

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
    from .core.weights import get_objective

    get_objective(objective)
    report = _Reporter(progress)
    declared = None if classes is None else _declared(classes, "(classes=)")
    if any(n.lower().endswith(".zip") for n, _ in sources):
        report("opening " + ", ".join(n for n, _ in sources if n.lower().endswith(".zip")),
               0.0)
    files = expand_zips(sources, max_bytes=max_bytes)
    if not files:
        raise ParameterError("no file given")
    total = max(sum(len(d) for _, d in files), 1)
    tables: list[tuple[str, pl.DataFrame]] = []
    done = 0
    for name, data in files:
        report(f"reading {name} ({_size(len(data))})", 0.6 * done / total)
        tables.append((name, read_table_bytes(name, data)))
        done += len(data)
    del files
    if len(tables) == 1:
        name, df = tables[0]
        report(f"checking columns of {name}", 0.6)
        conv = None if column_map is not None else _convention(name, df.columns)
        if conv is not None:
            layout, warn = conv
            report(f"building the pool of {name}", 0.7)
            try:
                with _naming(name):
                    pool = pool_from_table(name, df, layout, declared=declared,
                                           objective=objective)
            except InvalidValueError as exc:
                if layout.mode == "prob" and len(guess_map(df.columns).candidates) > 1:
                    # prob_<x> names a class in the file convention, a model in many
                    # people's files: say how to read it the other way
                    raise InvalidValueError(
                        f"{exc} (read as the file convention: prob_<class> columns of one "
                        "classifier; if each prob_ column is one model's probability of "
                        "class 1, give a column map: guess_map proposes one)") from None
                raise
            report(f"read {name}: {pool.n} rows, {pool.K} candidates", 1.0)
            return MappedPool(pool, None, (name,), warn)
        if column_map is not None:
            cmap = column_map
        else:
            cmap = guess_map(df.columns, name=name, default_name=_stem(name))
            if len(cmap.candidates) < 2 and not cmap.ambiguities \
                    and any(c == "pred" or c.startswith(("pred_", "conf_", "prob_"))
                            for c in df.columns):
                with _naming(name):
                    file_layout(df.columns)  # the file convention's own word on why
        with _naming(name):
            cmap = cmap.check(name, df.columns)
        report(f"building the pool of {name}", 0.7)
        pool = pool_from_mapped(name, df, cmap, classes=classes, objective=objective)
        report(f"read {name}: {pool.n} rows, {pool.K} candidates", 1.0)
        return MappedPool(pool, cmap, (name,), cmap.warnings)
    if row_id is None and column_map is not None and column_map.row_id is not None \
            and all(column_map.row_id in df.columns for _, df in tables):
        row_id = column_map.row_id  # the map's id column is the one every file is joined on
    maps = []
    warnings: list[str] = []
    for k, (name, df) in enumerate(tables):
        report(f"checking columns of {name}", 0.6 + 0.1 * k / len(tables))
        m = guess_map(df.columns, name=name, default_name=_stem(name))
        if row_id is not None:
            if row_id not in df.columns:
                raise ColumnError(f"{name!r} has no column {row_id!r} (the row id column "
                                  f"the files are joined on); its columns are {df.columns}")
            m = replace(m, row_id=row_id)
        if label is not None:
            m = replace(m, label=label if label in df.columns else None)
        if column_map is not None or candidates is not None:
            m = ColumnMap((), m.label, m.row_id)  # the given map names the candidates
        else:
            if m.ambiguities:
                raise ColumnError(m.ambiguities[0].message(name))
            if not m.candidates:
                raise ColumnError(f"{name!r}: no candidate columns found (a prediction and "
                                  "a score, or probabilities, e.g. prediction,score or "
                                  f"<model>_pred,<model>_score); its columns are "
                                  f"{df.columns}")
            warnings += _unused_warnings(name, df.columns, m.used())
        _check_cells(name, df, m, declared)
        maps.append((name, df, m))
    if label is not None and all(m.label is None for _, _, m in maps):
        raise ColumnError(f"no file has the label column {label!r}; their columns are "
                          + "; ".join(f"{n!r}: {df.columns}" for n, df in tables))
    names = [n for n, _ in tables]
    where = " + ".join(names)
    report(f"joining {len(tables)} files on {maps[0][2].row_id or 'their id'}", 0.7)
    joined, guessed = join_tables(maps)
    del maps, tables
    if candidates is not None and column_map is None:
        column_map = ColumnMap(tuple(_resolve(c, joined.columns, names) for c in candidates),
                               guessed.label, guessed.row_id)
    report("building the pool", 0.8)
    with _naming(where):
        cmap = (column_map or guessed).check(where, joined.columns)
    pool = pool_from_mapped(where, joined, cmap, classes=classes, objective=objective)
    report(f"read {where}: {pool.n} rows, {pool.K} candidates", 1.0)
    # a guessed join: each file's own unused columns, named in its own words
    return MappedPool(pool, cmap, tuple(names),
                      cmap.warnings if column_map is not None else tuple(warnings))


def _resolve(cand: CandidateColumns, columns: Sequence[str], files: Sequence[str]
             ) -> CandidateColumns:
    """A candidate of several files with its columns named as in the joined table
    (``"<file>: <column>"``): a column may be written ``COL`` when one file has it, or
    ``FILE:COL``."""
    have = set(columns)

    def one(col: str) -> str:
        if col in have:
            return col
        head, sep, tail = col.partition(":")
        if sep:
            for f in files:
                if head.strip() in (f, f.rsplit("/", 1)[-1], _stem(f)) \
                        and f"{f}: {tail.strip()}" in have:
                    return f"{f}: {tail.strip()}"
        found = [f for f in files if f"{f}: {col}" in have]
        if len(found) == 1:
            return f"{found[0]}: {col}"
        if found:
            raise ColumnError(f"column {col!r} of candidate {cand.name!r} is in several files "
                              f"({', '.join(found)}); write FILE:COL, e.g. "
                              f"{found[0].rsplit('/', 1)[-1]}:{col}")
        raise ColumnError(f"column {col!r} of candidate {cand.name!r} is in none of the files "
                          f"{list(files)}")

    return replace(cand, pred=cand.pred and one(cand.pred), conf=cand.conf and one(cand.conf),
                   proba=tuple((k, one(v)) for k, v in cand.proba))
