"""The labelling session: an immutable state, one label at a time (SPEC section 8,
paper Figure 6; STYLE rule 6).

    s = Session.start(pool, policy="adaptive-pair-sum")
    while not s.done:
        row = s.next_row()
        s = s.observe(row, label_of(row))     # a new state; s itself is unchanged

``observe`` costs O(K^2): it adds the gain of one row to every L_jk.  The
bounds after any prefix equal `certlib.core.bounds.batch_lower` on that prefix, and
replaying a recorded history reproduces the state.

States share an append-only log: a state is (log, t), and row i is read in it
when the log read it before step t.  Observing from a state that is not the
newest of its log copies the log first, so every state stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.bounds import (
    Decision,
    Thresholds,
    certified_mask,
    decide,
    eliminated_mask,
    thresholds,
)
from ..core.pair_terms import check_rule, gain_terms, initial_lower
from ..errors import ParameterError
from .label_errors import (
    add_top_drops,
    check_label_errors,
    flip_drops,
    label_error_margin,
    robust_unreachable,
)
from ..policies import PolicyContext, get_policy
from ..core.pool import UNREAD

__all__ = ["Session"]

_NOT_READ = np.iinfo(np.int64).max


class _Log:
    """Append-only record shared by a chain of states."""

    __slots__ = ("rows", "labels", "read_at")

    def __init__(self, n: int):
        self.rows: list[int] = []
        self.labels: list[int] = []
        self.read_at = np.full(n, _NOT_READ, dtype=np.int64)

    def prefix(self, t: int) -> _Log:
        new = _Log(0)
        new.rows, new.labels = self.rows[:t], self.labels[:t]
        new.read_at = np.where(self.read_at < t, self.read_at, _NOT_READ)
        return new


def _budget(budget, n):
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise ParameterError(f"budget must be a whole number of labels >= 0; got {budget!r}")
    return int(budget)


@dataclass(frozen=True, eq=False)
class Session:
    """Labels read so far, the exact bounds they give, and the policy's next row."""

    pool: Any
    policy: Any
    rule: str
    th: Thresholds
    seed: int
    budget: int | None
    L: np.ndarray  # (K, K) exact lower bounds of r_j - r_k, in the rule's units
    t: int  # number of labels read
    decision: Decision
    _log: _Log = field(repr=False)
    _pstate: Any = field(repr=False)
    # issue 14: stop only when the certificate survives any `label_errors` wrong labels
    # among the rows read (None or 0: the plain test).  _tops[j, k] holds the e largest
    # drops of L_jk a wrong label on a read row can cause (certlib.labelling.label_errors), sorted
    # descending, so the bound after the worst e wrong labels is L - _tops.sum(axis=2).
    label_errors: int | None = None
    _tops: Any = field(default=None, repr=False)

    # ------------------------------------------------------------ creation
    @classmethod
    def start(cls, pool, policy="static-range", rule: str = "shared", tolerance=0.0,
              seed: int = 0, budget: int | None = None, label_errors: int | None = None
              ) -> Session:
        """``label_errors`` e >= 1: stop only when the certificate survives any e wrong
        labels among the rows read (label-error margin >= e + 1, issue 14), or when no
        continuation can reach that (status "certified but fragile"), or at the budget."""
        check_rule(rule)
        pol = get_policy(policy)
        th = thresholds(pool.K, pool.scale, rule, tolerance)
        e = check_label_errors(label_errors)
        L = initial_lower(pool, rule)
        L.setflags(write=False)
        tops = np.zeros((pool.K, pool.K, e), dtype=np.int64) if e else None
        self = cls(pool, pol, rule, th, int(seed), _budget(budget, pool.n), L, 0,
                   _decide(L, tops, th), _Log(pool.n), None, e, tops)
        object.__setattr__(self, "_pstate", pol.start(self.policy_context))
        return self

    def sibling(self, policy) -> Session:
        """A new session on the same pool and settings (rule, tolerance, seed,
        ``label_errors``; no budget) with nothing read, following ``policy``: what that
        policy would do alone.  Policies that compare themselves with another use it."""
        return Session.start(self.pool, policy=policy, rule=self.rule,
                             tolerance=self.th.tolerance, seed=self.seed,
                             label_errors=self.label_errors)

    @classmethod
    def from_history(cls, pool, history, **kwargs) -> Session:
        """Replay a recorded list of (row position, label value) pairs."""
        s = cls.start(pool, **kwargs)
        for row, label in history:
            s = s.observe(row, label)
        return s

    @classmethod
    def from_pool_labels(cls, pool, **kwargs) -> Session:
        """The exact state after reading every label the pool already holds (in row
        order; the bounds do not depend on the order).  The answer to "what do the
        labels I have already certify?"."""
        known = np.flatnonzero(pool.labels != UNREAD)
        return cls.from_history(pool, [(int(i), pool.classes[pool.labels[i]]) for i in known],
                                **kwargs)

    # --------------------------------------------------------------- views
    @property
    def policy_context(self) -> PolicyContext:
        return PolicyContext(self.pool, self.rule, self.seed, self.th.tolerance,
                             self.eliminated)

    @property
    def policy_name(self) -> str:
        return self.policy.name

    def is_read(self, row: int) -> bool:
        return bool(self._log.read_at[row] < self.t)

    def unread_mask(self) -> np.ndarray:
        return self._log.read_at >= self.t

    @property
    def read_rows(self) -> tuple:
        """Row positions read, in order."""
        return tuple(self._log.rows[: self.t])

    @property
    def history(self) -> tuple:
        """(row position, label value) pairs in reading order."""
        cls_ = self.pool.classes
        return tuple((r, cls_[c])
                     for r, c in zip(self._log.rows[: self.t], self._log.labels[: self.t]))

    @property
    def label_codes(self) -> np.ndarray:
        """Length-n label codes known in this state (UNREAD elsewhere)."""
        out = np.full(self.pool.n, UNREAD, dtype=np.int64)
        if self.t:
            out[np.asarray(self._log.rows[: self.t])] = self._log.labels[: self.t]
        return out

    def label_code(self, row: int) -> int:
        """The label code read for row position ``row`` (which must have been read)."""
        at = int(self._log.read_at[row])
        if at >= self.t:
            raise ParameterError(f"row position {row} has not been read")
        return self._log.labels[at]

    @property
    def eliminated(self) -> tuple:
        """Candidates the policy may ignore: those that lose under every completion.  With
        ``label_errors`` e, once the plain test certifies (every rival is then out), those
        that lose even after any e wrong labels among the rows read: so the policy reads
        the same rows as without e up to the plain certificate, then works on the rivals
        that e wrong labels could bring back."""
        if not self.label_errors or not self.certified:
            return self.decision.eliminated
        return tuple(int(k) for k in np.flatnonzero(eliminated_mask(self.robust_lower(),
                                                                    self.th)))

    # ------------------------------------------------------- label errors
    def robust_lower(self) -> np.ndarray:
        """L after the worst ``label_errors`` wrong labels among the rows read, pair by
        pair (the plain L without label_errors)."""
        if not self.label_errors:
            return self.L
        return self.L - self._tops.sum(axis=2, dtype=np.int64)

    @property
    def robust(self) -> bool:
        """Certified, and the certificate of the selected candidate survives any
        ``label_errors`` wrong labels among the rows read (just `certified` without)."""
        if not self.label_errors or not self.certified:
            return self.certified
        return bool(certified_mask(self.robust_lower(), self.th)[self.decision.selected_index])

    @property
    def robust_unreachable(self) -> bool:
        """No continuation (more labels, any labels) can give a certificate that survives
        ``label_errors`` wrong labels: for every candidate k some rival j has
        H_jk minus the e largest drops below its threshold.  Sound at every step (labels
        read later only lower the bound further) and exact once every row is read."""
        if not self.label_errors:
            return False
        return robust_unreachable(self.L, self._tops, self.th)

    def label_error_margin(self):
        """The label-error margin of this state's answer (`certlib.labelling.label_errors`): how
        many wrong labels among the rows read would undo it, and which rows."""
        pool = self.pool.with_labels(self.label_codes)
        return label_error_margin(pool, self.read_rows, self.th.tolerance, rule=self.rule,
                                  target=self.decision.selected_index)

    @property
    def certified(self) -> bool:
        return self.decision.certified

    @property
    def selected(self) -> str | None:
        """Name of the certified candidate (exact, or within tau), else None."""
        return self.pool.names[self.decision.selected_index] if self.decision.certified else None

    @property
    def best_guess(self) -> str:
        """Certified candidate, or the one with the smallest worst-case excess."""
        return self.pool.names[self.decision.selected_index]

    @property
    def excess(self) -> Fraction:
        """Guaranteed objective gap of `best_guess` to the best, over every completion."""
        return self.decision.excess

    @property
    def budget_exhausted(self) -> bool:
        return self.budget is not None and self.t >= self.budget

    @property
    def done(self) -> bool:
        if self.label_errors:
            stop = self.robust or (self.certified and self.robust_unreachable)
            return stop or self.budget_exhausted or self.t >= self.pool.n
        return self.certified or self.budget_exhausted or self.t >= self.pool.n

    @property
    def status(self) -> str:
        if self.label_errors and self.certified and not self.robust:
            if self.robust_unreachable:
                return "certified but fragile"  # stops: no continuation survives e errors
            if self.budget_exhausted:
                return "budget exhausted"
            return "all labels read" if self.t >= self.pool.n else "running"
        if self.certified:
            return "certified" if self.th.tolerance == 0 else "certified within tolerance"
        if self.budget_exhausted:
            return "budget exhausted"
        if self.t >= self.pool.n:
            return "all labels read"  # only possible with the separate/centered rules
        return "running"

    def lower(self) -> np.ndarray:
        """L[j, k]: exact lower bound of r_j - r_k (scaled risks), as integers."""
        return self.L // self.th.unit if self.th.unit == 1 else self.L / self.th.unit

    def upper(self) -> np.ndarray:
        """H[j, k] = -L[k, j]: exact upper bound of r_j - r_k."""
        return -self.lower().T

    # ------------------------------------------------------------ actions
    def next_row(self, skip=()) -> int | None:
        """The policy's next row position, or None when the session is done.

        ``skip``: unread row positions to pass over for now (rows an annotator skipped):
        the policy chooses as if they were read, and among every unread row when only
        skipped rows are left.  Skipping changes no bound and no policy state."""
        if self.done:
            return None
        if len(skip):
            passed = np.zeros(self.pool.n, dtype=bool)
            passed[np.asarray(skip, dtype=np.int64)] = True
            if (self.unread_mask() & ~passed).any():
                return self.policy.choose(self._pstate, _Passing(self, passed))
        return self.policy.choose(self._pstate, self)

    def observe(self, row: int, label) -> Session:
        """Read ``label`` (a class value) for row position ``row``; returns the new state."""
        n = self.pool.n
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < n:
            raise ParameterError(f"row must be a row position in 0..{n - 1}; got {row!r}")
        row = int(row)
        if self.is_read(row):
            raise ParameterError(
                f"row {self.pool.row_ids[row]!r} (position {row}) has already been read"
            )
        code = self.pool.class_code(label)
        log = self._log if len(self._log.rows) == self.t else self._log.prefix(self.t)
        log.rows.append(row)
        log.labels.append(code)
        log.read_at[row] = self.t
        rows = np.array([row])
        gain = gain_terms(self.pool, rows, np.array([code]), self.rule)[:, :, 0]
        L = self.L + gain
        L.setflags(write=False)
        tops = self._tops
        if self.label_errors:
            tops = add_top_drops(tops, flip_drops(self.pool, rows, np.array([code]),
                                                  self.rule)[0])
        new = Session(self.pool, self.policy, self.rule, self.th, self.seed, self.budget, L,
                      self.t + 1, _decide(L, tops, self.th), log, None, self.label_errors,
                      tops)
        object.__setattr__(new, "_pstate", self.policy.update(self._pstate, new, row, code))
        return new

    def observe_id(self, row_id, label) -> Session:
        """`observe` by row id instead of position."""
        return self.observe(self.pool.position(row_id), label)


def _decide(L: np.ndarray, tops, th) -> Decision:
    """`decide`, except that with label errors (``tops`` not None) a certified answer is
    one whose certificate survives the e wrong labels when some candidate's does: with a
    tolerance several candidates can be certified at once, and the plain choice (the
    smallest worst-case excess) may be fragile while another is robust.  Robust
    certificates are plain ones too (their bound is lower), so this only changes which
    certified candidate is named."""
    if tops is None:
        return decide(L, th)
    return decide(L, th, prefer=certified_mask(L - tops.sum(axis=2, dtype=np.int64), th))


class _Passing:
    """A session as a policy sees it with some unread rows passed over (seen as read)."""

    __slots__ = ("_session", "_passed")

    def __init__(self, session: Session, passed: np.ndarray):
        self._session, self._passed = session, passed

    def __getattr__(self, name):
        return getattr(self._session, name)

    def is_read(self, row: int) -> bool:
        return self._session.is_read(row) or bool(self._passed[row])

    def unread_mask(self) -> np.ndarray:
        return self._session.unread_mask() & ~self._passed
