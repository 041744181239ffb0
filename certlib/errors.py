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
    "StoreAccessError",
    "StoreFullError",
    "StoreReadOnlyError",
    "StoreLockedError",
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


class StoreAccessError(CertlibError):
    """A store file (the label store, the audit store) cannot be read or written now.

    Raised instead of SQLite's own errors by every read and write of
    `certlib.labelling.store.LabelStore` and `certlib.audit.store.AuditStore`.  The
    message names the file, says what happened, that nothing of the action was saved
    and that everything saved before is safe (SQLite rolls the transaction back), and
    what to do.  The subclasses say which failure it was; this class itself is any
    other one (a damaged file, an I/O error of the disk).

    Examples
    --------
    >>> from certlib.errors import CertlibError, StoreAccessError, StoreFullError
    >>> issubclass(StoreFullError, StoreAccessError) and issubclass(StoreAccessError,
    ...                                                             CertlibError)
    True
    """


class StoreFullError(StoreAccessError):
    """The disk, or the file-size limit of the process, has no room for the change.

    Examples
    --------
    >>> from certlib.errors import StoreAccessError, StoreFullError
    >>> issubclass(StoreFullError, StoreAccessError)
    True
    """


class StoreReadOnlyError(StoreAccessError):
    """The store file or its folder cannot be written (permissions, a read-only disk).

    A store that cannot be written opens read-only (``store.read_only``): every read
    works, every write raises this.

    Examples
    --------
    >>> import os, tempfile
    >>> from certlib.errors import StoreReadOnlyError
    >>> from certlib.labelling.store import LabelStore
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "labels.db")
    >>> _ = LabelStore(path)
    >>> store = LabelStore(path, read_only=True)
    >>> store.read_only, store.projects()
    (True, ())
    >>> try:
    ...     store.extend_budget(1, 10, "ana")
    ... except StoreReadOnlyError as exc:
    ...     print("cannot be written" in str(exc), path in str(exc))
    True True
    """


class StoreLockedError(StoreAccessError):
    """Another process held the store's write lock for longer than the busy timeout.

    The timeout is 30 s, or ``$CERTLIB_STORE_TIMEOUT`` seconds when set.

    Examples
    --------
    >>> import os, sqlite3, tempfile
    >>> from certlib.errors import StoreLockedError
    >>> from certlib.labelling.store import LabelStore
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.db")
    >>> store = LabelStore(path)
    >>> other = sqlite3.connect(path, isolation_level=None)
    >>> _ = other.execute("BEGIN IMMEDIATE")  # another process writing, for long
    >>> os.environ["CERTLIB_STORE_TIMEOUT"] = "0.1"
    >>> try:
    ...     store.extend_budget(1, 10, "ana")
    ... except StoreLockedError as exc:
    ...     print("locked")
    locked
    >>> del os.environ["CERTLIB_STORE_TIMEOUT"]; other.close()
    """
