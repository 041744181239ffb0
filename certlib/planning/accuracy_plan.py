"""The labels the accuracy choice needs, beside AUGRC's (paper 000 section 6.2).

Accuracy weighs every row 1 (`certlib.core.weights`), so on a row where every
candidate predicts the same class the candidates are right or wrong together and the
row's term in every difference r_j - r_k is 0 whatever its label (SPEC section 4:
``d_jki(c) = 1{pred_ji != c} - 1{pred_ki != c}``).  Only the **disagreement rows**, where
at least two candidates predict different classes, move an accuracy comparison: once
their labels are read every bound L_jk equals r_j - r_k, and the exact stopping test
(SPEC section 5) certifies the accuracy winner, whatever the other labels are.  So the
accuracy choice is settled by at most D labels, D the number of disagreement rows,
and needs at least the prelabel bound of the accuracy objective (SPEC section 6).

AUGRC weighs a row by its confidence rank, which differs between candidates, so an
agreement row still moves the difference by ``w_j - w_k`` when it is an error (paper
000 section 6.2: "agreement rows carry the decision"); its prelabel bound is often
above D, and then AUGRC needs more labels than accuracy whatever the labels are.

`accuracy_labels` puts the two side by side: for each objective the labels needed at
least (prelabel bound), the rows whose labels can change a comparison at all (reading
them all certifies), and on a fully labelled pool what a policy's replay reads and the
minimum certificate in hindsight.  Integers throughout; the exact choice (tolerance 0).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..certificates.certificate import Certificate, certify
from ..certificates.prelabel import prelabel_bound
from ..core._values import ClassValue
from ..core.bounds import batch_lower, certified_mask, deficits, thresholds
from ..core.pair_terms import initial_lower, pair_potential
from ..core.pool import UNREAD, Pool
from ..core.weights import get_objective
from ..labelling.replay import replay
from ..policies import get_policy

__all__ = ["AccuracyPlan", "DISAGREEMENT_FIRST", "accuracy_labels", "disagreement_mask",
           "movable_mask", "with_objective"]

#: Policies that, under accuracy, read only disagreement rows: their row scores (SPEC
#: section 8) are 0 on a row where every candidate, or every candidate still in the race,
#: predicts alike, and they read a row of positive score first.  Once the rows that
#: matter among the candidates left are read, the test certifies (an eliminated candidate
#: loses to one left, whose bound is exact), so they stop within the disagreement rows.
DISAGREEMENT_FIRST: frozenset[str] = frozenset(
    {"static-range", "static-pair-sum", "adaptive-range", "adaptive-pair-sum"})


def with_objective(pool: Pool, objective: str) -> Pool:
    """The same pool (predictions, confidences, labels) under another objective.

    Parameters
    ----------
    pool : Pool
        The pool.
    objective : {"augrc", "accuracy"}
        The objective whose integer weights the copy carries (`certlib.core.weights`).

    Returns
    -------
    Pool
        ``pool`` itself when it already has that objective, else a copy whose weights
        are recomputed from the confidences (read-only, like every pool's arrays).

    Raises
    ------
    ParameterError
        An unknown objective.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"])
    >>> with_objective(pool, "accuracy").weights.tolist()
    [[1, 1, 1, 1], [1, 1, 1, 1]]
    """
    obj = get_objective(objective)
    if pool.objective == objective:
        return pool
    weights = np.stack([obj.weights(pool.confs[j]) for j in range(pool.K)])
    weights.setflags(write=False)
    return dataclasses.replace(pool, weights=weights, objective=objective)


def disagreement_mask(pool: Pool) -> NDArray[np.bool_]:
    """The rows where at least two candidates predict different classes.

    Parameters
    ----------
    pool : Pool
        The pool.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True on a disagreement row.  A shared-prediction pool (one classifier, several
        confidence scores) has none.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"])
    >>> disagreement_mask(pool).tolist()
    [False, False, True, True]
    """
    out: NDArray[np.bool_] = (pool.preds != pool.preds[0][None, :]).any(axis=0)
    return out


def movable_mask(pool: Pool) -> NDArray[np.bool_]:
    """The rows whose label can change some difference r_j - r_k of the pool's objective.

    A row moves nothing when its potential gain (SPEC section 6) is 0 for every pair:
    then its term is the same for every label, so reading every *other* row already
    makes each bound L_jk equal r_j - r_k and the exact test certifies.  For accuracy
    these are the disagreement rows (`disagreement_mask`); for AUGRC also every
    agreement row on which two candidates' rank weights differ.

    Parameters
    ----------
    pool : Pool
        The pool, under its own objective.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True on a row whose label some comparison depends on.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"])
    >>> movable_mask(pool).tolist(), movable_mask(with_objective(pool, "accuracy")).tolist()
    ([True, True, True, True], [False, False, True, True])
    """
    out = np.zeros(pool.n, dtype=bool)
    for j in range(pool.K):
        for k in range(j + 1, pool.K):
            out |= pair_potential(pool, j, k) > 0
    return out


def _never_settled(pool: Pool, rows: NDArray[np.bool_]) -> bool:
    """True when no labels on ``rows`` alone can certify any candidate of ``pool``.

    Candidate k is certified after reading ``rows`` only if, for every rival j, the
    potential gains of those rows can close the deficit D_jk before any label (SPEC
    section 6: reading a row adds at most its potential gain).  When every k fails this
    for some j, no labelling of ``rows`` certifies, and as the test is exact (Theorem 1)
    two completions of the other rows then have different winners.
    """
    th = thresholds(pool.K, pool.scale, rule="shared")
    D = deficits(th.need, initial_lower(pool, "shared"))
    for k in range(pool.K):
        if all(int(D[j, k]) <= int(pair_potential(pool, j, k)[rows].sum(dtype=np.int64))
               for j in range(pool.K) if j != k):
            return False
    return True


@dataclass(frozen=True)
class AccuracyPlan:
    """The labels the exact choice needs under accuracy, beside AUGRC's (module docstring).

    Attributes
    ----------
    n, K : int
        Rows and candidates.
    candidates : tuple of str
        Candidate names in tie-priority order.
    disagreement : int
        D, the rows where at least two candidates predict different classes: their labels
        settle the accuracy choice whatever the other labels are, so it needs at most D.
    disagreement_rows : tuple
        Their row ids, in row order.
    accuracy_prelabel : int
        The prelabel bound of accuracy: no policy certifies the accuracy choice with
        fewer labels, whatever the labels (at most D).
    augrc_prelabel : int
        The prelabel bound of AUGRC.
    augrc_movable : int
        The rows whose labels can change some AUGRC difference (`movable_mask`): AUGRC is
        settled by at most this many labels.
    augrc_never_settled_by_disagreement : bool
        No labelling of the D disagreement rows alone certifies the AUGRC choice: it
        needs agreement-row labels whatever the labels are (a label-free proof).
    augrc_settled_by_disagreement : bool or None
        Whether the pool's own labels on the disagreement rows certify the AUGRC choice;
        None when one of them has no label.
    accuracy_winner, augrc_winner : str or None
        The full-pool winner under each objective (earliest on ties); None unless every
        label is known.  They can differ: accuracy counts errors, AUGRC also where they
        fall in each candidate's confidence order.
    policy : str
        The policy of the replays.
    policy_within_disagreement : bool
        The policy is one of `DISAGREEMENT_FIRST`: under accuracy every label it reads is
        on a disagreement row, so it certifies the accuracy choice within D labels (besides
        those already known) whatever the labels are.
    accuracy_replay, augrc_replay : int or None
        Labels the policy's replay reads (exact test) under each objective; None unless
        every label is known.
    accuracy_certificate, augrc_certificate : Certificate or None
        The minimum certificate under each objective (its enclosure ``lower``, ``upper``);
        None unless every label is known, or when hindsight was not asked for.
    """

    n: int
    K: int
    candidates: tuple[str, ...]
    disagreement: int
    disagreement_rows: tuple[ClassValue, ...]
    accuracy_prelabel: int
    augrc_prelabel: int
    augrc_movable: int
    augrc_never_settled_by_disagreement: bool
    augrc_settled_by_disagreement: bool | None
    accuracy_winner: str | None
    augrc_winner: str | None
    policy: str
    policy_within_disagreement: bool
    accuracy_replay: int | None
    augrc_replay: int | None
    accuracy_certificate: Certificate | None
    augrc_certificate: Certificate | None

    @property
    def disagreement_fraction(self) -> Fraction:
        """``disagreement / n``, exactly: the share of the pool that settles accuracy."""
        return Fraction(self.disagreement, self.n)

    @property
    def augrc_needs_more(self) -> bool:
        """True when AUGRC's prelabel bound exceeds D: whatever the labels, the AUGRC
        choice needs more labels than the D that settle the accuracy choice."""
        return self.augrc_prelabel > self.disagreement

    def to_dict(self) -> dict[str, Any]:
        """The plan as a JSON-ready dict (certificates by their ``to_dict``)."""
        return {
            "n": self.n, "K": self.K, "candidates": list(self.candidates),
            "disagreement": self.disagreement,
            "disagreement_fraction": float(self.disagreement_fraction),
            "disagreement_rows": list(self.disagreement_rows),
            "accuracy_prelabel": self.accuracy_prelabel,
            "augrc_prelabel": self.augrc_prelabel,
            "augrc_movable": self.augrc_movable,
            "augrc_needs_more": self.augrc_needs_more,
            "augrc_never_settled_by_disagreement": self.augrc_never_settled_by_disagreement,
            "augrc_settled_by_disagreement": self.augrc_settled_by_disagreement,
            "accuracy_winner": self.accuracy_winner, "augrc_winner": self.augrc_winner,
            "policy": self.policy, "policy_within_disagreement": self.policy_within_disagreement,
            "accuracy_replay": self.accuracy_replay, "augrc_replay": self.augrc_replay,
            "accuracy_certificate": None if self.accuracy_certificate is None
            else self.accuracy_certificate.to_dict(),
            "augrc_certificate": None if self.augrc_certificate is None
            else self.augrc_certificate.to_dict(),
        }


def accuracy_labels(pool: Pool, *, policy: str = "adaptive-pair-sum", seed: int = 0,
                    hindsight: bool = True) -> AccuracyPlan:
    """How many labels the accuracy choice needs, beside AUGRC's (paper 000 section 6.2).

    The rows where the candidates disagree settle the accuracy choice whatever the
    labels (module docstring), so it needs at most their number D and at least its
    prelabel bound; AUGRC's prelabel bound is shown beside it, with the rows that can
    move AUGRC at all.  On a fully labelled pool it also replays ``policy`` and encloses
    the minimum certificate under both objectives.  Every number is for the exact
    choice (tolerance 0) and is an integer count of labels.

    Parameters
    ----------
    pool : Pool
        The pool, under either objective (the other is computed from the same
        predictions and confidences); its labels are used only for the replays, the
        certificates and ``augrc_settled_by_disagreement``.
    policy : str, default "adaptive-pair-sum"
        The policy replayed (as ``certlib plan``).  Range and pair-sum policies
        (`DISAGREEMENT_FIRST`) read only disagreement rows under accuracy, so their
        accuracy replay never exceeds D.
    seed : int, default 0
        Seed of a random policy.
    hindsight : bool, default True
        Enclose the minimum certificates on a fully labelled pool (`certlib.certify`,
        under its default work limit); False leaves them None.

    Returns
    -------
    AccuracyPlan
        The counts for both objectives.

    Raises
    ------
    ParameterError
        An unknown policy.

    Examples
    --------
    Paper Figure 2: the two candidates disagree on rows 3 and 4 only.

    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> p = certlib.accuracy_labels(pool)
    >>> p.disagreement, p.accuracy_prelabel, p.augrc_prelabel, p.augrc_movable
    (2, 1, 2, 4)
    >>> p.accuracy_winner, p.accuracy_certificate.upper, p.augrc_winner, p.augrc_certificate.upper
    ('A', 1, 'B', 3)
    """
    name: str = get_policy(policy).name
    acc = with_objective(pool, "accuracy")
    aug = with_objective(pool, "augrc")
    dis = disagreement_mask(pool)
    dis_pos = np.flatnonzero(dis)
    if (pool.labels[dis_pos] != UNREAD).all():
        L = batch_lower(aug, dis_pos, rule="shared")
        settled: bool | None = bool(certified_mask(L, thresholds(aug.K, aug.scale)).any())
    else:
        settled = None
    labelled = pool.fully_labelled
    return AccuracyPlan(
        n=pool.n, K=pool.K, candidates=pool.names, disagreement=int(dis_pos.size),
        disagreement_rows=pool.ids_of(dis_pos),
        accuracy_prelabel=prelabel_bound(acc).prelabel_bound,
        augrc_prelabel=prelabel_bound(aug).prelabel_bound,
        augrc_movable=int(movable_mask(aug).sum()),
        augrc_never_settled_by_disagreement=_never_settled(aug, dis),
        augrc_settled_by_disagreement=settled,
        accuracy_winner=acc.names[acc.winner()] if labelled else None,
        augrc_winner=aug.names[aug.winner()] if labelled else None,
        policy=name, policy_within_disagreement=name in DISAGREEMENT_FIRST,
        accuracy_replay=replay(acc, policy=policy, seed=seed).labels_read if labelled else None,
        augrc_replay=replay(aug, policy=policy, seed=seed).labels_read if labelled else None,
        accuracy_certificate=certify(acc) if labelled and hindsight else None,
        augrc_certificate=certify(aug) if labelled and hindsight else None,
    )
