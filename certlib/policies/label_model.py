"""The label model of the ``expected-coverage`` policy (`certlib.policies.coverage`).

**Label probabilities.**  The policy needs ``q_ji = P(y_i = pred_ji)`` for every
candidate j and row i (`label_probabilities`).  Sources, first match wins:

1. ``prob_<class>`` columns kept in ``pool.extra`` (one per class): q_ji =
   prob_i(pred_ji).
2. a ``p_label`` column in ``pool.extra``: for a binary pool the probability
   that the label is the second class (``pool.classes[1]``); for a shared
   prediction pool the probability that the shared prediction is right.
3. the confidences, when they are probabilities of the candidate's own
   prediction: every confidence in [1/C, 1] (C classes, so [0.5, 1] for binary
   pools, e.g. the maximum class probability; 0.001 of rounding allowed).
   Candidate m's distribution puts conf_mi on pred_mi and spreads the rest
   evenly over the other C - 1 classes; the candidates are combined by their
   average (a linear opinion pool: robust when candidates are correlated,
   unlike a product of experts), each group of identical candidates counted
   once so duplicates do not outvote the rest.  In a shared-prediction pool
   with a candidate named ``msp`` (the loader's max-probability score for
   ``prob_`` files, which does not keep the columns) that candidate alone is
   used, because the other built-in scores are not probabilities.
4. otherwise none: the policy then reads exactly the ``adaptive-pair-sum``
   order (the documented fallback, so it is never worse than adaptive pair-sum).

The mixture is shrunk towards uniform, q <- (1 - a) q + a / C with ``a =
shrink`` (default 0.1): tree confidences of exactly 1 would otherwise give rows
no chance of an error.

**The agreement model** (`agreement_pred_prob`, the policy's default when
source 3 applies and the candidates' predictions differ somewhere) replaces the average
of source 3 by a model of how often a candidate is right given its confidence and the
share of the other candidates that agree with it (section comment below); the policy
then shrinks by 0.01 instead of 0.1.
"""

from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core.pair_terms import row_blocks
from ..core.pool import Pool

__all__ = ["AGREEMENT_PRIOR", "LabelProbabilities", "LabelSampler", "SAMPLER_DEFAULTS",
           "agreement_applies", "agreement_pred_prob", "fit_label_sampler",
           "label_probabilities"]

# confidences written with three decimals (1/3 -> 0.333) still count as probabilities
_ROUNDING = 1e-3


@dataclass(frozen=True, eq=False)
class LabelProbabilities:
    """The policy's label model for one pool: a mixture of experts.

    Expert e says ``P_e(y_i = c)``; the policy averages the experts (uniform
    weights) and shrinks the mixture towards uniform (module docstring).

    Parameters
    ----------
    source : str
        Where the probabilities come from: "prob_columns", "p_label", "confidences" or
        "none" (no usable probabilities).
    n_classes : int
        C, the pool's number of classes.
    expert_pred : numpy.ndarray of int64, shape (E, n), or None
        Expert e's own prediction on each row.
    expert_conf : numpy.ndarray of float64, shape (E, n), or None
        ``P_e(y_i = expert_pred_ei)``.
    probs : numpy.ndarray of float64, shape (n, C), or None
        The full distribution (prob_ columns only).
    experts : tuple of str
        Names of the experts (candidates or the column used).
    """

    source: str  # "prob_columns", "p_label", "confidences" or "none"
    n_classes: int
    expert_pred: NDArray[np.int64] | None  # (E, n) class codes: expert e's own prediction
    expert_conf: NDArray[np.float64] | None  # (E, n) P_e(y_i = expert_pred_ei)
    probs: NDArray[np.float64] | None = None  # (n, C) full distribution (prob_ columns only)
    experts: tuple[str, ...] = ()  # names of the experts (candidates or the column used)

    @property
    def usable(self) -> bool:
        """Whether there is a label model at all (else the policy falls back)."""
        return self.source != "none"

    @property
    def n_experts(self) -> int:
        """E, the number of experts (0 for prob_ columns and for none)."""
        return 0 if self.expert_pred is None else int(self.expert_pred.shape[0])

    def pred_prob(self, pool: Pool, *, shrink: float = 0.0) -> NDArray[np.float64]:
        """(K, n) P(y_i = pred_ji) under the mixture, shrunk by ``shrink`` towards uniform.

        Parameters
        ----------
        pool : Pool
            The pool the model was made for.
        shrink : float
            a in q <- (1 - a) q + a / C, in [0, 1].

        Returns
        -------
        numpy.ndarray of float64, shape (K, n)
            The probability that each candidate's prediction is the label.
        """
        C = self.n_classes
        if self.probs is not None:
            q = np.take_along_axis(self.probs.T, pool.preds, axis=0)
        elif self.expert_pred is not None and self.expert_conf is not None:
            E = self.n_experts
            q = np.zeros((pool.K, pool.n))
            other = (1 - self.expert_conf) / (C - 1)
            for e in range(E):
                same = self.expert_pred[e][None, :] == pool.preds
                q += (1.0 / E) * np.where(same, self.expert_conf[e][None, :], other[e][None, :])
        else:
            raise ValueError("this label model has no probabilities (source 'none')")
        out: NDArray[np.float64] = (1 - shrink) * q + shrink / C
        return out


def _prob_columns(pool: Pool) -> NDArray[np.float64] | None:
    cols = []
    for c in pool.classes:
        col = pool.extra.get(f"prob_{c}")
        if col is None:
            return None
        cols.append(col)
    try:
        P: NDArray[np.float64] = np.asarray(cols, dtype=np.float64).T  # (n, C)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(P).all() or (P < 0).any() or (P > 1).any():
        return None
    return P


def _distinct(preds: NDArray[np.int64], confs: NDArray[np.float64]) -> list[int]:
    """Indices of the first of each group of identical (prediction, confidence) experts:
    duplicated candidates must not outvote the others."""
    keep: list[int] = []
    for j in range(preds.shape[0]):
        if not any(np.array_equal(preds[j], preds[i]) and np.array_equal(confs[j], confs[i])
                   for i in keep):
            keep.append(j)
    return keep


def label_probabilities(pool: Pool) -> LabelProbabilities:
    """The label model of the policy (module docstring: the sources in order).

    Parameters
    ----------
    pool : Pool
        The pool; its ``prob_`` or ``p_label`` columns, or its candidates'
        confidences when they read as probabilities, are used.

    Returns
    -------
    LabelProbabilities
        The model, ``source="none"`` when there is nothing usable.

    Examples
    --------
    >>> from certlib import Pool
    >>> pool = Pool.from_arrays([[0, 1, 1], [0, 0, 1]], [[0.9, 0.6, 0.8], [0.7, 0.55, 0.9]],
    ...                         names=["A", "B"])
    >>> lm = label_probabilities(pool)
    >>> lm.source, lm.experts, lm.pred_prob(pool)[0].round(3).tolist()
    ('confidences', ('A', 'B'), [0.8, 0.525, 0.85])
    """
    K, n, C = pool.K, pool.n, pool.n_classes
    P = _prob_columns(pool)
    if P is not None:
        return LabelProbabilities("prob_columns", C, None, None, P, ("prob_",))
    if "p_label" in pool.extra and (pool.is_binary or pool.shared_prediction):
        p: NDArray[np.float64] | None
        try:
            p = np.asarray(pool.extra["p_label"], dtype=np.float64)
        except (TypeError, ValueError):
            p = None
        if p is not None and np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all():
            if pool.is_binary:  # P(y = classes[1]) as the probability of predicting class 1
                return LabelProbabilities("p_label", C, np.ones((1, n), np.int64), p[None, :],
                                          None, ("p_label",))
            return LabelProbabilities("p_label", C, pool.preds[:1].copy(), p[None, :], None,
                                      ("p_label",))
    use = list(range(K))
    if pool.shared_prediction and "msp" in pool.names:
        use = [pool.names.index("msp")]
    c = pool.confs[use]
    lo = 1.0 / C
    if (c >= lo - _ROUNDING).all() and (c <= 1 + _ROUNDING).all():
        keep = [use[i] for i in _distinct(pool.preds[use], c)]
        return LabelProbabilities("confidences", C, pool.preds[keep].copy(),
                                  np.clip(pool.confs[keep], lo, 1.0),
                                  None, tuple(pool.names[j] for j in keep))
    return LabelProbabilities("none", C, None, None)



# ---------------------------------------------------------------------------
# The agreement model (expected-coverage's default): how often is a candidate
# right, from its confidence *and* from how many other candidates predict the same?
#
#     r_ki = sigmoid(a + b logit(conf_ki) + c share_ki),
#
# share_ki the fraction of the other K - 1 candidates predicting pred_ki, conf clipped to
# [1/C, 0.99].  P(y_i = pred_ki) is the mean of r over the candidates predicting that
# class (so candidates that agree get the same probability), divided by the sum over the
# classes predicted on row i when that sum is above 1 or when every class is predicted
# (then they add up to 1); otherwise the rest is left to the classes nobody predicts.
# Exact duplicate candidates count as agreeing (counting them once moved the saving by
# -0.1 to +0.3 points on six development sets, tail unchanged, so the evaluated form
# stayed).  Why: the mixture above averages each expert's own view, so on rows where
# every candidate agrees it expects 1.6-12 times the errors those rows have, and on rows
# where they disagree too few (measured on 288 panel
# pools of split seeds 0-7, 40-43, 60-63, 90-93 and 110-113, bench/EXPERIMENTS.md).
# Agreement is the strongest label-free evidence on panel pools: a logistic fit of
# correctness on (logit conf, share) gives c = 2-6 for every data set, model family and
# K, and (a, b, c) = ``AGREEMENT_PRIOR`` is their rounded pooled fit.  It applies to
# candidates' own confidences (source "confidences") when their predictions differ
# somewhere; prob_ columns, p_label and a shared prediction keep the mixture.
# ---------------------------------------------------------------------------

AGREEMENT_PRIOR = (-2.5, 0.6, 4.5)


def agreement_applies(pool: Pool, lm: LabelProbabilities) -> bool:
    """Whether the agreement model applies: it needs candidates' own confidences and
    predictions that differ on some row (otherwise share is 1 everywhere and carries
    nothing).

    Parameters
    ----------
    pool : Pool
        The pool.
    lm : LabelProbabilities
        Its label model (`label_probabilities`).

    Returns
    -------
    bool
        True when the model's source is "confidences" and two predictions differ.
    """
    return (lm.source == "confidences" and pool.K >= 2
            and bool((pool.preds != pool.preds[:1]).any()))


def agreement_pred_prob(pool: Pool, *, coef: Sequence[float] = AGREEMENT_PRIOR,
                        clip: float = 0.99) -> NDArray[np.float64]:
    """(K, n) P(y_i = pred_ki) under the agreement model (section comment above).

    Parameters
    ----------
    pool : Pool
        The pool; its confidences are read as probabilities of each candidate's own
        prediction.
    coef : sequence of three floats
        (a, b, c) of r = sigmoid(a + b logit(conf) + c share).
    clip : float
        Confidences are clipped to [1/C, clip] before the logit.

    Returns
    -------
    numpy.ndarray of float64, shape (K, n)
        The probability that each candidate's prediction is the label.
    """
    C, K = pool.n_classes, pool.K
    a, b, c = (float(v) for v in coef)
    q = np.empty((K, pool.n))
    for blk in row_blocks(pool.n, 1 << 14):
        P = pool.preds[:, blk]
        x = _logit(np.clip(pool.confs[:, blk], 1.0 / C, clip))
        cnt = (P[:, None, :] == P[None, :, :]).sum(axis=1)  # k's group size, k included
        r = 1.0 / (1.0 + np.exp(-(a + b * x + c * (cnt - 1) / (K - 1))))
        q[:, blk] = agreement_groups(P, r, C)
    return q


def agreement_groups(P: NDArray[np.int64], r: NDArray[np.float64],
                     C: int) -> NDArray[np.float64]:
    """P(y_i = pred_ki) from each candidate's P(right) ``r`` on rows with predictions
    ``P``: candidates predicting the same class share their group's mean, and the
    classes' probabilities are normalised when they sum to more than 1 or every class is
    predicted (a class nobody predicts takes the rest).

    Parameters
    ----------
    P : numpy.ndarray of int64, shape (K, m)
        Predicted class codes.
    r : numpy.ndarray of float64, shape (..., K, m)
        Each candidate's probability of being right; leading axes (e.g. one per
        forecast draw) are kept.
    C : int
        Number of classes.

    Returns
    -------
    numpy.ndarray of float64, shape (..., K, m)
        P(y_i = pred_ki).

    Examples
    --------
    >>> q = agreement_groups(np.array([[0], [0], [1]]), np.array([[0.9], [0.7], [0.6]]), 2)
    >>> q.round(4).tolist()   # class 0: mean 0.8, class 1: 0.6, normalised to sum 1
    [[0.5714], [0.5714], [0.4286]]
    """
    K = P.shape[0]
    same = P[:, None, :] == P[None, :, :]  # (K, K, m)
    g = np.einsum("jkm,...km->...jm", same, r) / same.sum(axis=1)  # mean r of k's group
    first = np.array([~same[k, :k].any(axis=0) for k in range(K)])  # one per class
    total = (g * first).sum(axis=-2, keepdims=True)
    room = first.sum(axis=0) < C
    out: NDArray[np.float64] = g * np.where(room & (total <= 1), 1.0,
                                            1.0 / np.maximum(total, 1e-12))
    return out


def unread_frame(labels: NDArray[np.int64],
                 draws: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(draws, n) copies of the known label codes and the positions still to sample.

    Parameters
    ----------
    labels : numpy.ndarray of int64, shape (n,)
        Known label codes, negative where unread.
    draws : int
        Number of copies.

    Returns
    -------
    Y : numpy.ndarray of int64, shape (draws, n)
        Writable copies of ``labels``.
    unread : numpy.ndarray of int64
        Positions whose label is to be drawn.

    Examples
    --------
    >>> Y, unread = unread_frame(np.array([1, -1, 0]), 2)
    >>> Y.tolist(), unread.tolist()
    ([[1, -1, 0], [1, -1, 0]], [1])
    """
    return (np.broadcast_to(labels, (draws, labels.size)).copy(),
            np.flatnonzero(labels < 0))

# ---------------------------------------------------------------------------
# The forecast's label sampler (`certlib.planning.label_forecast`): the same experts, calibrated
# on the labels already read, sampled jointly per draw.
#
# Why not sample every row independently from the averaged experts?  Where the
# candidates disagree the average is near 1/2, so every candidate looks equally
# wrong there, the race looks close, and the forecast reads far too many labels
# (and its interval is too narrow: independent rows average out).  The truth is
# closer to "one view of the labels is right, up to its own stated errors".
#
# The sampler is a mixture over *which expert describes the labels* (Bayesian model
# averaging at the level of a draw):
#
# 1. Experts: those of `label_probabilities` (a prob_ column set, p_label, or one
#    expert per distinct candidate whose confidences are probabilities of its own
#    prediction).  With no usable probabilities: one expert per distinct candidate
#    whose confidence is replaced by its accuracy, estimated from the labels read
#    (Beta(3, 1) prior: 3/4 before any label) -- stated in `note`.
# 2. Calibration from the labels read (Platt-style): per expert,
#    P(y = pred) = sigmoid(a + b logit(q)), fitted by a few Newton steps of a
#    penalised likelihood on the read rows, the penalty pulling (a, b) to (0, 1)
#    with weight ``ridge`` (so no labels = the stated confidences), separately on the
#    rows where every candidate predicts the same class and on the others
#    (``strata``): a policy reads the disagreements first, and their error rate says
#    little about the rows where all agree (one fit for both made the forecast after a
#    quarter of the pool 3 points of n too short on the tuning pools).  The confidences
#    of candidates (source "confidences"; p_label and prob_ columns are taken as
#    stated) enter the fit clipped to [1/C, ``agree_clip``] (0.99): unclipped, a
#    confidence of exactly 1 has logit 13.8 and a few such rows dominate the fit.  (The
#    fit itself is a damped Newton method: full steps from saturated confidences
#    oscillated, and on tree pools gave the unread disagreement rows P(right) ~ 0.06, a
#    forecast far too long after a quarter.)  On the rows where every
#    candidate agrees, every expert uses the *consensus* log-odds (the mean of the
#    candidates' clipped logits; on the tuning pools' agreement rows this is about
#    calibrated: Platt slope 1.1, intercept 0.04) and is shrunk by ``agree_shrink``
#    (0.05) instead of ``shrink``: the linear average shrunk 10% gave agreement rows 2-5
#    times the errors they have, a forecast too long.  Then shrunk by ``shrink``
#    towards 1/C (stated confidences of exactly 1 leave room for errors).
# 3. Which expert: prior uniform over the experts, posterior proportional to the
#    likelihood of the labels read raised to ``temper`` (tempered: the experts are
#    never exactly right, an untempered posterior would be overconfident).
# 4. Each draw picks one expert e from the posterior; each unread row then follows
#    expert e with probability 1 - ``blend``, otherwise an expert drawn afresh from
#    the posterior, and its label is drawn from that expert's calibrated distribution.
# 5. Calibration is uncertain: each draw recalibrates every expert once more,
#    q <- sigmoid(a + b logit q) with a ~ N(0, s), log b ~ N(0, s), s = ``jitter`` /
#    sqrt(1 + labels read / ``jscale``) (``jscale`` 50: once many labels are read the
#    spread should come from the unread labels, not from the calibration).  This widens
#    the forecast honestly: without it the 10-90% interval covered the realised count
#    on about 63% of the tuning pools.
# Defaults (SAMPLER_DEFAULTS) were chosen on panel pools of split seeds 0-7 (and the
# second version's agree_clip / agree_shrink / jscale on 0-7 and 40-43; fresh split
# seeds 90-93, then 110-113 after a fix of `_platt`, were evaluated once each;
# bench/bench_forecast_holdout.py; docs/benchmarks.md, "Label forecast").
# ---------------------------------------------------------------------------

SAMPLER_DEFAULTS = {"shrink": 0.1, "blend": 0.6, "temper": 0.5, "ridge": 20.0,
                    "jitter": 1.2, "jscale": 50.0, "strata": 1, "agree_clip": 0.99,
                    "agree_shrink": 0.05, "consensus": 1}


def _logit(p: npt.ArrayLike) -> NDArray[np.float64]:
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    out: NDArray[np.float64] = np.log(q) - np.log1p(-q)
    return out


def _logistic_map(X: NDArray[np.float64], y: NDArray[np.float64], prior: Sequence[float],
                  ridge: float, steps: int = 25) -> NDArray[np.float64]:
    """Coefficients w maximising sum log-lik of y ~ sigmoid(X w) - ridge/2 |w - prior|^2
    (a penalised logistic regression, so no labels = the prior), by damped Newton steps."""
    w = np.array(prior, dtype=np.float64)
    prior = w.copy()

    # concave: log-likelihood (log-sum-exp form) minus the penalty
    def objective(w: NDArray[np.float64]) -> float:
        z = X @ w
        return float(y @ z - np.logaddexp(0.0, z).sum() - ridge / 2 * ((w - prior) ** 2).sum())

    f = objective(w)
    for _ in range(steps):
        z = X @ w
        p = 1.0 / (1.0 + np.exp(-z))
        g = X.T @ (y - p) - ridge * (w - prior)
        H = (X * (p * (1 - p))[:, None]).T @ X + ridge * np.eye(w.size)
        step = np.linalg.solve(H, g)
        # damped Newton: a full step from saturated probabilities (confidences near 1)
        # overshoots and can oscillate; halve it until the objective improves
        t = 1.0
        while t > 1e-6 and objective(w + t * step) < f:
            t /= 2
        w = w + t * step
        f_new = objective(w)
        if f_new - f < 1e-12 or np.abs(t * step).max() < 1e-9:
            break
        f = f_new
    return w


def _platt(x: NDArray[np.float64], correct: NDArray[np.float64], ridge: float,
           steps: int = 25) -> tuple[float, float]:
    """(a, b) maximising sum log-lik of correct ~ sigmoid(a + b x) - ridge/2 |(a, b-1)|^2."""
    if x.size == 0:
        return 0.0, 1.0
    X = np.stack([np.ones_like(x), x], axis=1)
    a, b = _logistic_map(X, correct, (0.0, 1.0), ridge, steps)
    return float(a), float(b)


@dataclass(frozen=True, eq=False)
class LabelSampler:
    """Draws complete label vectors: known labels kept, unread ones sampled (the section
    comment above `SAMPLER_DEFAULTS`).

    Parameters
    ----------
    source : str
        "prob_columns", "p_label", "confidences" or "accuracy" (the fallback).
    note : str
        One sentence for the reader: what the model is and what it was fitted on.
    labels : numpy.ndarray of int64, shape (n,)
        Known codes, -1 where unread.
    n_classes : int
        C.
    expert_pred : numpy.ndarray of int64, shape (E, n), or None
        Each expert's predicted class codes.
    expert_q : numpy.ndarray of float64, shape (E, n), or None
        Calibrated P(y = expert_pred).
    probs : numpy.ndarray of float64, shape (n, C), or None
        Calibrated distribution (prob_ columns).
    weights : numpy.ndarray of float64, shape (E,)
        Posterior over the experts.
    blend : float
        Probability that a row follows an expert drawn afresh instead of the draw's.
    jitter : float
        Standard deviation of each draw's random recalibration (a, log b).
    """

    source: str  # "prob_columns", "p_label", "confidences" or "accuracy" (the fallback)
    note: str
    labels: NDArray[np.int64]  # (n,) known codes, -1 where unread
    n_classes: int
    expert_pred: NDArray[np.int64] | None  # (E, n) class codes
    expert_q: NDArray[np.float64] | None  # (E, n) calibrated P(y = expert_pred)
    probs: NDArray[np.float64] | None  # (n, C) calibrated distribution (prob_ columns)
    weights: NDArray[np.float64]  # (E,) posterior over the experts
    blend: float
    jitter: float = 0.0  # sd of each draw's random recalibration (a, log b)

    def sample(self, rng: np.random.Generator, draws: int) -> NDArray[np.int64]:
        """Complete label vectors, one per draw.

        Parameters
        ----------
        rng : numpy.random.Generator
            The source of randomness (seed it for a reproducible forecast).
        draws : int
            Number of label vectors.

        Returns
        -------
        numpy.ndarray of int64, shape (draws, n)
            Label codes; known rows hold the known labels.
        """
        C = self.n_classes
        Y, unread = unread_frame(self.labels, draws)
        m = unread.size
        if m == 0:
            return Y
        if self.probs is not None:
            cdf = np.cumsum(self.probs[unread], axis=1)
            u = rng.random((draws, m))
            Y[:, unread] = np.minimum((u[:, :, None] > cdf[None, :, :]).sum(axis=2), C - 1)
            return Y
        if self.expert_pred is None or self.expert_q is None:
            raise ValueError("a LabelSampler needs experts or a distribution")
        E = self.weights.size
        e_draw = rng.choice(E, size=draws, p=self.weights)  # one expert per draw
        fresh = rng.choice(E, size=(draws, m), p=self.weights)
        keep = rng.random((draws, m)) >= self.blend
        e = np.where(keep, e_draw[:, None], fresh)  # (draws, m)
        pred = self.expert_pred[:, unread][e, np.arange(m)[None, :]]
        q = self.expert_q[:, unread][e, np.arange(m)[None, :]]
        if self.jitter > 0:  # each draw recalibrates: q <- sigmoid(a + b logit q)
            a = rng.normal(0.0, self.jitter, size=(draws, 1))
            b = np.exp(rng.normal(0.0, self.jitter, size=(draws, 1)))
            q = 1.0 / (1.0 + np.exp(-(a + b * _logit(q))))
        right = rng.random((draws, m)) < q
        if C == 2:
            y = np.where(right, pred, 1 - pred)
        else:  # a wrong label is one of the C - 1 other classes, uniformly
            other = rng.integers(0, C - 1, size=(draws, m))
            other = other + (other >= pred)
            y = np.where(right, pred, other)
        Y[:, unread] = y
        return Y


def fit_label_sampler(pool: Pool, *, shrink: float | None = None, blend: float | None = None,
                      temper: float | None = None, ridge: float | None = None,
                      jitter: float | None = None,
                      strata: float | None = None, jscale: float | None = None,
                      agree_clip: float | None = None, agree_shrink: float | None = None,
                      consensus: float | None = None) -> LabelSampler:
    """The forecast's label model for ``pool`` (section comment above), fitted on the
    labels the pool already holds.

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far.
    shrink, blend, temper, ridge, jitter : float, optional
        The sampler's settings (section comment above); None takes
        `SAMPLER_DEFAULTS`.
    strata, jscale, agree_clip, agree_shrink, consensus : float, optional
        Likewise.

    Returns
    -------
    LabelSampler
        The fitted sampler.
    """
    d = SAMPLER_DEFAULTS
    shrink = d["shrink"] if shrink is None else float(shrink)
    blend = d["blend"] if blend is None else float(blend)
    temper = d["temper"] if temper is None else float(temper)
    ridge = d["ridge"] if ridge is None else float(ridge)
    jitter = d["jitter"] if jitter is None else float(jitter)
    strata = d["strata"] if strata is None else bool(strata)
    jscale = d["jscale"] if jscale is None else float(jscale)
    agree_clip = d["agree_clip"] if agree_clip is None else float(agree_clip)
    agree_shrink = d["agree_shrink"] if agree_shrink is None else float(agree_shrink)
    C = pool.n_classes
    labels = np.asarray(pool.labels, dtype=np.int64)
    known = np.flatnonzero(labels >= 0)
    nk = known.size
    lm = label_probabilities(pool)
    read_txt = (f"calibrated on the {nk:,} labels already read" if nk
                else "no label read yet, so the stated probabilities are taken as they are")
    if lm.probs is not None:
        P = (1 - shrink) * lm.probs / np.maximum(lm.probs.sum(axis=1, keepdims=True), 1e-12) \
            + shrink / C
        if nk:  # temperature-style recalibration of the whole distribution, on read rows
            lp = np.log(np.clip(P, 1e-9, 1))
            best, best_ll = 1.0, -np.inf
            for T in (0.5, 0.67, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0):
                Q = np.exp(lp[known] / T)
                Q /= Q.sum(axis=1, keepdims=True)
                ll = np.log(Q[np.arange(nk), labels[known]]).sum() - ridge * np.log(T) ** 2
                if ll > best_ll:
                    best, best_ll = T, ll
            Q = np.exp(lp / best)
            P = Q / Q.sum(axis=1, keepdims=True)
        note = ("label model: the pool's prob_ columns, shrunk 10% towards uniform, "
                f"{read_txt}; unread labels drawn independently")
        return LabelSampler("prob_columns", note, labels, C, None, None, P, np.ones(1), blend)
    if lm.usable and lm.expert_pred is not None and lm.expert_conf is not None:
        pred = lm.expert_pred
        q0 = lm.expert_conf
        source = lm.source
        names = ", ".join(str(x) for x in lm.experts)
        what = ("the p_label column" if source == "p_label" else
                f"the confidences of {names} read as probabilities of each one's own prediction")
    else:  # no probabilities: each distinct candidate is right with its estimated accuracy
        keep = _distinct(pool.preds, np.zeros_like(pool.confs))
        pred = pool.preds[keep].copy()
        acc = []
        for j in range(pred.shape[0]):
            right = int((pred[j, known] == labels[known]).sum())
            acc.append((3 + right) / (4 + nk))
        q0 = np.broadcast_to(np.asarray(acc)[:, None], pred.shape).copy()
        source = "accuracy"
        what = ("no usable probabilities (the confidences are not probabilities and there "
                "is no prob_ or p_label column): each candidate is taken to be right with "
                "its accuracy on the labels read (3/4 before any label), the same on "
                "every row -- a rough forecast")
    E = pred.shape[0]
    q = np.empty(pred.shape)
    loglik = np.zeros(E)
    # rows where every candidate predicts the same class are calibrated apart from the
    # others: a policy reads the disagreements first, and their error rate says little
    # about the rows where all candidates agree
    agree = (pool.preds == pool.preds[:1]).all(axis=0)
    clip = source == "confidences" and agree_clip < 1  # candidates' own confidences only
    consensus = (d["consensus"] if consensus is None else bool(consensus)) and strata \
        and clip
    if consensus:
        xa = _logit(np.clip(q0[:, agree], 1.0 / C, agree_clip)).mean(axis=0)
    for e in range(E):
        x = _logit(np.clip(q0[e], 1.0 / C, agree_clip)) if clip else _logit(q0[e])
        if consensus:
            x[agree] = xa
        qe = np.empty(pool.n)
        for part in ((agree, ~agree) if strata else (np.ones(pool.n, dtype=bool),)):
            a, b = (0.0, 1.0)
            rows = known[part[known]]
            if rows.size and source != "accuracy":
                a, b = _platt(x[rows], (pred[e, rows] == labels[rows]).astype(float), ridge)
            qe[part] = 1.0 / (1.0 + np.exp(-(a + b * x[part])))
        sh = np.where(agree, agree_shrink, shrink) if consensus else shrink
        qe = (1 - sh) * qe + sh / C
        q[e] = qe
        if nk:
            ok = pred[e, known] == labels[known]
            loglik[e] = np.log(np.where(ok, qe[known], (1 - qe[known]) / (C - 1))).sum()
    z = temper * (loglik - loglik.max())
    w = np.exp(z)
    w /= w.sum()
    note = (f"label model: {what}; shrunk {100 * shrink:.0f}% towards uniform; {read_txt}; "
            f"each draw follows one candidate's view of the labels (weights from the labels "
            f"read), mixed {100 * blend:.0f}% row by row with the others, and each draw "
            f"recalibrates the confidences at random (calibration is uncertain)")
    jit = jitter / np.sqrt(1.0 + nk / jscale)  # the labels read narrow the recalibration
    return LabelSampler(source, note, labels, C, pred, q, None, w, blend, jit)
