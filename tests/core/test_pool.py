"""Pool.from_arrays: which values are unread, class canonicalisation, row ids
(minimal inputs with hand-derived expectations; SPEC sections 2 and 10)."""

import numpy as np

from certlib import Pool


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
