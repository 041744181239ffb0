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

__all__ = ["LabelProbabilities", "label_probabilities"]

# confidences written with three decimals (1/3 -> 0.333) still count as probabilities
_ROUNDING = 1e-3


@dataclass(frozen=True, eq=False)
class LabelProbabilities:
    """The policy's label model for one pool: a mixture of experts.

    Expert e says ``P_e(y_i = c)``; the policy averages the experts (uniform
    weights) and shrinks the mixture towards uniform (module docstring).
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

    def pred_prob(self, pool, shrink: float = 0.0) -> np.ndarray:
        """(K, n) P(y_i = pred_ji) under the mixture, shrunk by ``shrink`` towards uniform."""
        C = self.n_classes
        if self.probs is not None:
            q = np.take_along_axis(self.probs.T, pool.preds, axis=0)
        else:
            E = self.n_experts
            q = np.zeros((pool.K, pool.n))
            other = (1 - self.expert_conf) / (C - 1)
            for e in range(E):
                same = self.expert_pred[e][None, :] == pool.preds
                q += (1.0 / E) * np.where(same, self.expert_conf[e][None, :], other[e][None, :])
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


def _distinct(preds: np.ndarray, confs: np.ndarray) -> list:
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
        keep = [use[i] for i in _distinct(pool.preds[use], c)]
        return LabelProbabilities("confidences", C, pool.preds[keep].copy(),
                                  np.clip(pool.confs[keep], lo, 1.0),
                                  None, tuple(pool.names[j] for j in keep))
    return LabelProbabilities("none", C, None, None)
