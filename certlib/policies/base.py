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

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from ..core.pair_terms import pair_potential
from ..errors import ParameterError

__all__ = ["OrderPolicy", "OrderState", "Policy", "PolicyContext", "order_by_score", "pair_scores"]


@dataclass(frozen=True, eq=False)
class PolicyContext:
    pool: Any
    rule: str = "shared"
    seed: int = 0
    tolerance: Any = 0
    eliminated: tuple = ()  # candidates already out before any label (e.g. duplicates)


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

    def start(self, ctx: PolicyContext) -> Any: ...

    def choose(self, state: Any, view: Any) -> int: ...

    def update(self, state: Any, view: Any, row: int, label: int) -> Any: ...

    def static_order(self, ctx: PolicyContext) -> np.ndarray | None:
        """The full reading order when no label can change it, else None."""
        return None

    def adaptive_order(self, ctx: PolicyContext, active: tuple) -> np.ndarray | None:
        """When labels change the order only by eliminating candidates: the full
        reading order while exactly the candidates ``active`` remain (the policy
        switches to the new order at each elimination).  Else None."""
        return None


def _readonly(a):
    a.setflags(write=False)
    return a


# ---------------------------------------------------------------- row scores
def pair_scores(pool, active=None, kind: str = "range") -> np.ndarray:
    """Per-row score over the candidate pairs inside ``active`` (all when None):
    ``range`` = max over pairs of the potential gain (= max_j a_ji - min_j a_ji for
    binary pools, paper eq. (10)); ``pair-sum`` = sum over unordered pairs."""
    K, n = pool.K, pool.n
    members = list(range(K)) if active is None else [k for k in range(K) if active[k]]
    out = np.zeros(n, dtype=np.int64)
    for a, j in enumerate(members):
        for k in members[a + 1:]:
            pot = pair_potential(pool, j, k)
            if kind == "range":
                np.maximum(out, pot, out=out)
            else:
                out += pot
    return out


def order_by_score(scores: np.ndarray) -> np.ndarray:
    """Rows by decreasing score, lowest row position first on ties."""
    return np.argsort(-np.asarray(scores), kind="stable")


# -------------------------------------------------------- order-based policies
@dataclass(frozen=True, eq=False)
class OrderState:
    order: np.ndarray  # a permutation of row positions, shared read-only
    ptr: int  # every row before order[ptr] has been read
    active: tuple = ()  # candidates the order was computed for (adaptive policies)


def _advance(state: OrderState, view) -> OrderState:
    ptr, order = state.ptr, state.order
    while ptr < order.size and view.is_read(int(order[ptr])):
        ptr += 1
    return state if ptr == state.ptr else replace(state, ptr=ptr)


class OrderPolicy(Policy):
    """Reads rows along an order made before any label (``adaptive``: remade when a
    candidate is eliminated); subclasses say how the order is made."""

    name = "order"
    adaptive = False  # remake the order when a candidate is eliminated

    def make_order(self, ctx: PolicyContext, active: tuple) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def static_order(self, ctx: PolicyContext) -> np.ndarray | None:
        if self.adaptive:
            return None
        return _readonly(self.make_order(ctx, tuple(range(ctx.pool.K))))

    def adaptive_order(self, ctx: PolicyContext, active: tuple) -> np.ndarray:
        return _readonly(self.make_order(ctx, tuple(active)))

    def start(self, ctx: PolicyContext) -> OrderState:
        out = set(ctx.eliminated) if self.adaptive else set()
        active = tuple(k for k in range(ctx.pool.K) if k not in out)
        return OrderState(self.adaptive_order(ctx, active), 0, active)

    def choose(self, state: OrderState, view) -> int:
        s = _advance(state, view)
        if s.ptr >= s.order.size:
            raise ParameterError("every row has been read; there is no next row")
        return int(s.order[s.ptr])

    def update(self, state: OrderState, view, row: int, label: int) -> OrderState:
        if self.adaptive:
            active = tuple(k for k in range(view.pool.K) if k not in view.eliminated)
            if active != state.active:
                state = OrderState(self.adaptive_order(view.policy_context, active), 0, active)
        return _advance(state, view)
