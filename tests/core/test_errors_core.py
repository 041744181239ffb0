"""Every error the core raises on bad input: one case each, checking the exception
type and that the message names the column/row/parameter and what is expected.
(File-level errors are in test_io.py, certificate and audit errors in their files.)"""

from __future__ import annotations

import numpy as np
import pytest

import certlib
from certlib.core.pair_terms import lower_terms
from certlib.errors import (CertlibError, ColumnError, InvalidValueError, LabelError,
                            ParameterError)
from certlib.core.pool import Pool
from certlib.labelling.session import Session
from certlib.core.weights import get_objective, tolerance_units

P2 = [[0, 1, 1], [1, 1, 0]]
C2 = [[0.9, 0.5, 0.1], [0.3, 0.2, 0.8]]


def small(labels=(1, 0, 1), **kw):
    return Pool.from_arrays(P2, C2, labels=list(labels), names=["a", "b"], **kw)


CASES = [
    ("non-numeric confidence", lambda: Pool.from_arrays(P2, [["x", 1, 2], [1, 2, 3]]),
     InvalidValueError, "confidences must be numbers"),
    ("3-d confidences", lambda: Pool.from_arrays(P2, np.zeros((2, 3, 1))),
     ParameterError, "K x n"),
    ("names count", lambda: Pool.from_arrays(P2, C2, names=["a"]), ParameterError, "names has 1"),
    ("duplicate name", lambda: Pool.from_arrays(P2, C2, names=["a", "a"]),
     ColumnError, "'a' is used twice"),
    ("one candidate", lambda: Pool.from_arrays([[0, 1]], [[0.1, 0.2]], names=["solo"]),
     ColumnError, "at least two candidates"),
    ("empty pool", lambda: Pool.from_arrays(np.zeros((2, 0)), np.zeros((2, 0))),
     InvalidValueError, "empty"),
    ("nan confidence", lambda: Pool.from_arrays(
        P2, [[0.1, np.nan, 0.2], [1, 2, 3]], names=["a", "b"]),
     InvalidValueError, "candidate 'a' at row position 1"),
    ("inf confidence", lambda: Pool.from_arrays(
        P2, [[0.1, 0.3, 0.2], [1, np.inf, 3]], names=["a", "b"]),
     InvalidValueError, "candidate 'b' at row position 1"),
    ("preds shape", lambda: Pool.from_arrays([[0, 1]], C2), ParameterError, "preds must be K x n"),
    ("missing prediction", lambda: Pool.from_arrays(
        [[0, None, 1], [1, 1, 0]], C2, names=["a", "b"]),
     InvalidValueError, "candidate 'a' at row position 1 is missing"),
    ("labels length", lambda: Pool.from_arrays(P2, C2, labels=[0, 1]), ParameterError, "length-n"),
    ("single class undeclared", lambda: Pool.from_arrays(
        [["x", "x"], ["x", "x"]], [[1, 2], [2, 1]]),
     ParameterError, "declare the class set"),
    ("repeated class", lambda: Pool.from_arrays(P2, C2, classes=[0, 1, 1]),
     ParameterError, "must not repeat"),
    ("one declared class", lambda: Pool.from_arrays(P2, C2, classes=[0]),
     ParameterError, "at least two classes"),
    ("prediction outside classes", lambda: Pool.from_arrays(
        [[0, 2, 1], [1, 1, 0]], C2, classes=[0, 1], names=["a", "b"]),
     InvalidValueError, "prediction 2 of candidate 'a' at row position 1"),
    ("label outside classes", lambda: Pool.from_arrays(P2, C2, labels=[0, 5, 1], classes=[0, 1]),
     LabelError, "label 5 at row position 1"),
    ("row_ids length", lambda: Pool.from_arrays(P2, C2, row_ids=["r1"]),
     ParameterError, "row_ids has length 1"),
    ("duplicate row_id", lambda: Pool.from_arrays(P2, C2, row_ids=["r1", "r2", "r1"]),
     InvalidValueError, "row_id 'r1' appears twice"),
    ("duplicate int row_id", lambda: Pool.from_arrays(P2, C2, row_ids=np.array([7, 8, 7])),
     InvalidValueError, "row_id 7 appears twice"),
    ("missing row_id", lambda: Pool.from_arrays(P2, C2, row_ids=["r1", None, "r3"]),
     InvalidValueError, "row_id at row position 1 is missing"),
    ("extra column length", lambda: Pool.from_arrays(P2, C2, extra={"note": ["x"]}),
     ParameterError, "extra column 'note'"),
    ("unknown objective", lambda: Pool.from_arrays(P2, C2, objective="auroc"),
     ParameterError, "objective must be one of"),
    ("unknown row id", lambda: small().position("nope"),
     ParameterError, "row_id 'nope' is not in the pool"),
    ("unknown label value", lambda: small().class_code("maybe"),
     LabelError, "label 'maybe' is not in the class set"),
    ("risks without labels", lambda: small(labels=(1, None, 0)).risks(),
     LabelError, "row 1 (position 1)"),
    ("with_labels length", lambda: small().with_labels([0]),
     ParameterError, "labels must have length n = 3"),
    ("with_labels code", lambda: small().with_labels([0, 9, 1]),
     LabelError, "label code 9 at row position 1"),
    ("negative tolerance", lambda: certlib.prelabel_bound(small(), tolerance=-0.1),
     ParameterError, "tolerance must be >= 0"),
    ("nan tolerance", lambda: certlib.prelabel_bound(small(), tolerance=float("nan")),
     ParameterError, "finite"),
    ("bool tolerance", lambda: tolerance_units(True, 10),
     ParameterError, "tolerance must be a number"),
    ("text tolerance", lambda: certlib.replay(small(), tolerance="abc"),
     ParameterError, "tolerance must be a finite number"),
    ("unknown rule", lambda: certlib.replay(small(), rule="joint"),
     ParameterError, "rule must be one of"),
    ("centered on categorical", lambda: lower_terms(
        Pool.from_arrays([[0, 1, 2], [1, 2, 0]], C2), slice(None), rule="centered"),
     ParameterError, "centered rule needs binary labels"),
    ("unknown policy", lambda: certlib.replay(small(), policy="greedy"),
     ParameterError, "policy must be one of"),
    ("negative budget", lambda: certlib.replay(small(), budget=-1),
     ParameterError, "budget must be a whole number"),
    ("fractional budget", lambda: Session.start(small(), budget=2.5),
     ParameterError, "budget must be a whole number"),
    ("replay without labels", lambda: certlib.replay(small(labels=(1, None, 0))), LabelError,
     "replay needs a fully labelled pool; row 1 (position 1)"),
    ("observe out of range", lambda: Session.start(small()).observe(3, 1),
     ParameterError, "row position in 0..2"),
    ("observe twice", lambda: Session.start(small()).observe(0, 1).observe(0, 1), ParameterError,
     "row 0 (position 0) has already been read"),
    ("observe bad label", lambda: Session.start(small()).observe(0, 7),
     LabelError, "label 7 is not in the class set"),
    ("observe unknown id", lambda: Session.start(small()).observe_id("zz", 1),
     ParameterError, "row_id 'zz'"),
    ("unknown objective name", lambda: get_objective("f1"),
     ParameterError, "objective must be one of"),
]


@pytest.mark.parametrize("name,call,exc,text", CASES, ids=[c[0] for c in CASES])
def test_error_message(name, call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert isinstance(info.value, CertlibError) and isinstance(info.value, ValueError)
    assert text in str(info.value), str(info.value)


def test_policy_past_the_end():
    pool = small()
    s = Session.start(pool, policy="static-range")
    for r in range(pool.n):
        s = s.observe(r, pool.classes[pool.labels[r]])
    with pytest.raises(ParameterError, match="every row has been read"):
        s.policy.choose(s._pstate, s)
