"""Per-row pair contributions: the one code path behind every bound.

For candidates j, k and row i the scaled risk difference r_j - r_k gets the
term ``d_jki(y_i) = w_ji 1{pred_ji != y_i} - w_ki 1{pred_ki != y_i}`` (SPEC
section 4), which depends on the label of row i alone.  Every algorithm in
certlib needs three numbers per (j, k, i):

* ``lower``: the smallest value the term can take over the class set (an
  unread row contributes this to L_jk);
* ``realised``: its value at the read label;
* ``potential``: ``upper - lower``, what reading the row can at most add.

With at least two classes (a `Pool` guarantees it) these have closed forms:
if j and k predict the same class the term is ``(w_j - w_k) * error`` with both
error values possible, so lower = min(0, w_j - w_k); if they predict different
classes, lower = -w_k (the label equals j's prediction) and upper = w_j; a
third class gives w_j - w_k, which lies between.  So binary pools (paper eq.
(4)), shared multiclass predictions (error bits, paper section 4.5) and
categorical labels with different predictions share these formulas.

Comparison rules (SPEC section 5) change only ``lower``:
* ``shared``: the exact joint bound above (Theorem 1);
* ``separate``: each risk bounded on its own, lower = -w_k;
* ``centered``: a common label term t_i y_i is removed from every risk first
  (t_i the midpoint of the coefficients), then *separate*; everything is
  doubled to stay integer, so this rule works in units of 2.

Arrays are (K, K, m) int64 over a block of m rows; the diagonal is 0.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError

__all__ = ["RULES", "rule_unit", "lower_terms", "realised_terms", "gain_terms", "target_terms",
           "potential_terms", "pair_potential", "initial_lower", "row_blocks"]

RULES = ("shared", "separate", "centered")
BLOCK = 1 << 15
_INT32_SAFE = 1 << 28  # n below this keeps 2n-weight sums of two rows in int32


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ParameterError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    return rule


def rule_unit(rule: str) -> int:
    """Integer multiple in which a rule's bounds are kept (centered doubles)."""
    return 2 if check_rule(rule) == "centered" else 1


def row_blocks(n: int, block: int = BLOCK):
    for s in range(0, n, block):
        yield slice(s, min(n, s + block))


def _zero_diag(a: np.ndarray) -> np.ndarray:
    K = a.shape[0]
    a[np.arange(K), np.arange(K)] = 0
    return a


def lower_terms(pool, rows, rule: str = "shared") -> np.ndarray:
    """(K, K, m) lower ends of d_jki over the class set, in the rule's units."""
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    if rule == "shared":
        same = P[:, None, :] == P[None, :, :]
        diff = W[:, None, :] - W[None, :, :]
        return np.where(same, np.minimum(diff, 0), -W[None, :, :])
    if rule == "separate":
        lo = np.broadcast_to(-W[None, :, :], (W.shape[0],) + W.shape).copy()
        return _zero_diag(lo)
    if rule == "centered":
        base, a = _linear_form(pool, W, P)
        s = a.min(axis=0) + a.max(axis=0)  # 2 t_i
        two_a = 2 * a - s[None, :]
        lo = (2 * (base[:, None, :] - base[None, :, :])
              + np.minimum(two_a, 0)[:, None, :] - np.maximum(two_a, 0)[None, :, :])
        return _zero_diag(lo)
    check_rule(rule)
    raise AssertionError("unreachable")


def _linear_form(pool, W, P):
    """Risk term w*loss as base + a*y in the queried bit y (paper eq. (3))."""
    if pool.shared_prediction:  # query the error bit e_i: c_j = 0, a_ji = w_ji
        return np.zeros_like(W), W
    if pool.is_binary:
        return W * P, W * (1 - 2 * P)
    raise ParameterError(
        "the centered rule needs binary labels or one shared prediction; this pool has "
        f"{pool.n_classes} classes and different predictions"
    )


def realised_terms(pool, rows, labels, rule: str = "shared") -> np.ndarray:
    """(K, K, m) values of d_jki at the given label codes, in the rule's units."""
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    loss = W * (P != np.asarray(labels)[None, :])
    d = loss[:, None, :] - loss[None, :, :]
    return d * rule_unit(rule)


def gain_terms(pool, rows, labels, rule: str = "shared") -> np.ndarray:
    """(K, K, m) gains ``realised - lower`` of reading rows at the given label codes.

    For the shared rule this is computed without forming both ends: where j and k
    predict alike the gain is max(0, +-(w_j - w_k)) (+ on an error, paper eq. (7)),
    else w_j loss_j + w_k (1 - loss_k).  Blocks are small, int64 keeps it exact."""
    if rule != "shared":
        return realised_terms(pool, rows, labels, rule) - lower_terms(pool, rows, rule)
    W = pool.weights[:, rows]
    if pool.n < _INT32_SAFE:  # weights < 2n: differences and sums fit in int32
        W = W.astype(np.int32)
    P = pool.preds[:, rows]
    loss = P != np.asarray(labels)[None, :]
    Wl = W * loss
    same = P[:, None, :] == P[None, :, :]
    diff = W[:, None, :] - W[None, :, :]
    np.negative(diff, out=diff, where=~loss[:, None, :])
    other = Wl[:, None, :] + (W - Wl)[None, :, :]
    return np.where(same, np.maximum(diff, 0), other)


def target_terms(pool, k: int, rows, labels, potential_mask=None):
    """(K, m) lower terms and gains of r_j - r_k against one target k, shared rule:
    column k of `lower_terms` and `gain_terms` without forming K x K x m (used by the
    certificate LP, whose constraints all concern one target).  Rows flagged in
    ``potential_mask`` get their potential gain instead of the realised one (an unread
    row in a partial run)."""
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    wk, pk = W[k], P[k]
    same = P == pk[None, :]
    lower = np.where(same, np.minimum(W - wk[None, :], 0), -wk[None, :])
    loss = W * (P != np.asarray(labels)[None, :])
    gains = (loss - loss[k][None, :]) - lower
    if potential_mask is not None and potential_mask.any():
        pot = np.where(same, np.abs(W - wk[None, :]), W + wk[None, :])
        gains = np.where(potential_mask[None, :], pot, gains)
    gains[k] = 0
    lower[k] = 0
    return lower, gains


def potential_terms(pool, rows) -> np.ndarray:
    """(K, K, m) potential gains upper - lower of the shared rule (|b_jki| for binary)."""
    W = pool.weights[:, rows]
    P = pool.preds[:, rows]
    same = P[:, None, :] == P[None, :, :]
    return np.where(same, np.abs(W[:, None, :] - W[None, :, :]), W[:, None, :] + W[None, :, :]) \
        * ~np.eye(W.shape[0], dtype=bool)[:, :, None]


def pair_potential(pool, j: int, k: int, rows=slice(None)) -> np.ndarray:
    """Potential gains of one pair over rows (symmetric in j, k)."""
    wj, wk = pool.weights[j, rows], pool.weights[k, rows]
    same = pool.preds[j, rows] == pool.preds[k, rows]
    return np.where(same, np.abs(wj - wk), wj + wk)


def initial_lower(pool, rule: str = "shared") -> np.ndarray:
    """(K, K) L_jk with no label read: the sum of the lower terms of every row."""
    check_rule(rule)
    K = pool.K
    W = pool.weights
    total = W.sum(axis=1, dtype=np.int64)
    if rule in ("shared", "separate"):
        # separate: every unread row contributes -w_k.  shared adds back
        # min(w_j, w_k) on rows where j and k predict alike (paper Proposition 1).
        L = np.broadcast_to(-total[None, :], (K, K)).copy()
        if rule == "shared":
            for j in range(K):
                for k in range(j + 1, K):
                    same = pool.preds[j] == pool.preds[k]
                    back = int(np.minimum(W[j], W[k]).sum(where=same, dtype=np.int64))
                    L[j, k] += back
                    L[k, j] += back
        np.fill_diagonal(L, 0)
        return L
    L = np.zeros((K, K), dtype=np.int64)
    for blk in row_blocks(pool.n):
        L += lower_terms(pool, blk, rule).sum(axis=2, dtype=np.int64)
    return L
