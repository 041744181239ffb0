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

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import numpy.typing as npt

from ..core._values import ClassValue
from ..core.bounds import (
    Decision,
    Thresholds,
    certified_mask,
    decide,
    eliminated_mask,
    thresholds,
)
from ..core.pair_terms import check_rule, gain_terms, initial_lower
from ..core.pool import UNREAD, Pool
from ..errors import ParameterError
from ..policies import Policy, PolicyContext, get_policy
from .label_errors import (
    LabelErrorMargin,
    add_top_drops,
    check_label_errors,
    flip_drops,
    label_error_margin,
    robust_unreachable,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Session", "SessionSettings"]

_NOT_READ = np.iinfo(np.int64).max



class _Log:
    """Append-only record shared by a chain of states."""

    __slots__ = ("rows", "labels", "read_at")

    def __init__(self, n: int) -> None:
        self.rows: list[int] = []
        self.labels: list[int] = []
        self.read_at: npt.NDArray[np.int64] = np.full(n, _NOT_READ, dtype=np.int64)

    def prefix(self, t: int) -> _Log:
        new = _Log(0)
        new.rows, new.labels = self.rows[:t], self.labels[:t]
        new.read_at = np.where(self.read_at < t, self.read_at, _NOT_READ)
        return new


class SessionSettings(TypedDict, total=False):
    """The settings of `Session.start` after the pool, as keyword arguments (every key
    optional): what `Session.from_history` and `Session.from_pool_labels` pass on, and
    what `certlib.labelling.events.Project.session_kwargs` gives."""

    policy: str | Policy
    rule: str
    tolerance: float | Fraction
    seed: int
    budget: int | None
    label_errors: int | None


def _budget(budget: object, n: int) -> int | None:
    """``budget`` as a whole number of labels >= 0, or None (no budget)."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise ParameterError(f"budget must be a whole number of labels >= 0; got {budget!r}")
    return int(budget)


@dataclass(frozen=True, eq=False)
class Session:
    """Labels read so far, the exact bounds they give, and the policy's next row.

    A session is an immutable state of one labelling run (paper 000, section 5): each
    `observe` returns a new state and leaves this one valid.  Make one with `start`
    (nothing read), `from_history` or `from_pool_labels`.

    Attributes
    ----------
    pool : Pool
        The pool being labelled; its own labels are not consulted.
    policy : Policy
        The row-choosing policy (`certlib.policies`).
    rule : str
        The bound rule: "shared", "separate" or "centered" (SPEC section 4).
    th : Thresholds
        The integer thresholds of the stopping test for this pool, rule and tolerance.
    seed : int
        Seed of the policy's random choices.
    budget : int or None
        Most labels the run may read (None: no budget).
    L : ndarray of int64, shape (K, K)
        Exact lower bounds of r_j - r_k over every completion of the unread labels, in
        the rule's units (read-only).
    t : int
        Number of labels read.
    decision : Decision
        What the bounds say now: certified or not, the selected candidate, its
        worst-case excess and the eliminated candidates.
    label_errors : int or None
        With e >= 1 the run stops only when the certificate survives any e wrong labels
        among the rows read (None or 0: the plain test).

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"])
    >>> truth = [1, 0, 0, 0]                 # the annotator's answers, by row position
    >>> s = certlib.Session.start(pool, policy="static-range")
    >>> s.next_row(), s.status
    (2, 'running')
    >>> while not s.done:
    ...     row = s.next_row()
    ...     s = s.observe(row, truth[row])   # a new state; s itself is unchanged
    >>> s.status, s.selected, s.read_rows
    ('certified', 'B', (2, 3, 0, 1))
    >>> s.lower().tolist()                   # L[j, k] <= r_j - r_k, scaled risks
    [[0, 2], [-2, 0]]
    """

    pool: Pool
    policy: Policy
    rule: str
    th: Thresholds
    seed: int
    budget: int | None
    L: npt.NDArray[np.int64]  # (K, K) exact lower bounds of r_j - r_k, in the rule's units
    t: int  # number of labels read
    decision: Decision
    _log: _Log = field(repr=False)
    _pstate: object = field(repr=False)  # the policy's own state, opaque here
    # Stop only when the certificate survives any `label_errors` wrong labels among the
    # rows read (None or 0: the plain test).  _tops[j, k] holds the e largest drops of
    # L_jk a wrong label on a read row can cause (certlib.labelling.label_errors), sorted
    # descending, so the bound after the worst e wrong labels is L - _tops.sum(axis=2).
    label_errors: int | None = None
    _tops: npt.NDArray[np.int64] | None = field(default=None, repr=False)

    # ------------------------------------------------------------ creation
    @classmethod
    def start(cls, pool: Pool, *, policy: str | Policy = "static-range",
              rule: str = "shared", tolerance: float | Fraction = 0.0, seed: int = 0,
              budget: int | None = None, label_errors: int | None = None) -> Session:
        """A session on ``pool`` with nothing read.

        Parameters
        ----------
        pool : Pool
            The pool to label.  Its labels are ignored: labels come in by `observe`.
        policy : str or Policy, default "static-range"
            A registered policy name (`certlib.policy_names`) or a `Policy` object.
        rule : {"shared", "separate", "centered"}, default "shared"
            How the bounds treat unread rows (SPEC section 4).
        tolerance : float or Fraction, default 0.0
            tau >= 0: certify a candidate within tau of the best objective value
            (0: the best itself).  Floats are read through their shortest decimal.
        seed : int, default 0
            Seed of the policy's random choices.
        budget : int or None, default None
            Most labels to read; the session is done when it is spent.
        label_errors : int or None, default None
            e >= 1: stop only when the certificate survives any e wrong labels among the
            rows read (label-error margin >= e + 1), when no continuation can reach that
            (status "certified but fragile"), or at the budget.  None or 0: the plain
            test.

        Returns
        -------
        Session
            The state before the first label.

        Raises
        ------
        ParameterError
            An unknown rule or policy, a negative or non-integer budget or
            ``label_errors``, or a tolerance that is not a number >= 0.
        """
        check_rule(rule)
        pol = get_policy(policy)
        th = thresholds(pool.K, pool.scale, rule=rule, tolerance=tolerance)
        e = check_label_errors(label_errors)
        L = initial_lower(pool, rule=rule)
        L.setflags(write=False)
        tops = np.zeros((pool.K, pool.K, e), dtype=np.int64) if e else None
        self = cls(pool, pol, rule, th, int(seed), _budget(budget, pool.n), L, 0,
                   _decide(L, tops, th), _Log(pool.n), None, e, tops)
        object.__setattr__(self, "_pstate", pol.start(self.policy_context))
        return self

    def sibling(self, policy: str | Policy) -> Session:
        """A new session on the same pool and settings, with nothing read.

        What ``policy`` would do alone with this rule, tolerance, seed and
        ``label_errors`` (and no budget): policies that compare themselves with another
        use it.

        Parameters
        ----------
        policy : str or Policy
            The policy of the new session.

        Returns
        -------
        Session
            The new state before the first label.
        """
        return Session.start(self.pool, policy=policy, rule=self.rule,
                             tolerance=self.th.tolerance, seed=self.seed,
                             label_errors=self.label_errors)

    @classmethod
    def from_history(cls, pool: Pool, history: Sequence[tuple[int, ClassValue]],
                     **settings: Unpack[SessionSettings]) -> Session:
        """The state after reading a recorded history, label by label.

        Parameters
        ----------
        pool : Pool
            The pool the history was recorded on.
        history : sequence of (int, label)
            (row position, label value) pairs in reading order, as `history` gives them.
        **settings
            Keyword arguments of `start` (policy, rule, tolerance, seed, budget,
            label_errors).

        Returns
        -------
        Session
            The same state as observing each pair in turn.

        Raises
        ------
        ParameterError
            A bad setting (`start`), or a row position out of range or read twice.
        LabelError
            A label outside the pool's class set.
        """
        s = cls.start(pool, **settings)
        for row, label in history:
            s = s.observe(row, label)
        return s

    @classmethod
    def from_pool_labels(cls, pool: Pool, **settings: Unpack[SessionSettings]) -> Session:
        """The exact state after reading every label the pool already holds.

        The rows are read in row order; the bounds do not depend on the order.  The
        answer to "what do the labels I have already certify?".

        Parameters
        ----------
        pool : Pool
            A pool with some (or all) labels.
        **settings
            Keyword arguments of `start` (policy, rule, tolerance, seed, budget,
            label_errors).

        Returns
        -------
        Session
            The state after the pool's labels.

        Raises
        ------
        ParameterError
            A bad setting (`start`).
        """
        known = np.flatnonzero(pool.labels != UNREAD)
        return cls.from_history(pool, [(int(i), pool.classes[pool.labels[i]]) for i in known],
                                **settings)

    # --------------------------------------------------------------- views
    @property
    def policy_context(self) -> PolicyContext:
        """What a policy may know of the run: pool, rule, seed, tolerance and the
        candidates eliminated now."""
        return PolicyContext(self.pool, self.rule, self.seed, self.th.tolerance,
                             self.eliminated)

    @property
    def policy_name(self) -> str:
        """The name the policy is registered under."""
        return self.policy.name

    def is_read(self, row: int) -> bool:
        """Whether a row has been read in this state.

        Parameters
        ----------
        row : int
            A row position in 0..n-1.

        Returns
        -------
        bool
            True when its label was observed before this state.
        """
        return bool(self._log.read_at[row] < self.t)

    def unread_mask(self) -> npt.NDArray[np.bool_]:
        """The rows not read in this state.

        Returns
        -------
        ndarray of bool, shape (n,)
            True at each row position not read.
        """
        return self._log.read_at >= self.t

    @property
    def read_rows(self) -> tuple[int, ...]:
        """Row positions read, in order."""
        return tuple(self._log.rows[: self.t])

    @property
    def history(self) -> tuple[tuple[int, ClassValue], ...]:
        """(row position, label value) pairs in reading order."""
        cls_ = self.pool.classes
        return tuple((r, cls_[c])
                     for r, c in zip(self._log.rows[: self.t], self._log.labels[: self.t]))

    @property
    def label_codes(self) -> npt.NDArray[np.int64]:
        """Length-n label codes known in this state (UNREAD elsewhere)."""
        out = np.full(self.pool.n, UNREAD, dtype=np.int64)
        if self.t:
            out[np.asarray(self._log.rows[: self.t])] = self._log.labels[: self.t]
        return out

    def label_code(self, row: int) -> int:
        """The label code read for a row.

        Parameters
        ----------
        row : int
            A row position read in this state.

        Returns
        -------
        int
            Its label's index in ``pool.classes``.

        Raises
        ------
        ParameterError
            The row has not been read.
        """
        at = int(self._log.read_at[row])
        if at >= self.t:
            raise ParameterError(f"row position {row} has not been read")
        return self._log.labels[at]

    @property
    def eliminated(self) -> tuple[int, ...]:
        """Candidates the policy may ignore: those that lose under every completion.

        With ``label_errors`` e, once the plain test certifies (every rival is then
        out), those that lose even after any e wrong labels among the rows read: so the
        policy reads the same rows as without e up to the plain certificate, then works
        on the rivals that e wrong labels could bring back."""
        if not self.label_errors or not self.certified:
            return tuple(self.decision.eliminated)
        return tuple(int(k) for k in np.flatnonzero(eliminated_mask(self.robust_lower(),
                                                                    self.th)))

    # ------------------------------------------------------- label errors
    def robust_lower(self) -> npt.NDArray[np.int64]:
        """The bounds after the worst ``label_errors`` wrong labels among the rows read.

        Returns
        -------
        ndarray of int64, shape (K, K)
            L minus, pair by pair, the e largest drops a wrong label on a read row can
            cause, in the rule's units (the plain L without ``label_errors``).
        """
        if not self.label_errors or self._tops is None:
            return self.L
        worst: npt.NDArray[np.int64] = self._tops.sum(axis=2, dtype=np.int64)
        return self.L - worst

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
        ``label_errors`` wrong labels.

        For every candidate k some rival j has H_jk minus the e largest drops below its
        threshold.  Sound at every step (labels read later only lower the bound further)
        and exact once every row is read."""
        if not self.label_errors or self._tops is None:
            return False
        return robust_unreachable(self.L, self._tops, self.th)

    def label_error_margin(self) -> LabelErrorMargin:
        """The label-error margin of this state's answer.

        Returns
        -------
        LabelErrorMargin
            How many wrong labels among the rows read would undo it, and which rows
            (`certlib.labelling.label_errors`), from the labels read in this state.
        """
        pool = self.pool.with_labels(self.label_codes)
        return label_error_margin(pool, self.read_rows, tolerance=self.th.tolerance,
                                  rule=self.rule, target=self.decision.selected_index)

    @property
    def certified(self) -> bool:
        """Some candidate passes the exact stopping test (within tau with a tolerance)."""
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
        """A budget is set and this state has read that many labels."""
        return self.budget is not None and self.t >= self.budget

    @property
    def done(self) -> bool:
        """The run stops here: certified (robustly, with ``label_errors``), fragile beyond
        repair, budget spent, or every row read."""
        if self.label_errors:
            stop = self.robust or (self.certified and self.robust_unreachable)
            return stop or self.budget_exhausted or self.t >= self.pool.n
        return self.certified or self.budget_exhausted or self.t >= self.pool.n

    @property
    def status(self) -> str:
        """"running", "certified", "certified within tolerance", "budget exhausted", "all
        labels read" or, with ``label_errors``, "certified but fragile"."""
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

    def lower(self) -> npt.NDArray[np.int64] | npt.NDArray[np.float64]:
        """The exact lower bounds of the scaled-risk differences.

        Returns
        -------
        ndarray, shape (K, K)
            L[j, k] <= r_j - r_k over every completion of the unread labels, in scaled
            risks (objective times ``pool.scale``): integers, halves under the centered
            rule.
        """
        return self.L // self.th.unit if self.th.unit == 1 else self.L / self.th.unit

    def upper(self) -> npt.NDArray[np.int64] | npt.NDArray[np.float64]:
        """The exact upper bounds of the scaled-risk differences.

        Returns
        -------
        ndarray, shape (K, K)
            H[j, k] = -L[k, j] >= r_j - r_k over every completion, in scaled risks.
        """
        H: npt.NDArray[np.int64] | npt.NDArray[np.float64] = -self.lower().T
        return H

    # ------------------------------------------------------------ actions
    def next_row(self, skip: Sequence[int] = ()) -> int | None:
        """The policy's next row position, or None when the session is done.

        Parameters
        ----------
        skip : sequence of int, default ()
            Unread row positions to pass over for now (rows an annotator skipped): the
            policy chooses as if they were read, and among every unread row when only
            skipped rows are left.  Skipping changes no bound and no policy state.

        Returns
        -------
        int or None
            A row position not read yet, or None when `done`.
        """
        if self.done:
            return None
        if len(skip):
            passed = np.zeros(self.pool.n, dtype=bool)
            passed[np.asarray(skip, dtype=np.int64)] = True
            if (self.unread_mask() & ~passed).any():
                return self.policy.choose(self._pstate, _Passing(self, passed))
        return self.policy.choose(self._pstate, self)

    def observe(self, row: int, label: object) -> Session:
        """Read the label of one row; returns the new state (this one is unchanged).

        Costs O(K^2): the gain of the row is added to every L_jk.

        Parameters
        ----------
        row : int
            A row position in 0..n-1 not read yet.
        label : int, float or str
            Its label, a class value of the pool (a number written as text is that
            number).

        Returns
        -------
        Session
            The state after this label.

        Raises
        ------
        ParameterError
            ``row`` is not a row position, or was read already.
        LabelError
            ``label`` is not in the pool's class set.
        """
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
        gain = gain_terms(self.pool, rows, np.array([code]), rule=self.rule)[:, :, 0]
        L = self.L + gain
        L.setflags(write=False)
        tops = self._tops
        if self.label_errors and tops is not None:
            tops = add_top_drops(tops, flip_drops(self.pool, rows, np.array([code]),
                                                  rule=self.rule)[0])
        new = Session(self.pool, self.policy, self.rule, self.th, self.seed, self.budget, L,
                      self.t + 1, _decide(L, tops, self.th), log, None, self.label_errors,
                      tops)
        object.__setattr__(new, "_pstate", self.policy.update(self._pstate, new, row, code))
        return new

    def observe_id(self, row_id: object, label: object) -> Session:
        """`observe` by row id instead of position.

        Parameters
        ----------
        row_id : int, float or str
            A row id of the pool.
        label : int, float or str
            Its label, a class value of the pool.

        Returns
        -------
        Session
            The state after this label.

        Raises
        ------
        ParameterError
            The row was read already.
        LabelError
            An unknown row id, or a label outside the class set.
        """
        return self.observe(self.pool.position(row_id), label)


def _decide(L: npt.NDArray[np.int64], tops: npt.NDArray[np.int64] | None,
            th: Thresholds) -> Decision:
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
    """A session as a policy sees it with some unread rows passed over (seen as read):
    `is_read` and `unread_mask` count them as read, everything else is the session's."""

    __slots__ = ("_session", "_passed")

    def __init__(self, session: Session, passed: npt.NDArray[np.bool_]) -> None:
        self._session, self._passed = session, passed

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)

    @property
    def pool(self) -> Pool:
        return self._session.pool

    @property
    def L(self) -> npt.NDArray[np.int64]:
        return self._session.L

    @property
    def th(self) -> Thresholds:
        return self._session.th

    @property
    def t(self) -> int:
        return self._session.t

    @property
    def eliminated(self) -> tuple[int, ...]:
        return self._session.eliminated

    @property
    def policy_context(self) -> PolicyContext:
        return self._session.policy_context

    @property
    def done(self) -> bool:
        return self._session.done

    def label_code(self, row: int) -> int:
        return self._session.label_code(row)

    def next_row(self, skip: Sequence[int] = ()) -> int | None:
        return self._session.next_row(skip)

    def observe(self, row: int, label: object) -> Session:
        return self._session.observe(row, label)

    def sibling(self, policy: str | Policy) -> Session:
        return self._session.sibling(policy)

    def is_read(self, row: int) -> bool:
        return self._session.is_read(row) or bool(self._passed[row])

    def unread_mask(self) -> npt.NDArray[np.bool_]:
        return self._session.unread_mask() & ~self._passed
