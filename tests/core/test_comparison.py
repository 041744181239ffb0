"""certlib.planning.comparison: per-rival costs against a brute force over every subset, and the
policy table against `certlib.replay` seed by seed.

The reference side works from the definitions: every completion of the labels outside a
subset S is enumerated, its risks are ``sum_i w_ji 1{pred_ji != y_i}`` with the pool's
integer weights (themselves checked against the tie-averaged trapezoid in
test_bruteforce.py), and S beats rival j when the target is preferred to j (smaller
risk, or equal risk and earlier in tie priority) under every such completion.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import certlib
from certlib.planning.comparison import PolicyRow, per_rival, policy_comparison
from certlib.errors import CertlibError

from conftest import KINDS, random_spec

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ reference side
def _completion_masks(pool):
    """(M, n) every labelling over the class set, and the bit mask of the rows where each
    differs from the pool's labels."""
    n, C = pool.n, pool.n_classes
    Y = np.array(list(itertools.product(range(C), repeat=n)), dtype=np.int64).reshape(-1, n)
    differ = Y != pool.labels[None, :]
    masks = (differ * (1 << np.arange(n))[None, :]).sum(axis=1)
    return Y, masks


def _smallest_hitting(n, bad_masks) -> int:
    """Fewest rows S such that every bad completion differs from y somewhere in S."""
    bad = np.asarray(bad_masks, dtype=np.int64)
    for size in range(n + 1):
        for S in itertools.combinations(range(n), size):
            s = sum(1 << i for i in S)
            if not bad.size or ((bad & s) != 0).all():
                return size
    raise AssertionError("reading every row must decide")


def brute_force(pool, k):
    """(alone per rival, joint) for target k by enumerating every subset and completion."""
    Y, masks = _completion_masks(pool)
    R = (pool.weights[None, :, :] * (pool.preds[None, :, :] != Y[:, None, :])).sum(axis=2)
    alone, any_bad = {}, np.zeros(len(Y), dtype=bool)
    for j in range(pool.K):
        if j == k:
            continue
        lost = (R[:, j] < R[:, k]) | ((R[:, j] == R[:, k]) & (j < k))
        any_bad |= lost
        alone[pool.names[j]] = _smallest_hitting(pool.n, masks[lost])
    return alone, _smallest_hitting(pool.n, masks[any_bad])


def _specs(kind, count, seed0, max_n):
    for s in range(count):
        rng = np.random.default_rng([seed0, KINDS.index(kind), s])
        C = 2 if kind == "binary" else 3
        n_cap = max_n if C == 2 else min(max_n, 6)
        yield random_spec(rng, kind, n=int(rng.integers(1, n_cap + 1)),
                          K=int(rng.integers(2, 5)))


# ------------------------------------------------------------------ per rival
@pytest.mark.parametrize("kind", KINDS)
def test_per_rival_alone_is_the_true_minimum_for_that_rival(kind):
    """Paper 000 section 4.1 ("Two candidates"): against one rival, largest gains first
    is optimal; and the joint minimum lies between max and sum of the separate ones."""
    strict = 0
    for spec in _specs(kind, 40, 91, max_n=10 if kind == "binary" else 6):
        pool = spec.pool()
        cert = certlib.certify(pool)
        costs = per_rival(pool)
        alone, joint = brute_force(pool, cert.selected_index)
        assert {c.rival: c.alone for c in costs} == alone, spec
        assert cert.lower <= joint <= cert.upper, spec
        assert max(alone.values(), default=0) <= joint <= sum(alone.values()), spec
        assert all(c.joint_lower == cert.lower and c.joint_upper == cert.upper
                   and c.target == cert.selected for c in costs)
        assert all(c.prelabel is not None and c.prelabel <= c.alone for c in costs), spec
        strict += max(alone.values(), default=0) < joint
    if kind == "binary":
        assert strict > 0  # some pool where beating every rival at once costs more


def test_per_rival_on_the_demo_pool_and_with_tolerance():
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    cert = certlib.certify(pool)
    costs = per_rival(pool, certificate=cert)
    assert [c.rival for c in costs] == [n for n in pool.names if n != cert.selected]
    assert max(c.alone for c in costs) <= cert.lower <= cert.upper <= sum(c.alone for c in costs)
    assert all(c.deficit == cert.deficits[pool.names.index(c.rival)] for c in costs)
    loose = per_rival(pool, tolerance=0.002)
    c2 = certlib.certify(pool, tolerance=0.002)
    assert all(c.target == c2.selected and c.alone <= c2.upper for c in loose)


# ------------------------------------------------------------------ policies
def _check_against_replay(pool, cmp, tolerance=0.0, rule="shared"):
    for row in cmp.rows:
        for seed, read, cert, sel in zip(row.seeds, row.labels_read, row.certified,
                                         row.selected):
            rep = certlib.replay(pool, policy=row.policy, rule=rule, tolerance=tolerance,
                                 seed=seed)
            assert (read, cert, sel) == (rep.labels_read, rep.certified, rep.selected), \
                (row.policy, seed)


def test_policy_table_equals_replay_on_the_demo_pool():
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    cmp = policy_comparison(pool)
    assert [r.policy for r in cmp.rows] == list(certlib.policy_names())
    _check_against_replay(pool, cmp)
    assert cmp.row("random").randomised and cmp.row("random").seeds == (0, 1, 2, 3, 4)
    assert not cmp.row("static-range").randomised and cmp.row("static-range").seeds == (0,)
    assert cmp.prelabel_bound == certlib.prelabel_bound(pool).prelabel_bound
    assert cmp.certificate == certlib.certify(pool)
    for r in cmp.rows:  # necessary <= sufficient in hindsight <= what a policy reads
        assert cmp.prelabel_bound <= cmp.certificate.lower <= r.min <= r.median <= r.max


@pytest.mark.parametrize("kind", KINDS)
def test_policy_table_equals_replay_on_small_pools(kind):
    for spec in _specs(kind, 6, 17, max_n=8):
        pool = spec.pool()
        rules = ["shared", "separate"]
        for rule in rules:
            cmp = policy_comparison(pool, rule=rule, seeds=(3, 7, 11),
                                    policies=("static-range", "random", "vma"))
            _check_against_replay(pool, cmp, rule=rule)


def test_policy_table_with_tolerance_and_a_given_certificate():
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    cert = certlib.certify(pool, tolerance=0.001)
    cmp = policy_comparison(pool, tolerance=0.001, seeds=(0, 1),
                            policies=("adaptive-pair-sum", "random"), certificate=cert)
    _check_against_replay(pool, cmp, tolerance=0.001)
    assert cmp.certificate is cert and cmp.tolerance == Fraction(1, 1000)
    with pytest.raises(CertlibError, match="tolerance"):
        policy_comparison(pool, tolerance=0.0, certificate=cert)
    with pytest.raises(CertlibError, match="seeds"):
        policy_comparison(pool, seeds=())
    with pytest.raises(CertlibError, match="policy must be one of"):
        cmp.row("nope")
    rec = cmp.to_records()
    assert [r["policy"] for r in rec] == ["adaptive-pair-sum", "random"]


def test_median_is_exact():
    row = PolicyRow("random", True, (0, 1), (3, 4), (True, True), ("A", "A"))
    assert (row.min, row.median, row.max) == (3, Fraction(7, 2), 4)
    row = PolicyRow("random", True, (0, 1, 2), (5, 3, 4), (True,) * 3, ("A",) * 3)
    assert row.median == 4
