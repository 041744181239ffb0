"""The paper's reading orders (section 5): static and adaptive range (eq. (10)) and
pair-sum, and the random order."""

from __future__ import annotations

import numpy as np

from .base import OrderPolicy, order_by_score, pair_scores

__all__ = ["AdaptivePairSum", "AdaptiveRange", "RandomOrder", "ScoreOrder", "StaticPairSum",
           "StaticRange"]


class ScoreOrder(OrderPolicy):
    """Rows by decreasing score (paper section 5): ``range`` (eq. (10)) or ``pair-sum``;
    adaptive versions score only the pairs of candidates not yet eliminated."""

    kind = "range"

    def make_order(self, ctx, active):
        mask = None
        if self.adaptive:
            mask = np.zeros(ctx.pool.K, dtype=bool)
            mask[list(active)] = True
        return order_by_score(pair_scores(ctx.pool, mask, self.kind))


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
