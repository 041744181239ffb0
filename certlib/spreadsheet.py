"""The one CSV writer of the product, safe to open in a spreadsheet, and its read-back.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and some
start one after a tab or a carriage return) as a formula: a file whose cells come from
a pool file, a batch or an annotator's name could then open a link or start a program
on the reader's machine (OWASP "CSV injection").  Every CSV certlib writes (the labels
of a project, the witness rows of a certificate, an audit's stream file) goes through
`csv_text`, which writes such a text cell with a leading ``'`` (`safe_cell`): a
spreadsheet shows it as text and never runs it.

The rule is reversible: a text cell that starts with ``'`` gets one more, so dropping
one leading ``'`` from every text cell that has one gives back exactly the values
written (`original_cell` for one cell, `read_csv` for a file).  Numbers are written
unchanged, and so is text that is a plain decimal number (``-1``, ``-0.5``): a
spreadsheet reads it as that number, not as a formula, so row ids such as -1 stay the
ids of the pool.

Reading a file back:

* certlib: ``certlib.spreadsheet.read_csv("labels.csv")`` (polars, the original values);
* polars: ``pl.read_csv(f).with_columns(pl.col(pl.String).str.strip_prefix("'"))``;
* pandas: ``pd.read_csv(f).map(lambda v: v[1:] if isinstance(v, str) and
  v.startswith("'") else v)``;
* a spreadsheet shows the cell as text with the ``'`` (or hides it, as a text marker);
  ``=IF(LEFT(A2)="'", MID(A2, 2, LEN(A2)), A2)`` gives the original text.
"""

from __future__ import annotations

import io
import math
import numbers
import os
import re
from pathlib import Path
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["csv_text", "original_cell", "original_frame", "read_csv", "safe_cell"]

#: a text cell starting with one of these is written with a leading ``'`` (a spreadsheet
#: runs the first four as a formula, some after a tab or a CR; ``'`` keeps the rule
#: reversible)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
# text a spreadsheet reads as a number, never as a formula: an optional minus, digits,
# an optional fraction (ASCII only: other digits are text to a spreadsheet)
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?", re.ASCII)


def safe_cell(value: object) -> object:
    """A cell as certlib writes it to a CSV file: text a spreadsheet would run gets a
    leading ``'``.

    Text starting with ``=``, ``+``, ``-``, ``@``, a tab, a carriage return or ``'`` is
    prefixed, except a plain decimal number (``-1``, ``-0.5``), which a spreadsheet reads
    as that number.  Anything that is not text (a number, None) is returned as is.

    Parameters
    ----------
    value : object
        A cell.

    Returns
    -------
    object
        The cell to write; `original_cell` undoes it.

    Examples
    --------
    >>> from certlib.spreadsheet import safe_cell
    >>> print(safe_cell('=HYPERLINK("http://x","y")'))
    '=HYPERLINK("http://x","y")
    >>> safe_cell("@SUM(A1)"), safe_cell("'=1"), safe_cell("ana")
    ("'@SUM(A1)", "''=1", 'ana')
    >>> safe_cell(-1), safe_cell("-1"), safe_cell("-0.5"), safe_cell("-1+1")
    (-1, '-1', '-0.5', "'-1+1")
    """
    if isinstance(value, str) and value.startswith(FORMULA_START) \
            and not _DECIMAL.fullmatch(value):
        return "'" + value
    return value


def original_cell(value: object) -> object:
    """The value a cell of a certlib CSV file held before `safe_cell`: text starting with
    ``'`` loses that one ``'``; anything else is returned as is.

    Parameters
    ----------
    value : object
        A cell as read from the file.

    Returns
    -------
    object
        The value written.

    Examples
    --------
    >>> from certlib.spreadsheet import original_cell, safe_cell
    >>> original_cell("'=cmd|' /C calc'!A0"), original_cell("''=1"), original_cell(-1)
    ("=cmd|' /C calc'!A0", "'=1", -1)
    >>> all(original_cell(safe_cell(v)) == v for v in ["+1+1", "\\t=1", "-1", "x", 2.5])
    True
    """
    if isinstance(value, str) and value.startswith("'"):
        return value[1:]
    return value


def _text(value: object) -> object:
    """A cell for `csv.writer`: numbers as the shortest text that reads back to them
    (NaN as ``NaN``, booleans as ``true``/``false``, as polars writes them), None empty,
    text `safe_cell`."""
    if value is None:
        return ""
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        return "NaN" if math.isnan(x) else repr(x)
    return safe_cell(value if isinstance(value, str) else str(value))


def csv_text(columns: Mapping[str, Sequence[object]] | Iterable[Sequence[object]],
             header: Sequence[str] | None = None) -> str:
    """CSV text (comma-separated, ``\\n`` line ends, RFC 4180 quoting) with every text
    cell, the header's included, made `safe_cell`.

    Parameters
    ----------
    columns : mapping of str to sequence, or iterable of rows
        Column name to its cells (all of one length), or the data rows (then
        ``header`` names the columns).
    header : sequence of str, optional
        The column names, with rows; ignored with a mapping.

    Returns
    -------
    str
        The file's text; `read_csv` reads it back with the values written.

    Raises
    ------
    ValueError
        The columns have different lengths.

    Examples
    --------
    >>> from certlib.spreadsheet import csv_text
    >>> print(csv_text({"row_id": [-1, "=1+1"], "score": [0.5, None]}), end="")
    row_id,score
    -1,0.5
    '=1+1,
    >>> print(csv_text([["-1", "@ana"]], header=["row_id", "annotator"]), end="")
    row_id,annotator
    -1,'@ana
    """
    if isinstance(columns, Mapping):
        names = list(columns)
        cols = [list(columns[c]) for c in names]
        if len({len(c) for c in cols}) > 1:
            raise ValueError("csv_text: the columns have different lengths "
                             + ", ".join(f"{n}={len(c)}" for n, c in zip(names, cols)))
        rows: Iterable[Sequence[object]] = zip(*cols)
    else:
        names, rows = list(header or ()), columns
    lines = [_line([_text(n) for n in names])] if names else []
    lines += [_line([_text(v) for v in row]) for row in rows]
    return "".join(lines)


def _line(cells: Sequence[object]) -> str:
    """One CSV line (RFC 4180 quoting).  Written here rather than by `csv.writer`, which
    leaves a cell holding a lone carriage return unquoted when lines end in ``\n``, so
    a reader splits the row there."""
    out = []
    for cell in cells:
        text = str(cell)
        if any(c in text for c in ',"\r\n'):
            text = '"' + text.replace('"', '""') + '"'
        out.append(text)
    if out == [""]:  # an empty line would be skipped as no row at all
        out = ['""']
    return ",".join(out) + "\n"


def read_csv(source: str | os.PathLike[str] | bytes, *, text: bool = False) -> pl.DataFrame:
    """A CSV file certlib wrote (`csv_text`), read back with the values written: one
    leading ``'`` dropped from every text cell and column name that has one.

    Parameters
    ----------
    source : str, path-like or bytes
        The file's path, or its content as bytes.
    text : bool, default False
        Read every column as text (as a pool file's string row ids are); by default
        polars infers the column types (numbers stay numbers: row id -1 is -1).

    Returns
    -------
    polars.DataFrame
        The table with the original values.

    Examples
    --------
    >>> from certlib.spreadsheet import csv_text, read_csv
    >>> data = csv_text({"row_id": [-1, 2], "annotator": ["=cmd|' /C calc'!A0", "'x"]})
    >>> df = read_csv(data.encode())
    >>> df["row_id"].to_list(), df["annotator"].to_list()
    ([-1, 2], ["=cmd|' /C calc'!A0", "'x"])
    >>> read_csv(data.encode(), text=True)["row_id"].to_list()
    ['-1', '2']
    """
    import polars as pl

    src: io.BytesIO | Path = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
    return original_frame(pl.read_csv(src, infer_schema=not text))


def original_frame(df: pl.DataFrame) -> pl.DataFrame:
    """A table read from a certlib CSV file with its original values: one leading ``'``
    dropped from every text cell and column name that has one (`original_cell`).

    Parameters
    ----------
    df : polars.DataFrame
        The table as a CSV reader gave it.

    Returns
    -------
    polars.DataFrame
        The same table with the values written.

    Examples
    --------
    >>> import polars as pl
    >>> from certlib.spreadsheet import original_frame
    >>> original_frame(pl.DataFrame({"'@who": ["'=1", "ana"], "n": [-1, 2]})).to_dicts()
    [{'@who': '=1', 'n': -1}, {'@who': 'ana', 'n': 2}]
    """
    import polars as pl

    renamed = df.rename({c: str(original_cell(c)) for c in df.columns})
    return renamed.with_columns(pl.col(pl.String).str.strip_prefix("'"))
