"""Duplicate candidates (`certlib.core.duplicates`; paper 000 section 6.1 merges them).

Two candidates are the same for AUGRC when they predict the same class on every row and
order the rows the same way, ties in the same places; for accuracy the predictions
suffice.  Checked three ways:

* a brute force independent of `certlib.core.weights`: every completion of the labels,
  AUGRC as the trapezoid over the generalized risk curve averaged over every order
  inside the confidence ties (SPEC section 3), and the winner by tie priority;
* the merged pool gives the same prelabel bound, certificate and (for the policies
  that weigh each row by the candidates' spread or read at random, under the shared
  rule) the same replay as the original;
* hypothesis properties: an order-preserving change of the confidences is a duplicate,
  a swapped pair or a broken tie is not.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certlib
from certlib import Pool, certify, find_duplicates, merge_duplicates, prelabel_bound, replay
from certlib.core.duplicates import DuplicateGroup, Duplicates
from certlib.core.pool import DerivedFrom
from certlib.core.weights import augrc_weights
from certlib.errors import ColumnError


# ------------------------------------------------------------------ brute force
def _augrc_by_orders(conf, loss) -> Fraction:
    """AUGRC of one candidate, averaged over every order of the rows its confidence
    ties leave open: for one strict order, the trapezoid over coverage k/n of the
    generalized risk E_k / n (E_k the errors among the k most confident rows)."""
    n = len(conf)
    blocks = [[i for i in range(n) if conf[i] == v] for v in sorted(set(conf), reverse=True)]
    total, count = Fraction(0), 0
    for perms in itertools.product(*(itertools.permutations(b) for b in blocks)):
        order = [i for p in perms for i in p]
        errors, area = 0, Fraction(0)
        for i in order:
            before = errors
            errors += loss[i]
            area += Fraction(before + errors, 2 * n * n)
        total += area
        count += 1
    return total / count


def _brute_winner(preds, confs, y) -> tuple[int, list[Fraction]]:
    risks = [_augrc_by_orders(list(confs[j]), [int(p != t) for p, t in zip(preds[j], y)])
             for j in range(len(preds))]
    return min(range(len(risks)), key=lambda j: (risks[j], j)), risks


def _planted(rng, *, K, n, C, exact_copy, position=None):
    """A random pool with integer confidences (ties likely) and one planted duplicate of
    a random candidate, inserted later in the tie priority: an exact copy, or the same
    order through a strictly increasing table of new values."""
    preds = rng.integers(0, C, size=(K, n))
    confs = rng.integers(0, 4, size=(K, n)).astype(float)
    j = int(rng.integers(0, K))
    pos = int(rng.integers(j + 1, K + 1)) if position is None else position
    if exact_copy:
        dup_conf = confs[j].copy()
    else:
        values = np.unique(confs[j])
        new = np.sort(rng.choice(np.arange(10, 100), size=len(values), replace=False)) / 7
        dup_conf = new[np.searchsorted(values, confs[j])]
    preds = np.insert(preds, pos, preds[j], axis=0)
    confs = np.insert(confs, pos, dup_conf, axis=0)
    return preds, confs, j, pos


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("exact_copy", [True, False])
def test_a_duplicate_never_wins_on_any_completion(seed, exact_copy):
    rng = np.random.default_rng(100 * seed + exact_copy)
    C = 2 if seed % 3 else 3
    n = 5 if C == 2 else 4
    preds, confs, j, pos = _planted(rng, K=3, n=n, C=C, exact_copy=exact_copy)
    pool = Pool.from_arrays(preds, confs, classes=list(range(C)))
    dup = find_duplicates(pool)
    assert any(g.indices[0] == j and pos in g.indices for g in dup.groups)
    assert pool.names[pos] in dup.never_win
    for y in itertools.product(range(C), repeat=n):
        winner, risks = _brute_winner(preds, confs, y)
        assert risks[pos] == risks[j]
        assert winner != pos
        for g in dup.groups:  # no later member of any group wins
            assert winner not in g.indices[1:]
        # the library's winner agrees with the brute force
        assert pool.with_labels(list(y)).winner() == winner


def test_the_brute_force_can_tell_a_swapped_pair():
    """The reference is not blind: swapping two rows' confidences changes a risk."""
    conf, loss = [3.0, 2.0, 1.0, 0.0], [1, 0, 0, 0]
    assert _augrc_by_orders(conf, loss) != _augrc_by_orders([2.0, 3.0, 1.0, 0.0], loss)
    assert _augrc_by_orders([1.0, 1.0, 0.0], [1, 0, 0]) == _augrc_by_orders([1.0, 1.0, 0.0],
                                                                           [0, 1, 0])


# --------------------------------------------------------- merged == original
# the policies whose order does not depend on how many copies of a candidate there are
# (under the shared rule a duplicate is out before the first label; the pair-sum and
# model-selector scores, and VMA's votes, count each copy)
INVARIANT_POLICIES = ("static-range", "adaptive-range", "adaptive-pair-sum", "random")


@pytest.mark.parametrize("seed", range(12))
def test_the_merged_pool_gives_the_same_answers(seed):
    rng = np.random.default_rng(seed)
    C = 2 if seed % 4 else 3
    n = int(rng.integers(5, 14))
    preds, confs, j, pos = _planted(rng, K=int(rng.integers(2, 5)), n=n, C=C,
                                    exact_copy=bool(seed % 2))
    pool = Pool.from_arrays(preds, confs, labels=rng.integers(0, C, size=n),
                            classes=list(range(C)), row_ids=[f"r{i}" for i in range(n)])
    merged = merge_duplicates(pool)
    assert merged.K < pool.K and pool.names[pos] not in merged.names
    assert merged.row_ids == pool.row_ids and merged.classes == pool.classes
    assert np.array_equal(merged.labels, pool.labels)
    assert merged.winner() == merged.names.index(pool.names[pool.winner()])
    for tol in (0, Fraction(1, 50)):
        a, b = prelabel_bound(pool, tolerance=tol), prelabel_bound(merged, tolerance=tol)
        assert a.prelabel_bound == b.prelabel_bound
        per = dict(zip(a.candidates, a.per_target))
        assert dict(zip(b.candidates, b.per_target)) == {k: per[k] for k in merged.names}
        ca, cb = certify(pool, tolerance=tol), certify(merged, tolerance=tol)
        assert (ca.winner, ca.lower, ca.upper, ca.exact) == (cb.winner, cb.lower, cb.upper,
                                                             cb.exact)
        assert ca.lp_value == pytest.approx(cb.lp_value)
        for policy in INVARIANT_POLICIES:
            ra = replay(pool, policy=policy, tolerance=tol, seed=3)
            rb = replay(merged, policy=policy, tolerance=tol, seed=3)
            assert (ra.selected, ra.labels_read, ra.order, ra.certified, ra.excess) == \
                (rb.selected, rb.labels_read, rb.order, rb.certified, rb.excess), policy
            assert ra.selected not in find_duplicates(pool).never_win
        budget = max(1, n // 3)
        ra = replay(pool, policy="static-range", budget=budget)
        rb = replay(merged, policy="static-range", budget=budget)
        assert (ra.selected, ra.excess, ra.order) == (rb.selected, rb.excess, rb.order)


def test_the_merged_pool_keeps_the_rest():
    pool = Pool.from_arrays([[0, 1, 1], [0, 1, 1], [1, 1, 0]], [[3, 2, 1], [9, 8, 7], [1, 2, 3]],
                            labels=[0, None, 1], names=["a", "b", "c"], row_ids=["x", "y", "z"],
                            extra={"note": ["p", "q", "r"]}, objective="augrc")
    merged = merge_duplicates(pool)
    assert merged.names == ("a", "c") and merged.n == 3
    assert merged.labels.tolist() == [0, -1, 1] and merged.row_ids == ("x", "y", "z")
    assert merged.extra == {"note": ("p", "q", "r")} and merged.objective == "augrc"
    assert np.array_equal(merged.confs, pool.confs[[0, 2]])
    assert np.array_equal(merged.weights, pool.weights[[0, 2]])
    assert not merged.preds.flags.writeable and not merged.confs.flags.writeable
    assert not merged.weights.flags.writeable
    assert merged.shared_prediction == pool.shared_prediction
    assert certlib.pool_hash(merged) != certlib.pool_hash(pool)
    assert not find_duplicates(merged).found
    # the same pool read again from its arrays is the same pool
    again = Pool.from_arrays(merged.preds, merged.confs, labels=[0, None, 1],
                             names=merged.names, row_ids=merged.row_ids)
    assert certlib.pool_hash(again) == certlib.pool_hash(merged)


def test_no_duplicate_returns_the_pool_itself():
    pool = Pool.from_arrays([[0, 1], [1, 0]], [[1, 2], [1, 2]])
    assert not find_duplicates(pool).found and find_duplicates(pool).message() == ""
    assert merge_duplicates(pool) is pool


def test_merging_every_candidate_into_one_is_refused():
    pool = Pool.from_arrays([[0, 1], [0, 1], [0, 1]], [[1, 2], [5, 6], [1, 2]],
                            names=["a", "b", "c"])
    assert find_duplicates(pool).never_win == ("b", "c")
    with pytest.raises(ColumnError, match="only 'a' is left"):
        merge_duplicates(pool)


# ---------------------------------------------------------------- the rule itself
def test_equal_and_order_equal_confidences_are_both_flagged():
    preds = [[0, 1, 1, 0]] * 4
    confs = [[0.9, 0.5, 0.5, 0.1],     # p0
             [0.9, 0.5, 0.5, 0.1],     # p1: the same numbers
             [40, 7, 7, -3],           # p2: other numbers, the same weak order
             [0.9, 0.6, 0.5, 0.1]]     # p3: the tie broken
    pool = Pool.from_arrays(preds, confs, names=["p0", "p1", "p2", "p3"])
    dup = find_duplicates(pool)
    assert [g.names for g in dup.groups] == [("p0", "p1", "p2")]
    assert dup.message() == ("p0, p1 and p2 are the same candidate for AUGRC: p1 and p2 can "
                             "never win (p0 comes first in tie priority)")
    assert dup.kept_indices == (0, 3)


def test_a_swapped_pair_is_not_a_duplicate_for_augrc_but_is_for_accuracy():
    preds = [[0, 1, 1, 0, 1]] * 2
    confs = [[5, 4, 3, 2, 1], [5, 3, 4, 2, 1]]  # rows 1 and 2 swapped in the order
    assert not find_duplicates(Pool.from_arrays(preds, confs)).found
    acc = find_duplicates(Pool.from_arrays(preds, confs, objective="accuracy"))
    assert acc.message() == ("c0 and c1 are the same candidate for accuracy: c1 can never win "
                             "(c0 comes first in tie priority)")


def test_different_predictions_are_never_duplicates():
    pool = Pool.from_arrays([[0, 1, 1], [0, 1, 0]], [[3, 2, 1], [3, 2, 1]], objective="accuracy")
    assert not find_duplicates(pool).found


def test_the_message_and_json_of_two():
    pool = Pool.from_arrays([[0, 1], [0, 1]], [[1, 2], [1, 2]], names=["p0", "p1"])
    dup = find_duplicates(pool)
    assert dup.message() == ("p0 and p1 are the same candidate for AUGRC: p1 can never win (p0 "
                             "comes first in tie priority)")
    assert dup.to_dict() == [{"candidates": ["p0", "p1"], "kept": "p0", "never_win": ["p1"],
                              "message": dup.message()}]
    assert dup == Duplicates((DuplicateGroup((0, 1), ("p0", "p1"), "augrc"),), "augrc", 2)


def test_groups_are_listed_by_their_first_member():
    # c0 = c3, c1 = c2 = c4: groups (c0, c3) and (c1, c2, c4)
    a, b = ([0, 1, 0], [3, 2, 1]), ([1, 1, 0], [1, 2, 3])
    pool = Pool.from_arrays([a[0], b[0], b[0], a[0], b[0]], [a[1], b[1], b[1], a[1], b[1]])
    dup = find_duplicates(pool)
    assert [g.indices for g in dup.groups] == [(0, 3), (1, 2, 4)]
    assert dup.never_win == ("c2", "c3", "c4") and dup.kept_indices == (0, 1)


# ---------------------------------------------------------------- provenance
def _prob_pool(derived_names, confs, names):
    P = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
    d = DerivedFrom(P, ("prob_0", "prob_1"), tuple(derived_names), "rule")
    K, n = len(names), 3
    preds = np.zeros((K, n), dtype=np.int64)
    w = np.stack([augrc_weights(c) for c in confs])
    return Pool(tuple(names), (0, 1), preds, np.asarray(confs, float), w,
                np.full(n, -1, dtype=np.int64), (0, 1, 2), derived=d)


def test_derived_provenance_is_kept_for_a_leading_prefix_or_dropped():
    # the last derived score duplicates the first: the first two still lead
    pool = _prob_pool(["msp", "neg_entropy", "margin"],
                      [[3, 1, 2], [1, 2, 3], [3, 1, 2], [2, 3, 1]],
                      ["msp", "neg_entropy", "margin", "other"])
    merged = merge_duplicates(pool)
    assert merged.names == ("msp", "neg_entropy", "other")
    assert merged.derived is not None and merged.derived.candidates == ("msp", "neg_entropy")
    # the middle one goes: margin no longer follows the rule's order, so no provenance
    pool = _prob_pool(["msp", "neg_entropy", "margin"],
                      [[3, 1, 2], [3, 1, 2], [1, 2, 3], [2, 3, 1]],
                      ["msp", "neg_entropy", "margin", "other"])
    merged = merge_duplicates(pool)
    assert merged.names == ("msp", "margin", "other") and merged.derived is None


def test_a_binary_prob_file_merges_to_its_first_score(tmp_path):
    """On a 0/1 task msp, neg_entropy and margin order the rows alike: with another
    candidate beside them they are one candidate, and the merged pool keeps msp's
    provenance (its hash covers the probabilities)."""
    path = tmp_path / "p.csv"
    rows = ["row_id,label,prob_0,prob_1,conf_other"]
    for i, (p, c) in enumerate([(0.9, 0.2), (0.35, 0.9), (0.6, 0.5), (0.2, 0.1), (0.52, 0.3)]):
        rows.append(f"{i},{i % 2},{p},{1 - p},{c}")
    path.write_text("\n".join(rows) + "\n")
    pool = certlib.load_pool(path)
    assert pool.names == ("msp", "neg_entropy", "margin", "other")
    assert find_duplicates(pool).never_win == ("neg_entropy", "margin")
    merged = merge_duplicates(pool)
    assert merged.names == ("msp", "other")
    assert merged.derived is not None and merged.derived.candidates == ("msp",)
    assert len(certlib.pool_hash(merged)) == 64
    assert certify(merged).winner == certify(pool).winner


# ---------------------------------------------------------------- properties
@st.composite
def pools_with_a_copy(draw):
    n = draw(st.integers(2, 9))
    K = draw(st.integers(1, 4))
    C = draw(st.sampled_from([2, 3]))
    preds = draw(st.lists(st.lists(st.integers(0, C - 1), min_size=n, max_size=n),
                          min_size=K, max_size=K))
    confs = draw(st.lists(st.lists(st.integers(0, 4), min_size=n, max_size=n),
                          min_size=K, max_size=K))
    j = draw(st.integers(0, K - 1))
    # a strictly increasing table of new values: the same weak order
    new = sorted(draw(st.lists(st.integers(-50, 50), min_size=5, max_size=5, unique=True)))
    copy_conf = [new[c] / 3 for c in confs[j]]
    return preds, confs, j, copy_conf, C


@settings(max_examples=80, deadline=None)
@given(pools_with_a_copy(), st.booleans())
def test_property_order_preserving_copy_is_flagged(case, accuracy):
    preds, confs, j, copy_conf, C = case
    objective = "accuracy" if accuracy else "augrc"
    pool = Pool.from_arrays(preds + [preds[j]], confs + [copy_conf], classes=list(range(C)),
                            objective=objective)
    dup = find_duplicates(pool)
    last = pool.K - 1
    group = next(g for g in dup.groups if last in g.indices)
    assert group.indices[0] <= j and group.indices[-1] == last
    merged = merge_duplicates(pool) if len(dup.kept_indices) >= 2 else None
    if merged is not None:
        assert not find_duplicates(merged).found
        assert merged.K == len(dup.kept_indices)


@settings(max_examples=80, deadline=None)
@given(pools_with_a_copy(), st.data())
def test_property_a_swapped_pair_or_a_broken_tie_is_not_a_duplicate(case, data):
    preds, confs, j, _, C = case
    conf = list(confs[j])
    n = len(conf)
    distinct = [(a, b) for a in range(n) for b in range(a + 1, n) if conf[a] != conf[b]]
    tied = [(a, b) for a in range(n) for b in range(a + 1, n) if conf[a] == conf[b]]
    if distinct and (not tied or data.draw(st.booleans())):
        a, b = data.draw(st.sampled_from(distinct))
        conf[a], conf[b] = conf[b], conf[a]
    elif tied:
        a, _ = data.draw(st.sampled_from(tied))
        conf[a] += 0.5  # between two integer levels: the tie broken, nothing else moved
    else:
        return
    pool = Pool.from_arrays([preds[j], preds[j]], [confs[j], conf], classes=list(range(C)))
    assert not find_duplicates(pool).found
    acc = Pool.from_arrays([preds[j], preds[j]], [confs[j], conf], classes=list(range(C)),
                           objective="accuracy")
    assert find_duplicates(acc).never_win == ("c1",)


@settings(max_examples=60, deadline=None)
@given(pools_with_a_copy())
def test_property_duplicates_are_the_candidates_with_equal_risks_everywhere(case):
    """A pair is flagged exactly when its risks agree on every labelling (checked on the
    unit labellings: one row wrong for each candidate class at a time)."""
    preds, confs, j, copy_conf, C = case
    all_preds, all_confs = preds + [preds[j]], confs + [copy_conf]
    pool = Pool.from_arrays(all_preds, all_confs, classes=list(range(C)))
    same = {(a, b) for g in find_duplicates(pool).groups for a in g.indices
            for b in g.indices if a < b}
    n = pool.n
    for a in range(pool.K):
        for b in range(a + 1, pool.K):
            equal = all(
                int((pool.weights[a] * (pool.preds[a] != y)).sum())
                == int((pool.weights[b] * (pool.preds[b] != y)).sum())
                for i in range(n) for c in range(C)
                for y in [np.where(np.arange(n) == i, c, pool.preds[a])])
            assert equal == ((a, b) in same)
