"""SQLite plumbing shared by the label store and the audit store: opening a file with
its tables and schema version (`open_schema`), one connection per operation
(autocommit, foreign keys on, a 30 s busy timeout) and write transactions that take the
lock up front, so reads inside them are current."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["connect", "open_schema", "write"]

#: a store's path, as the stores take it
StorePath = str | os.PathLike[str]


def open_schema(path: StorePath, script: str, table: str, version: int,
                error: Callable[[str], Exception], what: str, kind: str = "schema",
                migrate: Callable[[sqlite3.Connection, int], None] | None = None,
                migratable: Collection[int] = ()) -> None:
    """Create the tables of ``script`` (idempotent: IF NOT EXISTS) in the file at ``path``
    and check its version in ``table``: a new file gets ``version``; a version in
    ``migratable`` is brought up to date by ``migrate(con, old)`` in the same
    transaction; any other version is refused.  Problems raise ``error`` (one message
    naming the file); ``what`` names the store, ``kind`` its version."""
    path = Path(path)
    if path.exists() and path.is_dir():
        raise error(f"store path {str(path)!r} is a directory; expected a file")
    try:
        with connect(path) as con:
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
    except sqlite3.DatabaseError as exc:
        raise error(f"cannot open the {what} {str(path)!r}: {exc}") from None


@contextmanager
def connect(path: StorePath) -> Iterator[sqlite3.Connection]:
    """One connection (autocommit, foreign keys on, a 30 s busy timeout), closed after."""
    con = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("PRAGMA busy_timeout=30000")
        yield con
    finally:
        con.close()


@contextmanager
def write(path: StorePath) -> Iterator[sqlite3.Connection]:
    """One write transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any exception)."""
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
