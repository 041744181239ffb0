"""The paper's reading orders (section 5): static and adaptive range (eq. (10)) and
pair-sum, and the random order."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core.pool import Pool
from .base import OrderPolicy, PolicyContext, order_by_score, pair_scores, pair_sum_without

__all__ = ["AdaptivePairSum", "AdaptiveRange", "RandomOrder", "ScoreOrder", "StaticPairSum",
           "StaticRange"]


class ScoreOrder(OrderPolicy):
    """Rows by decreasing score (paper section 5): ``range`` (eq. (10)) or ``pair-sum``;
    adaptive versions score only the pairs of candidates not yet eliminated."""

    kind = "range"

    def make_order(self, ctx: PolicyContext, active: tuple[int, ...]) -> NDArray[np.int64]:
        """Rows by decreasing `pair_scores` of the kind ``kind``, lowest position first on
        ties.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.
        active : tuple of int
            The candidates not eliminated; only an adaptive policy restricts the
            score to their pairs.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            A permutation of the row positions.
        """
        if not self.adaptive:
            return order_by_score(pair_scores(ctx.pool, kind=self.kind))
        return order_by_score(self._scores(ctx.pool, tuple(active)))

    def _scores(self, pool: Pool, active: tuple[int, ...]) -> NDArray[np.int64]:
        """`pair_scores` over the pairs of ``active``; pair-sum scores after an
        elimination come from the last ones (`pair_sum_without`: a run eliminates one
        candidate at a time, K - 1 times at most)."""
        last = getattr(self, "_last", None)
        if (self.kind == "pair-sum" and last is not None and last[0] is pool
                and set(active) <= set(last[1])):
            scores = pair_sum_without(pool, last[2], last[1],
                                      [k for k in last[1] if k not in active])
        else:
            mask = np.zeros(pool.K, dtype=bool)
            mask[list(active)] = True
            scores = pair_scores(pool, mask, kind=self.kind)
        if self.kind == "pair-sum":
            self._last = (pool, active, scores)
        return scores


class StaticRange(ScoreOrder):
    """Rows by decreasing range score, max over pairs of the potential gain (paper eq. (10)),
    over every candidate: the order is fixed before any label."""

    name, kind = "static-range", "range"


class StaticPairSum(ScoreOrder):
    """Rows by decreasing pair-sum score, the potential gain summed over every pair (paper
    section 5): the order is fixed before any label."""

    name, kind = "static-pair-sum", "pair-sum"


class AdaptiveRange(ScoreOrder):
    """The range order over the candidates not yet eliminated, remade at each
    elimination (paper section 5)."""

    name, kind, adaptive = "adaptive-range", "range", True


class AdaptivePairSum(ScoreOrder):
    """The pair-sum order over the candidates not yet eliminated, remade at each
    elimination (paper section 5)."""

    name, kind, adaptive = "adaptive-pair-sum", "pair-sum", True


class RandomOrder(OrderPolicy):
    """A uniformly random permutation of the rows, drawn from the run's seed: the
    baseline every order is compared with (paper section 5)."""

    name = "random"

    def make_order(self, ctx: PolicyContext, active: tuple[int, ...]) -> NDArray[np.int64]:
        """A random permutation of the rows from ``ctx.seed`` (the same for the same seed).

        Parameters
        ----------
        ctx : PolicyContext
            The run's context; its seed draws the order.
        active : tuple of int
            Not used: the order does not depend on the candidates.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            A permutation of the row positions.
        """
        return np.random.default_rng(ctx.seed).permutation(ctx.pool.n)
