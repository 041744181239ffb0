"""The regret guard of expected-coverage (``regret=r``): it never reads more than
floor(r n) labels beyond adaptive pair-sum on the same pool, for any labels, because
after t labels every one of adaptive pair-sum's own first t - floor(r n) rows has been
read (certlib/policies/coverage.py), and reading more rows never undoes a certificate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certlib import CertlibError
from certlib.core.bounds import batch_lower
from certlib.io import load_pool
from certlib.policies.coverage import ExpectedCoverage
from certlib.labelling.replay import replay
from certlib.labelling.session import Session
from conftest import KINDS, prob_pool

HOLDOUT = Path(__file__).resolve().parents[2] / "sample_data" / "holdout"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), n=st.integers(1, 24),
       K=st.integers(2, 4), rule=st.sampled_from(["shared", "separate", "centered"]),
       tolerance=st.sampled_from([0.0, 0.02]), regret=st.sampled_from([0.05, 0.1, 0.25, 0.5]))
def test_never_more_than_regret_beyond_adaptive_pair_sum(seed, kind, n, K, rule, tolerance,
                                                         regret):
    if rule == "centered" and kind == "categorical":
        kind = "binary"  # the centered rule needs binary labels or one shared prediction
    pool = prob_pool(seed, n=n, K=K, kind=kind)
    aps = replay(pool, policy="adaptive-pair-sum", rule=rule, tolerance=tolerance)
    guarded = replay(pool, policy=ExpectedCoverage(regret=regret), rule=rule, tolerance=tolerance)
    assert guarded.labels_read <= aps.labels_read + int(np.floor(regret * n))
    assert guarded.certified == aps.certified or guarded.certified
    if aps.certified and tolerance == 0:
        assert guarded.selected == aps.selected == aps.full_pool_winner


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), n=st.integers(1, 20),
       K=st.integers(2, 4), rule=st.sampled_from(["shared", "separate"]))
def test_regret_zero_reads_exactly_adaptive_pair_sum(seed, kind, n, K, rule):
    """With no slack every read is forced: the shadow run is adaptive pair-sum itself."""
    pool = prob_pool(seed, n=n, K=K, kind=kind)
    aps = replay(pool, policy="adaptive-pair-sum", rule=rule)
    assert replay(pool, policy=ExpectedCoverage(regret=0), rule=rule).order == aps.order


@pytest.mark.parametrize("name", ["wine_s3_logreg_k8", "breast_cancer_s3_tree_k8",
                                  "digits_s3_tree_k8"])
def test_guard_on_shipped_holdout_pools(name):
    """wine_s3_logreg_k8 is the shipped held-out pool where the unguarded default reads
    3 labels (5.6% of n) more than adaptive pair-sum; the guard caps that at floor(.05 n)."""
    pool = load_pool(HOLDOUT / f"{name}.csv")
    aps = replay(pool, policy="adaptive-pair-sum").labels_read
    r = replay(pool, policy=ExpectedCoverage(regret=0.05))
    assert r.certified and r.selected == r.full_pool_winner
    assert r.labels_read <= aps + int(np.floor(0.05 * pool.n))


def test_session_stepping_and_restart_equal_replay():
    pool = load_pool(HOLDOUT / "wine_s3_logreg_k8.csv")
    pol = ExpectedCoverage(regret=0.05)
    r = replay(pool, policy=pol)
    s = Session.start(pool, policy=ExpectedCoverage(regret=0.05))
    states = [s]
    while not s.done:
        row = s.next_row()
        s = s.observe(row, pool.classes[pool.labels[row]])
        states.append(s)
    assert tuple(pool.row_ids[i] for i in s.read_rows) == r.order
    np.testing.assert_array_equal(s.L, batch_lower(pool, list(s.read_rows)))
    # branching from an earlier state (an undo) gives the same continuation: the shadow
    # run's shared log is copied, not overwritten
    mid = states[len(states) // 2]
    for _ in range(3):
        row = mid.next_row()
        mid = mid.observe(row, pool.classes[pool.labels[row]])
    assert mid.read_rows == s.read_rows[: mid.t]
    again = Session.from_history(pool, s.history[: len(s.history) // 2],
                                 policy=ExpectedCoverage(regret=0.05))
    assert again.next_row() == s.read_rows[len(s.history) // 2]


def test_label_code_of_a_session():
    pool = prob_pool(3, n=6)
    s = Session.start(pool).observe(2, pool.classes[pool.labels[2]])
    assert s.label_code(2) == pool.labels[2]
    with pytest.raises(CertlibError, match="not been read"):
        s.label_code(3)


def test_regret_is_checked():
    for bad in (-0.1, 1.5):
        with pytest.raises(CertlibError, match="regret"):
            ExpectedCoverage(regret=bad)
