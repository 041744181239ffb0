"""The paper's reading orders (section 5): static and adaptive range (eq. (10)) and
pair-sum, and the random order."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core.pool import Pool
from .base import (OrderPolicy, OrderState, PolicyContext, order_by_score, pair_scores,
                   pair_sum_without)

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

    def order_of_rows(self, ctx: PolicyContext, active: tuple[int, ...],
                      rows: NDArray[np.int64]) -> NDArray[np.int64]:
        """``rows`` by decreasing score over the pairs of ``active``, lowest position
        first on ties: the full order's restriction to ``rows``, scoring only them.

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
        pool = ctx.pool
        members = list(active) if self.adaptive else list(range(pool.K))
        if pool.is_binary and len(members) > 1:
            # the same formulas as `pair_scores` on the row-major copy of a: gathering
            # rows of (n, K) is contiguous, gathering columns of (K, n) is not (70 ms
            # against 4 at n = 1,000,000, K = 64, 60,000 rows).  The candidates out are
            # overwritten in the gathered copy, not cut out of it (a copy as costly as
            # the gather): for the range with a member's values (a repeated value
            # changes no max or min), for the pair-sum with the largest value, so they
            # sort last and get coefficient 0
            a = np.take(self._rows_a(pool), rows, axis=0)
            kept = set(members)
            out = [k for k in range(pool.K) if k not in kept]
            m = len(members)
            # (a column at a time: a fancy-indexed assignment was slower than the sort)
            if self.kind == "range":
                for k in out:
                    a[:, k] = a[:, members[0]]
                scores = a.max(axis=1).astype(np.int64) - a.min(axis=1)
            else:
                for k in out:
                    a[:, k] = np.iinfo(a.dtype).max
                a.sort(axis=1)
                coef = np.zeros(pool.K, dtype=np.int64)
                coef[:m] = 2 * np.arange(m, dtype=np.int64) - (m - 1)
                # einsum: exact int64 sums, 2x faster than matmul's integer loop
                scores = np.einsum("ij,j->i", a, coef)
        else:
            mask = np.zeros(pool.K, dtype=bool)
            mask[members] = True
            scores = pair_scores(pool, mask, kind=self.kind, rows=rows)
        ordered: NDArray[np.int64] = rows[order_by_score(scores)]
        return ordered

    def _rows_a(self, pool: Pool) -> NDArray[np.signedinteger]:
        """a_ji = w_ji (1 - 2 yhat_ji) of a binary pool as an (n, K) array, int32 when it
        fits; kept for the last pool (made when a session starts)."""
        cached = getattr(self, "_a_rows", None)
        if cached is None or cached[0] is not pool:
            a = pool.weights * (1 - 2 * pool.preds.astype(np.int64))
            small = a.size == 0 or int(np.abs(a).max()) < 2**31 - 1
            cached = (pool, np.ascontiguousarray(a.T, dtype=np.int32 if small else np.int64))
            self._a_rows = cached
        out: NDArray[np.signedinteger] = cached[1]
        return out

    def start(self, ctx: PolicyContext) -> OrderState:
        """The order for the candidates not already out, nothing read; an adaptive
        order on a binary pool also makes the row-major copy its eliminations use, so
        that the first one costs no more than the next.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.

        Returns
        -------
        OrderState
            The order and a pointer at its start.
        """
        if self.adaptive and ctx.pool.is_binary:
            self._rows_a(ctx.pool)
        return super().start(ctx)

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
