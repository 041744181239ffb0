"""The no-error branch of expected-coverage's hedge: with probability P0 that
every unread row on which all candidates agree is right, the winner is decided by the
other rows alone.  Its running sums are checked against a recomputation from scratch at
every step, and the hedge against a plain loop over candidates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib import CertlibError
from certlib.core.pair_terms import lower_terms, realised_terms
from certlib.policies.coverage import ExpectedCoverage
from certlib.policies.label_model import agreement_applies, agreement_pred_prob, label_probabilities
from certlib.labelling.session import Session
from conftest import prob_pool


def loop_hedge(L, need, eliminated, mean, var, temper):
    """P(k wins) = prod_j Phi((L_jk + mean_jk - need_jk + 1/2) / (temper sd_jk)), normalised,
    zero for eliminated candidates; written candidate by candidate."""
    K = len(L)
    w = []
    for k in range(K):
        if k in eliminated:
            w.append(0.0)
            continue
        p = 1.0
        for j in range(K):
            if j == k or need[j][k] < -10**15:  # a pair that can never block k
                continue
            sd = math.sqrt(max(var[j][k], 0) + 0.25)
            z = (L[j][k] + mean[j][k] - need[j][k] + 0.5) / (sd * temper)
            p *= 0.5 * math.erfc(-z / math.sqrt(2))
        w.append(p)
    return np.array(w) / sum(w)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["binary", "categorical"]),
       n=st.integers(4, 30), K=st.integers(2, 5),
       rule=st.sampled_from(["shared", "separate", "centered"]),
       tolerance=st.sampled_from([0.0, 0.01]))
def test_branch_sums_and_hedge_at_every_step(seed, kind, n, K, rule, tolerance):
    pool = prob_pool(seed, n=n, K=K, kind=kind)
    lm = label_probabilities(pool)
    if not agreement_applies(pool, lm) or (rule == "centered" and kind != "binary"):
        return
    pol = ExpectedCoverage()
    agree, shrink, _, _, temper, branch = pol.settings(pool, lm)
    assert agree and branch and temper == 2.0
    q = (1 - shrink) * agreement_pred_prob(pool) + shrink / pool.n_classes
    unanimous = (pool.preds == pool.preds[0]).all(axis=0)
    s = Session.start(pool, policy=pol, rule=rule, tolerance=tolerance)
    while True:
        st_ = s._pstate
        unread = s.unread_mask()
        ua, ud = np.flatnonzero(unread & unanimous), np.flatnonzero(unread & ~unanimous)
        # the gains of the unanimous rows if every candidate is right there
        sure = (realised_terms(pool, ua, pool.preds[0, ua], rule=rule)
                - lower_terms(pool, ua, rule=rule)).sum(axis=2)
        np.testing.assert_allclose(st_.sure_gain, sure, rtol=1e-5, atol=1e-3)
        eg, vg = (a.reshape(K, K, -1)[:, :, ud].astype(np.float64).sum(axis=2)
                  for a in (st_.eg, st_.vg))
        np.testing.assert_allclose(st_.split_eg, eg, rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(st_.split_vg, vg, rtol=1e-5, atol=1e-3)
        p0 = math.exp(np.log(q[0, ua]).sum())
        assert math.isclose(math.exp(st_.log_p0), p0, rel_tol=1e-9, abs_tol=1e-12)
        L, need, el = s.L.tolist(), s.th.need.tolist(), set(s.eliminated)
        want = ((1 - p0) * loop_hedge(L, need, el, st_.sum_eg, st_.sum_vg, temper)
                + p0 * loop_hedge(L, need, el, sure + eg, vg, temper))
        got = pol.win_probabilities(st_, s.L, s.th.need, s.eliminated)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
        if s.done:
            break
        row = s.next_row()
        s = s.observe(row, pool.classes[pool.labels[row]])


def test_branch_off_is_the_plain_hedge():
    """``branch=False`` keeps no branch sums and the hedge is the plain one."""
    pool = prob_pool(3, n=30, K=4)
    pol = ExpectedCoverage(branch=False)
    s = Session.start(pool, policy=pol)
    assert s._pstate.unanimous is None
    st_ = s._pstate
    want = loop_hedge(s.L.tolist(), s.th.need.tolist(), set(s.eliminated), st_.sum_eg,
                      st_.sum_vg, 2.0)
    np.testing.assert_allclose(pol.win_probabilities(st_, s.L, s.th.need, s.eliminated), want,
                               rtol=1e-6, atol=1e-9)


def test_branch_parameter_is_checked():
    for bad in ("False", "no", 1, 0.0):
        with pytest.raises(CertlibError, match="branch"):
            ExpectedCoverage(branch=bad)
    assert ExpectedCoverage(branch=np.bool_(False)).branch is False
