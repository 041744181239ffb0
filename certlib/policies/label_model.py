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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Calibration", "LabelProbabilities", "calibration", "label_probabilities"]

# confidences written with three decimals (1/3 -> 0.333) still count as probabilities
_ROUNDING = 1e-3


@dataclass(frozen=True, eq=False)
class LabelProbabilities:
    """The policy's label model for one pool: a mixture of experts.

    Expert e says ``P_e(y_i = c)``; the policy mixes the experts with uniform
    weights (``alpha``), shrinks the mixture towards uniform and uses it as the
    prior of the model refitted on the labels read (`Calibration`).
    """

    source: str  # "prob_columns", "p_label", "confidences" or "none"
    n_classes: int
    expert_pred: np.ndarray | None  # (E, n) class codes: expert e's own prediction
    expert_conf: np.ndarray | None  # (E, n) P_e(y_i = expert_pred_ei)
    probs: np.ndarray | None = None  # (n, C) full distribution (prob_ columns only)
    experts: tuple = ()  # names of the experts (candidates or the column used)

    @property
    def usable(self) -> bool:
        return self.source != "none"

    @property
    def n_experts(self) -> int:
        return 0 if self.expert_pred is None else self.expert_pred.shape[0]

    def pred_prob(self, pool, alpha=None, shrink: float = 0.0) -> np.ndarray:
        """(K, n) P(y_i = pred_ji) under the mixture ``alpha`` (default uniform)."""
        C = self.n_classes
        if self.probs is not None:
            q = np.take_along_axis(self.probs.T, pool.preds, axis=0)
        else:
            E = self.n_experts
            alpha = np.full(E, 1.0 / E) if alpha is None else np.asarray(alpha, dtype=np.float64)
            q = np.zeros((pool.K, pool.n))
            other = (1 - self.expert_conf) / (C - 1)
            for e in range(E):
                if alpha[e] == 0:
                    continue
                same = self.expert_pred[e][None, :] == pool.preds
                q += alpha[e] * np.where(same, self.expert_conf[e][None, :], other[e][None, :])
        return (1 - shrink) * q + shrink / C


def _prob_columns(pool):
    cols = []
    for c in pool.classes:
        col = pool.extra.get(f"prob_{c}")
        if col is None:
            return None
        cols.append(col)
    try:
        P = np.asarray(cols, dtype=np.float64).T  # (n, C)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(P).all() or (P < 0).any() or (P > 1).any():
        return None
    return P


def _distinct(preds: np.ndarray, confs: np.ndarray, names) -> list:
    """Indices of the first of each group of identical (prediction, confidence) experts:
    duplicated candidates must not outvote the others."""
    keep = []
    for j in range(preds.shape[0]):
        if not any(np.array_equal(preds[j], preds[i]) and np.array_equal(confs[j], confs[i])
                   for i in keep):
            keep.append(j)
    return keep


def label_probabilities(pool) -> LabelProbabilities:
    """The label model of the policy (module docstring)."""
    K, n, C = pool.K, pool.n, pool.n_classes
    P = _prob_columns(pool)
    if P is not None:
        return LabelProbabilities("prob_columns", C, None, None, P, ("prob_",))
    if "p_label" in pool.extra and (pool.is_binary or pool.shared_prediction):
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
        keep = [use[i] for i in _distinct(pool.preds[use], c, None)]
        return LabelProbabilities("confidences", C, pool.preds[keep].copy(),
                                  np.clip(pool.confs[keep], lo, 1.0),
                                  None, tuple(pool.names[j] for j in keep))
    return LabelProbabilities("none", C, None, None)



# ------------------------------------------------------- calibrated label model
@dataclass(frozen=True, eq=False)
class Calibration:
    """The label model refitted on the labels read (opt-in ``calibrate``; bench/EXPERIMENTS.md,
    "Learning from the labels read"): a conditional logit with the prior mixture as offset,

    ``P(y_i = c) ∝ exp((1 + t) off_ic + sum_e a_e [pred_ei = c] + d_c)``,

    coefficients ``(t, a_1..a_E, d_1..d_{C-1})``, all zero before any label.
    """

    off: np.ndarray  # (n, C) log of the shrunk prior mixture P(y_i = c)
    pred: np.ndarray  # (E, n) expert predictions (class codes)

    @property
    def n_params(self) -> int:
        return 1 + self.pred.shape[0] + self.off.shape[1] - 1

    def design(self, rows: np.ndarray) -> np.ndarray:
        """(m, C, p) features of ``rows``."""
        E, C = self.pred.shape[0], self.off.shape[1]
        X = np.zeros((rows.size, C, self.n_params))
        X[:, :, 0] = self.off[rows]
        for e in range(E):
            X[:, :, 1 + e] = self.pred[e, rows][:, None] == np.arange(C)[None, :]
        for c in range(1, C):
            X[:, c, E + c] = 1.0
        return X

    def fit(self, rows: np.ndarray, labels: np.ndarray, precision: float) -> np.ndarray:
        """MAP coefficients under the prior N(0, I / precision), by Newton's method
        (the objective is concave, so it converges from zero)."""
        p = self.n_params
        b = np.zeros(p)
        X = self.design(rows)
        m = rows.size
        y = np.asarray(labels, dtype=np.int64)
        off = self.off[rows]
        for _ in range(25):
            eta = off + X @ b
            eta -= eta.max(axis=1, keepdims=True)
            pr = np.exp(eta)
            pr /= pr.sum(axis=1, keepdims=True)
            xbar = np.einsum("mc,mcp->mp", pr, X)
            g = (X[np.arange(m), y] - xbar).sum(axis=0) - precision * b
            H = np.einsum("mc,mcp,mcq->pq", pr, X, X) - xbar.T @ xbar + precision * np.eye(p)
            step = np.linalg.solve(H, g)
            b = b + step
            if np.abs(step).max() < 1e-7:
                break
        return b

    def probs(self, b: np.ndarray) -> np.ndarray:
        """(n, C) P(y_i = c) under the coefficients ``b``."""
        E = self.pred.shape[0]
        n = self.off.shape[0]
        eta = (1 + b[0]) * self.off
        eta[:, 1:] += b[E + 1:][None, :]
        ar = np.arange(n)
        for e in range(E):
            eta[ar, self.pred[e]] += b[1 + e]
        eta -= eta.max(axis=1, keepdims=True)
        P = np.exp(eta)
        return P / P.sum(axis=1, keepdims=True)


def calibration(pool, lm: LabelProbabilities, shrink: float) -> Calibration:
    """The label-free part of the calibrated model: the prior mixture over all classes,
    shrunk like `LabelProbabilities.pred_prob`, and the experts' predictions."""
    C, n = lm.n_classes, pool.n
    if lm.probs is not None:
        P = lm.probs.astype(np.float64)
        pred = np.zeros((0, n), np.int64)
    else:
        E = lm.n_experts
        P = np.zeros((n, C))
        other = (1 - lm.expert_conf) / (C - 1)
        for e in range(E):
            for c in range(C):
                P[:, c] += np.where(lm.expert_pred[e] == c, lm.expert_conf[e], other[e]) / E
        pred = lm.expert_pred
    P = (1 - shrink) * P + shrink / C
    P /= P.sum(axis=1, keepdims=True)
    return Calibration(np.log(np.maximum(P, 1e-12)), np.ascontiguousarray(pred))
