"""Regressions found by adversarial review (one test per bug, smallest counterexample)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certlib import Pool, replay
from certlib.policies.coverage import ExpectedCoverage

from conftest import KINDS, prob_pool


def test_regret_guard_follows_the_robust_stopping_rule():
    """The regret guard's shadow adaptive pair-sum follows the robust stopping rule: were it
    to stop at the plain certificate, with label_errors=e the guard would stop forcing
    rows while the session went on reading (regret=0 would read 3 labels where adaptive
    pair-sum reads 2, n = 3)."""
    pool = Pool.from_arrays([1, 2, 2], [[1.0, 0.333, 0.667], [0.667, 0.833, 0.333]],
                            labels=[2, 1, 2], classes=(0, 1, 2))
    aps = replay(pool, policy="adaptive-pair-sum", label_errors=1)
    assert aps.labels_read == 2
    guarded = replay(pool, policy=ExpectedCoverage(regret=0), label_errors=1)
    assert guarded.order == aps.order


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), n=st.integers(1, 20),
       K=st.integers(2, 4), e=st.integers(1, 3), tolerance=st.sampled_from([0.0, 0.05]),
       regret=st.sampled_from([0, 0.05, 0.25]))
def test_regret_bound_holds_with_label_errors(seed, kind, n, K, e, tolerance, regret):
    pool = prob_pool(seed, n=n, K=K, kind=kind)
    aps = replay(pool, policy="adaptive-pair-sum", tolerance=tolerance, label_errors=e)
    guarded = replay(pool, policy=ExpectedCoverage(regret=regret), tolerance=tolerance,
                     label_errors=e)
    assert guarded.labels_read <= aps.labels_read + int(np.floor(regret * n))
    if regret == 0:
        assert guarded.order == aps.order


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])


def test_pair_trace_coefficient_on_binary_classes_other_than_0_1():
    """pair_trace raised a bare ValueError (``tuple.index``) on a binary pool whose classes
    are not 0 and 1; b is now taken on the class codes, so g = b y - min(0, b)."""
    from certlib.teaching.worked_examples import pair_trace

    for classes, preds, labels in ((("no", "yes"), [["no", "yes", "no"], ["yes", "yes", "no"]],
                                    ["yes", "no", "no"]),
                                   ((1, 2), [[1, 2, 1], [2, 2, 1]], [2, 1, 1])):
        pool = Pool.from_arrays(preds, [[3, 2, 1], [1, 2, 3]], labels=labels, classes=classes)
        steps = pair_trace(pool, order=[0, 1, 2]).steps[1:]
        assert [s.b for s in steps] == [6, 0, -4]
        for s in steps:
            y = pool.class_code(s.label)
            assert s.gain == s.b * y - min(0, s.b)


def test_exact_lp_refuses_targets_and_pools_it_cannot_solve():
    """exact_lp returned value None (and minimum_certificates an AssertionError) for a
    target that is not the full-pool winner, and both computed on UNREAD codes as if they
    were labels when the pool had unlabelled rows and a target was given."""
    from certlib import CertlibError
    from certlib.teaching.worked_examples import exact_lp, minimum_certificates

    pool = Pool.from_arrays([[1, 0, 1], [0, 0, 1]], [[3, 2, 1], [1, 2, 3]], labels=[0, 1, 1])
    assert pool.winner() == 1
    assert exact_lp(pool, target=1).value == 1
    for f in (exact_lp, minimum_certificates):
        with pytest.raises(CertlibError, match="cannot be certified"):
            f(pool, target=0)
    partial = Pool.from_arrays([[1, 0, 1], [0, 0, 1]], [[3, 2, 1], [1, 2, 3]],
                               labels=[0, None, 1])
    for f in (exact_lp, minimum_certificates):
        with pytest.raises(CertlibError, match="position 1"):
            f(partial, target=0)
