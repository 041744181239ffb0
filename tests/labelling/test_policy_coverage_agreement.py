"""The agreement model of ``expected-coverage``: P(y_i = pred_ki) from the
candidate's confidence and the share of the other candidates that agree with it
(`certlib.policies.label_model.agreement_pred_prob`), checked against a plain loop,
by hand on one row, and by what the policy does with it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib import CertlibError, Pool, load_pool, replay
from certlib.policies.coverage import ExpectedCoverage
from certlib.policies.label_model import (
    AGREEMENT_PRIOR,
    agreement_applies,
    agreement_pred_prob,
    label_probabilities,
)
from certlib.labelling.session import Session
from conftest import prob_pool

ROOT = Path(__file__).resolve().parents[2]


def sig(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def loop_model(preds, confs, C, coef=AGREEMENT_PRIOR, clip=0.99):
    """The model written out row by row, candidate by candidate (a second reading of
    the docstring, no shared code)."""
    a, b, c = coef
    K, n = len(preds), len(preds[0])
    q = np.zeros((K, n))
    for i in range(n):
        col = [preds[k][i] for k in range(K)]
        r = []
        for k in range(K):
            p = min(max(confs[k][i], 1.0 / C), clip)
            p = min(max(p, 1e-6), 1 - 1e-6)
            share = (col.count(col[k]) - 1) / (K - 1)
            r.append(sig(a + b * math.log(p / (1 - p)) + c * share))
        by_class = {}
        for k in range(K):
            by_class.setdefault(col[k], []).append(r[k])
        mean = {cls: sum(v) / len(v) for cls, v in by_class.items()}
        total = sum(mean.values())
        scale = 1.0 if (len(mean) < C and total <= 1) else 1.0 / total
        for k in range(K):
            q[k, i] = mean[col[k]] * scale
    return q


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.sampled_from([2, 3, 5]),
       st.integers(1, 30))
def test_agreement_model_equals_a_plain_loop(seed, K, C, n):
    rng = np.random.default_rng(seed)
    preds = rng.integers(0, C, size=(K, n))
    confs = np.round(rng.uniform(1.0 / C, 1.0, size=(K, n)), 2)
    confs[rng.random((K, n)) < 0.2] = 1.0  # tree leaves: confidence exactly 1
    pool = Pool.from_arrays(preds, confs, classes=tuple(range(C)))
    q = agreement_pred_prob(pool)
    np.testing.assert_allclose(q, loop_model(preds.tolist(), confs.tolist(), C), atol=1e-12)
    # a distribution over the classes predicted: agreeing candidates share one number,
    # and the classes predicted on a row never add up to more than 1
    assert ((q > 0) & (q <= 1)).all()
    for i in range(n):
        per_class = {}
        for k in range(K):
            per_class.setdefault(int(preds[k, i]), set()).add(round(float(q[k, i]), 12))
        assert all(len(v) == 1 for v in per_class.values())
        assert sum(next(iter(v)) for v in per_class.values()) <= 1 + 1e-9


def test_agreement_model_by_hand():
    """Three candidates, binary. Row 0: c0 and c1 predict 1 (conf .9, .8), c2 predicts 0
    (conf .6). Row 1: all predict 1 with confidence 1 (clipped to .99)."""
    pool = Pool.from_arrays([[1, 1], [1, 1], [0, 1]], [[0.9, 1.0], [0.8, 1.0], [0.6, 1.0]])
    a, b, c = AGREEMENT_PRIOR
    lg = lambda p: math.log(p / (1 - p))  # noqa: E731
    r0, r1 = sig(a + b * lg(0.9) + c * 0.5), sig(a + b * lg(0.8) + c * 0.5)
    r2 = sig(a + b * lg(0.6))
    g1, g0 = (r0 + r1) / 2, r2
    t = g1 + g0  # both classes are predicted: normalised
    q = agreement_pred_prob(pool)
    np.testing.assert_allclose(q[:, 0], [g1 / t, g1 / t, g0 / t])
    agree = sig(a + b * lg(0.99) + c)  # every candidate agrees, each at confidence 1
    np.testing.assert_allclose(q[:, 1], [agree] * 3)
    assert 0.99 < agree < 0.992  # an error rate of 0.85% (measured on panels: 0.3-6.6%)


def test_where_the_agreement_model_applies():
    rng = np.random.default_rng(0)
    mixed = prob_pool(0, n=20, K=3)  # candidates' own probabilities, predictions differ
    assert agreement_applies(mixed, label_probabilities(mixed))
    shared = prob_pool(0, n=20, K=3, kind="shared")  # one prediction: share says nothing
    assert not agreement_applies(shared, label_probabilities(shared))
    raw = Pool.from_arrays(rng.integers(0, 2, (3, 20)), rng.random((3, 20)) * 5)
    assert not agreement_applies(raw, label_probabilities(raw))  # not probabilities
    P = rng.dirichlet(np.ones(2), size=20)
    cols = Pool.from_arrays(mixed.preds, mixed.confs,
                            extra={f"prob_{c}": tuple(P[:, c]) for c in range(2)})
    assert not agreement_applies(cols, label_probabilities(cols))  # prob_ columns win
    probs = load_pool(ROOT / "sample_data" / "digits_probs.csv")  # msp, shared prediction
    assert not agreement_applies(probs, label_probabilities(probs))


def test_settings_follow_the_model_that_applies():
    mixed, shared = prob_pool(1, n=20, K=3), prob_pool(1, n=20, K=3, kind="shared")
    pol = ExpectedCoverage()
    assert pol.settings(mixed, label_probabilities(mixed)) == (True, 0.01, 0.1, 1.0, 2.0, True)
    assert pol.settings(shared, label_probabilities(shared)) == (False, 0.1, 0.05, 0.5, 3.0,
                                                                  False)
    old = ExpectedCoverage(model="mixture")
    assert old.settings(mixed, label_probabilities(mixed)) == (False, 0.1, 0.05, 0.5, 3.0, False)
    mine = ExpectedCoverage(shrink=0.2, scarcity=0.0, temper=3, branch=False)  # kept
    assert mine.settings(mixed, label_probabilities(mixed)) == (True, 0.2, 0.1, 0.0, 3, False)
    with pytest.raises(CertlibError, match="model"):
        ExpectedCoverage(model="agreements")


def test_model_changes_the_order_not_the_answer():
    """Both label models certify the full-pool winner; they read in different orders."""
    pool = load_pool(ROOT / "sample_data" / "panels" / "digits_s0_tree_k4.csv")
    new = replay(pool, policy=ExpectedCoverage())
    old = replay(pool, policy=ExpectedCoverage(model="mixture"))
    for r in (new, old):
        assert r.certified and r.selected == r.full_pool_winner
    assert new.order != old.order


def test_one_policy_object_on_two_pools_in_turn():
    """The settings live in each session's policy state: stepping a pool that uses the
    mixture and one that uses the agreement model with the same policy object, in turn,
    reads what fresh objects read."""
    a, b = prob_pool(2, n=40, K=4), prob_pool(2, n=40, K=4, kind="shared")
    pol = ExpectedCoverage()
    sa, sb = Session.start(a, policy=pol), Session.start(b, policy=pol)
    while not (sa.done and sb.done):
        for name in ("a", "b"):
            s, p = (sa, a) if name == "a" else (sb, b)
            if s.done:
                continue
            r = s.next_row()
            s = s.observe(r, p.classes[p.labels[r]])
            sa, sb = (s, sb) if name == "a" else (sa, s)
    assert sa.read_rows == tuple(a.position(i) for i in replay(a, policy=ExpectedCoverage()).order)
    assert sb.read_rows == tuple(b.position(i) for i in replay(b, policy=ExpectedCoverage()).order)


def test_probabilities_given_are_used_as_they_are():
    """``ExpectedCoverage(probabilities=lm)`` uses ``lm`` (the agreement model replaces
    only the built-in mixture): flat confidences give another order than the default."""
    from dataclasses import replace as dc_replace

    pool = prob_pool(4, n=60, K=3)
    lm = label_probabilities(pool)
    flat = dc_replace(lm, expert_conf=np.full_like(lm.expert_conf, 0.5))
    given = ExpectedCoverage(probabilities=flat)
    assert given.settings(pool, flat) == (False, 0.1, 0.05, 0.5, 3.0, False)
    assert replay(pool, policy=given).order == replay(
        pool, policy=ExpectedCoverage(probabilities=flat, model="mixture")).order
    assert replay(pool, policy=given).order != replay(pool, policy=ExpectedCoverage()).order
