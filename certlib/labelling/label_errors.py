"""How many wrong labels would undo a certificate: the label-error margin, the rows to
double-check, and the full-pool fragility of the choice itself.

Every certificate assumes the labels read are right.  Changing the label of a read row
i from y_i to a class c changes the term of row i in L_jk (SPEC section 4) from
``d_jki(y_i)`` to ``d_jki(c)``, and nothing else.  The *drop* of row i for the pair
(j, k) is the largest decrease a wrong label can cause,

    drop_jki = max(0, d_jki(y_i) - min_{c != y_i} d_jki(c))      (times the rule's unit)

(binary: ``max(0, b_jki (2 y_i - 1))``).  Under the shared rule the drop equals the
gain g_jki of reading the row (SPEC section 4): a wrong label can at most cancel what
the row contributed.  The certificate of k (``L_jk >= need_jk`` for every j, with the
stopping test's tie rule and tolerance, SPEC section 5) falls when some L_jk drops below
its threshold.  For one rival j the rows act independently, so the fewest label changes
that bring L_jk below need_jk are the largest drops first (exchange argument: any set of
m rows drops L_jk by at most the m largest drops); the **margin** is the minimum over
rivals.  A certificate with margin m survives any m - 1 wrong labels among the rows read.

*Full-pool fragility*: with every label known (read rows = the whole pool) L_jk is the
exact difference r_j - r_k, so the certificate of the full-pool choice k (the winner;
with a tolerance tau the selected candidate within tau) falls exactly when some rival j
gets ``r_j - r_k < need_jk``: for tau = 0 when k stops being the winner under the tie
rule, for tau > 0 when k is no longer within tau of the best.  Its margin is the fewest
wrong labels among all n that change the choice itself, independent of any policy, and
it bounds the margin of every partial certificate of k from above (a wrong label on a
row not yet read only lowers what could be read; `Session` uses this to state when a
stopping rule that survives e errors cannot be reached).

Everything is exact integer arithmetic on the pool's weights.

    m = label_error_margin(pool, [...])    # read row positions; labels from the pool
    m.flips, m.rival, m.row_ids, m.critical_ids
    full_pool_fragility(pool).flips
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from ..core._values import ClassValue, python_scalar
from ..core.bounds import Thresholds, batch_lower, decide, thresholds
from ..core.pair_terms import check_rule, rule_unit
from ..core.pool import UNREAD, Pool
from ..errors import LabelError, ParameterError

__all__ = ["LabelErrorMargin", "add_top_drops", "flip_drops", "full_pool_fragility",
           "label_error_margin", "robust_unreachable", "top_drop_sums"]

_Ints = npt.NDArray[np.int64]


# ---------------------------------------------------------------- per-row drops
def _drop_terms(Pj: _Ints, Pk: _Ints, Wj: _Ints, Wk: _Ints, y: _Ints,
                n_classes: int) -> tuple[_Ints, _Ints]:
    """Largest decrease of d_jk(y) = Wj 1{Pj != y} - Wk 1{Pk != y} by another class, and
    that class (broadcasting arrays of class codes and weights).

    Only three alternatives matter: j's prediction (value -Wk 1{Pk != Pj}), k's prediction
    (Wj 1{Pj != Pk}) and any class outside {Pj, Pk, y} (Wj - Wk), each when it differs
    from y (the third when the class set has one)."""
    Pj, Pk, Wj, Wk, y = np.broadcast_arrays(Pj, Pk, Wj, Wk, y)
    differ = Pj != Pk
    dy = Wj * (Pj != y) - Wk * (Pk != y)
    big = np.iinfo(np.int64).max
    v1 = np.where(Pj != y, -Wk * differ, big)
    v2 = np.where(Pk != y, Wj * differ, big)
    # smallest class code outside {Pj, Pk, y}: one of 0..3 always is
    other = np.full(Pj.shape, -1, dtype=np.int64)
    for c in (3, 2, 1, 0):
        free = (Pj != c) & (Pk != c) & (y != c)
        other = np.where(free, c, other)
    v3 = np.where((other >= 0) & (other < n_classes), Wj - Wk, big)
    best = np.minimum(np.minimum(v1, v2), v3)
    to = np.where(v1 == best, Pj, np.where(v2 == best, Pk, other))
    drop = np.maximum(0, dy - best)
    return drop.astype(np.int64), to.astype(np.int64)


def flip_drops(pool: Pool, rows: npt.ArrayLike, labels: npt.ArrayLike, *,
               rule: str = "shared") -> tuple[_Ints, _Ints]:
    """How far one wrong label on each row can lower every bound L_jk.

    Parameters
    ----------
    pool : Pool
        The pool (its predictions and weights; its labels are not used).
    rows : array_like of int, shape (m,)
        Row positions read.
    labels : array_like of int, shape (m,)
        Their label codes (indices in ``pool.classes``).
    rule : {"shared", "separate", "centered"}, default "shared"
        The bound rule; drops are in its units.

    Returns
    -------
    drops : ndarray of int64, shape (K, K, m)
        The drop of L_jk when the label of each row is changed to its worst other class
        (0 on the diagonal).
    to : ndarray of int64, shape (K, K, m)
        Those classes, as codes (meaningless where the drop is 0).
    """
    rows = np.asarray(rows, dtype=np.int64)
    P, W = pool.preds[:, rows], pool.weights[:, rows].astype(np.int64)
    y = np.asarray(labels, dtype=np.int64)[None, None, :]
    drop, to = _drop_terms(P[:, None, :], P[None, :, :], W[:, None, :], W[None, :, :], y,
                           pool.n_classes)
    K = pool.K
    drop[np.arange(K), np.arange(K)] = 0
    return drop * rule_unit(rule), to


def _target_drops(pool: Pool, k: int, rows: _Ints, labels: _Ints,
                  unit: int) -> tuple[_Ints, _Ints]:
    """(K, m) drops of L_jk for one target k, and the classes, without forming K x K x m."""
    P, W = pool.preds[:, rows], pool.weights[:, rows].astype(np.int64)
    drop, to = _drop_terms(P, P[k][None, :], W, W[k][None, :], np.asarray(labels)[None, :],
                           pool.n_classes)
    drop[k] = 0
    return drop * unit, to


def top_drop_sums(drops: _Ints, e: int) -> _Ints:
    """Sum of the ``e`` largest drops along the last axis (all of them when fewer).

    Parameters
    ----------
    drops : ndarray of int64, shape (..., m)
        Drops per read row (`flip_drops`).
    e : int
        How many wrong labels.

    Returns
    -------
    ndarray of int64, shape (...)
        The worst total drop e wrong labels can cause, pair by pair.
    """
    if e <= 0 or drops.shape[-1] == 0:
        return np.zeros(drops.shape[:-1], dtype=np.int64)
    m = drops.shape[-1]
    if e >= m:
        total: _Ints = drops.sum(axis=-1, dtype=np.int64)
        return total
    part = np.partition(drops, m - e, axis=-1)[..., m - e:]
    top: _Ints = part.sum(axis=-1, dtype=np.int64)
    return top


def add_top_drops(tops: _Ints, drop: _Ints) -> _Ints:
    """The ``e`` largest drops per pair after one more read row.

    Parameters
    ----------
    tops : ndarray of int64, shape (K, K, e)
        The e largest drops per pair so far, descending.
    drop : ndarray of int64, shape (K, K) or (K, K, 1)
        The drops of the new row.

    Returns
    -------
    ndarray of int64, shape (K, K, e)
        The e largest of both, descending; read-only.
    """
    drop = drop.reshape(tops.shape[:2] + (1,))
    out = -np.sort(-np.concatenate([tops, drop], axis=2), axis=2)[:, :, :-1]
    out.setflags(write=False)
    return out


def robust_unreachable(L: _Ints, tops: _Ints, th: Thresholds) -> bool:
    """Whether no continuation of the reads can give a certificate that survives e wrong
    labels.

    True when for every candidate k some rival j has H_jk minus the e largest drops below
    its threshold (`Session` stops then, "certified but fragile").

    Parameters
    ----------
    L : ndarray of int64, shape (K, K)
        The exact lower bounds after the reads.
    tops : ndarray of int64, shape (K, K, e)
        Their e largest drops per pair (`add_top_drops`).
    th : Thresholds
        The stopping test's thresholds.

    Returns
    -------
    bool
        No certificate robust to e wrong labels can be reached.
    """
    flipped = -L.T - tops.sum(axis=2, dtype=np.int64)
    return bool((flipped < th.need).any(axis=0).all())


# ---------------------------------------------------------------- the result
@dataclass(frozen=True)
class LabelErrorMargin:
    """How many wrong labels among the rows read would undo the certificate.

    Attributes
    ----------
    certified : bool
        ``selected`` is certified by the rows read.
    selected : str
        The candidate whose certificate is examined.
    flips : int or None
        The fewest label changes among the rows read after which ``selected`` is no
        longer certified (0 when it is not certified now; None when no set of changes
        among the rows read can undo it).
    rival : str or None
        A candidate that would then not be beaten (the earliest among those attaining
        ``flips``).
    rows, row_ids : tuple
        One such smallest set of rows, as positions and as row ids (largest drops first,
        lowest position on ties).
    labels_to : tuple
        The class each of them would be changed to.
    critical, critical_ids : tuple
        Every read row that lies in some smallest set against some rival attaining
        ``flips``, in position order: the rows a second annotator should check (with
        ``flips == 1`` each of them alone, if mislabelled, undoes the certificate).
    labels_read : int
        The number of rows read.
    tolerance : Fraction
        The stopping test's tau.
    rule : str
        The bound rule.
    """

    certified: bool
    selected: str
    flips: int | None
    rival: str | None
    rows: tuple[int, ...]
    row_ids: tuple[ClassValue, ...]
    labels_to: tuple[ClassValue, ...]
    critical: tuple[int, ...]
    critical_ids: tuple[ClassValue, ...]
    labels_read: int
    tolerance: Fraction
    rule: str

    @property
    def survives(self) -> int | None:
        """Wrong labels the certificate survives, whichever rows they hit (None: any
        number; -1: not certified)."""
        return None if self.flips is None else self.flips - 1

    def robust_to(self, e: int) -> bool:
        """Whether the certificate survives any ``e`` wrong labels among the rows read.

        Parameters
        ----------
        e : int
            A number of wrong labels.

        Returns
        -------
        bool
            Certified with margin >= e + 1.
        """
        return self.certified and (self.flips is None or self.flips >= e + 1)

    def text(self, name: Callable[[str], str] = str) -> str:
        """One sentence for a person.

        Parameters
        ----------
        name : callable, default str
            Formats a candidate's name (a page passes an escaper, since names come from
            the user's file).

        Returns
        -------
        str
            What the margin means for the selected candidate.
        """
        sel = name(self.selected)
        if not self.certified:
            return f"{sel} is not certified, so no wrong label is needed to undo it"
        if self.flips is None:
            return (f"the certificate of {sel} survives any number of wrong labels among the "
                    f"{self.labels_read:,} rows read")
        rows = "this row" if len(self.critical) == 1 else f"these {len(self.critical):,} rows"
        return (f"the certificate of {sel} survives any {self.flips - 1:,} wrong label"
                f"{'' if self.flips == 2 else 's'}; {self.flips:,} wrong "
                f"label{'' if self.flips == 1 else 's'} among {rows} would undo it "
                f"(then {name(str(self.rival))} is not beaten)")

    def to_dict(self) -> dict[str, object]:
        """The margin as JSON-ready values.

        Returns
        -------
        dict
            As the evidence record stores it: rows by row id, the tolerance as a float.
        """
        return {"certified": self.certified, "selected": self.selected, "flips": self.flips,
                "survives": self.survives, "rival": self.rival,
                "rows": [python_scalar(r) for r in self.row_ids],
                "labels_to": [python_scalar(c) for c in self.labels_to],
                "critical": [python_scalar(r) for r in self.critical_ids],
                "labels_read": self.labels_read, "tolerance": float(self.tolerance),
                "rule": self.rule}


# ---------------------------------------------------------------- the margin
def _read_positions(pool: Pool, read_rows: Iterable[int]) -> _Ints:
    rows = np.asarray(list(read_rows), dtype=np.int64).reshape(-1)
    if rows.size and (rows.min() < 0 or rows.max() >= pool.n):
        bad = int(rows[(rows < 0) | (rows >= pool.n)][0])
        raise ParameterError(f"read_rows must be row positions in 0..{pool.n - 1}; got {bad}")
    if np.unique(rows).size != rows.size:
        raise ParameterError("read_rows must not repeat a row position")
    unread = rows[pool.labels[rows] == UNREAD]
    if unread.size:
        i = int(unread[0])
        raise LabelError(f"read row {pool.row_ids[i]!r} (position {i}) has no label in the "
                         "pool; the margin needs the labels of every row read")
    return rows


def label_error_margin(pool: Pool, read_rows: Iterable[int], *,
                       tolerance: float | Fraction = 0.0, rule: str = "shared",
                       target: int | None = None) -> LabelErrorMargin:
    """How many wrong labels among the rows read would undo their certificate.

    The certificate of candidate k given by ``read_rows`` (labels from the pool) falls
    when some bound L_jk drops below its threshold; for each rival the fewest label
    changes that do it are the largest drops first (module docstring), and the margin is
    the minimum over rivals.  A certificate with margin m survives any m - 1 wrong
    labels.  Exact integer arithmetic, with the stopping test's tie rule and tolerance.

    Parameters
    ----------
    pool : Pool
        A pool holding the label of every row read.
    read_rows : iterable of int
        Row positions read (no repeats).
    tolerance : float or Fraction, default 0.0
        The stopping test's tau.
    rule : {"shared", "separate", "centered"}, default "shared"
        The bound rule.
    target : int or None, default None
        The candidate index whose certificate is examined (default: the test's selected
        candidate, as `Session` reports it).

    Returns
    -------
    LabelErrorMargin
        ``flips`` (the margin), the rival, one smallest set of rows and the critical
        rows.

    Raises
    ------
    ParameterError
        A row position out of range or repeated, a target out of range, a bad rule or
        tolerance.
    LabelError
        A read row has no label in the pool.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> m = certlib.label_error_margin(pool, [2, 3, 0, 1])
    >>> m.selected, m.flips, m.rival, m.row_ids, m.labels_to
    ('B', 1, 'A', (2,), (1,))
    >>> m.critical_ids          # the rows a second annotator should check
    (0, 1, 2)
    >>> certlib.label_error_margin(pool, [2, 3]).certified
    False
    """
    check_rule(rule)
    rows = _read_positions(pool, read_rows)
    labels = pool.labels[rows]
    th = thresholds(pool.K, pool.scale, rule=rule, tolerance=tolerance)
    L = batch_lower(pool, rows, labels=labels, rule=rule)
    dec = decide(L, th)
    k = dec.selected_index if target is None else int(target)
    if not 0 <= k < pool.K:
        raise ParameterError(f"target must be a candidate index in 0..{pool.K - 1}; got {target}")
    slack = L[:, k] - th.need[:, k]  # >= 0 for every rival when k is certified
    slack[k] = np.iinfo(np.int64).max // 4
    certified = bool((slack >= 0).all())
    selected, labels_read = pool.names[k], int(rows.size)
    if not certified:
        j = int(np.flatnonzero(slack < 0)[0])
        return LabelErrorMargin(False, selected, flips=0, rival=pool.names[j], rows=(),
                                row_ids=(), labels_to=(), critical=(), critical_ids=(),
                                labels_read=labels_read, tolerance=th.tolerance, rule=rule)
    drops, to = _target_drops(pool, k, rows, labels, th.unit)
    best: tuple[int, int, _Ints] | None = None  # (flips, j, greedy order)
    per_rival: dict[int, tuple[int, _Ints, _Ints, int]] = {}
    for j in range(pool.K):
        if j == k:
            continue
        order = np.argsort(-drops[j], kind="stable")  # largest first, lowest position on ties
        cum = np.cumsum(drops[j][order], dtype=np.int64)
        need = int(slack[j]) + 1  # total drop that brings L_jk below its threshold
        m = int(np.searchsorted(cum, need)) + 1  # first prefix reaching `need`
        if m > order.size:
            continue
        per_rival[j] = (m, order, cum, need)
        if best is None or m < best[0]:
            best = (m, j, order)
    if best is None:
        return LabelErrorMargin(True, selected, flips=None, rival=None, rows=(), row_ids=(),
                                labels_to=(), critical=(), critical_ids=(),
                                labels_read=labels_read, tolerance=th.tolerance, rule=rule)
    m, j, order = best
    chosen = order[:m]
    crit: set[int] = set()
    for jj, (mm, o, cum, need) in per_rival.items():
        if mm != m:
            continue
        head = int(cum[m - 2]) if m >= 2 else 0  # the m - 1 largest drops
        crit.update(o[:m - 1].tolist())
        crit.update(np.flatnonzero((drops[jj] > 0) & (drops[jj] >= need - head)).tolist())
    crit_pos = sorted(int(rows[i]) for i in crit)
    return LabelErrorMargin(
        True, selected, flips=m, rival=pool.names[j], rows=tuple(int(rows[i]) for i in chosen),
        row_ids=pool.ids_of(rows[chosen]),
        labels_to=tuple(pool.classes[int(c)] for c in to[j][chosen]),
        critical=tuple(crit_pos), critical_ids=pool.ids_of(crit_pos),
        labels_read=labels_read, tolerance=th.tolerance, rule=rule)


def full_pool_fragility(pool: Pool, *, tolerance: float | Fraction = 0.0,
                        rule: str = "shared") -> LabelErrorMargin:
    """How many wrong labels among all n would change the full-pool choice itself.

    The margin with every row read: ``flips`` is the fewest wrong labels after which the
    full-pool winner (with a tolerance: the selected candidate within tau) is no longer
    the choice, under the tie rule.  It is independent of any policy and bounds from
    above the margin of every partial certificate of that candidate (module docstring).

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    tolerance : float or Fraction, default 0.0
        The stopping test's tau.
    rule : {"shared", "separate", "centered"}, default "shared"
        The bound rule.

    Returns
    -------
    LabelErrorMargin
        The margin of the full-pool choice over all n rows.

    Raises
    ------
    LabelError
        A row has no label.
    ParameterError
        A bad rule or tolerance.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[1, 0, 1, 1, 0, 0], [0, 0, 1, 0, 1, 0]],
    ...                                 [[6, 5, 4, 3, 2, 1], [6, 5, 4, 3, 2, 1]],
    ...                                 labels=[1, 0, 1, 1, 0, 0], names=["good", "weak"])
    >>> f = certlib.full_pool_fragility(pool)
    >>> f.selected, f.flips, f.row_ids
    ('good', 1, (0,))
    >>> print(f.text())  # doctest: +NORMALIZE_WHITESPACE
    the certificate of good survives any 0 wrong labels; 1 wrong label among this row
    would undo it (then weak is not beaten)
    """
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels == UNREAD)[0])
        raise LabelError(f"the full-pool fragility needs every label; row {pool.row_ids[i]!r} "
                         f"(position {i}) has none ({pool.n - pool.n_labelled:,} of "
                         f"{pool.n:,} rows unlabelled)")
    return label_error_margin(pool, range(pool.n), tolerance=tolerance, rule=rule)


def check_label_errors(label_errors: object) -> int | None:
    """The parameter of the robust stopping rule, checked.

    Parameters
    ----------
    label_errors : object
        None, or a whole number of wrong labels >= 0.

    Returns
    -------
    int or None
        ``label_errors`` as an int, or None.

    Raises
    ------
    ParameterError
        Anything else (a bool, a float, a negative number).
    """
    if label_errors is None:
        return None
    if isinstance(label_errors, bool) or not isinstance(label_errors, (int, np.integer)) \
            or label_errors < 0:
        raise ParameterError("label_errors must be a whole number of wrong labels >= 0; "
                             f"got {label_errors!r}")
    return int(label_errors)
