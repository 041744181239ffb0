"""A team on one label store: who leads and who annotates (`Roles`), which projects an
annotator is assigned (`TeamStore.assign`), and which rows are handed out to whom
(`TeamStore.hold`, `hand_out`), so several annotators label one project without racing
for the same row.

Hand-out.  Each annotator *holds* the row on their screen and the rows their screen may
show next (one per answer, `lookahead_for`); the policy's next row for anyone else passes
over every row held by another annotator (`hand_out`).  A hold lasts `HOLD_SECONDS` and is
renewed whenever the annotator's page is drawn; a holder who leaves (a closed tab, a lost
connection) frees their rows when the hold runs out, and `TeamStore.release` frees them
at once (signing out).  Holds are not evidence: the label events are
(`certlib.labelling.store`), and a label is valid for the certificate whichever order the
rows were read in (the bounds hold for every completion of the unread labels, paper
section 3), so the certificate and the stopping test use every annotator's labels.

The tables live in the label store's SQLite file beside the events, with their own
schema version: a label store of any version keeps working without them.

    team = TeamStore("labels.db")
    team.assign(pid, ["ana@example.org", "bob@example.org"], by="lead@example.org")
    held = team.held_by_others(pid, "ana@example.org")
    row = hand_out(progress, held, team.current(pid, "ana@example.org"))
    team.hold(pid, "ana@example.org", pool.row_ids[row], ahead)
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from . import _sqlite
from ..core._values import ClassValue, python_scalar
from ..errors import CertlibError, ParameterError
from .events import utc_now
from .progress import SKIP, Lookahead, Progress, guarantee
from .session import Session

__all__ = ["HOLD_SECONDS", "ROLES", "Roles", "TeamStore", "TeamStoreError", "hand_out",
           "lookahead_for"]

HOLD_SECONDS = 300.0
"""How long a row stays with an annotator whose page has not been drawn since (seconds):
long enough to read a hard row, short enough that rows left on a closed tab come back
within minutes."""

ROLES = ("lead", "annotator")

_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS team_schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS assignments (
    project_id INTEGER NOT NULL,
    email      TEXT NOT NULL,        -- lower case
    by         TEXT NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (project_id, email)
);
CREATE TABLE IF NOT EXISTS team_projects (
    project_id       INTEGER PRIMARY KEY,
    pool_ref         TEXT,           -- where the dashboard finds the project's pool file
    show_predictions INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS holds (
    project_id INTEGER NOT NULL,
    row_id     TEXT NOT NULL,        -- JSON scalar, as the label events write it
    holder     TEXT NOT NULL,        -- lower case
    current    INTEGER NOT NULL,     -- 1: the row on the holder's screen; 0: one ahead
    until      REAL NOT NULL,        -- seconds since the epoch, the server's clock
    PRIMARY KEY (project_id, row_id)
);
"""


_WHAT = "team tables of the label store"


class TeamStoreError(CertlibError):
    """The team tables of a label store refuse an operation (the message says why)."""


def _email(value: object, what: str = "e-mail") -> str:
    text = str(value).strip().lower()
    if "@" not in text or text.startswith("@") or text.endswith("@") or " " in text:
        raise ParameterError(f"{what} {value!r} is not an e-mail address")
    return text


@dataclass(frozen=True)
class Roles:
    """Who leads and who annotates, by e-mail (compared without case).

    A lead sees every page, creates projects and assigns annotators; an annotator sees the
    Label page for the projects assigned to them.  Anyone signed in but in neither list
    has no role and sees nothing.

    Parameters
    ----------
    leads : frozenset of str
        The leads' e-mail addresses, lower case.
    annotators : frozenset of str
        The annotators' e-mail addresses, lower case (a lead listed here too is a lead).

    Examples
    --------
    >>> roles = Roles.from_mapping({"leads": ["Lea@example.org"],
    ...                             "annotators": ["ana@example.org"]})
    >>> roles.role_of("lea@EXAMPLE.org"), roles.role_of("ana@example.org")
    ('lead', 'annotator')
    >>> print(roles.role_of("mallory@example.org"))
    None
    """

    leads: frozenset[str]
    annotators: frozenset[str]

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> Roles:
        """Roles from a mapping with lists ``leads`` and ``annotators`` (the
        ``[certlib.roles]`` table of ``.streamlit/secrets.toml``).

        Parameters
        ----------
        mapping : mapping
            ``{"leads": [...], "annotators": [...]}``; either list may be missing.

        Returns
        -------
        Roles
            The lists, lower case.

        Raises
        ------
        ParameterError
            A key other than ``leads`` and ``annotators``, a value that is not a list of
            text, or an entry that is not an e-mail address (named).

        Examples
        --------
        >>> Roles.from_mapping({"leads": ["a@b.org"]}).leads
        frozenset({'a@b.org'})
        >>> Roles.from_mapping({"lead": ["a@b.org"]})
        Traceback (most recent call last):
        ...
        certlib.errors.ParameterError: roles: unknown key 'lead'; expected 'leads' and 'annotators'
        """
        unknown = sorted(set(mapping) - {"leads", "annotators"})
        if unknown:
            raise ParameterError(f"roles: unknown key {unknown[0]!r}; expected 'leads' and "
                                 "'annotators'")
        out: dict[str, frozenset[str]] = {}
        for key in ("leads", "annotators"):
            values = mapping.get(key, [])
            if isinstance(values, str) or not isinstance(values, Iterable):
                raise ParameterError(f"roles: {key} must be a list of e-mail addresses, "
                                     f"not {values!r}")
            out[key] = frozenset(_email(v, f"roles: {key} entry") for v in values)
        return cls(out["leads"], out["annotators"])

    def role_of(self, email: object) -> str | None:
        """``"lead"``, ``"annotator"`` or None (neither list) for an e-mail address.

        Parameters
        ----------
        email : str
            The signed-in user's e-mail.

        Returns
        -------
        str or None
            The role; a lead listed as an annotator too is a lead.

        Examples
        --------
        >>> Roles(frozenset({"a@b.org"}), frozenset()).role_of(" A@B.org ")
        'lead'
        """
        text = str(email).strip().lower()
        if text in self.leads:
            return "lead"
        return "annotator" if text in self.annotators else None


def _rid(row_id: object) -> str:
    return json.dumps(python_scalar(row_id))


def _row(text: str) -> ClassValue:
    value: ClassValue = json.loads(text)
    return value


class TeamStore:
    """Assignments and row holds in a label store's SQLite file (module docstring).

    Parameters
    ----------
    path : str or path-like
        The label store's file (`certlib.labelling.store.LabelStore.path`).
    clock : callable, default time.time
        Seconds since the epoch: when holds run out (tests pass their own).
    read_only : bool, default False
        Only read (as a file that cannot be written is anyway).

    Raises
    ------
    TeamStoreError
        The file cannot hold the team tables (not an SQLite file, an unknown version).
    StoreAccessError
        The file cannot be read, or a read-only file has no team tables yet.

    Attributes
    ----------
    read_only : bool
        The store cannot be written: assignments and holds are read, never changed (a
        write raises `certlib.errors.StoreReadOnlyError`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "labels.db"
    >>> now = [1000.0]
    >>> team = TeamStore(path, clock=lambda: now[0])
    >>> team.assign(1, ["ana@example.org"], by="lea@example.org")
    >>> team.assigned(1)
    ('ana@example.org',)
    >>> team.hold(1, "ana@example.org", 7, ahead=[8, 9])
    True
    >>> sorted(team.held_by_others(1, "bob@example.org"))
    [7, 8, 9]
    >>> now[0] += HOLD_SECONDS + 1              # ana's page was not drawn since
    >>> team.held_by_others(1, "bob@example.org")
    frozenset()
    """

    def __init__(self, path: str | os.PathLike[str], *,
                 clock: Callable[[], float] = time.time, read_only: bool = False) -> None:
        self.path = path
        self._clock = clock
        self._mode = _sqlite.open_schema(path, _SCHEMA, "team_schema_version", _VERSION,
                                         TeamStoreError, _WHAT, read_only=read_only)
        #: the store cannot be written: assignments and holds are read, never changed
        self.read_only = self._mode != "rw"

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return _sqlite.connect(self.path, self._mode, what=_WHAT)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return _sqlite.write(self.path, self._mode, what=_WHAT)

    # ----------------------------------------------------------- assignments
    def assign(self, project_id: int, emails: Iterable[str], *, by: str,
               pool_ref: str | None = None) -> None:
        """Make ``emails`` the annotators assigned to a project (replacing the list).

        Parameters
        ----------
        project_id : int
            The project.
        emails : iterable of str
            Its annotators' e-mail addresses.
        by : str
            Who assigned them (a lead's e-mail).
        pool_ref : str or None, default None
            Where the dashboard finds the project's pool file (kept when None).

        Raises
        ------
        ParameterError
            An entry that is not an e-mail address.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> team.assign(3, ["Ana@example.org", "bob@example.org"], by="lea@example.org")
        >>> team.projects_of("ana@example.org")
        (3,)
        """
        wanted = sorted({_email(e) for e in emails})
        with self._write() as con:
            con.execute("DELETE FROM assignments WHERE project_id = ?", (project_id,))
            con.executemany("INSERT INTO assignments VALUES (?, ?, ?, ?)",
                            [(project_id, e, str(by), utc_now()) for e in wanted])
            con.execute("INSERT OR IGNORE INTO team_projects (project_id) VALUES (?)",
                        (project_id,))
            if pool_ref is not None:
                con.execute("UPDATE team_projects SET pool_ref = ? WHERE project_id = ?",
                            (pool_ref, project_id))

    def pool_ref(self, project_id: int) -> str | None:
        """Where the dashboard finds a project's pool file, as its lead assigned it.

        Parameters
        ----------
        project_id : int
            The project.

        Returns
        -------
        str or None
            The reference given to `assign` (None: never given).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> team.assign(1, [], by="lea@example.org", pool_ref="sample:demo")
        >>> team.pool_ref(1), team.pool_ref(2)
        ('sample:demo', None)
        """
        with self._read() as con:
            row = con.execute("SELECT pool_ref FROM team_projects WHERE project_id = ?",
                              (project_id,)).fetchone()
        return None if row is None else row[0]

    def shows_predictions(self, project_id: int) -> bool:
        """Whether the project's annotators see the candidates' predictions and
        confidences beside each row (off unless a lead turned it on: an annotator who
        sees a model's answer tends to give it, which biases the labels toward that
        model, the very comparison the labels decide).

        Parameters
        ----------
        project_id : int
            The project.

        Returns
        -------
        bool
            True when a lead turned them on (`show_predictions`).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> team.shows_predictions(1)
        False
        >>> team.show_predictions(1, True); team.shows_predictions(1)
        True
        """
        with self._read() as con:
            row = con.execute("SELECT show_predictions FROM team_projects WHERE "
                              "project_id = ?", (project_id,)).fetchone()
        return bool(row and row[0])

    def show_predictions(self, project_id: int, show: bool) -> None:
        """Show the candidates' predictions to the project's annotators, or hide them
        (`shows_predictions`).

        Parameters
        ----------
        project_id : int
            The project.
        show : bool
            Show them.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> team.show_predictions(1, False); team.shows_predictions(1)
        False
        """
        with self._write() as con:
            con.execute("INSERT OR IGNORE INTO team_projects (project_id) VALUES (?)",
                        (project_id,))
            con.execute("UPDATE team_projects SET show_predictions = ? WHERE project_id = ?",
                        (int(bool(show)), project_id))

    def assigned(self, project_id: int) -> tuple[str, ...]:
        """The e-mail addresses assigned to a project, sorted.

        Parameters
        ----------
        project_id : int
            The project.

        Returns
        -------
        tuple of str
            Lower case, sorted.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db").assigned(1)
        ()
        """
        with self._read() as con:
            rows = con.execute("SELECT email FROM assignments WHERE project_id = ? "
                               "ORDER BY email", (project_id,)).fetchall()
        return tuple(e for (e,) in rows)

    def projects_of(self, email: str) -> tuple[int, ...]:
        """The projects an annotator is assigned, in id order.

        Parameters
        ----------
        email : str
            The annotator's e-mail (compared without case).

        Returns
        -------
        tuple of int
            Project ids.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db").projects_of("a@b.org")
        ()
        """
        with self._read() as con:
            rows = con.execute("SELECT project_id FROM assignments WHERE email = ? "
                               "ORDER BY project_id", (str(email).strip().lower(),)).fetchall()
        return tuple(p for (p,) in rows)

    # ----------------------------------------------------------- holds
    def hold(self, project_id: int, holder: str, current: object,
             ahead: Iterable[object] = (), *, seconds: float = HOLD_SECONDS) -> bool:
        """Hold the row on ``holder``'s screen and the rows it may show next, for
        ``seconds`` from now, in place of the holder's earlier holds on the project.

        Parameters
        ----------
        project_id : int
            The project.
        holder : str
            The annotator (their e-mail or name; compared without case).
        current : row id
            The row on the holder's screen.
        ahead : iterable of row ids, default ()
            Rows the screen may show after an answer; those another annotator holds are
            left to them.
        seconds : float, default HOLD_SECONDS
            How long the holds last unless renewed.

        Returns
        -------
        bool
            False when another annotator holds ``current`` (then the holder's earlier
            holds stay as they were: the caller hands out another row).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> team.hold(1, "ana", 5, ahead=[6]), team.hold(1, "bob", 7, ahead=[5, 6, 8])
        (True, True)
        >>> sorted(team.held_by_others(1, "ana"))   # ana's rows were left to her
        [7, 8]
        >>> team.hold(1, "bob", 6)               # one of ana's rows ahead
        False
        >>> team.current(1, "bob")               # bob keeps his row
        7
        """
        who = str(holder).strip().lower()
        now = self._clock()
        cur = _rid(current)
        with self._write() as con:
            con.execute("DELETE FROM holds WHERE until <= ?", (now,))
            taken = {r for (r,) in con.execute(
                "SELECT row_id FROM holds WHERE project_id = ? AND holder != ?",
                (project_id, who))}
            if cur in taken:
                return False
            con.execute("DELETE FROM holds WHERE project_id = ? AND holder = ?",
                        (project_id, who))
            rows = [(project_id, cur, who, 1, now + seconds)]
            seen = {cur}
            for r in map(_rid, ahead):
                if r not in taken and r not in seen:
                    seen.add(r)
                    rows.append((project_id, r, who, 0, now + seconds))
            con.executemany("INSERT INTO holds VALUES (?, ?, ?, ?, ?)", rows)
        return True

    def current(self, project_id: int, holder: str) -> ClassValue | None:
        """The row on ``holder``'s screen when their hold has not run out, else None.

        Parameters
        ----------
        project_id : int
            The project.
        holder : str
            The annotator.

        Returns
        -------
        row id or None
            As the pool gives it.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db").current(1, "ana") is None
        True
        """
        with self._read() as con:
            row = con.execute("SELECT row_id FROM holds WHERE project_id = ? AND holder = ? "
                              "AND current = 1 AND until > ?",
                              (project_id, str(holder).strip().lower(),
                               self._clock())).fetchone()
        return None if row is None else _row(row[0])

    def held_by_others(self, project_id: int, holder: str) -> frozenset[ClassValue]:
        """Row ids held by annotators other than ``holder`` (holds not run out).

        Parameters
        ----------
        project_id : int
            The project.
        holder : str
            The annotator asking.

        Returns
        -------
        frozenset of row ids
            As the pool gives them.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> _ = team.hold(1, "ana", "r1")
        >>> team.held_by_others(1, "ana"), team.held_by_others(1, "bob")
        (frozenset(), frozenset({'r1'}))
        """
        with self._read() as con:
            rows = con.execute("SELECT row_id FROM holds WHERE project_id = ? AND holder != ? "
                               "AND until > ?", (project_id, str(holder).strip().lower(),
                                                 self._clock())).fetchall()
        return frozenset(_row(r) for (r,) in rows)

    def holders(self, project_id: int) -> dict[str, int]:
        """Who holds rows of a project now, and how many.

        Parameters
        ----------
        project_id : int
            The project.

        Returns
        -------
        dict
            Holder -> rows held (their screen's row and the rows ahead).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> _ = team.hold(1, "ana", 1, ahead=[2, 3])
        >>> team.holders(1)
        {'ana': 3}
        """
        with self._read() as con:
            rows = con.execute("SELECT holder, COUNT(*) FROM holds WHERE project_id = ? AND "
                               "until > ? GROUP BY holder ORDER BY holder",
                               (project_id, self._clock())).fetchall()
        return {h: n for h, n in rows}

    def release(self, project_id: int | None, holder: str) -> None:
        """Free ``holder``'s rows at once (signing out; leaving a project).

        Parameters
        ----------
        project_id : int or None
            The project, or None for every project.
        holder : str
            The annotator.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> team = TeamStore(pathlib.Path(tempfile.mkdtemp()) / "t.db")
        >>> _ = team.hold(1, "ana", 1)
        >>> team.release(None, "ana"); team.holders(1)
        {}
        """
        who = str(holder).strip().lower()
        with self._write() as con:
            if project_id is None:
                con.execute("DELETE FROM holds WHERE holder = ?", (who,))
            else:
                con.execute("DELETE FROM holds WHERE project_id = ? AND holder = ?",
                            (project_id, who))


# ------------------------------------------------------------------ hand-out
def _next(s: Session, skip: Collection[int], held: Collection[int]) -> int | None:
    """The policy's next row passing over ``skip`` and ``held``; a skipped row comes back
    when only skipped (or held) rows are left, a held row never."""
    if s.done:
        return None
    r = s.next_row(skip=sorted(set(skip) | set(held)))
    if r is None or r not in held:
        return r
    r = s.next_row(skip=sorted(held))
    return None if r is None or r in held else r


def _positions(prog: Progress, row_ids: Iterable[object]) -> set[int]:
    pool = prog.session.pool
    out = set()
    for r in row_ids:
        try:
            p = pool.position(r)
        except (CertlibError, KeyError, ValueError):
            continue  # a row id of another pool (a stale hold): nothing to pass over
        if not prog.session.is_read(p):
            out.add(p)
    return out


def hand_out(prog: Progress, held: Iterable[object], current: object = None) -> int | None:
    """The row position to show one annotator of a team.

    ``current`` (the row on their screen) while it is unread and nobody else holds it, so
    a row never changes under a reader; else the policy's next row passing over the rows
    skipped and the rows other annotators hold.

    Parameters
    ----------
    prog : Progress
        The project now (every annotator's labels).
    held : iterable of row ids
        Rows other annotators hold (`TeamStore.held_by_others`).
    current : row id or None, default None
        The row this annotator holds on screen (`TeamStore.current`).

    Returns
    -------
    int or None
        A row position; None when the session is done or every unread row is held by
        someone else (the caller says "wait").

    Examples
    --------
    >>> from certlib import load_pool
    >>> from certlib.labelling.store import LabelStore
    >>> import tempfile, pathlib
    >>> pool = load_pool("sample_data/demo_unlabelled.csv")
    >>> store = LabelStore(pathlib.Path(tempfile.mkdtemp()) / "labels.db")
    >>> prog = store.resume(store.open_project(pool, "demo"), pool)
    >>> first = hand_out(prog, held=[])
    >>> first == prog.next_row
    True
    >>> hand_out(prog, held=[pool.row_ids[first]]) != first
    True
    """
    if prog.session.done:  # certified, budget used up or every row read: nothing to hand
        return None
    held_pos = _positions(prog, held)
    if current is not None:
        cur = _positions(prog, [current])
        if cur and not cur & held_pos:
            return cur.pop()
    pos = prog.session.pool.position
    return _next(prog.session, {pos(r) for r in prog.skipped}, held_pos)


def lookahead_for(prog: Progress, row: int, held: Iterable[object]) -> tuple[Lookahead, ...]:
    """`Progress.lookahead` for the row ``row`` handed out (`hand_out`), passing over the
    rows other annotators hold.

    Parameters
    ----------
    prog : Progress
        The project now.
    row : int
        The row position on the annotator's screen.
    held : iterable of row ids
        Rows other annotators hold.

    Returns
    -------
    tuple of Lookahead
        One per class in the pool's order, then SKIP (left out when only skipped rows
        are left).

    Examples
    --------
    >>> from certlib import load_pool
    >>> from certlib.labelling.store import LabelStore
    >>> import tempfile, pathlib
    >>> pool = load_pool("sample_data/demo_unlabelled.csv")
    >>> store = LabelStore(pathlib.Path(tempfile.mkdtemp()) / "labels.db")
    >>> prog = store.resume(store.open_project(pool, "demo"), pool)
    >>> lookahead_for(prog, prog.next_row, held=[]) == prog.lookahead()
    True
    """
    s = prog.session
    pos = s.pool.position
    held_pos = _positions(prog, held) - {row}
    skipped = {pos(x) for x in prog.skipped}
    out: list[Lookahead] = []
    for c in s.pool.classes:
        after = s.observe(row, c)
        out.append(Lookahead(c, _next(after, skipped - {row}, held_pos), after.status,
                             guarantee(after).final))
    if row not in skipped:
        out.append(Lookahead(SKIP, _next(s, skipped | {row}, held_pos), s.status, False))
    return tuple(out)
