"""The one reader and validator of audit stream and batch files (SPEC section 11).

A *stream file* (``certlib audit``, ``certlib verify-audit``, the Audit page's verifier)
and an audit project's *batch* (``certlib audit-project append``, the Audit page,
`certlib.audit.store.AuditStore.append_batch`) share one format: a CSV or Parquet file
(or, for a batch, file bytes or a mapping of columns) with the columns
``pred_incumbent`` and ``pred_candidate`` (`REQUIRED`), an item id ``item_id`` -- or
``row_id`` when there is no ``item_id`` (`ID_COLUMNS`; required in a batch, optional in
a stream) --, an optional ``label`` (empty: unlabelled), the judge and slice columns an
audit names, and any other columns, kept as extra columns of a batch.

Every file is read by `_read_frame` (polars lives only at this edge).  Two forms of the
check follow:

* `read_stream` checks the columns and the empty prediction cells and hands the audit
  numpy arrays; the audit's own input checks (`certlib.audit.core.make_stream`) do the
  rest, vectorised, because a stream can hold millions of items;
* `check_rows` checks a batch cell by cell, and its message names the file, the
  column, the data row counted from 1 (as pool file messages count them) and the item
  id.  ``certlib audit`` falls back on it (`StreamColumns.explain`) when the vectorised
  checks refuse a stream, so that the command line and the Audit page say the same
  sentence about the same bad cell.
"""

from __future__ import annotations

import hashlib
import io as _io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from ..core._values import ClassValue, class_value, class_value_from_text, first_text, \
    is_empty_cell, is_none_or_nan, python_scalar
from ..errors import CertlibError, ColumnError, InvalidValueError, LabelError, ParameterError, \
    PoolFileError
from ..spreadsheet import original_frame
from .core import stray_fraction

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "ID_COLUMNS",
    "MAX_BYTES",
    "REQUIRED",
    "BatchColumns",
    "BatchRows",
    "StreamColumns",
    "check_batch",
    "check_rows",
    "class_kind",
    "read_batch",
    "read_stream",
]

#: The two prediction columns every item needs.
REQUIRED = ("pred_incumbent", "pred_candidate")
#: The item id column of a batch, in order of preference.
ID_COLUMNS = ("item_id", "row_id")
#: The largest stream or batch file read (bytes).
MAX_BYTES = 2 * 1024 ** 3

#: The kind of a project's class values: numbers or text (never both).
Kind: TypeAlias = Literal["num", "str"]
#: What a batch may be read from: a CSV/Parquet path, raw file bytes, or columns.
BatchSource: TypeAlias = ("str | Path | bytes | bytearray | BatchColumns "
                          "| dict[str, Sequence[object]] | pl.DataFrame")


def _read_frame(source: Path | bytes, *, name: str, what: str, missing: str,
                shown: str) -> pl.DataFrame:
    """The table of a stream or batch file.  ``source`` is a path (checked to exist and
    to be at most `MAX_BYTES`) or the file's bytes; ``name`` gives the suffix and is what
    the CSV reader's messages call the file; ``what`` is "stream file" or "batch file";
    ``missing`` is how the existence and size messages show the file, ``shown`` how the
    others do.  Raises PoolFileError (or the CSV reader's ColumnError) naming the file."""
    import polars as pl

    from ..io import read_csv_bytes

    if isinstance(source, Path):
        if not source.exists():
            raise PoolFileError(f"{what} {missing} does not exist")
        if source.stat().st_size > MAX_BYTES:
            raise PoolFileError(f"{what} {missing} is larger than {MAX_BYTES} bytes")
    suffix = (source if isinstance(source, Path) else Path(name)).suffix.lower()
    try:
        if suffix == ".csv":
            data = source.read_bytes() if isinstance(source, Path) else source
            return read_csv_bytes(name, data, kind=what)
        if suffix in (".parquet", ".pq"):
            return pl.read_parquet(source if isinstance(source, Path) else _io.BytesIO(source))
        raise PoolFileError(f"{what} {shown}: expected a .csv or .parquet file, got '{suffix}'")
    except CertlibError:  # the reader's own message names the line
        raise
    except Exception as exc:  # noqa: BLE001 - polars raises several types for unreadable files
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise PoolFileError(f"{what} {shown} cannot be read ({type(exc).__name__}: "
                            f"{first})") from None


# ------------------------------------------------------------------ batches
@dataclass(frozen=True, eq=False)
class BatchColumns:
    """The columns of a batch as read, before any check.

    Parameters
    ----------
    columns : dict of str to list
        Column name to its cells, as Python values (None for an empty cell).
    n : int
        The number of data rows.
    source : str
        What messages call the batch: the file's name, or a caller's name for columns.
    """

    columns: dict[str, list[object]]
    n: int
    source: str

    @classmethod
    def from_frame(cls, df: pl.DataFrame, source: str) -> BatchColumns:
        """The columns of a polars table read from a file.

        Parameters
        ----------
        df : polars.DataFrame
            The table, as `_read_frame` read it.
        source : str
            What messages call the file.

        Returns
        -------
        BatchColumns
            Every column of ``df`` as a list.
        """
        return cls({c: df[c].to_list() for c in df.columns}, df.height, source)


def read_batch(source: BatchSource, name: str | None = None) -> BatchColumns:
    """A batch from a CSV/Parquet path, raw file bytes, or a mapping of columns.

    Parameters
    ----------
    source : str, Path, bytes, BatchColumns, dict or DataFrame
        A path to a ``.csv`` or ``.parquet`` file; the bytes of one (``name`` gives the
        suffix); a mapping of column name to values; a polars or pandas DataFrame; or
        an already read `BatchColumns` (returned as is).
    name : str, optional
        What messages call the batch: ignored for a path (the file's name is used);
        for bytes it also gives the suffix (default ``"batch.csv"``); default
        ``"columns"`` or ``"data frame"`` for columns.

    Returns
    -------
    BatchColumns
        The columns as Python lists, not yet checked (`check_rows` does that).

    Raises
    ------
    PoolFileError
        The file does not exist, is larger than `MAX_BYTES`, has another suffix or
        cannot be parsed (the message names the line).
    InvalidValueError
        The columns of a mapping have different lengths.
    ParameterError
        ``source`` is none of the above.

    Examples
    --------
    >>> b = read_batch({"item_id": [1, 2], "pred_incumbent": [0, 1],
    ...                 "pred_candidate": [1, 1]}, name="day 1")
    >>> b.n, b.source, sorted(b.columns)
    (2, 'day 1', ['item_id', 'pred_candidate', 'pred_incumbent'])
    """
    if isinstance(source, BatchColumns):
        return source
    if isinstance(source, (str, Path)):
        p = Path(source)
        df = _read_frame(p, name=p.name, what="batch file", missing=str(p), shown=p.name)
        return BatchColumns.from_frame(df, p.name)
    if isinstance(source, (bytes, bytearray)):
        shown = name or "batch.csv"
        df = _read_frame(bytes(source), name=shown, what="batch file", missing=shown,
                         shown=shown)
        return BatchColumns.from_frame(df, shown)
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # pandas or polars
        df = cast("pl.DataFrame", source)  # a pandas frame has the same two members
        cols = {str(c): [python_scalar(v) for v in df[c].to_list()] for c in df.columns}
        return _columns(cols, name or "data frame")
    if isinstance(source, dict):
        return _columns({str(k): [python_scalar(v) for v in list(vals)]
                         for k, vals in source.items()}, name or "columns")
    raise ParameterError(f"a batch is a CSV/Parquet path, file bytes or a mapping of columns; "
                         f"got {type(source).__name__}")


def _columns(cols: dict[str, list[object]], source: str) -> BatchColumns:
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise InvalidValueError(f"batch {source}: columns have different lengths {sorted(lengths)}")
    return BatchColumns(cols, lengths.pop() if lengths else 0, source)


def _where(src: str, col: str, row: int, ids: Sequence[str | None] | None = None,
           id_col: str | None = "item_id") -> str:
    """Where a batch's bad cell is (``src``: "batch NAME", or "stream file NAME" for
    `certlib audit`): ``row`` is its position, shown as the data row counted from 1 (as
    pool file messages count them), with the item id when known, under its column's name
    (``id_col``: a file's ``row_id`` is not called item_id)."""
    at = f"column `{col}`, data row {row + 1}"
    if ids is not None and row < len(ids) and not is_none_or_nan(ids[row]):
        at += f" ({id_col} {ids[row]!s})"
    return f"{src}: {at}"


def class_kind(v: object) -> Kind | None:
    """The kind of a cell as a class value: ``"str"`` for text, ``"num"`` for a finite
    number (booleans included), None for anything else (an infinity, a list, None).

    Parameters
    ----------
    v : object
        One cell, a Python scalar.

    Returns
    -------
    {"num", "str"} or None
        The kind, or None when the cell is no class value.
    """
    if isinstance(v, str):
        return "str"
    if isinstance(v, (bool, int, float)) and not (isinstance(v, float) and not math.isfinite(v)):
        return "num"
    return None


@dataclass(frozen=True, eq=False)
class BatchRows:
    """A checked batch, one entry per item in the batch's order.

    Parameters
    ----------
    ids : list of str or None
        The item ids as text (None in a stream file without an id column).
    f, g : list of int, float or str
        The incumbent's and the candidate's predictions as class values.
    labels : list
        The batch's label of each item, None for unlabelled.
    judge : list of float, optional
        Judge scores in [0, 1] (None without a judge column).
    slices : list of str, optional
        Slice keys (None without a slice column).
    extra : list of dict
        Each item's other columns, as JSON scalars.
    kind : {"num", "str"}
        Whether the predictions are numbers or text.
    sha256 : str
        SHA-256 of the checked rows, stored with the batch.
    """

    ids: list[str | None]
    f: list[ClassValue]
    g: list[ClassValue]
    labels: list[ClassValue | None]
    judge: list[float] | None
    slices: list[str] | None
    extra: list[dict[str, object]]
    kind: Kind
    sha256: str


def check_rows(batch: BatchColumns, *, judge_column: str | None = None,
               slice_column: str | None = None, project_id: int = 0,
               kind: Kind | None = None,
               earlier_fraction: Callable[[], bool] = lambda: False,
               stream: bool = False) -> BatchRows:
    """The whole batch checked, cell by cell: the first problem raises, naming the file,
    the column, the data row (counted from 1) and the item id.

    Parameters
    ----------
    batch : BatchColumns
        The columns as read by `read_batch`.
    judge_column, slice_column : str, optional
        The audit's judge and slice columns, which the batch must hold.
    project_id : int, default 0
        The audit project the batch is for (named when a column is missing).
    kind : {"num", "str"}, optional
        The kind of the project's earlier predictions (None: no batch yet).
    earlier_fraction : callable, optional
        Whether the project already holds a prediction with a fractional part (then a
        fractional label may be a class); asked only when needed.
    stream : bool, default False
        The file of ``certlib audit``, which keeps no project: messages call it a
        stream file, and an id column is optional there and only names the items.

    Returns
    -------
    BatchRows
        The items, checked.

    Raises
    ------
    ColumnError
        A required, id, judge or slice column is missing.
    InvalidValueError
        An empty or repeated id, an empty or non-class prediction, predictions of two
        kinds, a judge score outside [0, 1], an empty slice key, or no rows at all.
    LabelError
        A label of the other kind than the predictions, or a fractional label where
        every prediction is a whole number.
    """
    cols = batch.columns
    src = f"{'stream file' if stream else 'batch'} {batch.source}"
    if batch.n == 0:
        raise InvalidValueError(f"{src} has no rows; expected at least one item")
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    if id_col is None and not stream:
        raise ColumnError(f"{src} lacks the column `item_id` (or `row_id`): every item "
                          "needs an id, so that a batch appended twice is refused")
    for c in REQUIRED:
        if c not in cols:
            raise ColumnError(f"{src} lacks the column `{c}` (expected "
                              f"{', '.join(REQUIRED)}, an item id, optional `label`)")
    for opt, what in ((judge_column, "judge"), (slice_column, "slice")):
        if opt is not None and opt not in cols:
            raise ColumnError(f"{src} lacks the column `{opt}`, the {what} column of "
                              f"audit project {project_id}")
    ids: list[str | None] = []
    seen: dict[str, int] = {}
    for i, v in enumerate(cols[id_col] if id_col else [None] * batch.n):
        if id_col is None:  # a stream without ids: the data row names the item
            ids.append(None)
            continue
        if is_empty_cell(v):
            raise InvalidValueError(f"{_where(src, id_col, i)} is empty; every item needs an id")
        t = str(class_value(v)).strip()
        if t in seen and not stream:
            raise InvalidValueError(f"{_where(src, id_col, i)} repeats the id {t!r} of data "
                                    f"row {seen[t] + 1}; item ids must be unique")
        seen[t] = i
        ids.append(t)
    expected = kind
    preds: dict[str, list[ClassValue]] = {}
    for c in REQUIRED:
        out: list[ClassValue] = []
        for i, v in enumerate(cols[c]):
            v = python_scalar(v)
            if is_empty_cell(v):
                raise InvalidValueError(f"{_where(src, c, i, ids, id_col)} is empty; every item "
                                        "needs both predictions")
            if class_kind(v) is None:
                raise InvalidValueError(f"{_where(src, c, i, ids, id_col)} is {v!r}; expected "
                                        "a class value (every item needs both predictions)")
            out.append(class_value(v))
        col_kind: Kind = "str" if any(isinstance(v, str) for v in out) else "num"
        if expected is None:
            expected = col_kind
        elif col_kind != expected:
            # name the cell that makes the difference: in a text column read from a file,
            # the first value that is not a number (a column is text as soon as one cell
            # is, so the other column's first row is not the culprit)
            if not kind and col_kind == "num":  # this batch's other column is the text one
                first = REQUIRED[0]
                i = first_text(preds[first])
                raise InvalidValueError(
                    f"{_where(src, first, i, ids, id_col)} is {preds[first][i]!r}, text, but `{c}` "
                    "holds numbers; both predictions must be numbers, or both text")
            i = first_text(out) if col_kind == "str" else 0
            where = "the project's earlier batches hold " if kind else "`pred_incumbent` holds "
            raise InvalidValueError(
                f"{_where(src, c, i, ids, id_col)} is {out[i]!r}; {where}"
                + ("numbers, so every prediction must be a number" if expected == "num"
                   else "text, so every prediction must be text"))
        preds[c] = out
    kind_now: Kind = "num" if expected is None else expected
    labels: list[ClassValue | None] = [None] * batch.n
    if "label" in cols:
        for i, v in enumerate(cols["label"]):
            v = python_scalar(v)
            if is_empty_cell(v):
                continue
            if kind_now == "num" and isinstance(v, str):
                # a file's label column is text as soon as one cell is not a number: the
                # cells that are numbers written as text are numbers, so the error names
                # the cell that is not
                v = class_value_from_text(v)
            if class_kind(v) != kind_now:
                raise LabelError(f"{_where(src, 'label', i, ids, id_col)} is {v!r}; expected "
                                 + ("a number like the predictions" if kind_now == "num"
                                    else "text like the predictions")
                                 + " (or empty for unlabelled)")
            labels[i] = class_value(v)
    if kind_now == "num":
        have = [v is not None for v in labels]
        values = [float(v) if h and v is not None else np.nan for v, h in zip(labels, have)]
        i_bad = stray_fraction(preds["pred_incumbent"], preds["pred_candidate"], values, have)
        if i_bad is not None and not earlier_fraction():
            raise LabelError(f"{_where(src, 'label', i_bad, ids, id_col)} is {labels[i_bad]!r}; "
                             "every prediction is a whole number (a class), so a label must "
                             "be one too (or empty for unlabelled)")
    judge: list[float] | None = None
    if judge_column is not None:
        judge = []
        for i, v in enumerate(cols[judge_column]):
            v = python_scalar(v)
            if isinstance(v, str):  # one text cell makes the whole column text: find it
                try:
                    v = float(v)
                except ValueError:
                    pass
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) \
                and math.isfinite(float(v)) and 0.0 <= float(v) <= 1.0
            if not ok:
                raise InvalidValueError(f"{_where(src, judge_column, i, ids, id_col)} is "
                                        f"{v!r}; expected a judge score in [0, 1]")
            judge.append(float(cast(float, v)))  # `ok`: a finite number
    slices: list[str] | None = None
    if slice_column is not None:
        slices = []
        for i, v in enumerate(cols[slice_column]):
            v = python_scalar(v)
            if is_empty_cell(v):
                raise InvalidValueError(f"{_where(src, slice_column, i, ids, id_col)} is "
                                        "empty; every item needs a slice")
            slices.append(str(class_value(v)))
    used = {id_col, *REQUIRED, "label", judge_column, slice_column}
    other = [c for c in cols if c not in used]
    extra = [{c: _json_scalar(cols[c][i]) for c in other} for i in range(batch.n)]
    rows = [[ids[i], preds["pred_incumbent"][i], preds["pred_candidate"][i], labels[i],
             None if judge is None else judge[i], None if slices is None else slices[i],
             extra[i]] for i in range(batch.n)]
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
    return BatchRows(ids, preds["pred_incumbent"], preds["pred_candidate"], labels, judge, slices,
                     extra, kind_now, digest)


def check_batch(batch: BatchSource, *, judge_column: str | None = None,
                slice_column: str | None = None, name: str | None = None,
                stream: bool = False) -> int:
    """Check a batch for a project with these columns before creating the project.

    A page refuses a bad first batch this way without leaving an empty project behind.

    Parameters
    ----------
    batch : str, Path, bytes, BatchColumns, dict or DataFrame
        Any source `read_batch` reads.
    judge_column, slice_column : str, optional
        The columns the project will name.
    name : str, optional
        What messages call the batch (`read_batch`).
    stream : bool, default False
        The file of ``certlib audit`` (`check_rows`).

    Returns
    -------
    int
        The number of items in the batch.

    Raises
    ------
    CertlibError
        What `read_batch` and `check_rows` raise.

    Examples
    --------
    >>> check_batch({"item_id": [1, 2], "pred_incumbent": [0, 1], "pred_candidate": [1, 1]})
    2
    >>> check_batch({"item_id": [1, 2], "pred_incumbent": [0, None],
    ...              "pred_candidate": [1, 1]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    certlib.errors.InvalidValueError: batch columns: column `pred_incumbent`, data row 2 ...
    """
    b = read_batch(batch, name)
    return len(check_rows(b, judge_column=judge_column, slice_column=slice_column,
                          stream=stream).ids)


def _json_scalar(v: object) -> object:
    v = python_scalar(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


# ------------------------------------------------------------------ streams
@dataclass(frozen=True, eq=False)
class StreamColumns:
    """The columns of a stream file as numpy arrays, for the audit.

    Parameters
    ----------
    incumbent, candidate : numpy.ndarray
        The two prediction columns (numbers as read, or text as objects).
    labels : numpy.ndarray, optional
        The ``label`` column (NaN or None where unlabelled); None without one.
    judge : numpy.ndarray, optional
        The judge column named by the caller; None without one.
    slices : numpy.ndarray, optional
        The slice column named by the caller, as objects; None without one.
    source : str
        What messages call the file.
    judge_column, slice_column : str, optional
        The names of the judge and slice columns read.
    """

    incumbent: npt.NDArray[Any]
    candidate: npt.NDArray[Any]
    labels: npt.NDArray[Any] | None
    judge: npt.NDArray[Any] | None
    slices: npt.NDArray[np.object_] | None
    source: str = ""
    judge_column: str | None = None
    slice_column: str | None = None
    _frame: pl.DataFrame | None = field(default=None, repr=False)

    def explain(self) -> None:
        """Check the file cell by cell (`check_rows`) and raise its message, which names
        the file's column, the data row counted from 1 and the item id.  The file is not
        read again: the table read by `read_stream` is kept.  Returns without raising
        when the cell check finds nothing (the audit's own message then stands).

        Raises
        ------
        CertlibError
            What `check_rows` raises on this file.
        """
        if self._frame is None:
            return
        check_rows(BatchColumns.from_frame(self._frame, self.source),
                   judge_column=self.judge_column, slice_column=self.slice_column, stream=True)


def _col(df: pl.DataFrame, name: str) -> npt.NDArray[Any]:
    s = df[name]
    if s.dtype.is_numeric():
        return s.to_numpy()
    return np.asarray(s.to_list(), dtype=object)


def read_stream(path: str | Path, *, judge: str | None = None, slices: str | None = None,
                name: str | None = None) -> StreamColumns:
    """The columns of a stream file, checked for the required columns and empty
    predictions (the audit checks the rest, vectorised).

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.parquet`` file.  A CSV file's text cells and column names lose
        one leading ``'`` (`certlib.spreadsheet.original_frame`): certlib writes a
        stream with it where a spreadsheet would run the cell (`AuditStore.stream_csv`).
    judge : str, optional
        The judge score column to read (``--judge``).
    slices : str, optional
        The slice column to read (``--slices``).
    name : str, optional
        What messages call the file (an upload's name, not the temporary file it was
        saved to); default its path, or its name where a message quotes a cell.

    Returns
    -------
    StreamColumns
        The prediction, label, judge and slice columns.

    Raises
    ------
    PoolFileError
        The file does not exist, is too large, has another suffix or cannot be parsed.
    ColumnError
        A required column, or the judge or slice column named, is missing.
    InvalidValueError
        A prediction cell is empty (the message names the column and the data row).
    """
    import polars as pl

    p = Path(path)
    shown, short = (repr(name),) * 2 if name is not None else (str(p), repr(p.name))
    df = _read_frame(p, name=name or p.name, what="stream file", missing=shown, shown=shown)
    if p.suffix.lower() == ".csv":  # as certlib writes it (`AuditStore.stream_csv`)
        df = original_frame(df)
    for col_name in REQUIRED:
        if col_name not in df.columns:
            raise ColumnError(f"stream file {shown} lacks the column `{col_name}` "
                              f"(expected {', '.join(REQUIRED)}, optional `label`)")
    for col_name in REQUIRED:  # name the file's column, not the API's parameter
        col = df[col_name]
        empty = col.is_null()
        if col.dtype.is_float():
            empty = empty | col.is_nan()
        elif col.dtype == pl.String:
            empty = empty | (col.str.strip_chars() == "")
        if empty.any():
            i = int(empty.arg_true()[0])
            raise InvalidValueError(f"stream file {short}: column `{col_name}` is empty at data "
                                    f"row {i + 1}; every item needs both predictions")
    for opt, what in ((judge, "--judge"), (slices, "--slices")):
        if opt is not None and opt not in df.columns:
            raise ColumnError(f"stream file {shown} lacks the column `{opt}` named by {what}")
    labels = None
    if "label" in df.columns:
        col = df["label"]
        if col.dtype.is_numeric():
            labels = col.cast(pl.Float64).to_numpy()   # nulls become NaN = unlabelled
        else:  # text; `certlib.audit.core` reads numbers written as text as numbers
            labels = np.asarray(col.to_list(), dtype=object)
    return StreamColumns(_col(df, "pred_incumbent"), _col(df, "pred_candidate"), labels,
                         None if judge is None else _col(df, judge),
                         None if slices is None else np.asarray(df[slices].to_list(),
                                                                dtype=object),
                         name or p.name, judge, slices, df)
