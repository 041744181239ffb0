"""Hypothesis properties (STYLE rule 8, third kind): tie invariance of the weights,
online == batch bounds on every prefix, vectorised replay == stepped replay, gains,
and L <= realised difference <= H.  Derandomized, so every run checks the same cases.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib import Pool, Session, policy_names, replay
from certlib.core.bounds import batch_lower
from certlib.core.pair_terms import gain_terms, potential_terms
from certlib.core.weights import augrc_weights

from conftest import KINDS, random_spec

ROOT = Path(__file__).resolve().parents[2]

SETTINGS = dict(derandomize=True, deadline=None)

confs_st = st.lists(st.integers(-3, 6), min_size=1, max_size=30).map(
    lambda v: np.array(v, dtype=float) / 4)


@st.composite
def pools(draw, max_n=12, kinds=KINDS, labelled=True):
    kind = draw(st.sampled_from(kinds))
    n = draw(st.integers(1, max_n))
    K = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    spec = random_spec(np.random.default_rng(seed), kind, n=n, K=K)
    return spec, spec.pool(labels="full" if labelled else None)


def rules_for(pool):
    return ("shared", "separate", "centered") if pool.is_binary or pool.shared_prediction \
        else ("shared", "separate")


# --------------------------------------------------------------------- weights
@settings(max_examples=150, **SETTINGS)
@given(confs_st, st.randoms(use_true_random=False))
def test_weights_tie_invariance(conf, rnd):
    """SPEC section 3: permuting rows permutes the weights; they sum to n^2; they are
    monotone in the confidence (equal on ties); shifting or strictly increasing affine
    maps of the confidences change nothing."""
    n = conf.size
    w = augrc_weights(conf)
    assert w.dtype.kind == "i"
    assert int(w.sum()) == n * n
    perm = list(range(n))
    rnd.shuffle(perm)
    assert augrc_weights(conf[perm]).tolist() == w[perm].tolist()
    for i in range(n):
        for j in range(n):
            if conf[i] > conf[j]:
                assert w[i] > w[j]
            elif conf[i] == conf[j]:
                assert w[i] == w[j]
    assert augrc_weights(conf + 7.0).tolist() == w.tolist()
    assert augrc_weights(3.0 * conf - 1.0).tolist() == w.tolist()
    assert (w >= 1).all() and (w <= 2 * n - 1).all()


# ----------------------------------------------------------- online == batch
@settings(max_examples=120, **SETTINGS)
@given(pools(), st.randoms(use_true_random=False))
def test_online_equals_batch_on_every_prefix(sp, rnd):
    """STYLE rule 6 / SPEC section 4: the Session's bounds after each label equal
    batch_lower on that prefix, for every rule, along a random order."""
    spec, pool = sp
    order = list(range(pool.n))
    rnd.shuffle(order)
    unlabelled = spec.pool(labels=None)
    for rule in rules_for(pool):
        s = Session.start(unlabelled, rule=rule)
        assert s.L.tolist() == batch_lower(pool, [], rule=rule).tolist()
        for t, i in enumerate(order, 1):
            s = s.observe(i, spec.classes[spec.labels[i]])
            assert s.L.tolist() == batch_lower(pool, order[:t], rule=rule).tolist()


# ----------------------------------------------- L <= realised difference <= H
@settings(max_examples=120, **SETTINGS)
@given(pools(), st.randoms(use_true_random=False))
def test_bounds_enclose_realised_difference(sp, rnd):
    """Paper eq. (4): after any prefix, L_jk <= r_j - r_k <= H_jk at the true labels; the
    separate and centered bounds are weaker (never above the shared L)."""
    spec, pool = sp
    r = pool.risks()
    diff = r[:, None] - r[None, :]
    order = list(range(pool.n))
    rnd.shuffle(order)
    m = rnd.randint(0, pool.n)
    s = Session.from_history(spec.pool(labels=None),
                             [(i, spec.classes[spec.labels[i]]) for i in order[:m]])
    L, H = s.lower(), s.upper()
    assert (L <= diff).all() and (diff <= H).all()
    if m == pool.n:
        assert (L == diff).all() and (H == diff).all()
    for rule in rules_for(pool)[1:]:
        unit = 2 if rule == "centered" else 1
        Lr = batch_lower(pool, order[:m], rule=rule)
        assert (Lr <= unit * L).all()


# ------------------------------------------------------------------- gains
@settings(max_examples=120, **SETTINGS)
@given(pools(max_n=20))
def test_gains_nonnegative_and_zero_or_potential(sp):
    """Paper section 3 / SPEC section 4: reading a row raises L_jk by g >= 0, at most the
    potential gain; for binary labels or a shared prediction (one queried bit) g is
    exactly 0 or |b_jki|.  Gains of the comparison rules are >= 0 too."""
    spec, pool = sp
    rows = np.arange(pool.n)
    g = gain_terms(pool, rows, pool.labels, rule="shared")
    pot = potential_terms(pool, rows)
    assert (g >= 0).all() and (g <= pot).all()
    if pool.is_binary or pool.shared_prediction:
        assert ((g == 0) | (g == pot)).all()
    K = pool.K
    assert (g[np.arange(K), np.arange(K)] == 0).all()
    for rule in rules_for(pool)[1:]:
        assert (gain_terms(pool, rows, pool.labels, rule=rule) >= 0).all()


# ---------------------------------------------------- vectorised == stepped replay
def _fields(r):
    return (r.policy, r.rule, r.tolerance, r.budget, r.labels_read, r.certified, r.selected,
            r.full_pool_winner, r.excess, r.order)


@settings(max_examples=40, **SETTINGS)
@given(pools(max_n=25), st.integers(0, 5),
       st.sampled_from([0, 0, "1/200", "1/50"]), st.one_of(st.none(), st.integers(0, 25)))
def test_replay_vectorised_equals_session(sp, seed, tau, budget):
    """certlib.replay: the vectorised path and the stepped Session agree on every field,
    for every registered policy and rule, with tolerance and budget."""
    from fractions import Fraction

    spec, pool = sp
    tau = Fraction(tau)
    for policy in policy_names():
        for rule in rules_for(pool):
            a = replay(pool, policy=policy, rule=rule, tolerance=tau, seed=seed, budget=budget)
            b = replay(pool, policy=policy, rule=rule, tolerance=tau, seed=seed, budget=budget,
                       vectorised=False)
            assert _fields(a) == _fields(b), (policy, rule)


@pytest.mark.parametrize("seed", range(3))
def test_replay_vectorised_equals_session_across_blocks(seed):
    """Pools larger than the first vectorised block (256 rows), with eliminations in the
    adaptive policies: both paths agree."""
    rng = np.random.default_rng(seed)
    n, K = 700, 4
    base = rng.normal(size=n)
    confs = base[None, :] + rng.normal(scale=[[0.2], [0.6], [1.0], [1.5]], size=(K, n))
    y = (rng.random(n) < 0.5).astype(int)
    preds = np.where(rng.random((K, n)) < [[0.85], [0.8], [0.7], [0.6]], y, 1 - y)
    pool = Pool.from_arrays(preds, confs, labels=y)
    for policy in ("static-range", "adaptive-range", "adaptive-pair-sum", "random", "vma"):
        for rule in ("shared", "centered"):
            a = replay(pool, policy=policy, rule=rule, tolerance=0, seed=seed)
            b = replay(pool, policy=policy, rule=rule, tolerance=0, seed=seed, vectorised=False)
            assert _fields(a) == _fields(b), (policy, rule)


# ------------------------------------------------- row scores against every pair
@settings(max_examples=120, **SETTINGS)
@given(pools(max_n=20), st.data())
def test_pair_scores_equal_their_pairs(sp, data):
    """pair_scores (the binary range as max a - min a) and pair_sum_without (an
    elimination taken off the last scores) equal the max / sum over the active pairs'
    potential gains, computed pair by pair from potential_terms (paper eq. (10))."""
    from certlib.policies.base import pair_scores, pair_sum_without

    spec, pool = sp
    pot = potential_terms(pool, np.arange(pool.n))
    active = data.draw(st.lists(st.booleans(), min_size=pool.K, max_size=pool.K))
    members = [k for k in range(pool.K) if active[k]]
    pairs = [pot[j, k] for i, j in enumerate(members) for k in members[i + 1:]]
    zero = np.zeros(pool.n, dtype=np.int64)
    assert pair_scores(pool, active, kind="range").tolist() == \
        np.max([zero, *pairs], axis=0).tolist()
    assert pair_scores(pool, active, kind="pair-sum").tolist() == \
        np.sum([zero, *pairs], axis=0).tolist()
    removed = data.draw(st.lists(st.sampled_from(members), unique=True) if members
                        else st.just([]))
    left = [k for k in range(pool.K) if active[k] and k not in removed]
    mask = np.isin(np.arange(pool.K), left)
    got = pair_sum_without(pool, pair_scores(pool, active, kind="pair-sum"), members, removed)
    assert got.tolist() == pair_scores(pool, mask, kind="pair-sum").tolist()


@settings(max_examples=150, **SETTINGS)
@given(pools(max_n=20), st.data())
def test_order_of_rows_is_the_full_order_restricted(sp, data):
    """At an elimination a session orders only its unread rows (order_of_rows: the
    row-major copy of a for a binary pool, pair_scores over the rows otherwise); that
    is the full order of the same candidates with the read rows left out, ties
    included, for every order policy."""
    from certlib.policies import get_policy
    from certlib.policies.base import OrderPolicy

    spec, pool = sp
    ctx = Session.start(pool).policy_context
    active = tuple(k for k in range(pool.K)
                   if data.draw(st.booleans()) or k == 0)
    keep = data.draw(st.lists(st.booleans(), min_size=pool.n, max_size=pool.n))
    rows = np.flatnonzero(keep).astype(np.int64)
    for name in policy_names():
        policy = get_policy(name)
        if not isinstance(policy, OrderPolicy):
            continue
        policy.start(ctx)
        full = policy.adaptive_order(ctx, active)
        want = [int(r) for r in full if keep[r]]
        assert policy.order_of_rows(ctx, active, rows).tolist() == want, name


SHIPPED = [p for p in sorted(ROOT.glob("sample_data/*.csv"))
           if p.stem != "audit_stream"] + sorted(ROOT.glob("sample_data/panels/*.csv"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_adaptive_orders_give_the_same_runs_on_every_shipped_pool(path):
    """On every shipped pool with labels, the adaptive orders remade for the unread rows
    only (order_of_rows) read the same rows as the full order filtered, both in the
    vectorised replay and label by label."""
    from certlib.io import load_pool
    from certlib.policies import get_policy
    from certlib.labelling.replay import replay as replay_rows

    pool = load_pool(path)
    if not pool.fully_labelled:
        pytest.skip("no labels")
    for name in ("adaptive-range", "adaptive-pair-sum"):
        full_order = get_policy(name)
        full_order.order_of_rows = None  # the replay then filters the full order
        want = _fields(replay_rows(pool, policy=full_order))
        assert _fields(replay(pool, policy=name)) == want, name
        assert _fields(replay(pool, policy=name, vectorised=False)) == want, name


@pytest.mark.parametrize("K", [12, 24])
def test_replay_many_candidates_equals_session(K):
    """Many candidates, many eliminations, pools past the first blocks: the vectorised
    replay (the block's first event found by halving) and the stepped Session agree for
    the adaptive orders (their scores remade after each elimination from the last)."""
    rng = np.random.default_rng(K)
    n = 1500
    y = (rng.random(n) < 0.4).astype(int)
    skill = np.linspace(0.95, 0.6, K)[:, None]
    preds = np.where(rng.random((K, n)) < skill, y, 1 - y)
    confs = rng.random((K, n)) + 0.3 * (preds == y)
    pool = Pool.from_arrays(preds, confs, labels=y)
    for policy in ("adaptive-range", "adaptive-pair-sum", "static-pair-sum"):
        a = replay(pool, policy=policy, tolerance=0)
        b = replay(pool, policy=policy, tolerance=0, vectorised=False)
        assert _fields(a) == _fields(b), policy
        assert a.certified



@settings(max_examples=150, **SETTINGS)
@given(pools(max_n=20))
def test_gains_of_a_binary_pool_equal_realised_minus_lower(sp):
    """gain_terms' binary shortcut, max(0, s (a_j - a_k)) with s = 2y - 1, equals the
    realised term minus the lower one of every pair and row (paper section 3), for either
    label of every row."""
    from certlib.core.pair_terms import lower_terms, realised_terms

    spec, pool = sp
    rows = np.arange(pool.n)
    for labels in (pool.labels, 1 - pool.labels if pool.is_binary else pool.labels):
        want = realised_terms(pool, rows, labels) - lower_terms(pool, rows)
        assert gain_terms(pool, rows, labels).tolist() == want.tolist()


@settings(max_examples=100, **SETTINGS)
@given(pools(max_n=20), st.lists(st.floats(-5, 5), min_size=8, max_size=8))
def test_model_selector_entropy_equals_its_posteriors(sp, logits):
    """model-selector's expected entropy (from each class's mass and sum of pi log pi)
    equals the mean over classes of the entropy of the posterior formed explicitly: the
    candidates predicting the class boosted by gamma, normalised (unpredicted classes
    leave it unchanged)."""
    from certlib.policies.baselines import ModelSelector, PosteriorState

    spec, pool = sp
    lp = np.array(logits[:pool.K]) - np.logaddexp.reduce(logits[:pool.K])
    ms = ModelSelector()
    got = ms.expected_entropy(PosteriorState(lp, 0, 0), pool, np.arange(pool.n))
    gamma = (1 - ms.eps) / ms.eps
    for i in range(pool.n):
        hs = []
        for c in range(pool.n_classes):
            p = np.exp(lp) * np.where(pool.preds[:, i] == c, gamma, 1.0)
            p /= p.sum()
            hs.append(-np.sum(p * np.log(p)))
        assert abs(got[i] - np.mean(hs)) < 1e-9
