"""Pool files: CSV and Parquet in, a validated `Pool` out (SPEC section 2).

This is the edge of the library: polars (and pyarrow for the Parquet schema)
are used here and nowhere in the core.  `load_pool` reads a file, recognises
one of three layouts and hands plain NumPy arrays to `Pool.from_arrays`:

1. **Pairs** -- ``pred_<name>`` and ``conf_<name>`` for every candidate
   ``<name>``.  Candidate order (the tie priority) is the order in which each
   name first appears in a ``pred_``/``conf_`` column, left to right.
2. **Shared prediction** -- one ``pred`` column and several ``conf_<name>``
   columns (one classifier, several confidence scores); the order is that of
   the ``conf_`` columns.
3. **Probabilities** -- ``prob_<class>`` columns.  The shared prediction is
   the argmax (ties go to the leftmost column) and the built-in scores are, in
   this priority order, ``msp`` (max probability), ``neg_entropy``
   (sum p log p with 0 log 0 = 0) and ``margin`` (top-two gap), computed from
   basic float operations only, the same bits on every machine
   (`certlib.core.derived_scores`).  The class set
   is declared by the column suffixes.  Any ``conf_<name>`` columns in the same
   file are further candidates on the argmax prediction, after the built-ins.

Optional ``row_id`` (unique, non-empty; default 0..n-1 in file order) and
``label`` (empty/null = not read yet) columns; every other column is carried
into ``Pool.extra`` for display.

CSV details: the first line is the header (names are stripped of surrounding
spaces and must be unique); blank lines are skipped, but a row of empty cells
is a row (and fails for its missing prediction); every other row must have one
field per header column.  Column names are case-sensitive: ``Label`` is an
extra column, not the label.

Class values: a number-like value ("1", 1, 1.0, " 1 ") is the integer class 1
wherever it appears (predictions, labels, ``classes=``, ``prob_`` suffixes);
in the pool number-like classes are numbers and text classes stay text (a
pool may mix them: ``(1, "cat")``), so "1.0", "1" and 1 always agree.  NaN or
empty cells are missing; -1 is an ordinary class value here (labels in
{-1, +1} work), unread is only ever an empty cell.

Bad input raises exactly one `CertlibError` that names the file, column or
row (``data row i`` counts the rows under the header from 1, in file order, and comes
with the ``row_id`` when the file has one) and
what was expected; nothing is half-loaded.  Nothing in the file is executed:
no pickle, no eval.

`pool_hash` is re-exported from `certlib.core.pool`, where it is defined (it is not I/O).
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from .core._values import EXACT_INT_LIMIT, file_class_key, first_true, python_scalar
from .core.derived_scores import SCORE_RULE, builtin_scores, row_sums
from .errors import (CertlibError, ColumnError, InvalidValueError, LabelError, ParameterError,
                     PoolFileError)
from .core.pool import DerivedFrom, Pool, pool_hash

# pool_hash is re-exported so that the file reader and the hash of what it read come
# from one import
__all__ = [
    "BUILTIN_SCORES",
    "DEFAULT_MAX_BYTES",
    "PROB_SUM_TOLERANCE",
    "Progress",
    "load_pool",
    "pool_hash",
]

#: A progress callback: called with what is being done, in words that name the file
#: (``"reading scores.csv (190 MB)"``), and the fraction done, in [0, 1], non-decreasing
#: from one call to the next and 1.0 at the last call.  The dashboard shows it in a
#: progress bar, the command line on stderr.
Progress = Callable[[str, float], None]

DEFAULT_MAX_BYTES: int = 2 * 1024**3
BUILTIN_SCORES: tuple[str, ...] = ("msp", "neg_entropy", "margin")
PROB_SUM_TOLERANCE: float = 1e-3

# (candidate name, prediction column or None, confidence column or None)
_Candidate = tuple[str, "str | None", "str | None"]

_CSV_SUFFIXES: dict[str, str] = {".csv": ",", ".tsv": "\t"}
_PARQUET_SUFFIXES: set[str] = {".parquet", ".pq"}
# Rows inspected by polars before it fixes a column type.  A later cell that
# does not fit makes us re-read every column as text, which is slower but
# gives the exact column/row in the error message.
_INFER_ROWS: int = 10_000


class _Reporter:
    """Calls a `Progress` callback (if any) with fractions mapped into ``[lo, hi]`` and
    never decreasing, whatever the caller passes."""

    def __init__(self, progress: Progress | None, lo: float = 0.0, hi: float = 1.0) -> None:
        self.progress, self.lo, self.hi, self.last = progress, lo, hi, lo

    def __call__(self, what: str, fraction: float) -> None:
        if self.progress is None:
            return
        f = self.lo + (self.hi - self.lo) * min(max(float(fraction), 0.0), 1.0)
        self.last = max(self.last, f)
        self.progress(what, self.last)

    def part(self, lo: float, hi: float) -> Progress | None:
        """A callback for a sub-task: its [0, 1] is this one's ``[lo, hi]``."""
        if self.progress is None:
            return None
        return _Reporter(self, lo, hi)


def _size(n: int) -> str:
    """A byte count for people: ``"812 bytes"``, ``"3.4 kB"``, ``"190 MB"``."""
    if n < 1000:
        return f"{n} bytes"
    x, unit = n / 1000, "kB"
    for bigger in ("MB", "GB", "TB"):
        if x < 999.5:
            break
        x, unit = x / 1000, bigger
    return f"{x:.1f} {unit}" if x < 9.95 else f"{x:.0f} {unit}"


def _first(mask: ArrayLike) -> int:
    """Position of the first True of a mask that holds one (an error's row)."""
    i = first_true(mask)
    assert i is not None, "called only on a mask with a True"
    return i


# ---------------------------------------------------------------- file level
def _read_bytes(path: str | os.PathLike[str], max_bytes: int) -> tuple[Path, bytes]:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) \
            or max_bytes <= 0:
        raise ParameterError(f"max_bytes must be a positive integer; got {max_bytes!r}")
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise ParameterError(f"path must be a file path; got {type(path).__name__}") from None
    if not p.exists():
        raise PoolFileError(f"pool file {str(p)!r} does not exist")
    if not p.is_file():
        raise PoolFileError(f"pool file {str(p)!r} is not a regular file")
    suffix = p.suffix.lower()
    if suffix not in _CSV_SUFFIXES and suffix not in _PARQUET_SUFFIXES:
        raise PoolFileError(
            f"pool file {p.name!r} has unsupported type {suffix or '(no extension)'!r}; "
            "expected .csv, .tsv, .parquet or .pq"
        )
    size = p.stat().st_size
    if size > max_bytes:
        raise PoolFileError(
            f"pool file {p.name!r} is {size} bytes; the limit is max_bytes = {max_bytes}"
        )
    if size == 0:
        raise PoolFileError(f"pool file {p.name!r} is empty; expected a header row and data rows")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PoolFileError(f"pool file {p.name!r} cannot be read: {exc.strerror}") from None
    return p, data


def _check_text(name: str, data: bytes, kind: str = "pool file") -> bytes:
    """UTF-8 text without NUL bytes (a binary file named .csv fails here)."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise PoolFileError(
            f"{kind} {name!r} is not a text CSV file: NUL byte at line {line} "
            f"(byte {nul}); expected UTF-8 text"
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PoolFileError(
            f"{kind} {name!r} is not UTF-8 text: invalid byte at line {line} "
            f"(byte {exc.start}); expected a UTF-8 CSV file"
        ) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def _csv_header(name: str, data: bytes, sep: str, kind: str = "pool file") -> list[str]:
    head = data[: 1 << 20].decode("utf-8", errors="ignore")
    try:
        header = next(csv.reader(io.StringIO(head), delimiter=sep))
    except StopIteration:
        header = []
    except csv.Error as exc:
        raise PoolFileError(
            f"{kind} {name!r}: the header row cannot be parsed ({exc})") from None
    header = [h.strip() for h in header]
    if not header or all(h == "" for h in header):
        raise PoolFileError(
            f"{kind} {name!r} has no header row; expected column names on line 1")
    return header


def _lines(data: bytes) -> tuple[NDArray[np.uint8], NDArray[np.intp], NDArray[np.intp],
                                 NDArray[np.bool_]]:
    """Line starts, ends (without CR/LF) and blank flags of the whole file."""
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    ends = nl if (len(buf) and buf[-1] == 10) else np.append(nl, len(buf))
    starts = np.concatenate(([0], nl[: len(ends) - 1] + 1))
    nonempty = ends > starts
    ends = ends.copy()
    ends[nonempty] -= buf[ends[nonempty] - 1] == 13
    return buf, starts, ends, ends == starts


def _first_ragged(data: bytes, sep: str, width: int) -> tuple[int, int] | None:
    """(line number, field count) of the first record whose width differs, or None.

    Exact but slower than the totals check in `_read_csv`; it runs only when
    that check (or polars) has found a problem.
    """
    if b'"' in data:
        reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter=sep)
        next(reader, None)
        for rec in reader:
            if rec and len(rec) != width:
                return reader.line_num, len(rec)
        return None
    buf, starts, ends, blank = _lines(data)
    seps = np.flatnonzero(buf == ord(sep))
    counts = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
    bad = (counts != width) & ~blank
    bad[0] = False  # the header defines the width
    if not bad.any():
        return None
    k = _first(bad)
    return k + 1, int(counts[k])


def _ragged_error(name: str, data: bytes, sep: str, width: int,
                  kind: str = "pool file") -> PoolFileError | None:
    found = _first_ragged(data, sep, width)
    if found is None:
        return None
    line, count = found
    return PoolFileError(
        f"{kind} {name!r} cannot be parsed: line {line} has {count} fields but the "
        f"header has {width}; every row needs one value per column (ragged rows)"
    )


def _quoted_records(name: str, data: bytes, sep: str, width: int,
                    kind: str = "pool file") -> NDArray[np.int64]:
    """Check every record of a file with quotes; return the indices of blank lines."""
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter=sep)
    next(reader, None)
    blank = []
    try:
        for k, rec in enumerate(reader):
            if not rec:
                blank.append(k)
            elif len(rec) != width:
                raise PoolFileError(
                    f"{kind} {name!r} cannot be parsed: line {reader.line_num} has {len(rec)} "
                    f"fields but the header has {width}; every row needs one value per column "
                    "(ragged rows)"
                )
    except csv.Error as exc:
        raise PoolFileError(
            f"{kind} {name!r} cannot be parsed as CSV near line {reader.line_num}: {exc}"
        ) from None
    return np.asarray(blank, dtype=np.int64)


def _read_csv(name: str, data: bytes, sep: str, kind: str = "pool file",
              infer_rows: int | None = _INFER_ROWS) -> pl.DataFrame:
    data = _check_text(name, data, kind)
    header = _csv_header(name, data, sep, kind)
    if len(header) == 1 and sep == ",":  # every file certlib reads has two columns or more
        other = next((s for s in (";", "\t", "|") if s in header[0]), None)
        if other is not None:
            shown = {";": "semicolons", "\t": "tabs", "|": "'|'"}[other]
            raise PoolFileError(
                f"{kind} {name!r} has one column, {header[0][:80]!r}: it looks separated by "
                f"{shown}; certlib reads comma-separated files (save it as CSV with commas "
                "and a '.' as the decimal point)")
    _check_names(name, header, kind)
    width = len(header)
    # polars fails on a row that is too long but pads a short row with nulls.
    # Without quotes, a record is a line: if no line is too long (polars) and the
    # separators total (width - 1) per non-blank line, no line is too short.
    quoted = b'"' in data
    buf, starts, ends, blank = _lines(data)
    if not quoted:
        expected = int((~blank).sum()) * (width - 1)
        if int(np.count_nonzero(buf == ord(sep))) != expected:
            err = _ragged_error(name, data, sep, width, kind)
            assert err is not None  # the separator count says some line is ragged
            raise err
    else:
        blank_records = _quoted_records(name, data, sep, width, kind)
    del buf, starts, ends
    try:
        df = pl.read_csv(io.BytesIO(data), infer_schema_length=infer_rows, separator=sep,
                         has_header=True, raise_if_empty=False)
    except pl.exceptions.PolarsError:
        # a cell beyond the inferred rows does not fit the column type: read text
        try:
            df = pl.read_csv(io.BytesIO(data), infer_schema=False, separator=sep,
                             has_header=True, raise_if_empty=False)
        except pl.exceptions.PolarsError as exc:
            raise (_ragged_error(name, data, sep, width, kind) or PoolFileError(
                f"{kind} {name!r} cannot be parsed as CSV: {exc}")) from None
    if df.width != width:
        raise PoolFileError(
            f"{kind} {name!r} cannot be parsed: {df.width} columns read, the header has {width}"
        )
    # polars turns a blank line into an all-null row; a blank line is not a row
    idx = blank_records if quoted else np.flatnonzero(blank[1:])
    if len(idx):
        keep = np.ones(df.height, dtype=bool)
        keep[idx[idx < df.height]] = False
        df = df.filter(pl.Series(keep))
    return df.rename(dict(zip(df.columns, header)))


def read_csv_bytes(name: str, data: bytes, *, kind: str, sep: str = ",") -> pl.DataFrame:
    """A CSV file's table, with the checks of the pool files.

    UTF-8 text, a header of unique names, no ragged rows, blank lines dropped; column
    types are inferred from every row.  Audit streams and batches use it.

    Parameters
    ----------
    name : str
        The file's name, for the messages.
    data : bytes
        The file's content.
    kind : str
        What the file is, for the messages (e.g. ``"stream file"``).
    sep : str, default ","
        The field separator.

    Returns
    -------
    polars.DataFrame
        The table, its column names stripped of surrounding spaces.

    Raises
    ------
    PoolFileError
        When the bytes are not UTF-8 text, have no header or ragged rows, or cannot be
        parsed; the message names ``kind`` and ``name`` (e.g. "stream file 'x.csv' cannot
        be parsed: line 77 has 3 fields ...").
    ColumnError
        When a column name appears twice.

    Examples
    --------
    >>> read_csv_bytes("x.csv", b"a,b\\n1,2\\n\\n3,4\\n", kind="stream file").shape
    (2, 2)
    """
    return _read_csv(name, data, sep, kind, infer_rows=None)


def _read_parquet(name: str, data: bytes) -> pl.DataFrame:
    if len(data) < 12 or data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise PoolFileError(f"pool file {name!r} is not a Parquet file (no PAR1 magic bytes)")
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # pyarrow ships no types

        names = pq.ParquetFile(io.BytesIO(data)).schema_arrow.names
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several unrelated types on corrupt files
        raise PoolFileError(f"pool file {name!r} is not a readable Parquet file: {exc}") from None
    names = [str(c).strip() for c in names]
    _check_names(name, names)
    try:
        df = pl.read_parquet(io.BytesIO(data))
        return df.rename(dict(zip(df.columns, names)))
    except Exception as exc:  # noqa: BLE001 - polars, too, raises several types on corrupt files
        raise PoolFileError(f"pool file {name!r} is not a readable Parquet file: {exc}") from None


def _check_names(name: str, header: Sequence[str], kind: str = "pool file") -> None:
    seen: dict[str, int] = {}
    for pos, col in enumerate(header):
        if col in seen:
            raise ColumnError(
                f"{kind} {name!r}: column {col!r} appears twice (columns {seen[col] + 1} "
                f"and {pos + 1}); column names must be unique"
            )
        seen[col] = pos


# ------------------------------------------------------------ column layout
def _layout(columns: Sequence[str]) -> tuple[str, list[_Candidate], list[str]]:
    """Recognise the file layout; return (mode, candidate list, prob columns)."""
    has_pred = "pred" in columns
    pred_cols = [c for c in columns if c.startswith("pred_")]
    conf_cols = [c for c in columns if c.startswith("conf_")]
    prob_cols = [c for c in columns if c.startswith("prob_")]
    for c in pred_cols + conf_cols + prob_cols:
        if c.split("_", 1)[1] == "":
            raise ColumnError(
                f"column {c!r} has no name after the prefix; expected e.g. '{c}model'")
    if has_pred and pred_cols:
        raise ColumnError(
            f"columns 'pred' and {pred_cols[0]!r} are both present: a shared 'pred' column "
            "(one classifier, several conf_<name> scores) and per-candidate pred_<name> "
            "columns cannot be mixed; keep one layout"
        )
    if prob_cols and (has_pred or pred_cols):
        other = "pred" if has_pred else pred_cols[0]
        raise ColumnError(
            f"columns {prob_cols[0]!r} and {other!r} are both present: with prob_<class> "
            "columns the prediction is their argmax; remove the prediction column"
        )
    if prob_cols:
        if len(prob_cols) < 2:
            raise ColumnError(
                f"only one probability column ({prob_cols[0]!r}); prob_<class> needs a "
                "column for each of at least two classes"
            )
        cands: list[_Candidate] = [(s, None, None) for s in BUILTIN_SCORES]
        for c in conf_cols:
            nm = c[5:]
            if nm in BUILTIN_SCORES:
                raise ColumnError(
                    f"column {c!r} clashes with the built-in score {nm!r} derived from the "
                    "prob_ columns; rename it"
                )
            cands.append((nm, None, c))
        return "prob", cands, prob_cols
    if has_pred:
        cands = [(c[5:], "pred", c) for c in conf_cols]
        mode = "shared"
    else:
        order = []
        for c in columns:
            if c.startswith(("pred_", "conf_")) and c[5:] not in order:
                order.append(c[5:])
        preds = {c[5:] for c in pred_cols}
        confs = {c[5:] for c in conf_cols}
        for nm in order:
            if nm not in confs:
                raise ColumnError(
                    f"column 'conf_{nm}' is missing: candidate {nm!r} has 'pred_{nm}' but no "
                    "confidence column"
                )
            if nm not in preds:
                raise ColumnError(
                    f"column 'pred_{nm}' is missing: candidate {nm!r} has 'conf_{nm}' but no "
                    "prediction column (or add one shared 'pred' column)"
                )
        cands = [(nm, f"pred_{nm}", f"conf_{nm}") for nm in order]
        mode = "pairs"
    if not cands:
        raise ColumnError(
            "no candidate columns: expected pred_<name>/conf_<name> pairs, a 'pred' column "
            "with conf_<name> columns, or prob_<class> columns; found columns "
            f"{list(columns)}"
        )
    if len(cands) < 2:
        cols = [c for c in cands[0][1:] if c]
        raise ColumnError(
            f"only one candidate ({cands[0][0]!r}, columns {cols}); a pool needs at least two "
            "candidates to choose between"
        )
    return mode, cands, []


# ------------------------------------------------------------- cell values
class _Rows:
    """Formats 'data row i (row_id r)' for error messages: the zero-based position i - 1
    counted from 1, as a user reading the file counts the rows under its header."""

    def __init__(self, row_ids: NDArray[np.int64] | list[object] | None = None,
                 column: str | None = "row_id") -> None:
        self.row_ids, self.column = row_ids, column or "row_id"

    def __call__(self, i: int) -> str:
        if self.row_ids is None:
            return f"data row {i + 1}"
        return f"data row {i + 1} ({self.column} {python_scalar(self.row_ids[i])!r})"


def _cast(s: pl.Series, dtype: type[pl.DataType]) -> pl.Series:
    out: pl.Series = s.cast(dtype)
    return out


def _column(name: str | None) -> str:
    """A candidate's prediction or confidence column, in a layout that has one."""
    assert name is not None, "this layout names the column"
    return name


def _canon_series(s: pl.Series, col: str) -> pl.Series:
    """Class-like column (prediction, label, row id) -> Int64 or String, nulls = missing.

    The vectorised form of `certlib.core._values.file_class_key`: integer-valued numbers
    below `EXACT_INT_LIMIT` become Int64 ("1", 1 and 1.0 are one value); a column with
    any other value becomes String with those numbers written as integers.
    """
    dt: pl.DataType | type[pl.DataType] = s.dtype
    f: pl.Series
    text: pl.Series
    if dt == pl.Boolean:
        return _cast(s, pl.Int64)
    if dt.is_integer():
        wide: pl.Series = s.cast(pl.Int64, strict=False)
        if wide.null_count() == s.null_count():
            return wide
        # beyond 64 bits (polars reads 10**23 as Int128): its digits, as text would be
        s, dt = s.cast(pl.String), pl.String
    if dt == pl.Null:
        return _cast(s, pl.String)
    if dt.is_float():
        s = s.fill_nan(None)
        f = s
        text = s.cast(pl.String)
    elif dt in (pl.String, pl.Categorical, pl.Enum):
        text = s.cast(pl.String).str.strip_chars()
        text = pl.select(pl.when(text == "").then(None).otherwise(text)).to_series()
        f = text.cast(pl.Float64, strict=False)
        # "nan" text is missing, like NaN in a float column
        text = pl.select(pl.when(f.is_nan()).then(None).otherwise(text)).to_series()
    else:
        raise ColumnError(f"column {col!r} has type {dt}; expected numbers or text class values")
    is_int = f.is_not_null() & f.is_finite() & (f == f.floor()) & (f.abs() < EXACT_INT_LIMIT)
    is_int = is_int.fill_null(False)
    nonnull = text.is_not_null()
    if bool((is_int | ~nonnull).all()):
        return _cast(f, pl.Int64).alias(col)
    out: pl.Series = pl.select(
        pl.when(is_int).then(f.cast(pl.Int64, strict=False).cast(pl.String)).otherwise(text)
    ).to_series()
    return out.alias(col)


def _float_column(s: pl.Series, col: str, rows: _Rows, what: str) -> NDArray[np.float64]:
    """Numeric column -> float64 array; any missing, non-numeric, NaN or inf cell is an error."""
    dt = s.dtype
    if dt.is_numeric() or dt == pl.Boolean:
        f = s.cast(pl.Float64)
        text = None
    elif dt in (pl.String, pl.Categorical, pl.Enum, pl.Null):
        text = s.cast(pl.String).str.strip_chars()
        f = text.cast(pl.Float64, strict=False)
    else:
        raise ColumnError(f"column {col!r} has type {dt}; expected numbers ({what})")
    null = f.is_null().to_numpy()
    if null.any():
        i = _first(null)
        raw = None if text is None else text[i]
        if raw is None or raw == "":
            raise InvalidValueError(f"column {col!r} is empty at {rows(i)}; expected a {what}")
        raise InvalidValueError(
            f"column {col!r} holds {raw!r} at {rows(i)}; expected a {what} (a number)"
        )
    a: NDArray[np.float64] = f.to_numpy().astype(np.float64, copy=False)
    bad = ~np.isfinite(a)
    if bad.any():
        i = _first(bad)
        raise InvalidValueError(
            f"column {col!r} holds {float(a[i])} at {rows(i)}; expected a finite {what}"
        )
    return a


def _row_ids(df: pl.DataFrame, col: str | None = "row_id"
             ) -> NDArray[np.int64] | list[object] | None:
    if col is None or col not in df.columns:
        return None
    s = _canon_series(df[col], col)
    null = s.is_null().to_numpy()
    if null.any():
        raise InvalidValueError(
            f"column {col!r} is empty at data row {_first(null) + 1}; every row needs "
            "a unique row id"
        )
    dup = s.is_duplicated().to_numpy()
    if dup.any():
        same = np.flatnonzero(dup & (s == s[_first(dup)]).to_numpy())
        j, k = int(same[0]), int(same[1])
        raise InvalidValueError(
            f"column {col!r}: value {s[j]!r} appears at data rows {j + 1} and {k + 1}; "
            "row ids must be unique"
        )
    if s.dtype == pl.Int64:
        ids: NDArray[np.int64] = s.to_numpy()
        return ids
    return list(s.to_list())


def _declared(classes: object, where: str) -> list[int | str]:
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise ParameterError(f"classes must be a list of class values; got {classes!r} {where}")
    values = list(cast(Iterable[object], classes))  # iterable, checked just above
    out = [file_class_key(c) for c in values]
    if len(out) < 2:
        raise ParameterError(f"classes needs at least two values; got {values} {where}")
    if len(set(out)) != len(out):
        raise ParameterError(f"classes repeats a value: {values} {where}")
    return out


def _unify(series: list[pl.Series], declared: list[int | str] | None
           ) -> tuple[list[pl.Series], list[int | str] | None, bool]:
    """Bring class columns and declared classes to one kind: all Int64 or all String."""
    int_mode = all(s.dtype == pl.Int64 for s in series) and (
        declared is None or all(isinstance(c, int) for c in declared)
    )
    if int_mode:
        return series, declared, True
    series = [s.cast(pl.String) for s in series]
    as_text: list[int | str] | None = None if declared is None else [str(c) for c in declared]
    return series, as_text, False


def _check_in(s: pl.Series, declared: Sequence[int | str], col: str, rows: _Rows,
              err: type[CertlibError], what: str) -> None:
    bad = (~s.is_in(declared) & s.is_not_null()).to_numpy()
    if bad.any():
        i = _first(bad)
        raise err(
            f"column {col!r}: {what} {s[i]!r} at {rows(i)} is not in the class set {declared}"
        )


def _labels_array(s: pl.Series | None, int_mode: bool, minus_one_is_class: bool
                  ) -> NDArray[np.int64] | NDArray[np.object_] | None:
    """Labels for `Pool.from_arrays`: int64 with -1 = unread, or objects with None."""
    if s is None:
        return None
    if int_mode and not minus_one_is_class:
        codes: NDArray[np.int64] = s.fill_null(-1).to_numpy().astype(np.int64, copy=False)
        return codes
    # -1 is a real class (labels in {-1, +1}) or values are text: None marks unread
    return np.asarray(s.to_list(), dtype=object)


# ------------------------------------------------------------ prob layout
def _prob_scores(P: NDArray[np.float64], cols: list[str], rows: _Rows
                 ) -> tuple[NDArray[np.intp], list[NDArray[np.float64]]]:
    """Validate probabilities; return argmax index and the built-in scores."""
    bad = (P < 0) | (P > 1)
    if bad.any():
        i, c = (int(x) for x in np.argwhere(bad)[0])
        raise InvalidValueError(
            f"column {cols[c]!r} holds {float(P[i, c])} at {rows(i)}; probabilities must be in "
            "[0, 1]"
        )
    total = row_sums(P)
    off = np.abs(total - 1.0) > PROB_SUM_TOLERANCE
    if off.any():
        i = _first(off)
        raise InvalidValueError(
            f"the prob_ columns sum to {float(total[i])!r} at {rows(i)}; each row must sum to 1 "
            f"(within {PROB_SUM_TOLERANCE})"
        )
    arg = np.argmax(P, axis=1)  # first maximum = leftmost column
    # the same bits on every machine: no SIMD logarithm, no reduction (derived_scores)
    return arg, builtin_scores(P)


# ----------------------------------------------------------------- loading
# a label by another name (paper 000 reads labels, however the column is called): the
# names an evaluation script gives its label column, and what looks like one
LABEL_NAMES: tuple[str, ...] = ("label", "y_true", "target", "gt", "truth", "ground_truth",
                                "true_label", "y", "labels", "class", "true")
_LABEL_LIKE = re.compile(r"(^|[_\-.\s])(label|labels|truth|target|gt|y_true|ground)"
                         r"($|[_\-.\s])", re.IGNORECASE)


# in a file of the convention's columns (SPEC section 2) only these names, exactly, are
# taken as its label column: generic names (y, class, gt, Label) may be display columns
CONVENTION_LABEL_NAMES: tuple[str, ...] = ("y_true", "target", "ground_truth", "true_label")


def _label_like(col: str) -> bool:
    return col.strip().lower() in LABEL_NAMES or bool(_LABEL_LIKE.search(col))


def _pick(columns: Sequence[str], names: tuple[str, ...]) -> str | None:
    """The column named ``names[0]`` (any case), else the first in table order whose
    name is one of ``names``."""
    low = [c.strip().lower() for c in columns]
    if names[0] in low:
        return columns[low.index(names[0])]
    return next((c for c, lc in zip(columns, low) if lc in names), None)


def _label_by_another_name(name: str, layout: Layout) -> None:
    """A file in the convention's columns whose label column has another name
    (``y_true``, ``target``, ...) keeps its labels: that column is the label.  A
    label-like column left over is named in a `UserWarning`, never dropped in silence."""
    if layout.label is None:
        found = next((c for c in layout.extra if c in CONVENTION_LABEL_NAMES), None)
        if found is not None:
            layout.label = found
            layout.extra = [c for c in layout.extra if c != found]
    used = f"{layout.label!r} is" if layout.label else "only a column called 'label' is"
    for c in layout.extra:
        if _label_like(c):
            warnings.warn(f"column {c!r} of {name!r} looks like labels but is not read as "
                          f"the label ({used}): it is shown with the rows only",
                          UserWarning, stacklevel=3)


def load_pool(path: str | os.PathLike[str], *, classes: Sequence[object] | None = None,
              objective: str = "augrc", max_bytes: int = DEFAULT_MAX_BYTES,
              progress: Progress | None = None) -> Pool:
    """Read a CSV (.csv, .tsv) or Parquet (.parquet, .pq) pool file into a `Pool`.

    Parameters
    ----------
    path : str or path-like
        The file.  Its layout (pairs, shared prediction or probabilities) is recognised
        from the column names (module docstring, SPEC section 2).
    classes : sequence, optional
        The declared class set (``--classes`` on the command line); predictions and
        labels outside it are errors.  Default: the union of predictions and labels, or
        the ``prob_`` suffixes.  With ``prob_`` columns a declared set must name the same
        classes (its order is kept).
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute (paper 000 section 2).
    max_bytes : int, default DEFAULT_MAX_BYTES (2 GiB)
        Files larger than this are refused before reading.
    progress : callable, optional
        Called with what is being done (``"reading pool.csv (190 MB)"``, ``"checking
        columns of pool.csv"``, ``"building the pool of pool.csv"``, then a line saying
        what was read) and the fraction done, non-decreasing, ending with 1.0
        (`Progress`).

    Returns
    -------
    Pool
        The validated pool; an empty ``label`` cell is an unread row.

    Raises
    ------
    CertlibError
        Exactly one, of a subclass naming the file, column or row at fault:
        `PoolFileError` (the file), `ColumnError` (a column), `InvalidValueError` (a
        cell), `LabelError` (a label), `ParameterError` (an argument).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import certlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pool.csv"
    >>> _ = path.write_text("row_id,pred_A,conf_A,pred_B,conf_B,label\\n"
    ...                     "r1,0,0.9,0,0.8,1\\n"
    ...                     "r2,0,0.8,0,0.9,0\\n"
    ...                     "r3,1,0.7,0,0.6,\\n")
    >>> pool = certlib.load_pool(path)
    >>> pool.names, pool.n, pool.n_labelled, pool.row_ids
    (('A', 'B'), 3, 2, ('r1', 'r2', 'r3'))
    """
    from .core.weights import get_objective

    get_objective(objective)
    declared = None if classes is None else _declared(classes, "(classes=)")
    report = _Reporter(progress)
    p, data = _read_bytes(path, max_bytes)
    # parsing the text is most of the time (the bytes are already in memory)
    report(f"reading {p.name} ({_size(len(data))})", 0.0)
    df = read_table_bytes(p.name, data)
    del data
    report(f"checking columns of {p.name}", 0.6)
    layout = file_layout(df.columns)
    _label_by_another_name(p.name, layout)
    report(f"building the pool of {p.name}", 0.7)
    pool = pool_from_table(p.name, df, layout, declared=declared, objective=objective)
    report(f"read {p.name}: {pool.n} rows, {pool.K} candidates", 1.0)
    return pool


def read_table(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
               ) -> tuple[str, pl.DataFrame]:
    """A pool file's table, read with the checks of `load_pool` (not yet a pool).

    Parameters
    ----------
    path : str or path-like
        A .csv, .tsv, .parquet or .pq file.
    max_bytes : int, default DEFAULT_MAX_BYTES
        Files larger than this are refused before reading.

    Returns
    -------
    tuple of (str, polars.DataFrame)
        The file's name (for messages) and its table, column names stripped.

    Raises
    ------
    PoolFileError
        The file is missing, too large, not text or not Parquet, or cannot be parsed.
    ColumnError
        A column name appears twice.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
    >>> _ = path.write_text("id,y_true,a_pred,a_score\\n1,0,0,0.9\\n")
    >>> name, table = read_table(path)
    >>> name, table.columns
    ('scores.csv', ['id', 'y_true', 'a_pred', 'a_score'])
    """
    p, data = _read_bytes(path, max_bytes)
    return p.name, read_table_bytes(p.name, data)


def read_table_bytes(name: str, data: bytes) -> pl.DataFrame:
    """The table of a pool file's content (`read_table` for bytes: an upload).

    Parameters
    ----------
    name : str
        The file's name; its suffix says the format (.csv, .tsv, .parquet, .pq).
    data : bytes
        The content.

    Returns
    -------
    polars.DataFrame
        The table, column names stripped.

    Raises
    ------
    PoolFileError
        An unsupported suffix, or content that cannot be read as that format.
    ColumnError
        A column name appears twice.

    Examples
    --------
    >>> read_table_bytes("a.csv", b"x,y\\n1,2\\n").shape
    (1, 2)
    """
    suffix = Path(name).suffix.lower()
    if suffix in _PARQUET_SUFFIXES:
        return _read_parquet(name, data)
    if suffix not in _CSV_SUFFIXES:
        raise PoolFileError(f"pool file {name!r} has unsupported type "
                            f"{suffix or '(no extension)'!r}; expected .csv, .tsv, .parquet "
                            "or .pq")
    if not data:
        raise PoolFileError(f"pool file {name!r} is empty; expected a header row and data rows")
    return _read_csv(name, data, _CSV_SUFFIXES[suffix])


class Layout:
    """Which column of a table plays which part in a pool (the file convention's or a
    `certlib.columns.ColumnMap`'s).

    Parameters
    ----------
    mode : {"pairs", "shared", "prob"}
        Per-candidate predictions, one shared prediction, or shared probabilities.
    candidates : list of (name, prediction column or None, confidence column or None)
        In tie-priority order; in "prob" mode the built-in scores come first.
    prob_columns : list of str
        The probability columns ("prob" mode), one per class.
    prob_classes : list
        The class of each probability column.
    label : str or None
        The label column.
    row_id : str or None
        The row id column.
    extra : list of str
        Columns carried into `Pool.extra` for display.
    """

    def __init__(self, mode: str, candidates: list[_Candidate], prob_columns: list[str],
                 prob_classes: list[int | str], label: str | None, row_id: str | None,
                 extra: list[str]) -> None:
        self.mode, self.candidates = mode, candidates
        self.prob_columns, self.prob_classes = prob_columns, prob_classes
        self.label, self.row_id, self.extra = label, row_id, extra


def file_layout(columns: Sequence[str]) -> Layout:
    """The layout a table's column names follow under the file convention (module
    docstring).

    Parameters
    ----------
    columns : sequence of str
        The table's column names.

    Returns
    -------
    Layout
        The parts of the columns.

    Raises
    ------
    ColumnError
        The columns follow none of the three layouts (the message says why).

    Examples
    --------
    >>> file_layout(["row_id", "pred_a", "conf_a", "pred_b", "conf_b", "note"]).extra
    ['note']
    """
    mode, cands, prob_cols = _layout(columns)
    reserved = {"row_id", "label", "pred"}
    extra = [c for c in columns
             if c not in reserved and not c.startswith(("pred_", "conf_", "prob_"))]
    return Layout(mode, cands, prob_cols, [file_class_key(c[5:]) for c in prob_cols],
                  "label" if "label" in columns else None,
                  "row_id" if "row_id" in columns else None, extra)


def pool_from_table(name: str, df: pl.DataFrame, layout: Layout, *,
                    declared: list[int | str] | None = None, objective: str = "augrc"
                    ) -> Pool:
    """The validated `Pool` of a table whose columns' parts ``layout`` names.

    Parameters
    ----------
    name : str
        The table's file name, for messages.
    df : polars.DataFrame
        The table.
    layout : Layout
        Which column plays which part (`file_layout`, `certlib.columns.ColumnMap`).
    declared : list, optional
        The declared class set, as `file_class_key` keys it.
    objective : {"augrc", "accuracy"}, default "augrc"
        The objective the pool's weights compute.

    Returns
    -------
    Pool
        The pool.

    Raises
    ------
    CertlibError
        As `load_pool`: one error naming the column and row.

    Examples
    --------
    >>> table = pl.DataFrame({"p": [0, 1], "c": [0.9, 0.8], "q": [0, 0], "d": [0.5, 0.7]})
    >>> layout = Layout("pairs", [("A", "p", "c"), ("B", "q", "d")], [], [], None, None, [])
    >>> pool_from_table("t.csv", table, layout).names
    ('A', 'B')
    """
    mode, cands, prob_cols = layout.mode, layout.candidates, layout.prob_columns
    if df.height == 0:
        raise InvalidValueError(
            f"the pool is empty: {name!r} has a header but no data rows; expected at least "
            "one row"
        )
    row_ids = _row_ids(df, layout.row_id)
    rows = _Rows(row_ids, layout.row_id)
    names = [c[0] for c in cands]

    confs_by_col: dict[str, NDArray[np.float64]] = {}
    for _, _, cc in cands:
        if cc is not None:
            confs_by_col[cc] = _float_column(df[cc], cc, rows, "confidence")

    label_col = layout.label
    label = _canon_series(df[label_col], label_col) if label_col is not None else None
    class_list: list[int | str] | None
    preds: NDArray[np.int64] | NDArray[np.object_]
    derived: DerivedFrom | None

    if mode == "prob":
        suffixes = list(layout.prob_classes)
        if len(set(suffixes)) != len(suffixes):
            raise ColumnError(
                f"probability columns {prob_cols} name the same class twice (e.g. prob_1 "
                "and prob_1.0)"
            )
        if declared is not None and set(declared) != set(suffixes):
            raise ParameterError(
                f"classes={list(declared)} does not match the probability columns "
                f"{prob_cols}"
            )
        class_list = declared if declared is not None else suffixes
        # + 0.0: a cell "-0" is the probability 0 (the same scores, so the same hash)
        P = np.column_stack([_float_column(df[c], c, rows, "probability")
                             for c in prob_cols]) + 0.0
        arg, scores = _prob_scores(P, prob_cols, rows)
        int_mode = all(isinstance(c, int) for c in class_list) and (
            label is None or label.dtype == pl.Int64)
        label_s = label
        if not int_mode:
            class_list = [str(c) for c in class_list]
            label_s = None if label is None else label.cast(pl.String)
        suffix_vals = suffixes if int_mode else [str(s) for s in suffixes]
        pred_vals = np.asarray(suffix_vals, dtype=np.int64 if int_mode else object)[arg]
        confs = np.vstack(scores + [confs_by_col[_column(c[2])] for c in cands[3:]])
        preds = pred_vals
        P.flags.writeable = False
        derived = DerivedFrom(P, tuple(prob_cols), BUILTIN_SCORES, SCORE_RULE)
    else:
        pred_cols = ([_column(cands[0][1])] if mode == "shared"
                     else [_column(c[1]) for c in cands])
        pred_s = [_canon_series(df[c], c) for c in pred_cols]
        for s, c in zip(pred_s, pred_cols):
            null = s.is_null().to_numpy()
            if null.any():
                i = _first(null)
                raise InvalidValueError(
                    f"column {c!r} is empty at {rows(i)}; every row needs a prediction"
                )
        allc = pred_s + ([label] if label is not None else [])
        allc, class_list, int_mode = _unify(allc, declared)
        pred_s = allc[: len(pred_cols)]
        label_s = allc[-1] if label is not None else None
        if class_list is not None:
            for s, c in zip(pred_s, pred_cols):
                _check_in(s, class_list, c, rows, InvalidValueError, "prediction")
        cols = [s.to_numpy() for s in pred_s]
        preds = cols[0] if mode == "shared" else np.vstack(cols)
        if not int_mode:
            preds = preds.astype(object)
        confs = np.vstack([confs_by_col[_column(c[2])] for c in cands])
        derived = None

    if label_s is not None and class_list is not None:
        _check_in(label_s, class_list, _column(label_col), rows, LabelError, "label")
    minus_one = int_mode and (
        (class_list is not None and -1 in class_list)
        or bool((preds == -1).any())
        or (label_s is not None and bool((label_s == -1).any()))
    )
    labels = _labels_array(label_s, int_mode, minus_one)

    extra = {c: tuple(df[c].to_list()) for c in layout.extra}
    if isinstance(row_ids, np.ndarray) and np.array_equal(row_ids, np.arange(df.height)):
        row_ids = None  # the default ids: skip re-checking them
    # in a file only an empty cell is unread; -1 stays a class wherever it occurs
    return Pool.from_arrays(preds, confs, labels=labels, names=names, classes=class_list,
                            row_ids=row_ids, objective=objective, extra=extra,
                            minus_one_unread=not minus_one, derived=derived)
