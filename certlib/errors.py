"""One exception family for everything a user can get wrong.

Every message names the column, row or parameter at fault and says what was
expected (STYLE.md rule 3).  The command line prints the message and exits 2.
"""

from __future__ import annotations

__all__ = [
    "CertlibError",
    "PoolFileError",
    "ColumnError",
    "InvalidValueError",
    "ParameterError",
    "LabelError",
]


class CertlibError(ValueError):
    """Base class of every error certlib raises on bad input.

    A subclass of `ValueError`, so ``except ValueError`` catches it too; the command
    line prints its message and exits with status 2.

    Examples
    --------
    >>> import certlib
    >>> try:
    ...     certlib.Pool.from_arrays([[0, 1], [1, 0]], [[1, 2], [2, 1]], labels=[0, 7],
    ...                              classes=[0, 1])
    ... except certlib.CertlibError as exc:
    ...     print(type(exc).__name__)
    LabelError
    """


class PoolFileError(CertlibError):
    """The file itself cannot be used: missing, wrong type, too large, unreadable."""


class ColumnError(CertlibError):
    """A column is missing, duplicated, or of the wrong kind."""


class InvalidValueError(CertlibError):
    """A cell holds a value the pool cannot accept (NaN confidence, unknown class, ...)."""


class ParameterError(CertlibError):
    """A function or command-line parameter is out of range."""


class LabelError(CertlibError):
    """A label is missing where one is needed, or is outside the class set."""
