"""The policy protocol and the machinery policies share (SPEC section 8).

Every policy follows one small protocol (`Policy`), so that sessions, replays,
the teaching figure and the store treat them alike and one contract test
covers them all:

    state = policy.start(ctx)                 # ctx: PolicyContext (pool, rule, seed, ...)
    row   = policy.choose(state, view)        # an unread row position; pure
    state = policy.update(state, view, row, label_code)   # after the row was read; pure
    policy.static_order(ctx)                  # the whole order, if no label can change it
    policy.adaptive_order(ctx, active)        # the order while only ``active`` remain, if
                                              # labels change it only through eliminations

``view`` is the labelling session *after* the read (for ``update``) or now
(for ``choose``); policies use ``view.is_read(i)``, ``view.unread_mask()``,
``view.eliminated`` and ``view.L``.  States are immutable values; large arrays
in them (orders, scores) are shared read-only between states.

The policy only orders rows.  The stopping test decides when to stop and what
is certified, so any policy is valid (paper Figure 6).

Deterministic policies break score ties by lowest row position.  Scores use
the potential gains of `certlib.core.pair_terms` (|a_ji - a_ki| for binary pools), so
categorical pools work unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core._values import ClassValue
from ..core.bounds import Thresholds
from ..core.pair_terms import pair_potential
from ..core.pool import Pool
from ..errors import ParameterError

__all__ = ["OrderPolicy", "OrderState", "Policy", "PolicyContext", "SessionView",
           "order_by_score", "pair_scores", "pair_sum_without"]


@dataclass(frozen=True, eq=False)
class PolicyContext:
    """What a policy may know of a run before it reads anything.

    Parameters
    ----------
    pool : Pool
        The pool being labelled (its labels are not for the policy to read).
    rule : str
        The comparison rule of the bounds (`certlib.core.pair_terms.RULES`).
    seed : int
        Seed of the policy's random choices; the same seed gives the same order.
    tolerance : float or Fraction
        The tolerance tau of the stopping test.
    eliminated : tuple of int
        Candidates already out before any label (e.g. duplicates).
    """

    pool: Pool
    rule: str = "shared"
    seed: int = 0
    tolerance: float | Fraction = 0
    eliminated: tuple[int, ...] = ()  # candidates already out before any label


class SessionView(Protocol):
    """What a policy sees of the labelling session (`certlib.labelling.session.Session`).

    Policies only read it: ``is_read``, ``unread_mask``, the exact bounds ``L`` and
    thresholds ``th``, the candidates ``eliminated`` now, the labels read
    (``label_code``) and ``t``, the number of labels read.  ``sibling``, ``observe``,
    ``next_row`` and ``done`` let a policy run another policy in its shadow.
    """

    @property
    def pool(self) -> Pool:
        """The pool being labelled."""
        ...

    @property
    def L(self) -> NDArray[np.int64]:
        """(K, K) exact lower bounds of r_j - r_k after the labels read, in rule units."""
        ...

    @property
    def th(self) -> Thresholds:
        """The thresholds of the stopping test."""
        ...

    @property
    def t(self) -> int:
        """Number of labels read."""
        ...

    @property
    def eliminated(self) -> tuple[int, ...]:
        """Candidates that lose under every completion now."""
        ...

    @property
    def policy_context(self) -> PolicyContext:
        """The run's context, with the candidates eliminated now."""
        ...

    @property
    def done(self) -> bool:
        """Whether the session has stopped (certified, or budget or rows spent)."""
        ...

    def is_read(self, row: int) -> bool:
        """Whether a row has been read.

        Parameters
        ----------
        row : int
            A row position.

        Returns
        -------
        bool
            True when its label was observed.
        """
        ...

    def unread_mask(self) -> NDArray[np.bool_]:
        """Length-n mask of the rows not read."""
        ...

    def label_code(self, row: int) -> int:
        """The label code read for a row.

        Parameters
        ----------
        row : int
            A row position read.

        Returns
        -------
        int
            Its index in ``pool.classes``.
        """
        ...

    def next_row(self, skip: Sequence[int] = ()) -> int | None:
        """The row the session's policy reads next.

        Parameters
        ----------
        skip : sequence of int
            Rows to pass over.

        Returns
        -------
        int or None
            A row position, or None when the session is done.
        """
        ...

    def observe(self, row: int, label: ClassValue) -> SessionView:
        """The session after reading ``row`` with the label value ``label``.

        Parameters
        ----------
        row : int
            An unread row position.
        label : int, float or str
            Its label, a value of ``pool.classes``.

        Returns
        -------
        SessionView
            The new state; this one is unchanged.
        """
        ...

    def sibling(self, policy: str | Policy) -> SessionView:
        """A new session on the same pool and settings with another policy, nothing read.

        Parameters
        ----------
        policy : str or Policy
            The other policy.

        Returns
        -------
        SessionView
            Its state before the first label.
        """
        ...


class Policy(Protocol):
    """What sessions, replays, the teaching figure and the store need of a policy.

    ``name`` is the name the policy is registered under.  ``start``, ``choose`` and
    ``update`` drive a labelling session (module docstring).  The two ``*_order``
    methods are an optional capability, declared here so that no caller inspects
    types: a policy whose reading order is known in advance returns it (a
    permutation of the row positions; the policy reads its unread rows in that
    order) and replays evaluate it in vectorised blocks; a policy that returns
    None is stepped one label at a time.  Subclassing `Policy` gives the None
    defaults.
    """

    name: str

    # The state is the policy's own immutable value, opaque to its callers: each policy
    # has its own state type, so the protocol types it as Any.
    def start(self, ctx: PolicyContext) -> Any:
        """The policy's state before any label is read.

        Parameters
        ----------
        ctx : PolicyContext
            The pool, rule, seed, tolerance and the candidates already out.

        Returns
        -------
        object
            The policy's own immutable state, passed back to `choose` and `update`.
        """
        ...

    def choose(self, state: Any, view: SessionView) -> int:
        """The next row to read: an unread row position; pure (changes nothing).

        Parameters
        ----------
        state : object
            The policy's state (from `start` or `update`).
        view : SessionView
            The session now.

        Returns
        -------
        int
            An unread row position.
        """
        ...

    def update(self, state: Any, view: SessionView, row: int, label: int) -> Any:
        """The policy's state after ``row`` was read with label code ``label``; pure.

        Parameters
        ----------
        state : object
            The state before the read.
        view : SessionView
            The session after the read.
        row : int
            The row position just read.
        label : int
            Its label code (index into ``pool.classes``).

        Returns
        -------
        object
            The new state; ``state`` itself is unchanged.
        """
        ...

    def static_order(self, ctx: PolicyContext) -> NDArray[np.int64] | None:
        """The full reading order when no label can change it, else None.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.

        Returns
        -------
        numpy.ndarray of int64 or None
            A permutation of the row positions, or None (the default).
        """
        return None

    def adaptive_order(self, ctx: PolicyContext,
                       active: tuple[int, ...]) -> NDArray[np.int64] | None:
        """When labels change the order only by eliminating candidates: the full
        reading order while exactly the candidates ``active`` remain (the policy
        switches to the new order at each elimination).  Else None.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.
        active : tuple of int
            The candidates not eliminated.

        Returns
        -------
        numpy.ndarray of int64 or None
            A permutation of the row positions, or None (the default).
        """
        return None


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


# ---------------------------------------------------------------- row scores
def pair_scores(pool: Pool, active: npt.ArrayLike | None = None, *,
                kind: str = "range", rows: NDArray[np.int64] | None = None,
                ) -> NDArray[np.int64]:
    """Per-row score over the candidate pairs inside ``active`` (paper section 5).

    Parameters
    ----------
    pool : Pool
        The pool.
    active : array_like of bool, shape (K,), optional
        Candidates whose pairs count (all when None).
    kind : {"range", "pair-sum"}
        ``range``: max over pairs of the potential gain (= max_j a_ji - min_j a_ji for
        binary pools, paper eq. (10)); ``pair-sum``: its sum over unordered pairs.
    rows : numpy.ndarray of int64, optional
        Return only these row positions' scores (all when None); a binary pool scores
        only them, another scores every row and selects.

    Returns
    -------
    numpy.ndarray of int64, shape (n,) or (len(rows),)
        The score of each row, in scaled-risk units.

    Examples
    --------
    >>> from certlib import Pool
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]])
    >>> pair_scores(pool).tolist()
    [2, 2, 4, 4]
    """
    K, n = pool.K, pool.n
    mask = None if active is None else np.asarray(active, dtype=bool)
    members = list(range(K)) if mask is None else [k for k in range(K) if mask[k]]
    if pool.is_binary and len(members) > 1:
        # binary: the potential of a pair is |a_ji - a_ki| with a_ji = w_ji (1 - 2 yhat_ji)
        # (alike: |w_j - w_k|, unlike: w_j + w_k), so the largest is max_j a - min_j a
        # and, with a row's a sorted, the sum over pairs is sum_i a_(i) (2i - m + 1):
        # K log K terms a row instead of K^2 / 2
        if rows is None:
            w, p = pool.weights[members], pool.preds[members]
        else:
            # gather the columns first: K x len(rows), not K x n, is copied
            sel = np.asarray(members)
            w = np.take(pool.weights, rows, axis=1)[sel]
            p = np.take(pool.preds, rows, axis=1)[sel]
        a = w * (1 - 2 * p.astype(np.int64))
        if kind == "range":
            rng: NDArray[np.int64] = a.max(axis=0) - a.min(axis=0)
            return rng
        m = len(members)
        coef = 2 * np.arange(m, dtype=np.int64) - (m - 1)
        total: NDArray[np.int64] = np.sort(a.T, axis=1) @ coef
        return total
    out = np.zeros(n, dtype=np.int64)
    for i, j in enumerate(members):
        for k in members[i + 1:]:
            pot = pair_potential(pool, j, k)
            if kind == "range":
                np.maximum(out, pot, out=out)
            else:
                out += pot
    return out if rows is None else out[rows]


def pair_sum_without(pool: Pool, scores: NDArray[np.int64], members: Sequence[int],
                     removed: Sequence[int]) -> NDArray[np.int64]:
    """The pair-sum scores over ``members`` without the candidates ``removed``, from
    ``scores``, the pair-sum over ``members``: each removed candidate's pairs with the
    members still in are subtracted (K terms a row per candidate removed, where scoring
    the remaining pairs anew takes K^2 / 2).

    Parameters
    ----------
    pool : Pool
        The pool.
    scores : numpy.ndarray of int64, shape (n,)
        ``pair_scores(pool, members, kind="pair-sum")``.
    members : sequence of int
        The candidates ``scores`` covers.
    removed : sequence of int
        Candidates among them to take out.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        A new array: the pair-sum scores over the members left.

    Examples
    --------
    >>> import numpy as np
    >>> from certlib import Pool
    >>> pool = Pool.from_arrays([[0, 1, 1], [1, 1, 0], [0, 0, 1]],
    ...                         [[3, 2, 1], [1, 3, 2], [2, 1, 3]])
    >>> full = pair_scores(pool, kind="pair-sum")
    >>> left = pair_sum_without(pool, full, [0, 1, 2], [1])
    >>> left.tolist() == pair_scores(pool, [True, False, True], kind="pair-sum").tolist()
    True
    """
    out: NDArray[np.int64] = np.array(scores, dtype=np.int64)
    left = list(members)
    for e in removed:
        left.remove(e)
        for k in left:
            out -= pair_potential(pool, e, k)
    return out


def order_by_score(scores: npt.ArrayLike) -> NDArray[np.int64]:
    """Rows by decreasing score, lowest row position first on ties.

    Parameters
    ----------
    scores : array_like, shape (n,)
        A score per row.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Row positions, best first.

    Examples
    --------
    >>> order_by_score([1, 3, 3, 0]).tolist()
    [1, 2, 0, 3]
    """
    return np.argsort(-np.asarray(scores), kind="stable")


# -------------------------------------------------------- order-based policies
@dataclass(frozen=True, eq=False)
class OrderState:
    """State of an `OrderPolicy`: an order made before any label and how far it is read.

    Parameters
    ----------
    order : numpy.ndarray of int64
        A permutation of the row positions, shared read-only between states.
    ptr : int
        Every row before ``order[ptr]`` has been read.
    active : tuple of int
        The candidates the order was computed for (adaptive policies).
    """

    order: NDArray[np.int64]  # a permutation of row positions, shared read-only
    ptr: int  # every row before order[ptr] has been read
    active: tuple[int, ...] = ()  # candidates the order was computed for (adaptive policies)


def _advance(state: OrderState, view: SessionView) -> OrderState:
    ptr, order = state.ptr, state.order
    while ptr < order.size and view.is_read(int(order[ptr])):
        ptr += 1
    return state if ptr == state.ptr else replace(state, ptr=ptr)


class OrderPolicy(Policy):
    """Reads rows along an order made before any label (``adaptive``: remade when a
    candidate is eliminated); subclasses say how the order is made."""

    name = "order"
    adaptive = False  # remake the order when a candidate is eliminated

    def make_order(self, ctx: PolicyContext,
                   active: tuple[int, ...]) -> NDArray[np.int64]:  # pragma: no cover
        """The reading order while the candidates ``active`` remain (subclasses say how).

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.
        active : tuple of int
            The candidates not eliminated (all of them for a static order).

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            A permutation of the row positions.
        """
        raise NotImplementedError

    def static_order(self, ctx: PolicyContext) -> NDArray[np.int64] | None:
        """The order over every candidate, unless the policy is adaptive (then None).

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.

        Returns
        -------
        numpy.ndarray of int64 or None
            A read-only permutation of the row positions, or None.
        """
        if self.adaptive:
            return None
        return _readonly(self.make_order(ctx, tuple(range(ctx.pool.K))))

    def adaptive_order(self, ctx: PolicyContext,
                       active: tuple[int, ...]) -> NDArray[np.int64]:
        """The order while exactly the candidates ``active`` remain.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.
        active : tuple of int
            The candidates not eliminated.

        Returns
        -------
        numpy.ndarray of int64
            A read-only permutation of the row positions.
        """
        return _readonly(self.make_order(ctx, tuple(active)))

    def order_of_rows(self, ctx: PolicyContext, active: tuple[int, ...],
                      rows: NDArray[np.int64]) -> NDArray[np.int64]:
        """``rows`` in the order `adaptive_order` reads them while ``active`` remain.

        A session remakes its order for the unread rows only: at an elimination most
        rows are read, and ordering them again was most of a key press (0.2 s at
        n = 100,000, K = 64).  This default filters the full order; `ScoreOrder`
        scores only ``rows``.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.
        active : tuple of int
            The candidates not eliminated.
        rows : numpy.ndarray of int64
            Row positions, ascending.

        Returns
        -------
        numpy.ndarray of int64
            ``rows`` permuted.
        """
        order = self.adaptive_order(ctx, active)
        keep = np.zeros(ctx.pool.n, dtype=bool)
        keep[rows] = True
        kept: NDArray[np.int64] = order[keep[order]]
        return kept

    def start(self, ctx: PolicyContext) -> OrderState:
        """The order for the candidates not already out, nothing read.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.

        Returns
        -------
        OrderState
            The order and a pointer at its start.
        """
        out = set(ctx.eliminated) if self.adaptive else set()
        active = tuple(k for k in range(ctx.pool.K) if k not in out)
        return OrderState(self.adaptive_order(ctx, active), 0, active)

    def choose(self, state: OrderState, view: SessionView) -> int:
        """The first unread row of the order.

        Parameters
        ----------
        state : OrderState
            The policy's state.
        view : SessionView
            The session now.

        Returns
        -------
        int
            An unread row position.

        Raises
        ------
        ParameterError
            When every row has been read.
        """
        s = _advance(state, view)
        if s.ptr >= s.order.size:
            raise ParameterError("every row has been read; there is no next row")
        return int(s.order[s.ptr])

    def update(self, state: OrderState, view: SessionView,
               row: int, label: int) -> OrderState:
        """Move past the rows read; an adaptive policy remakes its order when the
        candidates not eliminated change.

        Parameters
        ----------
        state : OrderState
            The state before the read.
        view : SessionView
            The session after the read.
        row : int
            The row position just read.
        label : int
            Its label code (the order does not depend on it).

        Returns
        -------
        OrderState
            The new state.
        """
        if self.adaptive:
            active = tuple(k for k in range(view.pool.K) if k not in view.eliminated)
            if active != state.active:
                unread = np.flatnonzero(view.unread_mask())
                state = OrderState(_readonly(self.order_of_rows(view.policy_context, active,
                                                                unread)), 0, active)
        return _advance(state, view)
