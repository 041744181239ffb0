"""The expected-coverage policy: protocol contract, label models, validity of
every replay, session == replay, and the label saving on the paper's panel pools."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certlib import CertlibError, Pool
from certlib.core.bounds import batch_lower
from certlib.io import load_pool
from certlib.policies import get_policy, policy_names
from certlib.policies.coverage import ExpectedCoverage
from certlib.policies.label_model import label_probabilities
from certlib.labelling.replay import replay
from certlib.labelling.session import Session

from conftest import KINDS, prob_pool

ROOT = Path(__file__).resolve().parents[2]
PANELS = ROOT / "sample_data" / "panels"


def view_of(s: Session):
    return (s.t, s.read_rows, s.L.tobytes(), s.decision)


def test_registered_and_reachable_by_name():
    assert "expected-coverage" in policy_names()
    assert isinstance(get_policy("expected-coverage"), ExpectedCoverage)


@pytest.mark.parametrize("kind", KINDS)
def test_contract(kind):
    """choose returns an unread row (also after rows read outside its ranking), is pure,
    leaves the session and the pool unchanged, and is deterministic for a seed."""
    pool = prob_pool(1, n=25, K=3, kind=kind)
    assert label_probabilities(pool).source == "confidences"
    before = [a.copy() for a in (pool.preds, pool.confs, pool.weights, pool.labels)]
    pol = ExpectedCoverage()

    def run():
        s = Session.start(pool, policy=pol, seed=5)
        state = pol.start(s.policy_context)
        rng = np.random.default_rng(0)
        chosen = []
        while s.t < pool.n:
            v = view_of(s)
            row = pol.choose(state, s)
            assert pol.choose(state, s) == row
            assert view_of(s) == v
            assert 0 <= row < pool.n and not s.is_read(row)
            chosen.append(row)
            if s.t % 5 == 4:  # somebody reads another row: the policy must cope
                row = int(rng.choice(np.flatnonzero(s.unread_mask())))
            code = int(pool.labels[row])
            s2 = s.observe(row, pool.classes[code])
            old = pol.choose(state, s2) if s2.t < pool.n else None
            new_state = pol.update(state, s2, row, code)
            if old is not None:  # update returns a new state; the old one still answers
                assert pol.choose(state, s2) == old
            state = new_state
            assert view_of(s) == v
            s = s2
        with pytest.raises(CertlibError, match="read"):
            pol.choose(state, s)
        return chosen

    assert run() == run()
    assert all((a == b).all() for a, b in zip(before, (pool.preds, pool.confs, pool.weights,
                                                        pool.labels)))


@pytest.mark.parametrize("seed", range(30))
def test_replay_certifies_full_pool_winner_small_pools(seed):
    kind = KINDS[seed % 3]
    pool = prob_pool(100 + seed, n=6 + 2 * seed, K=2 + seed % 4, kind=kind)
    for s in (0, 7):  # deterministic: the seed does not matter
        r = replay(pool, policy="expected-coverage", seed=s)
        assert r.certified and r.selected == r.full_pool_winner == pool.names[pool.winner()]
        if s == 0:
            first = r.order
    assert r.order == first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), n=st.integers(1, 14),
       K=st.integers(2, 4), rule=st.sampled_from(["shared", "separate"]))
def test_any_pool_and_rule_certifies_the_winner(seed, kind, n, K, rule):
    """The policy only orders rows: whatever the label model says, the exact test decides."""
    pool = prob_pool(seed, n=n, K=K, kind=kind)
    r = replay(pool, policy="expected-coverage", rule=rule)
    if r.certified:
        assert r.selected == r.full_pool_winner
    else:  # the separate rule may fail to certify even with every label
        assert rule == "separate" and r.labels_read == n


@pytest.mark.parametrize("tolerance", [0.0, 0.01])
def test_session_stepping_equals_replay(tolerance):
    pool = load_pool(PANELS / "wine_s2_logreg_k8.csv")
    r = replay(pool, policy="expected-coverage", tolerance=tolerance)
    s = Session.start(pool, policy="expected-coverage", tolerance=tolerance)
    while not s.done:
        row = s.next_row()
        s = s.observe(row, pool.classes[pool.labels[row]])
    assert tuple(pool.row_ids[i] for i in s.read_rows) == r.order
    assert s.certified == r.certified and s.best_guess == r.selected
    np.testing.assert_array_equal(s.L, batch_lower(pool, list(s.read_rows)))
    # a session restarted from its history continues with the same choices
    mid = Session.from_history(pool, s.history[: len(s.history) // 2],
                               policy="expected-coverage", tolerance=tolerance)
    assert mid.next_row() == s.read_rows[len(s.history) // 2]


def test_label_model_sources():
    n = 20
    rng = np.random.default_rng(3)
    # confidences outside [1/C, 1]: no label model, the adaptive-pair-sum order is used
    raw = Pool.from_arrays(rng.integers(0, 2, (3, n)), rng.random((3, n)) * 5,
                           labels=rng.integers(0, 2, n))
    assert label_probabilities(raw).source == "none"
    assert replay(raw, policy="expected-coverage").order == \
        replay(raw, policy="adaptive-pair-sum").order
    # p_label (binary): P(y = classes[1]) becomes P(y = pred_j) for every candidate
    p = np.round(rng.random(n), 3)
    pl_pool = Pool.from_arrays(raw.preds, raw.confs, labels=rng.integers(0, 2, n),
                               extra={"p_label": tuple(p)})
    lm = label_probabilities(pl_pool)
    assert lm.source == "p_label"
    np.testing.assert_allclose(lm.pred_prob(pl_pool), np.where(pl_pool.preds == 1, p, 1 - p))
    # prob_<class> columns, when a loader keeps them
    P = rng.dirichlet(np.ones(3), size=n)
    pp = Pool.from_arrays(rng.integers(0, 3, (2, n)), rng.random((2, n)) * 5,
                          classes=(0, 1, 2),
                          extra={f"prob_{c}": tuple(P[:, c]) for c in range(3)})
    lm = label_probabilities(pp)
    assert lm.source == "prob_columns"
    np.testing.assert_allclose(lm.pred_prob(pp), np.take_along_axis(P.T, pp.preds, 0))
    # confidences: a linear pool of the candidates; duplicated candidates count once
    c = np.array([[0.9, 0.6], [0.9, 0.6], [0.7, 0.8]])
    dup = Pool.from_arrays([[1, 0], [1, 0], [0, 0]], c)
    lm = label_probabilities(dup)
    assert lm.source == "confidences" and lm.experts == ("c0", "c2")
    # row 0: c0 says P(y=1) = .9, c2 says P(y=0) = .7 -> P(y=1) = (.9 + .3) / 2
    np.testing.assert_allclose(lm.pred_prob(dup)[:, 0], [0.6, 0.6, 0.4])
    np.testing.assert_allclose(lm.pred_prob(dup)[:, 1], [0.7, 0.7, 0.7])


def test_msp_is_the_probability_in_prob_files():
    pool = load_pool(ROOT / "sample_data" / "digits_probs.csv")
    lm = label_probabilities(pool)
    assert lm.source == "confidences" and lm.experts == ("msp",)
    r = replay(pool, policy="expected-coverage")
    assert r.certified and r.selected == r.full_pool_winner


def test_parameters_are_checked():
    with pytest.raises(CertlibError, match="shrink"):
        ExpectedCoverage(shrink=2)
    with pytest.raises(CertlibError, match="temper"):
        ExpectedCoverage(temper=0)


def test_win_probabilities_hedge():
    """P(k wins) is a distribution, zero on eliminated candidates, and it moves towards
    the full-pool winner as labels are read."""
    pool = load_pool(PANELS / "digits_s0_tree_k4.csv")
    pol = ExpectedCoverage()
    s = Session.start(pool, policy=pol)
    w = pool.winner()
    first = None
    while not s.done:
        pi = pol.win_probabilities(s._pstate, s.L, s.th.need, s.eliminated)
        assert pi.sum() == pytest.approx(1) and (pi >= 0).all()
        assert all(pi[k] == 0 for k in s.eliminated)
        first = pi[w] if first is None else first
        row = s.next_row()
        s = s.observe(row, pool.classes[pool.labels[row]])
    assert pi[w] > max(first, 0.5)


def test_fewer_labels_than_adaptive_pair_sum_on_panel_pools():
    """The policy's targets on the paper-protocol panel pools (36 pools, three data sets): every
    run certifies the full-pool winner; the mean label fraction (data sets weighted
    equally) is at least 10 points below adaptive pair-sum; no pool is more than 10% of n
    above it.  Measured when written: 75.1% vs 85.4%, worst pool +0.0% of n."""
    by = {}
    worst = -1.0
    for f in sorted(PANELS.glob("*.csv")):
        pool = load_pool(f)
        a = replay(pool, policy="adaptive-pair-sum")
        e = replay(pool, policy="expected-coverage")
        assert e.certified and e.selected == e.full_pool_winner == pool.names[pool.winner()]
        by.setdefault(f.name.split("_s")[0], []).append((a.labels_fraction, e.labels_fraction))
        worst = max(worst, e.labels_fraction - a.labels_fraction)
    assert len(by) == 3 and sum(map(len, by.values())) == 36
    aps = np.mean([np.mean([x[0] for x in v]) for v in by.values()])
    ec = np.mean([np.mean([x[1] for x in v]) for v in by.values()])
    assert aps - ec >= 0.10
    assert worst <= 0.10
    # and on one named pool, a plain comparison
    pool = load_pool(PANELS / "digits_s0_tree_k4.csv")
    assert replay(pool, policy="expected-coverage").labels_read < \
        replay(pool, policy="adaptive-pair-sum").labels_read
