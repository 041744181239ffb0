"""Adversarial review findings: each test states a minimal input and an independently
derived expected value (hand computation / brute force over all completions)."""

from fractions import Fraction

import numpy as np
import pytest

from certlib import Pool, certify, replay
from certlib.certificate import certify_partial


def test_object_labels_minus_one_is_unread():
    # SPEC 10: "labels may hold -1 / None for unread" -- also when mixed with None
    p = Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[.9, .8, .7], [.7, .8, .9]],
                         labels=[0, -1, None])
    assert p.classes == (0, 1)
    assert p.labels.tolist() == [0, -1, -1]


def test_ids_of_with_non_int_ids_after_first_1000():
    ids = list(range(1000)) + [1000.5, "2000"]
    n = len(ids)
    rng = np.random.default_rng(0)
    p = Pool.from_arrays(rng.integers(0, 2, (2, n)), rng.random((2, n)),
                         labels=rng.integers(0, 2, n), row_ids=ids)
    assert p.ids_of([1000, 1001]) == (1000.5, "2000")


def test_vectorised_replay_matches_session_when_a_duplicate_is_eliminated_at_start():
    # c3 duplicates c2, so c3 is eliminated before any label (L[3,2] = 0 >= 0).
    # Weights (hand): c0 [5,2,2], c1 [4,4,1], c2 = c3 [1,3,5].
    # Pair potentials: p01 [1,6,3], p02 [6,5,3], p12 [5,1,6]; over the active {c0,c1,c2}
    # the pair-sum is [12,12,12] -> order 0,1,2 (lowest position on ties).
    # Session reads rows 0, 1 and is certified; vectorised replay kept c3 in the scores
    # ([23,18,21] -> order 0,2,1) and reads rows 0, 2, 1.
    preds = [[1, 1, 1], [1, 0, 0], [0, 0, 1], [0, 0, 1]]
    confs = [[1., 0., 0.], [2., 2., 0.], [0., 2., 3.], [0., 2., 3.]]
    p = Pool.from_arrays(preds, confs, labels=[1, 1, 1])
    slow = replay(p, "adaptive-pair-sum", vectorised=False)
    fast = replay(p, "adaptive-pair-sum")
    assert slow.order == (0, 1)
    assert fast.order == slow.order
    assert fast.labels_read == slow.labels_read == 2


def test_certify_partial_lower_bound_valid_with_tolerance():
    # n = 2, scale 8, tau = 1/4 -> T = 2.  Weights c0 [2,2], c1 [1,3], c2 [3,1].
    # c0 is within T of c1 and of c2 under every labelling (hand: max r0-r1 = 2,
    # max r0-r2 = 2), so C(y) = 0: certify agrees.  With every row read,
    # certify_partial must not report lower = 1 (nor exact with lower = upper = 1).
    p = Pool.from_arrays([[0, 1], [1, 1], [0, 0]], [[0, 0], [0, 2], [1, 0]], labels=[0, 0])
    tau = Fraction(1, 4)
    assert certify(p, tolerance=tau).upper == 0
    pc = certify_partial(p, tolerance=tau)
    assert pc.lower == 0


def test_huge_tolerance_does_not_crash():
    p = Pool.from_arrays([[0, 1], [1, 1]], [[.9, .1], [.1, .9]], labels=[0, 1])
    r = replay(p, tolerance=1e30)
    assert r.certified and r.labels_read == 0


def test_store_refuses_second_label_for_same_row_spelled_differently(tmp_path):
    from certlib.store import LabelStore
    p = Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[.9, .8, .7], [.7, .8, .9]])
    st = LabelStore(tmp_path / "s.db")
    pid = st.create_project(p, "x")
    with pytest.raises(TypeError):
        st.append_label(pid, "1", 1, "a")  # the pool is required: it says which row an id names
    st.append_label(pid, "1", 1, "a", pool=p)
    from certlib.store import DuplicateLabelError
    with pytest.raises(DuplicateLabelError):
        st.append_label(pid, 1, 0, "a", pool=p)   # same row, id spelled as int
    st.progress(pid, p)                            # must still replay


def test_text_labels_match_numeric_predictions():
    # labels read as text ("0", "1") are the numeric classes of the predictions
    p = Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[.9, .8, .7], [.7, .8, .9]],
                         labels=["0", " 1 ", None])
    assert p.classes == (0, 1)
    assert p.labels.tolist() == [0, 1, -1]


def test_minus_one_can_be_a_class():
    p = Pool.from_arrays([[-1, 1, -1], [1, 1, -1]], [[.9, .8, .7], [.7, .8, .9]],
                         labels=[-1, 1, -1], minus_one_unread=False)
    assert p.classes == (-1, 1) and p.fully_labelled
