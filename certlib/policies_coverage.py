"""The ``expected-coverage`` acquisition policy (issue 4).

The paper's heuristics (section 5, eq. (10) and pair-sum) rank rows by the
*potential* gain |b_jki|, which a row delivers only for one of its labels.  A
minimum certificate (Theorem 2) is made of rows whose *realised* gains cover
the winner's deficits.  This policy estimates the realised gains from what the
candidates themselves say about the labels and reads first the rows expected
to close the largest share of the remaining deficits of the candidates likely
to win.  It only orders rows: the exact stopping test of `certlib.bounds`
decides when to stop and what is certified, so the guarantee is unchanged.

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
no chance of an error.  Optionally (``learn > 0``, off by default) the experts
are reweighted by their tempered likelihood of the labels read so far and the
expected gains recomputed when the weights move by more than ``refit`` in total
variation; on the panel pools this did not help once the winner weights below
are tempered, so it is off.

**Expected gains.**  The term of row i in r_j - r_k is d_jki(y) = w_ji e_ji -
w_ki e_ki with e the error bits, so E d = w_j (1 - q_j) - w_k (1 - q_k) and
Var d = w_j^2 v_j + w_k^2 v_k - 2 w_j w_k cov with v = q (1 - q), cov = v when
the two predict the same class and -q_j q_k otherwise.  The expected gain of
reading the row for pair (j, k) is E g = unit * E d - lower (rule units), its
variance unit^2 Var d.  These hold for binary, shared-prediction and
categorical pools alike.

**Who wins (the hedge).**  Under the label model the unread rows make r_j - r_k
roughly normal with mean m_jk = L_jk + sum_unread E g and variance
s2_jk = sum_unread Var g.  P(k wins) is proportional to
prod_j Phi((m_jk - need_jk + 1/2) / (temper * sqrt(s2_jk + 1/4))), zero for
eliminated candidates.  ``temper`` (default 3) widens the normal: every
candidate's confidences favour itself (it ranks its own likely errors last), so
the untempered model is overconfident about the winner and would chase a
candidate that the labels are about to rule out.

**Score.**  With remaining deficits Def_jk = max(0, need_jk - L_jk) and the
fraction of the expected remaining supply they need, rho_jk = min(1, Def_jk /
sum_unread E g_jk), row i scores

    sum_k P(k wins) sum_{j: Def_jk > 0} rho_jk^s * min(E g_jki, Def_jk) / Def_jk
      + explore * (the same with the potential gain in place of E g),

its expected share of the remaining deficits it closes, with scarce pairs
(that need most of what is left, s = ``scarcity`` = 0.5) weighted up, plus a
small term (``explore`` = 0.05) that keeps rows with a large potential gain in
play when the label model is wrong.  Ties go to the lowest row position.
The defaults were chosen on the sample panel pools (bench/bench_policies.py).

**Cost.**  ``start`` computes the expected gains of every row once, O(K^2 n),
kept read-only as float32 (K^2, n) arrays shared by every later state.
``update`` costs O(K^2) for the moments of the unread sums and the winner
weights; re-scoring all rows, O(K^2 n) in float32 column blocks, is lazy: the
ranking (its best ``head`` = 64 rows) is recomputed only when the pair weights
moved by more than ``refresh`` = 5% (relative L1) since the last ranking or
when its head has been read; otherwise the next unread row of the current
ranking is taken.  The choice depends only on labels already read
(predictable) and on nothing random, so it is deterministic for any seed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import log_ndtr

from .bounds import eliminated_mask, thresholds
from .contrib import (initial_lower, lower_terms, potential_terms, realised_terms, row_blocks,
                      rule_unit)
from .errors import ParameterError
from .policies import AdaptivePairSum, PolicyContext, register_policy

__all__ = ["ExpectedCoverage", "LabelProbabilities", "label_probabilities"]

_NEED_NEVER = np.iinfo(np.int64).min // 8
# confidences written with three decimals (1/3 -> 0.333) still count as probabilities
_ROUNDING = 1e-3


# ------------------------------------------------------------- label model
@dataclass(frozen=True, eq=False)
class LabelProbabilities:
    """The policy's label model for one pool: a mixture of experts.

    Expert e says ``P_e(y_i = c)``; the policy mixes the experts with weights
    ``alpha`` (uniform before any label, then proportional to each expert's
    likelihood of the labels read) and shrinks the mixture towards uniform.
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

    def label_loglik(self, row: int, label: int, shrink: float = 0.0) -> np.ndarray:
        """(E,) log P_e(y_row = label) of every expert, shrunk like `pred_prob`."""
        C = self.n_classes
        if self.probs is not None:
            p = np.array([self.probs[row, label]])
        else:
            c = self.expert_conf[:, row]
            p = np.where(self.expert_pred[:, row] == label, c, (1 - c) / (C - 1))
        return np.log((1 - shrink) * p + shrink / C)


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
    """The label model of the policy (module docstring, "Label probabilities")."""
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


# ------------------------------------------------------------------ policy
@dataclass(frozen=True, eq=False)
class CoverageState:
    eg: np.ndarray  # (K*K, n) float32 expected gains, shared read-only
    vg: np.ndarray  # (K*K, n) float32 variance of the gains, shared read-only
    sum_eg: np.ndarray  # (K, K) sum of E g over unread rows
    sum_vg: np.ndarray  # (K, K) sum of Var g over unread rows
    loglik: np.ndarray  # (E,) log-likelihood of the labels read under each expert
    alpha: np.ndarray  # (E,) expert weights the expected gains were computed with
    order: np.ndarray  # current ranking (row positions, best first)
    ptr: int
    weights: np.ndarray  # (K, K) pair weights the ranking was computed with
    fallback: object = None  # adaptive-pair-sum state when there is no label model


class ExpectedCoverage:
    """Read first the rows expected to close the largest share of the remaining
    deficits of the likely winners (see the module docstring)."""

    name = "expected-coverage"
    uses_labels = True

    def __init__(self, shrink: float = 0.1, explore: float = 0.05, refresh: float = 0.05,
                 head: int = 64, learn: float = 0.0, refit: float = 0.05,
                 hedge: float = 0.0, temper: float = 3.0, scarcity: float = 0.5,
                 probabilities: LabelProbabilities | None = None):
        for nm, v in (("shrink", shrink), ("explore", explore), ("refresh", refresh),
                      ("learn", learn), ("refit", refit), ("hedge", hedge)):
            if not 0 <= v <= 1:
                raise ParameterError(f"{nm} must lie in [0, 1]; got {v!r}")
        for nm, v in (("temper", temper), ("scarcity", scarcity)):
            if not 0 <= v < float("inf") or (nm == "temper" and v == 0):
                raise ParameterError(f"{nm} must be a finite number > 0; got {v!r}")
        if int(head) < 1:
            raise ParameterError(f"head must be a positive number of rows; got {head!r}")
        self.shrink, self.explore, self.refresh, self.head = shrink, explore, refresh, int(head)
        self.learn, self.refit = learn, refit
        self.hedge, self.temper, self.scarcity = hedge, temper, scarcity
        self.probabilities = probabilities
        self._fallback = AdaptivePairSum()
        self._cache = {}

    # ----------------------------------------------------------- moments
    def _static(self, ctx: PolicyContext):
        """Label-free arrays of one pool and rule, computed once per policy object."""
        key = (id(ctx.pool), ctx.rule)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is ctx.pool:
            return hit[1]
        pool, rule = ctx.pool, ctx.rule
        lm = self.probabilities if self.probabilities is not None else label_probabilities(pool)
        K, n = pool.K, pool.n
        pot = np.empty((K * K, n), dtype=np.float32)
        lo = np.empty((K * K, n), dtype=np.float32)
        for blk in row_blocks(n):
            lo[:, blk] = lower_terms(pool, blk, rule).reshape(K * K, -1)
            pot[:, blk] = _rule_potential(pool, blk, rule).reshape(K * K, -1)
        for a in (pot, lo):
            a.setflags(write=False)
        out = (lm, pot, lo)
        self._cache = {key: (pool, out)}
        return out

    def _moments(self, ctx: PolicyContext, lm: LabelProbabilities, lo, alpha):
        pool = ctx.pool
        K, n = pool.K, pool.n
        unit = rule_unit(ctx.rule)
        q_all = lm.pred_prob(pool, alpha, self.shrink)
        eg = np.empty((K * K, n), dtype=np.float32)
        vg = np.empty((K * K, n), dtype=np.float32)
        for blk in row_blocks(n):
            W = pool.weights[:, blk].astype(np.float64)
            P = pool.preds[:, blk]
            q = q_all[:, blk]
            loss = W * (1 - q)  # E[w e]
            ed = loss[:, None, :] - loss[None, :, :]
            same = P[:, None, :] == P[None, :, :]
            v = q * (1 - q)
            cov = np.where(same, v[:, None, :], -q[:, None, :] * q[None, :, :])
            var = (W[:, None, :] ** 2 * v[:, None, :] + W[None, :, :] ** 2 * v[None, :, :]
                   - 2 * W[:, None, :] * W[None, :, :] * cov)
            g = unit * ed.reshape(K * K, -1) - lo[:, blk]
            eg[:, blk] = np.maximum(g, 0)
            vg[:, blk] = np.maximum(var, 0).reshape(K * K, -1) * (unit * unit)
        for a in (eg, vg):
            a.setflags(write=False)
        return eg, vg

    def _alpha(self, loglik: np.ndarray) -> np.ndarray:
        a = self.learn * loglik
        a = np.exp(a - a.max())
        return a / a.sum()

    def _refit(self, ctx, state, unread, loglik):
        lm, _, lo = self._static(ctx)
        alpha = self._alpha(loglik)
        eg, vg = self._moments(ctx, lm, lo, alpha)
        K = ctx.pool.K
        sum_eg = eg[:, unread].sum(axis=1, dtype=np.float64).reshape(K, K)
        sum_vg = vg[:, unread].sum(axis=1, dtype=np.float64).reshape(K, K)
        return replace(state, eg=eg, vg=vg, sum_eg=sum_eg, sum_vg=sum_vg, loglik=loglik,
                       alpha=alpha)

    # ----------------------------------------------------------- protocol
    def start(self, ctx: PolicyContext) -> CoverageState:
        pool = ctx.pool
        lm, _, _ = self._static(ctx)
        if not lm.usable:
            fb = self._fallback.start(ctx)
            return CoverageState(None, None, None, None, None, None, None, 0, None, fb)
        E = max(lm.n_experts, 1)
        empty = CoverageState(None, None, None, None, np.zeros(E), None, np.zeros(0, np.int64),
                              0, np.zeros((pool.K, pool.K)))
        unread = np.ones(pool.n, dtype=bool)
        state = self._refit(ctx, empty, unread, np.zeros(E))
        # the session has not started: bounds with nothing read
        th = thresholds(pool.K, pool.scale, ctx.rule, ctx.tolerance)
        L = initial_lower(pool, ctx.rule)
        elim = tuple(int(k) for k in np.flatnonzero(eliminated_mask(L, th)))
        return self._rank(ctx, state, L, th.need, elim, unread)

    def choose(self, state: CoverageState, view) -> int:
        if state.fallback is not None:
            return self._fallback.choose(state.fallback, view)
        order, ptr = state.order, state.ptr
        while ptr < order.size and view.is_read(int(order[ptr])):
            ptr += 1
        if ptr < order.size:
            return int(order[ptr])
        unread = view.unread_mask()
        if not unread.any():
            raise ParameterError("every row has been read; there is no next row")
        s = self._rank(view.policy_context, state, view.L, view.th.need, view.eliminated, unread)
        return int(s.order[0])

    def update(self, state: CoverageState, view, row: int, label: int) -> CoverageState:
        if state.fallback is not None:
            return replace(state, fallback=self._fallback.update(state.fallback, view, row, label))
        ctx = view.policy_context
        K = view.pool.K
        lm, _, _ = self._static(ctx)
        loglik = state.loglik + lm.label_loglik(row, label, self.shrink)
        s = state
        if self.learn > 0 and lm.n_experts > 1 and \
                0.5 * np.abs(self._alpha(loglik) - state.alpha).sum() > self.refit:
            s = self._refit(ctx, s, view.unread_mask(), loglik)
            refitted = True
        else:
            sum_eg = s.sum_eg - s.eg[:, row].astype(np.float64).reshape(K, K)
            sum_vg = s.sum_vg - s.vg[:, row].astype(np.float64).reshape(K, K)
            s = replace(s, sum_eg=sum_eg, sum_vg=sum_vg, loglik=loglik)
            refitted = False
        W = self._pair_weights(s, view.L, view.th.need, view.eliminated)
        order, ptr = s.order, s.ptr
        while ptr < order.size and view.is_read(int(order[ptr])):
            ptr += 1
        moved = np.abs(W - s.weights).sum() > self.refresh * max(np.abs(s.weights).sum(), 1e-300)
        if refitted or ptr >= order.size or moved:
            unread = view.unread_mask()
            if not unread.any():
                return replace(s, ptr=ptr)
            return self._rank(ctx, s, view.L, view.th.need, view.eliminated, unread, W)
        return replace(s, ptr=ptr)

    # ----------------------------------------------------------- scoring
    def win_probabilities(self, state: CoverageState, L, need, eliminated) -> np.ndarray:
        """P(k wins) under the label model, given the labels read (module docstring)."""
        K = L.shape[0]
        mean = L + state.sum_eg
        sd = np.sqrt(np.maximum(state.sum_vg, 0) + 0.25)
        need_f = np.where(need <= _NEED_NEVER, -np.inf, need.astype(np.float64))
        z = (mean - need_f + 0.5) / (sd * self.temper)
        np.fill_diagonal(z, np.inf)
        logp = log_ndtr(z).sum(axis=0)
        logp[list(eliminated)] = -np.inf
        if not np.isfinite(logp).any():
            logp = np.zeros(K)
            logp[list(eliminated)] = -np.inf
            if not np.isfinite(logp).any():
                logp = np.zeros(K)
        p = np.exp(logp - logp.max())
        p /= p.sum()
        if self.hedge > 0:
            live = np.isfinite(logp)
            p = (1 - self.hedge) * p + self.hedge * live / live.sum()
        return p

    def _pair_weights(self, state, L, need, eliminated) -> np.ndarray:
        pi = self.win_probabilities(state, L, need, eliminated)
        Def = np.maximum(0, need - L).astype(np.float64)
        np.fill_diagonal(Def, 0)
        W = np.where(Def > 0, pi[None, :] / np.where(Def > 0, Def, 1), 0.0)
        if self.scarcity > 0:
            rho = np.minimum(Def / np.maximum(state.sum_eg, 1e-9), 1.0)
            W = W * rho ** self.scarcity
        return W

    def _rank(self, ctx, state, L, need, eliminated, unread, W=None) -> CoverageState:
        if W is None:
            W = self._pair_weights(state, L, need, eliminated)
        _, pot, _ = self._static(ctx)
        Def = np.maximum(0, need - L).astype(np.float64)
        np.fill_diagonal(Def, 0)
        live = np.flatnonzero(W.reshape(-1) > 0)
        n = unread.size
        score = np.zeros(n, dtype=np.float32)
        if live.size:
            w = W.reshape(-1)[live]
            w = (w / w.max()).astype(np.float32)
            cap = Def.reshape(-1)[live][:, None].astype(np.float32)
            # column blocks keep the capped gains in cache; float32 is enough to rank
            for blk in row_blocks(n, 1 << 13):
                score[blk] = w @ np.minimum(state.eg[live, blk], cap)
                if self.explore > 0:
                    score[blk] += self.explore * (w @ np.minimum(pot[live, blk], cap))
        rows = np.flatnonzero(unread)
        score = score[rows]
        m = min(self.head, rows.size)
        if m < rows.size:
            # the m best rows, lowest position first among equal scores
            kth = -np.partition(-score, m - 1)[m - 1]
            cand = np.flatnonzero(score >= kth)
            top = cand[np.lexsort((rows[cand], -score[cand]))][:m]
        else:
            top = np.lexsort((rows, -score))
        order = rows[top]
        order.setflags(write=False)
        W = W.copy()
        W.setflags(write=False)
        return replace(state, order=order, ptr=0, weights=W)


def _rule_potential(pool, rows, rule):
    """Upper minus lower end of each term under a comparison rule (rule units)."""
    if rule == "shared":
        return potential_terms(pool, rows)
    lo = lower_terms(pool, rows, rule)
    best = None
    for c in range(pool.n_classes):
        m = pool.weights[:, rows].shape[1]
        d = realised_terms(pool, rows, np.full(m, c), rule)
        best = d if best is None else np.maximum(best, d)
    return best - lo


register_policy(ExpectedCoverage.name, ExpectedCoverage)
