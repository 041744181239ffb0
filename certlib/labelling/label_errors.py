"""How many wrong labels would undo a certificate (issue 14): the label-error margin,
the rows to double-check, and the full-pool fragility of the choice itself.

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

    m = label_error_margin(pool, read_rows=[...])    # labels from the pool
    m.flips, m.rival, m.row_ids, m.critical_ids
    full_pool_fragility(pool).flips
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core._values import python_scalar
from ..core.bounds import batch_lower, decide, thresholds
from ..errors import LabelError, ParameterError
from ..core.pair_terms import check_rule, rule_unit
from ..core.pool import UNREAD

__all__ = ["LabelErrorMargin", "add_top_drops", "flip_drops", "full_pool_fragility",
           "label_error_margin", "robust_unreachable", "top_drop_sums"]


# ---------------------------------------------------------------- per-row drops
def _drop_terms(Pj, Pk, Wj, Wk, y, n_classes: int):
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


def flip_drops(pool, rows, labels, rule: str = "shared"):
    """(K, K, m) drops of L_jk (in the rule's units) when the label of each of ``rows``
    (positions, label codes ``labels``) is changed to its worst other class, and (K, K, m)
    those classes (codes; meaningless where the drop is 0).  The diagonal is 0."""
    rows = np.asarray(rows, dtype=np.int64)
    P, W = pool.preds[:, rows], pool.weights[:, rows].astype(np.int64)
    y = np.asarray(labels, dtype=np.int64)[None, None, :]
    drop, to = _drop_terms(P[:, None, :], P[None, :, :], W[:, None, :], W[None, :, :], y,
                           pool.n_classes)
    K = pool.K
    drop[np.arange(K), np.arange(K)] = 0
    return drop * rule_unit(rule), to


def _target_drops(pool, k: int, rows, labels, unit: int):
    """(K, m) drops of L_jk for one target k, and the classes, without forming K x K x m."""
    P, W = pool.preds[:, rows], pool.weights[:, rows].astype(np.int64)
    drop, to = _drop_terms(P, P[k][None, :], W, W[k][None, :], np.asarray(labels)[None, :],
                           pool.n_classes)
    drop[k] = 0
    return drop * unit, to


def top_drop_sums(drops: np.ndarray, e: int) -> np.ndarray:
    """Sum of the ``e`` largest drops along the last axis (all of them when fewer)."""
    if e <= 0 or drops.shape[-1] == 0:
        return np.zeros(drops.shape[:-1], dtype=np.int64)
    m = drops.shape[-1]
    if e >= m:
        return drops.sum(axis=-1, dtype=np.int64)
    part = np.partition(drops, m - e, axis=-1)[..., m - e:]
    return part.sum(axis=-1, dtype=np.int64)


def add_top_drops(tops: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """The ``e`` largest drops per pair (``tops``, (K, K, e), descending) after one more
    read row with drops ``drop`` ((K, K) or (K, K, 1)); read-only."""
    drop = drop.reshape(tops.shape[:2] + (1,))
    out = -np.sort(-np.concatenate([tops, drop], axis=2), axis=2)[:, :, :-1]
    out.setflags(write=False)
    return out


def robust_unreachable(L: np.ndarray, tops: np.ndarray, th) -> bool:
    """No continuation of the reads behind ``L`` (with ``tops`` their e largest drops per
    pair) can give a certificate that survives e wrong labels: for every candidate k some
    rival j has H_jk minus the e largest drops below its threshold (`Session`)."""
    flipped = -L.T - tops.sum(axis=2, dtype=np.int64)
    return bool((flipped < th.need).any(axis=0).all())


# ---------------------------------------------------------------- the result
@dataclass(frozen=True)
class LabelErrorMargin:
    """How many wrong labels among the rows read would undo the certificate.

    ``flips``: the fewest label changes among the read rows after which ``selected`` is no
    longer certified (0 when it is not certified now; None when no set of changes among
    the read rows can undo it).  ``rival``: a candidate that would then not be beaten
    (the earliest among those attaining ``flips``).  ``rows`` / ``row_ids``: one such
    smallest set (largest drops first, lowest position on ties) and ``labels_to`` the
    class each would be changed to.  ``critical`` / ``critical_ids``: every read row that
    lies in some smallest set against some rival attaining ``flips``, in position order:
    the rows a second annotator should check (with ``flips == 1``, each of them alone,
    if mislabelled, undoes the certificate)."""

    certified: bool
    selected: str
    flips: int | None
    rival: str | None
    rows: tuple
    row_ids: tuple
    labels_to: tuple
    critical: tuple
    critical_ids: tuple
    labels_read: int
    tolerance: Fraction
    rule: str

    @property
    def survives(self) -> int | None:
        """Wrong labels the certificate survives, whichever rows they hit (None: any
        number; -1: not certified)."""
        return None if self.flips is None else self.flips - 1

    def robust_to(self, e: int) -> bool:
        """Survives any ``e`` wrong labels among the rows read (margin >= e + 1)."""
        return self.certified and (self.flips is None or self.flips >= e + 1)

    def text(self, name=str) -> str:
        """One sentence for a person; ``name`` formats candidate names (pages escape)."""
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
                f"(then {name(self.rival)} is not beaten)")

    def to_dict(self) -> dict:
        return {"certified": self.certified, "selected": self.selected, "flips": self.flips,
                "survives": self.survives, "rival": self.rival,
                "rows": [python_scalar(r) for r in self.row_ids],
                "labels_to": [python_scalar(c) for c in self.labels_to],
                "critical": [python_scalar(r) for r in self.critical_ids],
                "labels_read": self.labels_read, "tolerance": float(self.tolerance),
                "rule": self.rule}


# ---------------------------------------------------------------- the margin
def _read_positions(pool, read_rows) -> np.ndarray:
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


def label_error_margin(pool, read_rows, tolerance=0.0, *, rule: str = "shared",
                       target: int | None = None) -> LabelErrorMargin:
    """The label-error margin of the certificate given by ``read_rows`` (row positions,
    labels from the pool), with the stopping test's tie rule and tolerance.

    ``target``: the candidate whose certificate is examined (default: the test's
    selected candidate, as `Session` reports it)."""
    check_rule(rule)
    rows = _read_positions(pool, read_rows)
    labels = pool.labels[rows]
    th = thresholds(pool.K, pool.scale, rule, tolerance)
    L = batch_lower(pool, rows, labels, rule)
    dec = decide(L, th)
    k = dec.selected_index if target is None else int(target)
    if not 0 <= k < pool.K:
        raise ParameterError(f"target must be a candidate index in 0..{pool.K - 1}; got {target}")
    slack = L[:, k] - th.need[:, k]  # >= 0 for every rival when k is certified
    slack[k] = np.iinfo(np.int64).max // 4
    certified = bool((slack >= 0).all())
    base = dict(selected=pool.names[k], labels_read=int(rows.size), tolerance=th.tolerance,
                rule=rule)
    if not certified:
        j = int(np.flatnonzero(slack < 0)[0])
        return LabelErrorMargin(False, flips=0, rival=pool.names[j], rows=(), row_ids=(),
                                labels_to=(), critical=(), critical_ids=(), **base)
    drops, to = _target_drops(pool, k, rows, labels, th.unit)
    best = None  # (flips, j, greedy order)
    per_rival = {}
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
        return LabelErrorMargin(True, flips=None, rival=None, rows=(), row_ids=(), labels_to=(),
                                critical=(), critical_ids=(), **base)
    m, j, order = best
    chosen = order[:m]
    crit = set()
    for jj, (mm, o, cum, need) in per_rival.items():
        if mm != m:
            continue
        head = int(cum[m - 2]) if m >= 2 else 0  # the m - 1 largest drops
        crit.update(o[:m - 1].tolist())
        crit.update(np.flatnonzero((drops[jj] > 0) & (drops[jj] >= need - head)).tolist())
    crit_pos = sorted(int(rows[i]) for i in crit)
    return LabelErrorMargin(
        True, flips=m, rival=pool.names[j], rows=tuple(int(rows[i]) for i in chosen),
        row_ids=pool.ids_of(rows[chosen]),
        labels_to=tuple(pool.classes[int(c)] for c in to[j][chosen]),
        critical=tuple(crit_pos), critical_ids=pool.ids_of(crit_pos), **base)


def full_pool_fragility(pool, tolerance=0.0, *, rule: str = "shared") -> LabelErrorMargin:
    """The margin of the full-pool choice: every row read, so ``flips`` is the fewest wrong
    labels among all n after which the full-pool winner (with a tolerance: the selected
    candidate within tau) is no longer the choice, under the tie rule."""
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels == UNREAD)[0])
        raise LabelError(f"the full-pool fragility needs every label; row {pool.row_ids[i]!r} "
                         f"(position {i}) has none ({pool.n - pool.n_labelled:,} of "
                         f"{pool.n:,} rows unlabelled)")
    return label_error_margin(pool, range(pool.n), tolerance, rule=rule)


def check_label_errors(label_errors) -> int | None:
    """None, or a whole number of wrong labels >= 0 (the parameter of the robust rule)."""
    if label_errors is None:
        return None
    if isinstance(label_errors, bool) or not isinstance(label_errors, (int, np.integer)) \
            or label_errors < 0:
        raise ParameterError("label_errors must be a whole number of wrong labels >= 0; "
                             f"got {label_errors!r}")
    return int(label_errors)
