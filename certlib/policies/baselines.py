"""Policies of earlier work that the paper compares against (sections 5 and 9): VMA
(Hara et al. 2024) and the Model Selector (Okanovic et al. 2025)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core.pool import Pool
from ..errors import ParameterError
from .base import OrderPolicy, Policy, PolicyContext, SessionView, _readonly, pair_scores

__all__ = ["VMA", "ModelSelector", "PosteriorState"]


class VMA(OrderPolicy):
    """Sampling without replacement with probability proportional to
    0.01 + (1/2n) sum_{j<k} |a_ji - a_ki| (Hara et al. 2024, as in paper section 5).
    Sequential proportional sampling without replacement has the same law as
    sorting the keys E_i / w_i with E_i iid exponential (Efraimidis-Spirakis),
    so the whole order is drawn at once."""

    name = "vma"

    def make_order(self, ctx: PolicyContext, active: tuple[int, ...]) -> NDArray[np.int64]:
        """The whole sampled order at once, from ``ctx.seed``.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context; its seed draws the exponential keys.
        active : tuple of int
            Not used: VMA weighs every pair.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            A permutation of the row positions.
        """
        pool = ctx.pool
        w = 0.01 + pair_scores(pool, None, kind="pair-sum") / (2.0 * pool.n)
        keys = np.random.default_rng(ctx.seed).exponential(size=pool.n) / w
        return np.argsort(keys, kind="stable")


@dataclass(frozen=True, eq=False)
class PosteriorState:
    """State of the `ModelSelector`.

    Parameters
    ----------
    log_post : numpy.ndarray of float64, shape (K,)
        Log posterior over "which candidate is best", read-only.
    rng_seed : int
        Seed of the random tie-breaking.
    step : int
        Labels read so far (each choice draws from ``[rng_seed, step]``).
    """

    log_post: NDArray[np.float64]  # (K,) log posterior over "which candidate is best"
    rng_seed: int
    step: int


class ModelSelector(Policy):
    """Okanovic et al. (2025): posterior over the best candidate with a uniform prior,
    update pi_j *= gamma^{1[pred_ji == y_i]}, gamma = (1 - eps) / eps, eps = 0.46; read
    the unread row minimising the expected posterior entropy, averaged uniformly over
    the classes; ties broken at random (seeded).  Every candidate stays in the
    posterior (paper section 9)."""

    name = "model-selector"
    eps = 0.46

    @property
    def log_gamma(self) -> float:
        """log gamma = log((1 - eps) / eps): a correct prediction's log-likelihood ratio."""
        return float(np.log((1 - self.eps) / self.eps))

    def start(self, ctx: PolicyContext) -> PosteriorState:
        """The uniform prior over the candidates.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.

        Returns
        -------
        PosteriorState
            The prior, step 0.
        """
        K = ctx.pool.K
        return PosteriorState(_readonly(np.full(K, -np.log(K))), int(ctx.seed), 0)

    def expected_entropy(self, state: PosteriorState, pool: Pool,
                         rows: NDArray[np.int64]) -> NDArray[np.float64]:
        """Expected posterior entropy of reading each row, the label uniform over classes.

        Parameters
        ----------
        state : PosteriorState
            The posterior now.
        pool : Pool
            The pool.
        rows : numpy.ndarray of int64
            Row positions to evaluate.

        Returns
        -------
        numpy.ndarray of float64
            The expected entropy (nats) after reading each row, in the order of ``rows``.
        """
        P = pool.preds[:, rows]  # (K, m)
        C = pool.n_classes
        lp = state.log_post
        pi = np.exp(lp)
        H0 = -np.sum(pi * lp)
        g, lg = np.exp(self.log_gamma), self.log_gamma
        # the posterior if the label is class c boosts the candidates predicting c by
        # gamma; its entropy needs only their mass M and sum E of pi log pi (one product
        # a class, K terms a row, where pairing candidates took K^2):
        #   H_c = log Z - (-H0 + (gamma - 1) E + gamma log(gamma) M) / Z,  Z = 1 + (gamma - 1) M
        # (sums row by row in a fixed order, not a BLAS product whose order depends on
        # the processor: near-ties must break alike on every machine)
        total = np.zeros(P.shape[1])
        plp = (pi * lp)[:, None]
        for c in range(C):
            X = P == c
            M = np.where(X, pi[:, None], 0.0).sum(axis=0)
            E = np.where(X, plp, 0.0).sum(axis=0)
            Z = 1 + (g - 1) * M
            Hc = np.log(Z) - (-H0 + (g - 1) * E + g * lg * M) / Z
            # a class no candidate predicts leaves the posterior as it is
            total += np.where(X.any(axis=0), Hc, H0)
        out: NDArray[np.float64] = total / C
        return out

    def choose(self, state: PosteriorState, view: SessionView) -> int:
        """The unread row of least expected posterior entropy, ties broken at random.

        Parameters
        ----------
        state : PosteriorState
            The posterior now.
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
        unread = np.flatnonzero(view.unread_mask())
        if unread.size == 0:
            raise ParameterError("every row has been read; there is no next row")
        ee = self.expected_entropy(state, view.pool, unread)
        best = np.flatnonzero(ee <= ee.min() + 1e-12)
        rng = np.random.default_rng([state.rng_seed, state.step])
        return int(unread[best[rng.integers(best.size)]])

    def update(self, state: PosteriorState, view: SessionView, row: int,
               label: int) -> PosteriorState:
        """The posterior after reading ``row``: candidates right on it gain a factor gamma.

        Parameters
        ----------
        state : PosteriorState
            The posterior before the read.
        view : SessionView
            The session after the read.
        row : int
            The row position read.
        label : int
            Its label code.

        Returns
        -------
        PosteriorState
            The normalised posterior, one step on.
        """
        hit = view.pool.preds[:, row] == label
        lp = state.log_post + self.log_gamma * hit
        lp = lp - np.logaddexp.reduce(lp)
        return PosteriorState(_readonly(lp), state.rng_seed, state.step + 1)
