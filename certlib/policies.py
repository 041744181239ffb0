"""Acquisition policies (SPEC section 8): which unread row to read next.

Every policy follows one small protocol, so that sessions and replays treat
them alike and one contract test covers them all:

    state = policy.start(ctx)                 # ctx: PolicyContext (pool, rule, seed, ...)
    row   = policy.choose(state, view)        # an unread row position; pure
    state = policy.update(state, view, row, label_code)   # after the row was read; pure

``view`` is the labelling session *after* the read (for ``update``) or now
(for ``choose``); policies use ``view.is_read(i)``, ``view.unread_mask()``,
``view.eliminated`` and ``view.L``.  States are immutable values; large arrays
in them (orders, scores) are shared read-only between states.

The policy only orders rows.  The stopping test decides when to stop and what
is certified, so any policy is valid (paper Figure 6).

Deterministic policies break score ties by lowest row position.  Scores use
the potential gains of `certlib.contrib` (|a_ji - a_ki| for binary pools), so
categorical pools work unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol

import numpy as np

from .contrib import pair_potential
from .errors import ParameterError

__all__ = ["Policy", "PolicyContext", "POLICIES", "get_policy", "register_policy",
           "policy_names", "static_order"]


@dataclass(frozen=True, eq=False)
class PolicyContext:
    pool: Any
    rule: str = "shared"
    seed: int = 0
    tolerance: Any = 0
    eliminated: tuple = ()  # candidates already out before any label (e.g. duplicates)


class Policy(Protocol):
    name: str

    def start(self, ctx: PolicyContext) -> Any: ...

    def choose(self, state: Any, view: Any) -> int: ...

    def update(self, state: Any, view: Any, row: int, label: int) -> Any: ...


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


def static_order(scores: np.ndarray) -> np.ndarray:
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


class OrderPolicy:
    """Reads rows along a fixed order; subclasses say how the order is made."""

    name = "order"
    adaptive = False  # recompute the order when a candidate is eliminated
    uses_labels = False  # the order depends on labels read (not for these)

    def make_order(self, ctx: PolicyContext, active) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def start(self, ctx: PolicyContext) -> OrderState:
        out = set(ctx.eliminated) if self.adaptive else set()
        active = tuple(k for k in range(ctx.pool.K) if k not in out)
        return OrderState(_readonly(self.make_order(ctx, active)), 0, active)

    def choose(self, state: OrderState, view) -> int:
        s = _advance(state, view)
        if s.ptr >= s.order.size:
            raise ParameterError("every row has been read; there is no next row")
        return int(s.order[s.ptr])

    def update(self, state: OrderState, view, row: int, label: int) -> OrderState:
        if self.adaptive:
            active = tuple(k for k in range(view.pool.K) if k not in view.eliminated)
            if active != state.active:
                ctx = view.policy_context
                state = OrderState(_readonly(self.make_order(ctx, active)), 0, active)
        return _advance(state, view)


class ScoreOrder(OrderPolicy):
    """Rows by decreasing score (paper section 5): ``range`` (eq. (10)) or ``pair-sum``;
    adaptive versions score only the pairs of candidates not yet eliminated."""

    kind = "range"

    def make_order(self, ctx, active):
        mask = None
        if self.adaptive:
            mask = np.zeros(ctx.pool.K, dtype=bool)
            mask[list(active)] = True
        return static_order(pair_scores(ctx.pool, mask, self.kind))


class StaticRange(ScoreOrder):
    name, kind = "static-range", "range"


class StaticPairSum(ScoreOrder):
    name, kind = "static-pair-sum", "pair-sum"


class AdaptiveRange(ScoreOrder):
    name, kind, adaptive = "adaptive-range", "range", True


class AdaptivePairSum(ScoreOrder):
    name, kind, adaptive = "adaptive-pair-sum", "pair-sum", True


class RandomOrder(OrderPolicy):
    name = "random"

    def make_order(self, ctx, active):
        return np.random.default_rng(ctx.seed).permutation(ctx.pool.n)


class VMA(OrderPolicy):
    """Sampling without replacement with probability proportional to
    0.01 + (1/2n) sum_{j<k} |a_ji - a_ki| (Hara et al. 2024, as in paper section 5).
    Sequential proportional sampling without replacement has the same law as
    sorting the keys E_i / w_i with E_i iid exponential (Efraimidis-Spirakis),
    so the whole order is drawn at once."""

    name = "vma"

    def make_order(self, ctx, active):
        pool = ctx.pool
        w = 0.01 + pair_scores(pool, None, "pair-sum") / (2.0 * pool.n)
        keys = np.random.default_rng(ctx.seed).exponential(size=pool.n) / w
        return np.argsort(keys, kind="stable")


# -------------------------------------------------------------- Model Selector
@dataclass(frozen=True, eq=False)
class PosteriorState:
    log_post: np.ndarray  # (K,) log posterior over "which candidate is best"
    rng_seed: int
    step: int


class ModelSelector:
    """Okanovic et al. (2025): posterior over the best candidate with a uniform prior,
    update pi_j *= gamma^{1[pred_ji == y_i]}, gamma = (1 - eps) / eps, eps = 0.46; read
    the unread row minimising the expected posterior entropy, averaged uniformly over
    the classes; ties broken at random (seeded).  Every candidate stays in the
    posterior (paper section 9)."""

    name = "model-selector"
    uses_labels = True
    eps = 0.46

    @property
    def log_gamma(self) -> float:
        return float(np.log((1 - self.eps) / self.eps))

    def start(self, ctx: PolicyContext) -> PosteriorState:
        K = ctx.pool.K
        return PosteriorState(_readonly(np.full(K, -np.log(K))), int(ctx.seed), 0)

    def expected_entropy(self, state: PosteriorState, pool, rows: np.ndarray) -> np.ndarray:
        """Expected posterior entropy of reading each row, the label uniform over classes."""
        P = pool.preds[:, rows]  # (K, m)
        K, C = pool.K, pool.n_classes
        lp = state.log_post
        H0 = -np.sum(np.exp(lp) * lp)
        # posterior if the label equals candidate c's prediction: boost every j agreeing with c
        agree = P[:, None, :] == P[None, :, :]  # (c, j, m)
        logits = lp[None, :, None] + self.log_gamma * agree
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            H = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)  # (c, m)
        # each distinct predicted class once: weight candidate c by 1/#candidates agreeing
        mult = agree.sum(axis=1)  # (c, m)
        distinct = (1.0 / mult).sum(axis=0)  # number of distinct predicted classes
        total = (H / mult).sum(axis=0) + np.maximum(C - distinct, 0) * H0
        return total / C

    def choose(self, state: PosteriorState, view) -> int:
        unread = np.flatnonzero(view.unread_mask())
        if unread.size == 0:
            raise ParameterError("every row has been read; there is no next row")
        ee = self.expected_entropy(state, view.pool, unread)
        best = np.flatnonzero(ee <= ee.min() + 1e-12)
        rng = np.random.default_rng([state.rng_seed, state.step])
        return int(unread[best[rng.integers(best.size)]])

    def update(self, state: PosteriorState, view, row: int, label: int) -> PosteriorState:
        hit = view.pool.preds[:, row] == label
        lp = state.log_post + self.log_gamma * hit
        lp = lp - np.logaddexp.reduce(lp)
        return PosteriorState(_readonly(lp), state.rng_seed, state.step + 1)


# ------------------------------------------------------------------ registry
POLICIES: dict[str, Callable[[], Policy]] = {}


def register_policy(name: str, factory: Callable[[], Policy]) -> None:
    """Make a policy available by name to sessions, replays and the command line."""
    POLICIES[name] = factory


for _cls in (StaticRange, StaticPairSum, AdaptiveRange, AdaptivePairSum, RandomOrder, VMA,
             ModelSelector):
    register_policy(_cls.name, _cls)


def policy_names() -> tuple:
    return tuple(POLICIES)


def get_policy(policy) -> Policy:
    if not isinstance(policy, str):
        return policy
    try:
        return POLICIES[policy]()
    except KeyError:
        raise ParameterError(
            f"policy must be one of {', '.join(POLICIES)}; got {policy!r}"
        ) from None


from . import policies_coverage  # noqa: E402,F401  (registers expected-coverage)
