"""SQLite plumbing shared by the label store and the audit store: opening a file with
its tables and schema version (`open_schema`), one connection per operation
(autocommit, foreign keys on, a busy timeout) and write transactions that take the
lock up front, so reads inside them are current.

No sqlite3 error leaves this module: a full disk, a file or folder that cannot be
written and a lock held past the busy timeout become `StoreFullError`,
`StoreReadOnlyError` and `StoreLockedError` (any other failure `StoreAccessError`),
each one message naming the file (`access_error`).  A store that cannot be written
opens read-only (`open_schema` returns its `Mode`): reads go through SQLite's
``mode=ro``, or ``immutable=1`` when the folder cannot be written either (SQLite then
cannot create the ``-shm`` file a WAL reader needs), and `write` refuses at once.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from ..errors import (ParameterError, StoreAccessError, StoreFullError,
                      StoreLockedError, StoreReadOnlyError)

__all__ = ["Mode", "access_error", "busy_timeout", "connect", "open_schema", "read_only_error",
           "write"]

#: a store's path, as the stores take it
StorePath = str | os.PathLike[str]
#: how a store is opened: read-write; read-only; read-only without the WAL's -shm file
Mode = Literal["rw", "ro", "immutable"]

#: seconds a write waits for another process's lock (``$CERTLIB_STORE_TIMEOUT``)
TIMEOUT_VAR = "CERTLIB_STORE_TIMEOUT"
DEFAULT_TIMEOUT = 30.0

# SQLite's primary result codes (the low byte of an extended code)
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = \
    5, 6, 8, 10, 11, 13, 14, 26
# a file this close to the file-size limit, or a disk with less free, has no room: an
# I/O error then is the limit or the disk (EFBIG is an I/O error to SQLite, not "full")
_ROOM = 1 << 20


def busy_timeout() -> float:
    """Seconds a store operation waits for another process's lock before it gives up:
    ``$CERTLIB_STORE_TIMEOUT`` when set, else 30.

    Returns
    -------
    float
        The timeout.

    Raises
    ------
    ParameterError
        The variable is set to something other than a positive number.
    """
    text = os.environ.get(TIMEOUT_VAR, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ParameterError(f"{TIMEOUT_VAR}={text!r}: expected a positive number of seconds "
                             f"(default {DEFAULT_TIMEOUT:g})")
    return value


def _code(exc: sqlite3.Error) -> int | None:
    """SQLite's primary result code of ``exc`` (Python 3.11+ carries it; 3.10 only has
    the message, read for the codes this module tells apart)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(exc).lower()
    for needle, c in (("disk is full", _FULL), ("locked", _BUSY), ("readonly", _READONLY),
                      ("read-only", _READONLY), ("disk i/o", _IOERR),
                      ("unable to open", _CANTOPEN), ("not a database", _NOTADB),
                      ("malformed", _CORRUPT)):
        if needle in text:
            return c
    return None


def _files(path: Path) -> list[Path]:
    return [path] + [path.with_name(path.name + s) for s in ("-wal", "-journal", "-shm")]


def _no_room(path: Path) -> bool:
    """Whether the file-size limit or the disk leaves no room beside ``path``."""
    try:
        import resource

        soft, unlimited = resource.getrlimit(resource.RLIMIT_FSIZE)[0], resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):  # no resource module (Windows)
        soft = unlimited = -1
    if soft not in (-1, unlimited):
        for f in _files(path):
            try:
                if f.stat().st_size + _ROOM > soft:
                    return True
            except OSError:
                continue
    try:
        st = os.statvfs(path.absolute().parent)
    except (AttributeError, OSError):
        return False
    return st.f_bavail * st.f_frsize < _ROOM


def _saved(writing: bool) -> str:
    return ("Nothing of this action was saved (SQLite commits a transaction whole or not "
            "at all), and everything saved before (every label, every batch) is safe."
            if writing else
            "Nothing was changed: everything saved before (every label, every batch) is "
            "safe.")


def read_only_error(path: StorePath, what: str, *, writing: bool = True,
                    reason: str = "") -> StoreReadOnlyError:
    """The message of a store that cannot be written (`StoreReadOnlyError`); with a
    ``reason``, of one that cannot even be opened read-only (it would need a write)."""
    return StoreReadOnlyError(
        f"The {what} {str(path)!r} cannot be written: "
        + (reason or "the file or its folder is read-only (file permissions, or a "
                     "read-only disk)") + ". "
        + _saved(writing)
        + ("" if reason else " Reading works: projects, events, records and downloads.")
        + " To write, make the file and its folder writable, or work on a writable copy "
        "(CERTLIB_STORE, --store), and open the store again.")


def access_error(exc: sqlite3.Error, path: StorePath, what: str, *,
                 writing: bool) -> StoreAccessError:
    """The `StoreAccessError` (the subclass that says what happened) for an sqlite3 error
    on the store at ``path``: one message naming the file, saying what happened, that
    nothing of the action was saved and everything before is safe, and what to do.

    Parameters
    ----------
    exc : sqlite3.Error
        What SQLite raised.
    path : str or path-like
        The store's file.
    what : str
        What the message calls the store ("label store", "audit store").
    writing : bool
        Whether the action was a write (the message says nothing of it was saved).

    Returns
    -------
    StoreAccessError
        To raise (``from None``: the message holds SQLite's own words).
    """
    p = Path(path)
    code = _code(exc)
    said = f"(SQLite: {exc})"
    if code == _FULL or (code == _IOERR and _no_room(p)):
        return StoreFullError(
            f"The {what} {str(p)!r} is full: the disk, or the file-size limit of this "
            f"process, has no room for the change {said}. {_saved(writing)} Free some disk "
            "space (or raise the limit, or move the store: CERTLIB_STORE, --store) and try "
            "again.")
    if code in (_BUSY, _LOCKED):
        return StoreLockedError(
            f"The {what} {str(p)!r} is locked: another process held its write lock for "
            f"more than {busy_timeout():g} s {said}. {_saved(writing)} Wait until the other "
            "process (another labelling tab's server, a command-line export, a tool that "
            "holds the file open) has finished, then try again.")
    if code == _READONLY or (code == _CANTOPEN and p.exists()
                             and not _writable(p)):
        return read_only_error(p, what, writing=writing)
    if code in (_CORRUPT, _NOTADB):
        return StoreAccessError(
            f"The {what} {str(p)!r} cannot be read: it is damaged or not an SQLite file "
            f"{said}. {_saved(writing)} Restore it from a copy, or point CERTLIB_STORE "
            "(--store) at another file.")
    return StoreAccessError(
        f"The {what} {str(p)!r} could not be " + ("written" if writing else "read")
        + f" {said}. {_saved(writing)} Check the disk and the file, then try again.")


def _writable(path: Path) -> bool:
    """Whether this process may write the store at ``path`` (the file, if it exists, and
    its folder, where SQLite creates the -wal, -shm and -journal files)."""
    folder = path.absolute().parent
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _open(path: StorePath, mode: Mode) -> sqlite3.Connection:
    timeout = busy_timeout()
    if mode == "rw":
        con = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    else:
        uri = Path(path).absolute().as_uri() + ("?mode=ro" if mode == "ro" else
                                                "?mode=ro&immutable=1")
        con = sqlite3.connect(uri, timeout=timeout, isolation_level=None, uri=True)
    try:
        con.execute("PRAGMA foreign_keys=ON")
        con.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def _raw(path: StorePath, mode: Mode) -> Iterator[sqlite3.Connection]:
    con = _open(path, mode)
    try:
        yield con
    finally:
        con.close()


def open_schema(path: StorePath, script: str, table: str, version: int,
                error: Callable[[str], Exception], what: str, kind: str = "schema",
                migrate: Callable[[sqlite3.Connection, int], None] | None = None,
                migratable: Collection[int] = (), read_only: bool = False) -> Mode:
    """Create the tables of ``script`` (idempotent: IF NOT EXISTS) in the file at ``path``
    and check its version in ``table``: a new file gets ``version``; a version in
    ``migratable`` is brought up to date by ``migrate(con, old)`` in the same
    transaction; any other version is refused.  A file that cannot be written (or any,
    with ``read_only``) is only checked, and opens read-only.  Problems raise ``error``
    (one message naming the file) or a `StoreAccessError`; ``what`` names the store,
    ``kind`` its version.  Returns how to open the store's connections."""
    path = Path(path)
    folder = path.absolute().parent
    try:
        path.stat()
    except FileNotFoundError:
        pass
    except OSError as exc:  # a folder on the way this process may not enter
        raise error(f"cannot open the {what} {str(path)!r}: {exc.strerror}") from None
    if path.is_dir():
        raise error(f"store path {str(path)!r} is a directory; expected a file")
    if not folder.is_dir():
        raise error(f"cannot open the {what} {str(path)!r}: the folder {str(folder)!r} does "
                    "not exist")
    if not path.exists() and not _writable(path):
        raise read_only_error(path, what, writing=False, reason=(
            f"it does not exist, and its folder {str(folder)!r} is read-only, so it cannot "
            "be created"))
    if not read_only and _writable(path):
        try:
            _create(path, script, table, version, error, what, kind, migrate, migratable)
            return "rw"
        except StoreReadOnlyError:
            # writable by its permissions yet refused (an ACL, a medium access() misses)
            if not path.exists():
                raise
    mode = _read_mode(path, what, error)
    _check_version(path, mode, table, version, error, what, kind, migratable)
    return mode


def _create(path: Path, script: str, table: str, version: int,
            error: Callable[[str], Exception], what: str, kind: str,
            migrate: Callable[[sqlite3.Connection, int], None] | None,
            migratable: Collection[int]) -> None:
    try:
        with _raw(path, "rw") as con:
            con.execute("PRAGMA journal_mode=WAL")  # persistent: readers never block the writer
            con.executescript(script)
            con.execute("BEGIN IMMEDIATE")
            rows = con.execute(f"SELECT version FROM {table}").fetchall()
            if not rows:
                con.execute(f"INSERT INTO {table} VALUES (?)", (version,))
            elif rows[0][0] in migratable and migrate is not None:
                migrate(con, rows[0][0])
            elif rows[0][0] != version:
                con.execute("ROLLBACK")
                raise error(f"store {str(path)!r} has {kind} version {rows[0][0]}; this "
                            f"certlib reads version {version}")
            con.execute("COMMIT")
    except sqlite3.Error as exc:
        raise _open_error(exc, path, what, error) from None


def _open_error(exc: sqlite3.Error, path: Path, what: str,
                error: Callable[[str], Exception]) -> Exception:
    """A store failure as its `StoreAccessError`; a file SQLite cannot use at all (not a
    database, ...) as the store's own ``error``, as before any table was read."""
    failure = access_error(exc, path, what, writing=True)
    if type(failure) is StoreAccessError:
        return error(f"cannot open the {what} {str(path)!r}: {exc}")
    return failure


def _read_mode(path: Path, what: str, error: Callable[[str], Exception]) -> Mode:
    """``"ro"``; ``"immutable"`` when SQLite cannot create the -shm file a WAL reader
    needs (a read-only folder) and no -wal file holds changes the main file lacks
    (immutable reads would not see them)."""
    try:
        with _raw(path, "ro") as con:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return "ro"
    except sqlite3.Error as exc:
        if _code(exc) not in (_READONLY, _CANTOPEN):
            raise _open_error(exc, path, what, error) from None
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise read_only_error(path, what, writing=False, reason=(
            f"its folder is read-only, and its {wal.name!r} file holds changes not yet in "
            "the main file, which SQLite cannot read without creating a -shm file there"))
    try:
        with _raw(path, "immutable") as con:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise _open_error(exc, path, what, error) from None
    return "immutable"


def _check_version(path: Path, mode: Mode, table: str, version: int,
                   error: Callable[[str], Exception], what: str, kind: str,
                   migratable: Collection[int]) -> None:
    """The checks of `open_schema` on a store opened read-only: its tables exist and its
    version is this certlib's (an older one would need the write that migrates it)."""
    try:
        with _raw(path, mode) as con:
            named = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                "name = ?", (table,)).fetchone()
            rows = con.execute(f"SELECT version FROM {table}").fetchall() if named else []
    except sqlite3.Error as exc:
        raise _open_error(exc, path, what, error) from None
    if not rows:
        raise read_only_error(path, what, writing=False, reason=(
            f"the file holds no {what} yet and cannot be written, so its tables cannot be "
            "created"))
    if rows[0][0] in migratable:
        raise read_only_error(path, what, writing=False, reason=(
            f"it has {kind} version {rows[0][0]}, which this certlib brings up to version "
            f"{version} when it opens the file, and that needs a write; open it once where "
            "it can be written"))
    if rows[0][0] != version:
        raise error(f"store {str(path)!r} has {kind} version {rows[0][0]}; this certlib "
                    f"reads version {version}")


@contextmanager
def connect(path: StorePath, mode: Mode = "rw", *, what: str = "store",
            writing: bool = False) -> Iterator[sqlite3.Connection]:
    """One connection (autocommit, foreign keys on, the busy timeout), closed after;
    an sqlite3 error inside becomes its `StoreAccessError` (`access_error`).  ``mode``
    as `open_schema` returned it; ``what`` names the store in messages; ``writing``
    says the caller writes."""
    try:
        con = _open(path, mode)
    except sqlite3.Error as exc:
        raise access_error(exc, path, what, writing=writing) from None
    try:
        yield con
    except sqlite3.Error as exc:
        raise access_error(exc, path, what, writing=writing) from None
    finally:
        con.close()


@contextmanager
def write(path: StorePath, mode: Mode = "rw", *,
          what: str = "store") -> Iterator[sqlite3.Connection]:
    """One write transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any exception,
    a failed COMMIT included); a read-only store refuses before anything is opened."""
    if mode != "rw":
        raise read_only_error(path, what)
    with connect(path, mode, what=what, writing=True) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise


def _rollback(con: sqlite3.Connection) -> None:
    """Roll back what is left of the transaction: SQLite has already rolled it back
    after some errors (a full disk, an I/O error), and closing the connection rolls back
    anything still open, so a failure here changes nothing and the first error is the
    one to report."""
    if con.in_transaction:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass

