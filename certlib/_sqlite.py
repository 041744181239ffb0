"""SQLite plumbing shared by the label store and the audit store: one connection per
operation (autocommit, foreign keys on, a 30 s busy timeout) and write transactions that
take the lock up front, so reads inside them are current."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

__all__ = ["connect", "write"]


@contextmanager
def connect(path):
    con = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("PRAGMA busy_timeout=30000")
        yield con
    finally:
        con.close()


@contextmanager
def write(path):
    """One write transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any exception)."""
    with connect(path) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
