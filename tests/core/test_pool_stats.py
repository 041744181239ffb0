"""`pool_stats`: hand-computed small pools, the exact AUGRC of the pool's own risk
function, Spearman against an independent brute force, and the stray-class count."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from certlib.core.pool import Pool
from certlib.core.pool_stats import average_ranks, pool_stats, spearman_matrix


def _hand_pool(labels=(0, 1, 1, 0, 1)):
    # A: 0 1 0 0 1   B: 0 1 1 1 1   C: 1 1 1 0 0
    return Pool.from_arrays([[0, 1, 0, 0, 1], [0, 1, 1, 1, 1], [1, 1, 1, 0, 0]],
                            [[5, 4, 3, 2, 1], [1, 2, 3, 4, 5], [5, 5, 1, 1, 3]],
                            labels=list(labels), names=["A", "B", "C"])


def test_error_rate_and_disagreement_by_hand():
    s = pool_stats(_hand_pool())
    # labels 0 1 1 0 1: A misses rows 2; B misses row 3; C misses rows 0 and 4
    assert s.errors == (1, 1, 2)
    assert s.error_rate == (1 / 5, 1 / 5, 2 / 5)
    # A vs B differ on rows 2, 3; A vs C on 0, 2, 4; B vs C on 0, 3, 4
    expected = np.array([[0, 2, 3], [2, 0, 3], [3, 3, 0]]) / 5
    np.testing.assert_array_equal(s.disagreement, expected)
    assert (s.n, s.K, s.n_labelled, s.candidates, s.classes) == (5, 3, 5, ("A", "B", "C"),
                                                                   (0, 1))
    assert not s.disagreement.flags.writeable and not s.spearman.flags.writeable


def test_error_rate_counts_only_labelled_rows():
    s = pool_stats(_hand_pool(labels=(0, 1, None, None, -1)))
    assert s.n_labelled == 2 and s.errors == (0, 0, 1) and s.error_rate == (0.0, 0.0, 0.5)
    assert s.augrc is None and s.augrc_exact is None  # AUGRC needs every label
    none = pool_stats(_hand_pool(labels=(None,) * 5))
    assert none.error_rate == (None, None, None) and none.augrc is None


@pytest.mark.parametrize("seed", range(5))
def test_augrc_is_the_exact_value_of_the_pool_risk(seed):
    rng = np.random.default_rng(seed)
    K, n = 4, 37
    preds = rng.integers(0, 2, (K, n))
    confs = rng.integers(0, 6, (K, n)) / 5  # many ties
    labels = rng.integers(0, 2, n)
    pool = Pool.from_arrays(preds, confs, labels=labels)
    s = pool_stats(pool)
    exact = [Fraction(int(r), pool.scale) for r in pool.risks()]
    assert list(s.augrc_exact) == exact == pool.objective_values()
    assert s.augrc == tuple(float(a) for a in exact)
    # the error-rate objective changes nothing: the AUGRC is still the AUGRC
    acc = pool_stats(Pool.from_arrays(preds, confs, labels=labels, objective="accuracy"))
    assert acc.augrc_exact == s.augrc_exact


def _brute_ranks(x):
    """Rank of each value: the values below it, plus the mean position among its equals."""
    return [sum(v < xi for v in x) + (sum(v == xi for v in x) + 1) / 2 for xi in x]


def _pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va = sum((x - ma) ** 2 for x in a)
    vb = sum((y - mb) ** 2 for y in b)
    return cov / math.sqrt(va * vb)


@pytest.mark.parametrize("seed", range(8))
def test_spearman_equals_pearson_of_average_ranks(seed):
    rng = np.random.default_rng(seed)
    confs = rng.integers(0, 4 + seed, (3, 25)).astype(float)  # ties in every row
    ranks = [_brute_ranks(list(c)) for c in confs]
    for c, r in zip(confs, ranks):
        assert average_ranks(c).tolist() == r
    got = spearman_matrix(confs)
    for a in range(3):
        for b in range(3):
            assert got[a, b] == pytest.approx(_pearson(ranks[a], ranks[b]), abs=1e-12)


def test_spearman_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    confs = np.round(rng.random((4, 60)), 1)
    ref = stats.spearmanr(confs.T).statistic
    np.testing.assert_allclose(spearman_matrix(confs), ref, atol=1e-12)


def test_spearman_of_a_constant_confidence_is_nan():
    got = spearman_matrix([[0.5, 0.5, 0.5], [0.1, 0.2, 0.3], [3, 2, 1]])
    assert np.isnan(got[0]).all() and np.isnan(got[:, 0]).all()
    assert got[1, 2] == pytest.approx(-1.0) and got[1, 1] == 1.0


def test_stray_class_shows_in_class_counts():
    """A 7 predicted once in an otherwise binary pool is a class of its own, counted."""
    n = 200
    rng = np.random.default_rng(0)
    preds = rng.integers(0, 2, (2, n))
    preds[1, 17] = 7
    labels = rng.integers(0, 2, n)
    s = pool_stats(Pool.from_arrays(preds, rng.random((2, n)), labels=labels))
    assert s.classes == (0, 1, 7)
    seven = s.class_counts[2]
    assert (seven.value, seven.rows, seven.rows_predicted, seven.per_candidate,
            seven.labelled) == (7, 1, 1, (0, 1), 0)
    assert [c.value for c in s.rare_classes()] == [7]
    assert sum(c.labelled for c in s.class_counts) == n
    for j in range(2):
        assert sum(c.per_candidate[j] for c in s.class_counts) == n


def test_class_rows_count_a_row_once():
    s = pool_stats(_hand_pool())
    # class 0: predicted on rows 0, 2, 3, 4, labelled on rows 0, 3
    zero = s.class_counts[0]
    assert (zero.rows, zero.rows_predicted, zero.per_candidate, zero.labelled) == \
        (4, 4, (3, 1, 2), 2)


def test_a_rare_class_of_a_two_class_pool_is_not_stray():
    preds = np.zeros((2, 300), dtype=int)
    preds[0, 0] = 1
    s = pool_stats(Pool.from_arrays(preds, np.ones((2, 300))))
    assert s.class_counts[1].rows == 1 and s.rare_classes() == ()
    assert np.isnan(s.spearman).all()  # constant confidences have no order


def test_class_counts_equal_a_count_row_by_row():
    """The vectorised counts (a sort down each row) against a plain loop over rows, on
    random pools with unread labels and many classes."""
    from certlib.core.pool import UNREAD
    from certlib.core.pool_stats import class_counts

    rng = np.random.default_rng(5)
    for _ in range(30):
        n, K, C = int(rng.integers(1, 40)), int(rng.integers(2, 5)), int(rng.integers(2, 6))
        labels = rng.integers(-1, C, n)
        pool = Pool.from_arrays(rng.integers(0, C, (K, n)), rng.random((K, n)),
                                labels=labels, classes=tuple(range(C)))
        for k, c in enumerate(class_counts(pool)):
            predicted = [i for i in range(n) if any(pool.preds[j, i] == k for j in range(K))]
            held = [i for i in range(n) if i in predicted or pool.labels[i] == k]
            assert c.rows_predicted == len(predicted) and c.rows == len(held)
            assert c.labelled == sum(1 for v in pool.labels if v == k and v != UNREAD)
            assert c.per_candidate == tuple(int((pool.preds[j] == k).sum()) for j in range(K))
