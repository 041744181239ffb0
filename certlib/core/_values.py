"""Rules for single values, defined once for the pool, the file reader, the label store
and the audit: which cells are missing, how a class value or row id is written
canonically, and how a few values become plain JSON.

Two class-value rules exist on purpose, with names that say which is which:

* `class_value` / `class_value_from_text` -- the pool's canonical form (SPEC section 2):
  numpy scalars become Python, ``True``/``1``/``1.0``/``np.int64(1)`` are the integer 1,
  and (``_from_text``) text that reads as a number is that number, so labels read as
  text match numeric predictions.
* `file_class_key` -- the file reader's key for a class-like cell (`certlib.io`): an
  integer exactly representable in float64 becomes that ``int``, every other value its
  text.  `certlib.io._canon_series` is the vectorised (polars) form of the same rule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from fractions import Fraction
from typing import TypeAlias, cast

import numpy as np
import numpy.typing as npt

__all__ = [
    "EXACT_INT_LIMIT",
    "ClassValue",
    "class_value",
    "class_value_from_text",
    "file_class_key",
    "first_true",
    "fraction_text",
    "is_empty_cell",
    "is_exact_int",
    "is_none_or_nan",
    "python_scalar",
]

#: float64 holds every integer of absolute value below 2**53 exactly; an integral float
#: at or beyond it may stand for several integers, so the file reader keeps it as text.
EXACT_INT_LIMIT = 2.0**53
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # integers beyond these are kept as text
_INT_TEXT = re.compile(r"[+-]?[0-9]+")

#: A canonical class value or row id: a Python int (within 64 bits), float or text.
#: Values of other types pass through the rules below unchanged; a pool only holds
#: values read from arrays or files, which are of these three kinds.
ClassValue: TypeAlias = int | float | str


def _int64_or_text(n: int, text: str | None = None) -> int | str:
    """An integer as a class value: itself within 64 bits, beyond them ``text`` (the
    cell as written; default its digits), as the file reader keeps it: polars holds no
    wider integer."""
    return n if INT64_MIN <= n <= INT64_MAX else (str(n) if text is None else text)


def python_scalar(v: object) -> object:
    """A numpy scalar as the Python scalar it holds; anything else unchanged."""
    return v.item() if isinstance(v, np.generic) else v


def is_none_or_nan(v: object) -> bool:
    """None or a floating NaN: an audit stream's unlabelled item."""
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


def is_empty_cell(v: object) -> bool:
    """None, NaN or blank text: a pool cell with no value (unread label, missing prediction)."""
    return is_none_or_nan(v) or (isinstance(v, str) and v.strip() == "")


def class_value(v: object) -> ClassValue:
    """Canonical class value or row id: integral floats become ints, numpy scalars Python.

    >>> class_value(np.float64(1.0)), class_value(True), class_value(1.5), class_value("1")
    (1, 1, 1.5, '1')
    """
    v = python_scalar(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return _int64_or_text(v) if isinstance(v, int) else cast(ClassValue, v)


def class_value_from_text(v: object) -> ClassValue:
    """As `class_value`, and a number written as text ("1", " 1.0 ") is that number.

    >>> class_value_from_text(" 1.0 "), class_value_from_text("0.5"), class_value_from_text("nan")
    (1, 0.5, 'nan')
    >>> class_value_from_text("1_0"), class_value_from_text("100000000000000000000000")
    ('1_0', '100000000000000000000000')
    """
    v = class_value(v)
    if isinstance(v, str):
        t = v.strip()
        if "_" in t:  # float() reads "1_0" as 10; a file's "1_0" is text
            return v
        if _INT_TEXT.fullmatch(t):  # exactly, not through a float (2**60 + 1 stays so)
            return _int64_or_text(int(t), v)
        try:
            f = float(t)
        except ValueError:
            return v
        if np.isfinite(f) and t.lower() not in ("inf", "nan", "infinity"):
            if not f.is_integer():
                return f
            # "1e20": beyond 2**53 a float is not the number written, so keep the text
            # (a 24-digit row id became 99999999999999991611392)
            return int(f) if abs(f) < EXACT_INT_LIMIT else v
    return v


def is_exact_int(f: float) -> bool:
    """A finite integral float below `EXACT_INT_LIMIT` in absolute value."""
    return math.isfinite(f) and f.is_integer() and abs(f) < EXACT_INT_LIMIT


def file_class_key(v: object) -> int | str:
    """The file reader's key of a class-like value: an exact integer is that ``int``
    (``True``, ``1``, ``1.0``, ``" 1 "``), any other value its text (``"1.50"`` stays
    ``"1.50"``, a float its ``repr``).

    >>> file_class_key(" 2.0 "), file_class_key(2.5), file_class_key(" cat "), file_class_key(True)
    (2, '2.5', 'cat', 1)
    >>> file_class_key("1_0")
    '1_0'
    """
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return _int64_or_text(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return int(f) if is_exact_int(f) else repr(f)
    s = str(v).strip()
    if "_" in s:  # float() reads "1_0" as 10
        return s
    if _INT_TEXT.fullmatch(s):  # exactly, as `class_value_from_text`
        return _int64_or_text(int(s), s)
    try:
        f = float(s)
    except ValueError:
        return s
    return int(f) if is_exact_int(f) else s


def first_text(values: Iterable[object]) -> int:
    """The position of the first value that stays text when read as a number ("abc",
    not "1"): the cell that made a file's column text (0 when there is none).

    >>> first_text(["1", " 0 ", "abc", "x"]), first_text([1, 2])
    (2, 0)
    """
    return next((i for i, v in enumerate(values)
                 if isinstance(class_value_from_text(v), str)), 0)


def first_true(mask: npt.ArrayLike) -> int | None:
    """Position of the first True in a boolean array, or None when there is none."""
    hits = np.flatnonzero(np.asarray(mask))
    return int(hits[0]) if hits.size else None


def fraction_text(f: Fraction) -> str:
    """An exact fraction as JSON-safe text: ``"3/8"``, or ``"2"`` for an integer.

    >>> fraction_text(Fraction(6, 16)), fraction_text(Fraction(4, 2))
    ('3/8', '2')
    """
    return f"{f.numerator}/{f.denominator}" if f.denominator != 1 else str(f.numerator)
