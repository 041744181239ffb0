"""Reading audit streams from CSV/Parquet (polars lives only at this edge)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import CertlibError, ColumnError, InvalidValueError, PoolFileError

__all__ = ["StreamColumns", "read_stream", "REQUIRED"]

REQUIRED = ("pred_incumbent", "pred_candidate")
MAX_BYTES = 2 * 1024 ** 3


@dataclass(frozen=True, eq=False)
class StreamColumns:
    """Raw columns of a stream file as numpy arrays (label entries None when empty)."""

    incumbent: np.ndarray
    candidate: np.ndarray
    labels: np.ndarray | None
    judge: np.ndarray | None
    slices: np.ndarray | None


def _col(df, name):
    s = df[name]
    if s.dtype.is_numeric():
        return s.to_numpy()
    return np.asarray(s.to_list(), dtype=object)


def read_stream(path, judge: str | None = None, slices: str | None = None,
                name: str | None = None) -> StreamColumns:
    """The columns of a stream file; errors call it ``name`` when given (an upload's
    name, not the temporary file it was saved to), else its path."""
    import polars as pl

    from ..io import read_csv_bytes

    p = Path(path)
    shown, short = (repr(name),) * 2 if name is not None else (str(p), repr(p.name))
    if not p.exists():
        raise PoolFileError(f"stream file {shown} does not exist")
    if p.stat().st_size > MAX_BYTES:
        raise PoolFileError(f"stream file {shown} is larger than {MAX_BYTES} bytes")
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv":
            df = read_csv_bytes(name or p.name, p.read_bytes(), "stream file")
        elif suffix in (".parquet", ".pq"):
            df = pl.read_parquet(p)
        else:
            raise PoolFileError(
                f"stream file {shown}: expected a .csv or .parquet file, got '{suffix}'")
    except CertlibError:  # the reader's own message names the line
        raise
    except Exception as exc:  # polars raises several types for unreadable files
        raise PoolFileError(f"stream file {shown} cannot be read ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
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
                         None if slices is None else np.asarray(df[slices].to_list(), dtype=object))
