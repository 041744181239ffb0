"""An independent brute force on small pools (STYLE rule 8, second kind).

Everything on the reference side is computed from the definitions, not from
certlib's formulas:

* AUGRC of a finite pool (paper 000 section 2, SPEC section 3): the trapezoid
  integral of the accepted-error mass, averaged over every order inside a
  confidence tie (enumerated for tiny n), and the fd-shifts mid-rank formula
  ``AUGRC = (1/n^2) sum_i loss_i (R_i - 1/2)`` (used for the larger checks once it
  has been shown to equal the tie-averaged trapezoid);
* every completion of the unread labels over the class set is enumerated, the
  risks are evaluated for each, and winners / bounds / excesses are read off;
* minimum certificates by enumerating every subset of rows and checking, for
  each, that every completion of the rows outside it has the same winner.

Pools: binary; one shared multiclass prediction (3-4 classes); categorical
labels with different predictions (3 classes); n <= 8, K <= 4, ties frequent.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from certlib import Session, prelabel_bound, replay
from certlib.core.bounds import batch_lower, certified_mask, thresholds
from certlib.errors import CertlibError
from certlib.core.weights import augrc_weights

from conftest import KINDS, random_spec
from references import (MAX_COMPLETIONS, Ref, cases, midrank_weights, random_read,
                        session_after, tie_averaged_augrc)


# ----------------------------------------------------------------------- AUGRC
def test_weights_equal_tie_averaged_trapezoid_and_midrank():
    """SPEC section 3 / paper section 2 eq. (2): the integer weights equal 2 n^2 times the
    trapezoid AUGRC of a unit loss, averaged over every order inside the ties, and the
    fd-shifts mid-rank weights; the risk of any loss vector agrees (linearity)."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(1, 7))
        conf = [float(v) for v in rng.integers(0, int(rng.integers(1, n + 2)), size=n)]
        w = augrc_weights(np.array(conf)).tolist()
        mid = midrank_weights(conf)
        assert w == mid, conf
        for i in range(n):
            unit = [1 if t == i else 0 for t in range(n)]
            assert tie_averaged_augrc(conf, unit) * 2 * n * n == w[i], (conf, i)
        loss = [int(v) for v in rng.integers(0, 2, size=n)]
        assert tie_averaged_augrc(conf, loss) == Fraction(sum(a * b for a, b in zip(w, loss)),
                                                          2 * n * n)
        assert sum(w) == n * n


@pytest.mark.parametrize("kind", KINDS)
def test_pool_risks_and_winner_match_reference(kind):
    """SPEC sections 1, 3: Pool.risks() and Pool.winner() from the reference AUGRC."""
    for _rng, spec in cases(kind, 100, 1):
        ref = Ref(spec)
        pool = spec.pool()
        assert pool.weights.tolist() == ref.W.tolist()
        R = ref.risks(np.array([spec.labels]))
        assert pool.risks().tolist() == R[0].tolist()
        assert pool.winner() == ref.winners(R)[0]
        assert [Fraction(int(r), ref.scale) for r in R[0]] == pool.objective_values()


# ------------------------------------------------- (a), (b), (c): bounds and the test
@pytest.mark.parametrize("kind", KINDS)
def test_shared_test_and_bounds_against_all_completions(kind):
    """Paper section 3, Theorem 1 and eq. (4); SPEC sections 4-5.  After reading a random
    subset of rows (random order): L_jk = min and H_jk = max over every completion of
    r_j - r_k, online (Session) and batch; candidate k is certified iff every completion
    has winner k; k is eliminated iff some j beats it under every completion; the
    separate bound is min r_j - max r_k; Proposition 1's gap identity (which holds for
    every kind: rows where j and k predict different classes add no gap).  One case in
    four uses the accuracy objective (SPEC section 3, "other objectives")."""
    checked_cert = checked_elim = 0
    for rng, spec in cases(kind, 150, 2):
        objective = "accuracy" if rng.random() < 0.25 else "augrc"
        ref = Ref(spec, objective)
        pool = spec.pool(labels=None, objective=objective)
        full = spec.pool(objective=objective)
        rows = random_read(rng, ref)
        known = {i: spec.labels[i] for i in rows}
        Y = ref.completions(known)
        R = ref.risks(Y)
        Lref, Href = ref.pair_bounds(R)

        s = session_after(spec, pool, rows)
        assert s.lower().tolist() == Lref.tolist(), (spec, rows)
        assert s.upper().tolist() == Href.tolist(), (spec, rows)
        Lb = batch_lower(full, rows)
        assert Lb.tolist() == Lref.tolist()

        win = set(ref.winners(R).tolist())
        th = thresholds(pool.K, pool.scale)
        mask = certified_mask(Lb, th)
        expect = [len(win) == 1 and k in win for k in range(ref.K)]
        assert mask.tolist() == expect, (spec, rows, win)
        assert s.certified == (len(win) == 1)
        if len(win) == 1:
            checked_cert += 1
            assert s.selected == pool.names[win.pop()]
            assert s.status == "certified"
        else:
            assert s.selected is None
        # elimination (SPEC section 5): some j beats k under every completion
        beats = [[bool(((R[:, j] < R[:, k]) | ((R[:, j] == R[:, k]) & (j < k))).all())
                  for k in range(ref.K)] for j in range(ref.K)]
        elim = tuple(k for k in range(ref.K) if any(beats[j][k] for j in range(ref.K) if j != k))
        assert s.eliminated == elim, (spec, rows)
        checked_elim += bool(elim)

        # (c) separate rule, and Proposition 1: L - L^sep = sum over unread rows where j
        # and k predict the same class of min(w_j, w_k)
        Lsep = ref.separate_lower(R)
        assert batch_lower(full, rows, rule="separate").tolist() == Lsep.tolist()
        s_sep = session_after(spec, pool, rows, rule="separate")
        assert s_sep.lower().tolist() == Lsep.tolist()
        unread = [i for i in range(ref.n) if i not in known]
        for j in range(ref.K):
            for k in range(ref.K):
                if j == k:
                    continue
                gap = sum(min(ref.W[j, i], ref.W[k, i]) for i in unread
                          if ref.P[j, i] == ref.P[k, i])
                assert Lref[j, k] - Lsep[j, k] == gap, (spec, rows, j, k)
        if kind != "categorical":
            Lc2 = ref.centered_lower_doubled(Y, R)
            assert batch_lower(full, rows, rule="centered").tolist() == Lc2.tolist()
            assert (Lc2 <= 2 * Lref).all()
    assert checked_cert >= 20 and checked_elim >= 20  # the positive branches were exercised


def test_centered_rule_needs_binary_or_shared():
    """SPEC section 5: centering subtracts t_i y_i, defined for binary labels or one shared
    prediction; categorical pools with different predictions get a CertlibError."""
    for _rng, spec in cases("categorical", 30, 3):
        if len({tuple(p) for p in spec.preds}) == 1:
            continue
        pool = spec.pool()
        with pytest.raises(CertlibError):
            batch_lower(pool, [], rule="centered")
        with pytest.raises(CertlibError):
            replay(pool, rule="centered")


# ------------------------------------------------------------ (d) rules along an order
@pytest.mark.parametrize("kind", KINDS)
def test_separate_and_centered_never_stop_before_shared(kind):
    """Paper section 3, Proposition 1 and "Common-term removal": along the same order the
    shared test stops no later than separate or centered; every certified answer is the
    full-pool winner."""
    for rng, spec in cases(kind, 50, 4):
        pool = spec.pool()
        winner = pool.names[pool.winner()]
        rules = ["shared", "separate"] + (["centered"] if pool.shared_prediction
                                          or pool.is_binary else [])
        for policy in ("static-range", "static-pair-sum", "random", "vma"):
            seed = int(rng.integers(1000))
            res = {r: replay(pool, policy=policy, rule=r, seed=seed) for r in rules}
            shared = res["shared"]
            assert shared.certified and shared.selected == winner
            for r in rules[1:]:
                assert res[r].labels_read >= shared.labels_read, (spec, policy, r)
                assert res[r].order[: shared.labels_read] == shared.order
                if res[r].certified:
                    assert res[r].selected == winner


# ------------------------------------------------- (e) prelabel <= minimum certificate
def exhaustive_min_certificate(ref, y, Y_all, winners_all):
    """Smallest |S| such that every labelling agreeing with y on S has the winner of y."""
    k = winners_all[np.flatnonzero((Y_all == y).all(axis=1))[0]]
    mismatch = (Y_all != y[None, :]).astype(np.int64)  # (M, n)
    bad = (winners_all != k).astype(np.int64)  # (M,)
    best = None
    for size in range(ref.n + 1):
        for S in itertools.combinations(range(ref.n), size):
            consistent = mismatch[:, list(S)].sum(axis=1) == 0
            if not (consistent & (bad == 1)).any():
                best = size
                break
        if best is not None:
            return best, k
    raise AssertionError("reading every row must certify")


def exhaustive_min_certificate_tau(ref, y, Y_all, R_all, T):
    """Smallest |S| such that some candidate is within T (scaled) of the best under every
    labelling agreeing with y on S."""
    gap = R_all - R_all.min(axis=1, keepdims=True)
    mismatch = Y_all != y[None, :]
    for size in range(ref.n + 1):
        for S in itertools.combinations(range(ref.n), size):
            consistent = ~mismatch[:, list(S)].any(axis=1)
            if (gap[consistent].max(axis=0) <= T).any():
                return size
    raise AssertionError("reading every row must certify within any tau >= 0")


@pytest.mark.parametrize("kind", KINDS)
def test_prelabel_with_tolerance_never_exceeds_exhaustive_minimum(kind):
    """SPEC section 6 with tolerance (need = -T for every rival): no set of fewer than
    prelabel(tau) rows makes some candidate within tau of the best for every completion."""
    tight = 0
    for rng, spec in cases(kind, 40, 8):
        if spec.kind != "binary" and spec.n > 6:
            spec = random_spec(rng, kind, n=int(rng.integers(1, 7)))
        ref = Ref(spec)
        tau = Fraction(int(rng.integers(1, 30)), 500)
        T = int(tau * ref.scale)
        pb = prelabel_bound(spec.pool(labels=None), tolerance=tau).prelabel_bound
        Y_all = ref.completions({})
        R_all = ref.risks(Y_all)
        for m in rng.choice(Y_all.shape[0], size=min(4, Y_all.shape[0]), replace=False):
            c = exhaustive_min_certificate_tau(ref, Y_all[m], Y_all, R_all, T)
            assert pb <= c, (spec, Y_all[m].tolist(), tau, pb, c)
            tight += pb == c
    assert tight > 0


@pytest.mark.parametrize("kind", KINDS)
def test_prelabel_never_exceeds_exhaustive_minimum_certificate(kind):
    """Paper section 4.2, Theorem 3: for every labelling y, C(y) >= prelabel bound, with
    C(y) found by enumerating every subset of rows and every completion of the rest."""
    tight = 0
    for rng, spec in cases(kind, 60, 5):
        if spec.kind != "binary" and spec.n > 6:
            spec = random_spec(rng, kind, n=int(rng.integers(1, 7)))
        ref = Ref(spec)
        pool = spec.pool(labels=None)
        pb = prelabel_bound(pool).prelabel_bound
        Y_all = ref.completions({})
        W_all = ref.winners(ref.risks(Y_all))
        picks = rng.choice(Y_all.shape[0], size=min(6, Y_all.shape[0]), replace=False)
        for m in picks:
            c, _ = exhaustive_min_certificate(ref, Y_all[m], Y_all, W_all)
            assert pb <= c, (spec, Y_all[m].tolist(), pb, c)
            tight += pb == c
        assert pb <= ref.n
    assert tight > 0


# ------------------------------------------------------------------ (f) tolerance
@pytest.mark.parametrize("kind", KINDS)
def test_tolerance_certifies_within_tau_for_every_completion(kind):
    """Paper section 3 (tau > 0 relaxation) and SPEC section 5: with tolerance tau the test
    certifies some candidate iff one is within tau of the best under every completion;
    the selected one is within tau and has the smallest worst-case excess (earliest)."""
    certified_seen = 0
    for rng, spec in cases(kind, 120, 6):
        ref = Ref(spec)
        pool = spec.pool(labels=None)
        rows = random_read(rng, ref)
        tau = Fraction(int(rng.integers(1, 40)), 400)
        Y = ref.completions({i: spec.labels[i] for i in rows})
        R = ref.risks(Y)
        gap = R - R.min(axis=1, keepdims=True)  # (M, K): r_k - min_j r_j >= 0
        worst = gap.max(axis=0)  # worst-case excess of each candidate, scaled
        within = [Fraction(int(worst[k]), ref.scale) <= tau for k in range(ref.K)]
        s = session_after(spec, pool, rows, tolerance=tau)
        assert s.certified == any(within), (spec, rows, tau)
        k = pool.names.index(s.best_guess)
        if s.certified:
            certified_seen += 1
            assert within[k]
            assert all(Fraction(int(g), ref.scale) <= tau for g in gap[:, k])
            best = min(worst[q] for q in range(ref.K) if within[q])
            assert worst[k] == best and k == min(q for q in range(ref.K)
                                                 if within[q] and worst[q] == best)
            assert s.excess == Fraction(int(worst[k]), ref.scale)
    assert certified_seen >= 20


# ------------------------------------------------------ (g) budget-exhausted excess
@pytest.mark.parametrize("kind", KINDS)
def test_budget_exhausted_excess_is_exact_worst_case(kind):
    """SPEC section 5 "Worst-case excess": when a budget runs out, the answer is the
    candidate minimising max over completions of (r_k - min_j r_j), earliest on ties,
    and the reported excess equals that value / (2 n^2) exactly."""
    exhausted = 0
    for rng, spec in cases(kind, 120, 7):
        ref = Ref(spec)
        pool = spec.pool()
        budget = int(rng.integers(0, ref.n + 1))
        while ref.C ** (ref.n - budget) > MAX_COMPLETIONS:
            budget += 1
        policy = ("static-range", "adaptive-pair-sum", "random", "model-selector")[
            int(rng.integers(4))]
        s = Session.start(spec.pool(labels=None), policy=policy, budget=budget,
                          seed=int(rng.integers(100)))
        while not s.done:
            i = s.next_row()
            s = s.observe(i, spec.classes[spec.labels[i]])
        res = replay(pool, policy=policy, budget=budget, seed=s.seed)
        Y = ref.completions({i: spec.labels[i] for i in s.read_rows})
        R = ref.risks(Y)
        worst = (R - R.min(axis=1, keepdims=True)).max(axis=0)
        best = int(worst.min())
        k = int(np.flatnonzero(worst == best)[0])
        assert s.excess == Fraction(best, ref.scale), (spec, s.read_rows)
        assert res.excess == s.excess and res.labels_read == s.t
        if s.status == "budget exhausted":
            exhausted += 1
            assert s.t == budget and not s.certified
            assert s.best_guess == pool.names[k], (spec, s.read_rows, worst)
            assert res.selected == s.best_guess and not res.certified
        else:
            assert s.certified and best == 0
    assert exhausted >= 20
