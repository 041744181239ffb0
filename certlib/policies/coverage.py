"""The ``expected-coverage`` acquisition policy (SPEC section 8, beyond the paper's orders).

The paper's heuristics (section 5, eq. (10) and pair-sum) rank rows by the *potential* gain
|b_jki|, which a row delivers for only one of its labels; a minimum certificate (Theorem 2)
is made of rows whose *realised* gains cover the winner's deficits.  This policy estimates
the realised gains from what the candidates say about the labels (``q_ji = P(y_i =
pred_ji)``, `certlib.policies.label_model`: by default the *agreement model*, a
candidate's confidence and the share of the others that agree with it, where it applies,
else the mixture of the candidates' views; shrunk towards uniform by ``shrink``) and reads
first the rows expected to close the largest share of the remaining deficits of the likely
winners.  With no label model it reads exactly the ``adaptive-pair-sum`` order.  It only
orders rows: the exact stopping test decides when to stop, so the guarantee is unchanged.

**Expected gains.**  Row i's term in r_j - r_k is d_jki(y) = w_ji e_ji - w_ki e_ki (e the
error bits), so E d = w_j (1 - q_j) - w_k (1 - q_k) and
Var d = w_j^2 v_j + w_k^2 v_k - 2 w_j w_k cov with v = q (1 - q), cov = v when the two
predict the same class and -q_j q_k otherwise.  The expected gain for pair (j, k) is
E g = unit * E d - lower (rule units), its variance unit^2 Var d; binary, shared and
categorical pools alike.

**Who wins (the hedge).**  The unread rows make r_j - r_k roughly normal with mean m_jk =
L_jk + sum_unread E g and variance s2_jk = sum_unread Var g.  P(k wins) is proportional to
prod_j Phi((m_jk - need_jk + 1/2) / (temper * sqrt(s2_jk + 1/4))), zero for eliminated
candidates.  ``temper`` (2 with the agreement model, 3 with the mixture) widens the
normal: each candidate's confidences favour itself, so the untempered model is
overconfident and chases candidates about to be ruled out.

**The no-error branch** (``branch``, on with the agreement model).  Late in a run on a
small pool the unread rows are mostly rows every candidate predicts alike, and the label
model expects well under one error on all of them; the normal above then spreads a
likely outcome, "no more errors", over candidates that can only win through one.  So
with P0 = prod over the unread such rows of P(the shared prediction is right), the
hedge is P0 * (the same formula with those rows fixed at their realised gains if right,
-lower, and only the other unread rows uncertain) + (1 - P0) * (the formula above).
It costs three K x K sums kept up to date as rows are read.  (Pools like
wine_s302_tree_k8 of bench/EXPERIMENTS.md need it: with four perfect, tied candidates the
plain hedge at temper 2 chases a tied candidate that the tie rule never certifies.)

**Score.**  With deficits Def_jk = max(0, need_jk - L_jk) and rho_jk = min(1, Def_jk /
sum_unread E g_jk), the share of the expected remaining supply they need, row i scores

    sum_k P(k wins) sum_{j: Def_jk > 0} rho_jk^s * min(E g_jki, Def_jk) / Def_jk
      + explore * (the same with the potential gain in place of E g),

its expected share of the remaining deficits it closes, scarce pairs weighted up (s =
``scarcity``), plus a small term (``explore``) that keeps rows with a large potential gain
in play when the label model is wrong.  Ties go to the lowest row position.
(``shrink``, ``explore``, ``scarcity``, ``temper``, ``branch``) default to (0.01, 0.1, 1,
2, on) with the agreement model and (0.1, 0.05, 0.5, 3, off) with the mixture
(`ExpectedCoverage.DEFAULTS`; ``model="mixture"`` is the first default).  The mixture's
were chosen on the shipped panel pools, the agreement model's on development split seeds
3-32, 200-203, 300-311, 400-411 and 500-511; how, the
held-out check and the variants that lost (refitting the label model on the labels read,
correcting or blending the winner belief): bench/EXPERIMENTS.md.

**Regret guard (opt in).**  With ``regret`` = r (default None: off) the policy also runs
adaptive pair-sum in its shadow (a `Session` of that policy alone, `Session.sibling`), on
its own reads A_1, A_2, ... (each is among the rows read, its next row depends only on
its own labels) with its own exact bounds and stopping test.
Before each read, if fewer than t + 1 - floor(r n) of the A's would be read after it (t
labels read so far), the policy reads adaptive pair-sum's next row instead of its own.
So after t labels A_1..A_{t - floor(r n)} are read; adaptive pair-sum alone stops at
some T (A_1..A_T certify), reading more rows never lowers a bound, and so the guarded
policy stops after at most T + floor(r n) labels, on every pool and for any labels
(``regret=0`` reads exactly adaptive pair-sum's order).  The price is the saving: on
the shipped held-out pools r = 0.05 keeps little of it (bench/EXPERIMENTS.md).

**Cost.**  ``start`` computes the expected gains of every row once, O(K^2 n), as read-only
float32 (K^2, n) arrays shared by every later state.  ``update`` costs O(K^2) (the unread
sums and the winner weights); re-scoring all rows, O(K^2 n) in column blocks, is lazy: the
ranking (its best ``head`` = 64 rows) is recomputed only when the pair weights moved by
more than ``refresh`` = 5% (relative L1) or its head has been read.  The choice depends only
on labels already read and on nothing random: predictable, and deterministic for any seed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from ..core.bounds import deficits, eliminated_mask, thresholds
from ..core.pair_terms import (
    initial_lower,
    lower_terms,
    potential_terms,
    realised_terms,
    row_blocks,
    rule_unit,
)
from ..core.pool import Pool
from ..errors import ParameterError
from .base import OrderState, Policy, PolicyContext, SessionView
from .heuristics import AdaptivePairSum
from .label_model import (
    LabelProbabilities,
    agreement_applies,
    agreement_pred_prob,
    label_probabilities,
)

__all__ = ["CoverageState", "ExpectedCoverage"]

_NEED_NEVER = np.iinfo(np.int64).min // 8

#: (shrink, explore, scarcity, temper, branch), the policy's settings on one pool
Settings: TypeAlias = "tuple[float, float, float, float, bool]"
#: what `ExpectedCoverage._static` keeps per pool: the label model, the potential gains
#: and the lower terms, (K*K, n) float32 each
_Static: TypeAlias = "tuple[LabelProbabilities, NDArray[np.float32], NDArray[np.float32]]"


# ------------------------------------------------------------------ policy
@dataclass(frozen=True, eq=False)
class CoverageState:
    """State of `ExpectedCoverage`: the label model's expected gains and the current
    ranking (module docstring).

    With no label model only ``fallback`` (adaptive pair-sum's state) is used and the
    arrays are empty.

    Parameters
    ----------
    eg, vg : numpy.ndarray of float32, shape (K*K, n)
        Expected gains and their variances, shared read-only between states.
    sum_eg, sum_vg : numpy.ndarray of float64, shape (K, K)
        Their sums over the unread rows.
    order : numpy.ndarray of int64
        The current ranking (row positions, best first).
    ptr : int
        Every row before ``order[ptr]`` has been read.
    weights : numpy.ndarray of float64, shape (K, K)
        The pair weights the ranking was computed with.
    fallback : OrderState or None
        Adaptive pair-sum's state when there is no label model.
    shadow : SessionView or None
        A session of adaptive pair-sum alone (the regret guard).
    settings : tuple
        (shrink, explore, scarcity, temper, branch) used on this pool.
    unanimous, lower, log_right, sure_gain, split_eg, split_vg, log_p0
        The hedge's no-error branch (None and 0.0 when it is off; see below).
    """

    eg: NDArray[np.float32]  # (K*K, n) float32 expected gains, shared read-only
    vg: NDArray[np.float32]  # (K*K, n) float32 variance of the gains, shared read-only
    sum_eg: NDArray[np.float64]  # (K, K) sum of E g over unread rows
    sum_vg: NDArray[np.float64]  # (K, K) sum of Var g over unread rows
    order: NDArray[np.int64]  # current ranking (row positions, best first)
    ptr: int
    weights: NDArray[np.float64]  # (K, K) pair weights the ranking was computed with
    fallback: OrderState | None = None  # adaptive-pair-sum state when there is no label model
    shadow: SessionView | None = None  # a Session of adaptive pair-sum alone (regret guard)
    # (shrink, explore, scarcity, temper, branch) used on this pool
    settings: Settings = (0.1, 0.05, 0.5, 3.0, False)
    # the hedge's no-error branch (``branch``; None when off): which rows every candidate
    # predicts alike, log P(such a row's label is that prediction), and over the unread
    # rows: the gains of the unanimous rows if they are right, the sums of E g and Var g
    # over the other rows, and the log-probability that every unanimous row is right
    unanimous: NDArray[np.bool_] | None = None  # (n,) bool, shared read-only
    lower: NDArray[np.float32] | None = None  # (K*K, n) the lower terms, shared read-only
    log_right: NDArray[np.float64] | None = None  # (n,), 0 on other rows, shared read-only
    sure_gain: NDArray[np.float64] | None = None  # (K, K)
    split_eg: NDArray[np.float64] | None = None  # (K, K)
    split_vg: NDArray[np.float64] | None = None  # (K, K)
    log_p0: float = 0.0


class ExpectedCoverage(Policy):
    """Read first the rows expected to close the largest share of the remaining
    deficits of the likely winners (see the module docstring).

    Parameters
    ----------
    shrink : float, optional
        Shrinkage of the label model towards uniform, in [0, 1].
    explore : float, optional
        Weight of the potential-gain term, in [0, 1].
    refresh : float
        Re-rank when the pair weights moved by more than this (relative L1), in [0, 1].
    head : int
        Rows ranked at each re-ranking.
    temper : float, optional
        Widening of the normal in the hedge, > 0.
    scarcity : float, optional
        Exponent s of the scarce-pair weight, >= 0.
    regret : float, optional
        r in [0, 1]: read at most floor(r n) labels more than adaptive pair-sum (the
        regret guard); None: off.
    probabilities : LabelProbabilities, optional
        A label model to use as it is instead of the pool's own.
    model : {"agreement", "mixture"}
        The built-in label model.
    branch : bool, optional
        The hedge's no-error branch.

    Notes
    -----
    Settings left None take `DEFAULTS` of the label model that applies to the pool.

    Raises
    ------
    ParameterError
        A setting outside its range.
    """

    name = "expected-coverage"

    #: (shrink, explore, scarcity, temper, branch) per label model, when not given
    DEFAULTS = {"agreement": (0.01, 0.1, 1.0, 2.0, True),
                "mixture": (0.1, 0.05, 0.5, 3.0, False)}

    def __init__(self, *, shrink: float | None = None, explore: float | None = None,
                 refresh: float = 0.05, head: int = 64, temper: float | None = None,
                 scarcity: float | None = None, regret: float | None = None,
                 probabilities: LabelProbabilities | None = None, model: str = "agreement",
                 branch: bool | None = None):
        if model not in self.DEFAULTS:
            raise ParameterError(f"model must be 'agreement' or 'mixture'; got {model!r}")
        if regret is not None and not 0 <= regret <= 1:
            raise ParameterError(f"regret must lie in [0, 1] or be None; got {regret!r}")
        for nm, v in (("shrink", shrink), ("explore", explore), ("refresh", refresh)):
            if v is not None and not 0 <= v <= 1:
                raise ParameterError(f"{nm} must lie in [0, 1]; got {v!r}")
        for nm, v in (("temper", temper), ("scarcity", scarcity)):
            if v is not None and (not 0 <= v < float("inf") or (nm == "temper" and v == 0)):
                raise ParameterError(f"{nm} must be a finite number > 0; got {v!r}")
        if int(head) < 1:
            raise ParameterError(f"head must be a positive number of rows; got {head!r}")
        if branch is not None and not isinstance(branch, (bool, np.bool_)):
            raise ParameterError(f"branch must be True, False or None; got {branch!r}")
        self.model = model
        # None: the default of the label model that applies to the pool (`settings`)
        self.shrink, self.explore, self.scarcity = shrink, explore, scarcity
        self.refresh, self.head = refresh, int(head)
        self.temper = temper
        self.branch = None if branch is None else bool(branch)
        self.regret = regret
        self.probabilities = probabilities
        self._fallback = AdaptivePairSum()
        self._cache: dict[tuple[int, str], tuple[Pool, _Static]] = {}

    # ----------------------------------------------------------- moments
    def _static(self, ctx: PolicyContext) -> _Static:
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
            lo[:, blk] = lower_terms(pool, blk, rule=rule).reshape(K * K, -1)
            pot[:, blk] = _rule_potential(pool, blk, rule).reshape(K * K, -1)
        for a in (pot, lo):
            a.setflags(write=False)
        out: _Static = (lm, pot, lo)
        self._cache = {key: (pool, out)}
        return out

    def settings(self, pool: Pool,
                 lm: LabelProbabilities) -> tuple[bool, float, float, float, float, bool]:
        """(agreement model used?, shrink, explore, scarcity, temper, branch) on ``pool``:
        the values given, else the defaults of the label model that applies
        (`DEFAULTS`).

        Label probabilities given to the policy (``probabilities``) are always used as
        they are: the agreement model replaces only the built-in mixture.

        Parameters
        ----------
        pool : Pool
            The pool.
        lm : LabelProbabilities
            Its label model.

        Returns
        -------
        tuple
            Whether the agreement model is used, then the five settings.
        """
        agree = (self.model == "agreement" and self.probabilities is None
                 and agreement_applies(pool, lm))
        d = self.DEFAULTS["agreement" if agree else "mixture"]
        shrink, explore, scarcity, temper, branch = (
            d[i] if v is None else v
            for i, v in enumerate((self.shrink, self.explore, self.scarcity, self.temper,
                                   self.branch)))
        return (agree, float(shrink), float(explore), float(scarcity), float(temper),
                bool(branch))

    def _moments(self, ctx: PolicyContext, lm: LabelProbabilities, lo: NDArray[np.float32],
                 agree: bool, shrink: float,
                 ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float64]]:
        """(K*K, n) float32 expected gains and their variances (module docstring), and
        (n,) P(y_i = pred_0i), the label model's probability that row i is right for
        every candidate where all predict alike (unused elsewhere)."""
        pool = ctx.pool
        K, n = pool.K, pool.n
        unit = rule_unit(ctx.rule)
        if agree:
            q_all = (1 - shrink) * agreement_pred_prob(pool) + shrink / pool.n_classes
        else:
            q_all = lm.pred_prob(pool, shrink=shrink)
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
        return eg, vg, q_all[0]

    # ----------------------------------------------------------- protocol
    def start(self, ctx: PolicyContext) -> CoverageState:
        """The expected gains of every row and the first ranking, nothing read.

        Parameters
        ----------
        ctx : PolicyContext
            The run's context.

        Returns
        -------
        CoverageState
            The state before the first label (adaptive pair-sum's inside when the pool
            has no label model).
        """
        pool = ctx.pool
        lm, _, lo = self._static(ctx)
        if not lm.usable:
            # no label model: adaptive pair-sum's state alone; the arrays stay empty
            none32 = np.zeros((0, 0), dtype=np.float32)
            none64 = np.zeros((0, 0))
            return CoverageState(none32, none32, none64, none64, np.zeros(0, np.int64), 0,
                                 none64, self._fallback.start(ctx))
        agree, *chosen = self.settings(pool, lm)
        settings: Settings = (chosen[0], chosen[1], chosen[2], chosen[3], bool(chosen[4]))
        eg, vg, q0 = self._moments(ctx, lm, lo, agree, settings[0])
        K = pool.K
        state = CoverageState(eg, vg, eg.sum(axis=1, dtype=np.float64).reshape(K, K),
                              vg.sum(axis=1, dtype=np.float64).reshape(K, K),
                              np.zeros(0, np.int64), 0, np.zeros((K, K)),
                              settings=settings)
        if settings[4]:
            state = self._start_branch(state, pool, lo, q0)
        unread = np.ones(pool.n, dtype=bool)
        # the session has not started: bounds with nothing read
        th = thresholds(pool.K, pool.scale, rule=ctx.rule, tolerance=ctx.tolerance)
        L = initial_lower(pool, ctx.rule)
        elim = tuple(int(k) for k in np.flatnonzero(eliminated_mask(L, th)))
        return self._rank(ctx, state, L, th.need, elim, unread)

    def choose(self, state: CoverageState, view: SessionView) -> int:
        """The best unread row of the ranking (or the regret guard's forced row).

        Parameters
        ----------
        state : CoverageState
            The policy's state.
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
        if state.fallback is not None:
            return self._fallback.choose(state.fallback, view)
        forced = self._forced_row(state, view)
        if forced is not None:
            return forced
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

    def update(self, state: CoverageState, view: SessionView, row: int,
               label: int) -> CoverageState:
        """Remove the row read from the unread sums; re-rank when the pair weights moved
        by more than ``refresh`` or the ranking's head has been read.

        Parameters
        ----------
        state : CoverageState
            The state before the read.
        view : SessionView
            The session after the read.
        row : int
            The row position read.
        label : int
            Its label code (it enters through ``view.L``).

        Returns
        -------
        CoverageState
            The new state.
        """
        if state.fallback is not None:
            return replace(state, fallback=self._fallback.update(state.fallback, view, row, label))
        ctx = view.policy_context
        K = view.pool.K
        e_row = state.eg[:, row].astype(np.float64).reshape(K, K)
        v_row = state.vg[:, row].astype(np.float64).reshape(K, K)
        fields: dict[str, Any] = dict(sum_eg=state.sum_eg - e_row,
                                      sum_vg=state.sum_vg - v_row,
                                      shadow=self._advance_shadow(state, view))
        if state.unanimous is not None:
            fields.update(_read_branch(state, row, e_row, v_row))
        s = replace(state, **fields)
        W = self._pair_weights(s, view.L, view.th.need, view.eliminated)
        order, ptr = s.order, s.ptr
        while ptr < order.size and view.is_read(int(order[ptr])):
            ptr += 1
        moved = np.abs(W - s.weights).sum() > self.refresh * max(np.abs(s.weights).sum(), 1e-300)
        if ptr >= order.size or moved:
            unread = view.unread_mask()
            if not unread.any():
                return replace(s, ptr=ptr)
            return self._rank(ctx, s, view.L, view.th.need, view.eliminated, unread, W)
        return replace(s, ptr=ptr)

    # ----------------------------------------------------------- regret guard
    def _shadow(self, state: CoverageState, view: SessionView) -> SessionView | None:
        """The shadow run: a session of adaptive pair-sum alone on the same pool and
        settings (`Session.sibling`), started when the session is first seen."""
        if self.regret is None:
            return None
        return state.shadow if state.shadow is not None else view.sibling(self._fallback)

    def _advance_shadow(self, state: CoverageState, view: SessionView) -> SessionView | None:
        """Feed the shadow, in its own order, every row the session has read."""
        sh = self._shadow(state, view)
        while sh is not None and not sh.done:
            row = sh.next_row()
            if row is None or not view.is_read(row):
                break
            sh = sh.observe(row, view.pool.classes[view.label_code(row)])
        return sh

    def _forced_row(self, state: CoverageState, view: SessionView) -> int | None:
        """The row adaptive pair-sum would read next on its own reads, when reading it
        now is needed to keep every one of its first t - floor(regret n) rows read
        after t labels (module docstring); else None."""
        sh = self._shadow(state, view)
        if sh is None or sh.done:
            return None
        slack = int(np.floor((self.regret or 0.0) * view.pool.n))  # a shadow means regret set
        if sh.t >= view.t + 1 - slack:
            return None
        row = sh.next_row()
        # a row the annotator passed over (skipped) is not forced: skips are the user's
        return None if row is None or view.is_read(row) else row

    # ----------------------------------------------------------- no-error branch
    @staticmethod
    def _start_branch(state: CoverageState, pool: Pool, lo: NDArray[np.float32],
                      q0: NDArray[np.float64]) -> CoverageState:
        """The branch sums over every row (nothing read yet; module docstring)."""
        K = pool.K
        unan = (pool.preds == pool.preds[:1]).all(axis=0)
        log_right = np.where(unan, np.log(np.maximum(q0, 1e-300)), 0.0)
        sure = np.zeros((K, K))
        split_eg = np.zeros((K, K))
        split_vg = np.zeros((K, K))
        for blk in row_blocks(pool.n):
            u = unan[blk]
            # a row every candidate gets right has d = 0: its gain is minus its lower term
            sure -= lo[:, blk][:, u].sum(axis=1, dtype=np.float64).reshape(K, K)
            split_eg += state.eg[:, blk][:, ~u].sum(axis=1, dtype=np.float64).reshape(K, K)
            split_vg += state.vg[:, blk][:, ~u].sum(axis=1, dtype=np.float64).reshape(K, K)
        for a in (unan, log_right):
            a.setflags(write=False)
        return replace(state, unanimous=unan, lower=lo, log_right=log_right, sure_gain=sure,
                       split_eg=split_eg, split_vg=split_vg,
                       log_p0=float(log_right.sum()))

    # ----------------------------------------------------------- scoring
    def win_probabilities(self, state: CoverageState, L: NDArray[np.int64],
                          need: NDArray[np.int64],
                          eliminated: tuple[int, ...]) -> NDArray[np.float64]:
        """P(k wins) under the label model, given the labels read (module docstring).

        Parameters
        ----------
        state : CoverageState
            The policy's state (its unread sums).
        L : numpy.ndarray of int64, shape (K, K)
            The session's exact lower bounds.
        need : numpy.ndarray of int64, shape (K, K)
            The test's thresholds.
        eliminated : tuple of int
            Candidates out (probability 0).

        Returns
        -------
        numpy.ndarray of float64, shape (K,)
            The hedge, summing to 1.
        """
        temper = state.settings[3]
        p = _hedge(L, need, eliminated, state.sum_eg, state.sum_vg, temper)
        if state.unanimous is None or state.sure_gain is None or state.split_eg is None \
                or state.split_vg is None:
            return p
        p0 = float(np.exp(min(state.log_p0, 0.0)))
        if p0 <= 0:
            return p
        sure = _hedge(L, need, eliminated, state.sure_gain + state.split_eg, state.split_vg,
                      temper)
        return (1 - p0) * p + p0 * sure

    def _pair_weights(self, state: CoverageState, L: NDArray[np.int64],
                      need: NDArray[np.int64],
                      eliminated: tuple[int, ...]) -> NDArray[np.float64]:
        pi = self.win_probabilities(state, L, need, eliminated)
        Def = deficits(need, L).astype(np.float64)
        np.fill_diagonal(Def, 0)
        W = np.where(Def > 0, pi[None, :] / np.where(Def > 0, Def, 1), 0.0)
        scarcity = state.settings[2]
        if scarcity > 0:
            rho = np.minimum(Def / np.maximum(state.sum_eg, 1e-9), 1.0)
            W = W * rho ** scarcity
        return W

    def _rank(self, ctx: PolicyContext, state: CoverageState, L: NDArray[np.int64],
              need: NDArray[np.int64], eliminated: tuple[int, ...],
              unread: NDArray[np.bool_],
              W: NDArray[np.float64] | None = None) -> CoverageState:
        if W is None:
            W = self._pair_weights(state, L, need, eliminated)
        _, pot, _ = self._static(ctx)
        explore = state.settings[1]
        Def = deficits(need, L).astype(np.float64)
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
                if explore > 0:
                    score[blk] += explore * (w @ np.minimum(pot[live, blk], cap))
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


def _read_branch(state: CoverageState, row: int, e_row: NDArray[np.float64],
                 v_row: NDArray[np.float64]) -> dict[str, Any]:
    """The branch sums without a row just read (its E g and Var g: ``e_row``, ``v_row``)."""
    # called only when the branch is on, so every branch field is set
    assert state.unanimous is not None and state.lower is not None \
        and state.log_right is not None and state.sure_gain is not None \
        and state.split_eg is not None and state.split_vg is not None
    if state.unanimous[row]:
        lo = state.lower[:, row].astype(np.float64).reshape(e_row.shape)
        return dict(sure_gain=state.sure_gain + lo,
                    log_p0=state.log_p0 - float(state.log_right[row]))
    return dict(split_eg=state.split_eg - e_row, split_vg=state.split_vg - v_row)


def _hedge(L: NDArray[np.int64], need: NDArray[np.int64], eliminated: tuple[int, ...],
           gain_mean: NDArray[np.float64], gain_var: NDArray[np.float64],
           temper: float) -> NDArray[np.float64]:
    """P(k wins) when r_j - r_k is about normal with mean L_jk + gain_mean_jk and
    variance gain_var_jk, widened by ``temper`` (module docstring)."""
    K = L.shape[0]
    mean = L + gain_mean
    sd = np.sqrt(np.maximum(gain_var, 0) + 0.25)
    need_f = np.where(need <= _NEED_NEVER, -np.inf, need.astype(np.float64))
    z = (mean - need_f + 0.5) / (sd * temper)
    np.fill_diagonal(z, np.inf)
    from scipy.special import log_ndtr  # scipy only when the policy runs

    logp = log_ndtr(z).sum(axis=0)
    logp[list(eliminated)] = -np.inf
    if not np.isfinite(logp).any():
        logp = np.zeros(K)
        logp[list(eliminated)] = -np.inf
        if not np.isfinite(logp).any():
            logp = np.zeros(K)
    p: NDArray[np.float64] = np.exp(logp - logp.max())
    p /= p.sum()
    return p


def _rule_potential(pool: Pool, rows: slice, rule: str) -> NDArray[np.int64]:
    """Upper minus lower end of each term under a comparison rule (rule units)."""
    if rule == "shared":
        return potential_terms(pool, rows)
    lo = lower_terms(pool, rows, rule=rule)
    m = pool.weights[:, rows].shape[1]
    # the upper end: the largest value over the classes (a pool has at least two)
    best = realised_terms(pool, rows, np.full(m, 0), rule=rule)
    for c in range(1, pool.n_classes):
        best = np.maximum(best, realised_terms(pool, rows, np.full(m, c), rule=rule))
    return best - lo
