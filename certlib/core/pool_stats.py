"""Descriptive statistics of a pool, for looking at it before choosing a candidate.

`pool_stats(pool)` returns a frozen `PoolStats`: the sizes, each candidate's error
rate on the labelled rows and full-pool AUGRC, how often two candidates disagree, how
alike their confidence orders are (Spearman), and how many rows predict or carry each
class, so that a stray class (a 7 in a binary pool) is visible.

These are floats for display, not certificate quantities.  The AUGRC is the pool's
exact scaled risk (`Pool.risks`, `certlib.core.weights`) divided by its scale as a
`Fraction` first and only then rounded to a float; the exact values are kept in
``augrc_exact``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ._values import ClassValue
from .pool import UNREAD, Pool
from .weights import get_objective

__all__ = ["ClassCount", "PoolStats", "STRAY_FRACTION", "average_ranks", "class_counts",
           "pool_stats", "rare_classes", "spearman_matrix", "stray_class_notes"]

STRAY_FRACTION = 0.01  # a class on fewer than 1% of the rows of a pool with > 2 classes


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class ClassCount:
    """How often a class occurs.  ``rows``: rows where it is predicted by some candidate
    or is the label; ``rows_predicted``: rows where at least one candidate predicts it;
    ``per_candidate``: each candidate's predictions of it (tie-priority order);
    ``labelled``: rows labelled with it."""

    value: ClassValue
    rows: int
    rows_predicted: int
    per_candidate: tuple[int, ...]
    labelled: int


@dataclass(frozen=True, eq=False)
class PoolStats:
    """What `pool_stats` found.  Matrices are K x K, read-only, in tie-priority order.

    ``errors`` counts each candidate's errors on the labelled rows and ``error_rate``
    divides them by the rows labelled (None when none is); ``augrc_exact`` and
    ``augrc`` are the full-pool AUGRC (None unless every row is labelled);
    ``disagreement`` the fraction of rows where two candidates' predictions differ;
    ``spearman`` the rank correlation of their confidences (nan when one is constant);
    ``class_counts`` one `ClassCount` per class, in class order.
    """

    n: int
    K: int
    classes: tuple[ClassValue, ...]
    n_labelled: int
    candidates: tuple[str, ...]
    errors: tuple[int, ...]  # errors on the labelled rows
    error_rate: tuple[float | None, ...]  # None when no row is labelled
    augrc_exact: tuple[Fraction, ...] | None  # None unless every row is labelled
    augrc: tuple[float, ...] | None
    disagreement: NDArray[np.float64]  # fraction of rows where the two predictions differ
    spearman: NDArray[np.float64]  # rank correlation of the confidences, nan if constant
    class_counts: tuple[ClassCount, ...]  # one per class of the pool, in class order

    @property
    def fully_labelled(self) -> bool:
        """Whether every row is labelled (then the AUGRC fields are set)."""
        return self.n_labelled == self.n

    def rare_classes(self, *, fraction: float = STRAY_FRACTION) -> tuple[ClassCount, ...]:
        """Classes that look like a stray value (`rare_classes`).

        Parameters
        ----------
        fraction : float
            A class on fewer than ``fraction * n`` rows is rare.

        Returns
        -------
        tuple of ClassCount
            The rare classes, in class order.
        """
        return rare_classes(self.class_counts, self.n, fraction=fraction)


def rare_classes(counts: Sequence[ClassCount], n: int, *,
                 fraction: float = STRAY_FRACTION) -> tuple[ClassCount, ...]:
    """Classes that look like a stray value: present on at least one row but on fewer
    than ``fraction * n`` rows, in a pool with more than two classes (a two-class pool
    may well be imbalanced).

    Parameters
    ----------
    counts : sequence of ClassCount
        One per class (`class_counts`).
    n : int
        Rows of the pool.
    fraction : float
        The threshold, a share of the rows.

    Returns
    -------
    tuple of ClassCount
        The rare classes, in the order given.
    """
    if len(counts) <= 2:
        return ()
    return tuple(c for c in counts if 0 < c.rows < fraction * n)


def average_ranks(x: npt.ArrayLike) -> NDArray[np.float64]:
    """Ranks 1..n of a 1-d array, tied values sharing the mean of their ranks.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        The values.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        Their ranks, 1 for the smallest.

    Examples
    --------
    >>> average_ranks([0.3, 0.1, 0.3, 0.2]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    xs = np.asarray(x, dtype=np.float64)
    n = xs.shape[0]
    order = np.argsort(xs, kind="stable")
    sx = xs[order]
    # tie blocks: a new block wherever the sorted value changes
    change = np.empty(n, dtype=bool)
    change[:1] = True
    np.not_equal(sx[1:], sx[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], n)
    mean_rank = (starts + ends + 1) / 2.0  # mean of starts+1 .. ends
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman_matrix(confs: npt.ArrayLike) -> NDArray[np.float64]:
    """K x K Spearman rank correlation of the rows of ``confs`` (ties averaged): the
    Pearson correlation of their average ranks.

    Parameters
    ----------
    confs : array_like of float, shape (K, n)
        One row of confidences per candidate.

    Returns
    -------
    numpy.ndarray of float64, shape (K, K)
        Correlations in [-1, 1].  A constant row has no order, so every entry in its row
        and column, the diagonal included, is nan.

    Examples
    --------
    >>> spearman_matrix([[1, 2, 3], [3, 2, 1], [5, 5, 5]]).round(12).tolist()
    [[1.0, -1.0, nan], [-1.0, 1.0, nan], [nan, nan, nan]]
    """
    c = np.asarray(confs, dtype=np.float64)
    ranks = np.array([average_ranks(row) for row in c])
    centred = ranks - ranks.mean(axis=1, keepdims=True)
    norm = np.sqrt((centred * centred).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (centred @ centred.T) / np.outer(norm, norm)
    np.fill_diagonal(out, 1.0)
    const = norm == 0
    out[const, :] = np.nan
    out[:, const] = np.nan
    clipped: NDArray[np.float64] = np.clip(out, -1.0, 1.0)
    return clipped


def _disagreement(preds: NDArray[np.int64]) -> NDArray[np.float64]:
    K, n = preds.shape
    out = np.zeros((K, K))
    for a in range(K):
        for b in range(a + 1, K):
            out[a, b] = out[b, a] = np.count_nonzero(preds[a] != preds[b]) / n
    return out


def _augrc_risks(pool: Pool) -> NDArray[np.int64]:
    """Exact scaled AUGRC risks: the pool's own when its objective is AUGRC."""
    if pool.objective == "augrc":
        return pool.risks()
    w = np.array([get_objective("augrc").weights(c) for c in pool.confs])
    risks: NDArray[np.int64] = (w * (pool.preds != pool.labels[None, :])).sum(
        axis=1, dtype=np.int64)
    return risks


def pool_stats(pool: Pool) -> PoolStats:
    """Sizes, error rates, full-pool AUGRC, disagreement, Spearman and class counts.

    Parameters
    ----------
    pool : Pool
        The pool, labelled or not.

    Returns
    -------
    PoolStats
        Floats for display; the AUGRC is exact in ``augrc_exact``.

    Examples
    --------
    >>> pool = Pool.from_arrays([[0, 0, 1, 1], [0, 1, 1, 1]], [[4, 3, 2, 1], [1, 2, 3, 4]],
    ...                         labels=[0, 0, 1, 0], names=["A", "B"])
    >>> s = pool_stats(pool)
    >>> s.error_rate, float(s.disagreement[0, 1]), round(float(s.spearman[0, 1]), 12)
    ((0.25, 0.5), 0.25, -1.0)
    """
    labelled = pool.labels != UNREAD
    n_lab = int(labelled.sum())
    wrong = (pool.preds != pool.labels[None, :]) & labelled[None, :]
    errors = tuple(int(e) for e in wrong.sum(axis=1))
    error_rate = tuple(e / n_lab if n_lab else None for e in errors)
    augrc_exact: tuple[Fraction, ...] | None = None
    augrc: tuple[float, ...] | None = None
    if pool.fully_labelled:
        scale = get_objective("augrc").scale(pool.n)
        augrc_exact = tuple(Fraction(int(r), scale) for r in _augrc_risks(pool))
        augrc = tuple(float(a) for a in augrc_exact)

    counts = class_counts(pool)
    return PoolStats(
        n=pool.n, K=pool.K, classes=pool.classes, n_labelled=n_lab, candidates=pool.names,
        errors=errors, error_rate=error_rate, augrc_exact=augrc_exact, augrc=augrc,
        disagreement=_readonly(_disagreement(pool.preds)),
        spearman=_readonly(spearman_matrix(pool.confs)), class_counts=counts)


def class_counts(pool: Pool) -> tuple[ClassCount, ...]:
    """How often each class occurs (`ClassCount`), in class order: a part of `pool_stats`
    that `stray_class_notes` needs alone (the whole took 10 s at n = 1M, K = 6).

    Parameters
    ----------
    pool : Pool
        The pool.

    Returns
    -------
    tuple of ClassCount
        One per class of the pool.
    """
    C = pool.n_classes
    labelled = pool.labels != UNREAD
    per_cand = np.array([np.bincount(p, minlength=C) for p in pool.preds])
    # a row counts once per class however many predict it (np.unique of (class, row)
    # pairs took 7 s at n = 1M, K = 6; a sort down each row's K predictions, 0.3 s)
    rows_predicted = _rows_holding(pool.preds, C)
    label_counts = np.bincount(pool.labels[labelled], minlength=C)
    rows_any = _rows_holding(np.vstack([pool.preds, pool.labels[None, :]]), C)
    return tuple(
        ClassCount(value=c, rows=int(rows_any[k]), rows_predicted=int(rows_predicted[k]),
                   per_candidate=tuple(int(v) for v in per_cand[:, k]),
                   labelled=int(label_counts[k]))
        for k, c in enumerate(pool.classes))


def _rows_holding(codes: NDArray[np.int64], C: int) -> NDArray[np.int64]:
    """Per class, the number of columns of ``codes`` (rows of the pool, one code per
    candidate or label; negative = none) holding it at least once."""
    s = np.sort(codes, axis=0)
    first = np.ones(s.shape, dtype=bool)
    first[1:] = s[1:] != s[:-1]
    held: NDArray[np.int64] = np.bincount(s[first & (s >= 0)], minlength=C)
    return held


def stray_class_notes(pool: Pool, *, fraction: float = STRAY_FRACTION,
                      fmt: Callable[[object], str] = str,
                      counts: tuple[ClassCount, ...] | None = None) -> tuple[str, ...]:
    """One sentence per class that looks like a stray value (`PoolStats.rare_classes`),
    naming the first row and column it is in: a typo such as a label 0.5 among classes
    0 and 1, or "cat" in one prediction, becomes a class of its own in every bound (and a
    button on the Label page), so each page that shows the pool says so, not only the Pool
    page.

    Parameters
    ----------
    pool : Pool
        The pool.
    fraction : float
        A class on fewer than ``fraction * n`` rows is rare (`rare_classes`).
    fmt : callable
        Writes each value from the file (a class, a row id, a candidate's name): a
        page passes its Markdown-inert form.
    counts : tuple of ClassCount, optional
        The pool's `class_counts`, when already known.

    Returns
    -------
    tuple of str
        One sentence per rare class; empty for a pool of two classes.

    Examples
    --------
    >>> pool = Pool.from_arrays([[0, 1, 1, 0] * 30, [0, 1, 0, 0] * 30],
    ...                         [[0.9, 0.8, 0.7, 0.6] * 30] * 2,
    ...                         labels=[0, 1, 1, 0] * 29 + [0, 0.5, 1, 0], names=["A", "B"])
    >>> print(stray_class_notes(pool)[0][:89])
    Class 0.5 appears on only 1 of 120 rows (0.83%): the label of row_id 117, predicted by no
    """
    if pool.n_classes <= 2:
        return ()
    counts = class_counts(pool) if counts is None else counts  # ``counts``: already known
    out: list[str] = []
    for c in rare_classes(counts, pool.n, fraction=fraction):
        k = pool.classes.index(c.value)
        where = []
        hits = np.flatnonzero(pool.labels == k)
        if hits.size:
            where.append(f"the label of row_id {fmt(pool.row_ids[int(hits[0])])}")
        for j, name in enumerate(pool.names):
            hits = np.flatnonzero(pool.preds[j] == k)
            if hits.size:
                where.append(f"{fmt(name)}'s prediction on row_id "
                             f"{fmt(pool.row_ids[int(hits[0])])}")
                break
        by = ", ".join(f"{fmt(s)} ({v:,})" for s, v in zip(pool.names, c.per_candidate) if v)
        out.append(f"Class {fmt(c.value)} appears on only {c.rows:,} of {pool.n:,} rows "
                   f"({100 * c.rows / pool.n:.2g}%): {' and '.join(where)}, predicted by "
                   f"{by or 'no candidate'}. A stray value in the file? It counts as a class "
                   "of its own in every bound; correct the file, or declare the class set on "
                   "the Pool page.")
    return tuple(out)
