"""The validated, immutable pool (SPEC sections 1-2).

A `Pool` is what every algorithm in certlib works on.  It is built once at the
edge (from arrays here, from files in `certlib.io`) and states its guarantee:

* K >= 2 candidates, named, in tie-priority order (earlier wins a tie);
* n >= 1 rows with unique row ids;
* predictions and labels are integer codes into ``classes`` (at least two
  classes); a label code of -1 means "not read yet";
* confidences are finite floats; the integer weights of the objective are
  computed from them once (`certlib.core.weights`).

Inner code trusts these facts and never re-validates.  `pool_hash` fingerprints
the label-free content (SPEC section 12).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ._values import ClassValue, class_value, class_value_from_text, is_empty_cell, python_scalar
from ..errors import ColumnError, InvalidValueError, LabelError, ParameterError
from .weights import get_objective

__all__ = ["MAX_ROWS", "UNREAD", "DerivedFrom", "Pool", "pool_hash"]

UNREAD = -1
# Scaled risks are sums of n weights of at most 2n, so they stay below 2 n^2;
# int64 is exact far beyond this limit, which is set by memory, not arithmetic.
MAX_ROWS = 50_000_000


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _is_minus_one(v: object) -> bool:
    """A numeric -1 (not the text "-1"): the unread marker of label arrays."""
    v = python_scalar(v)
    return not isinstance(v, (bool, str)) and isinstance(v, (int, float)) and v == -1


def _sort_key(v: ClassValue) -> tuple[int, int | float, str]:
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def _missing_mask(a: NDArray[Any]) -> NDArray[np.bool_]:
    """True where a prediction/label cell is empty (None, NaN, blank string)."""
    kind = a.dtype.kind
    if kind in "iub":
        return np.zeros(a.shape, dtype=bool)
    if kind == "f":
        return np.asarray(np.isnan(a), dtype=bool)
    if kind in "US":
        return np.asarray(np.char.strip(a.astype(str)) == "", dtype=bool)
    if not a.size:
        return np.zeros(a.shape, bool)
    return np.asarray(np.vectorize(is_empty_cell, otypes=[bool])(a), dtype=bool)


def _unique_values(flat: NDArray[Any]) -> tuple[list[ClassValue], NDArray[np.int64]]:
    """Distinct canonical values of a 1-d array and the inverse index."""
    if flat.dtype.kind in "iub" and flat.size:
        flat = flat.astype(np.int64)
        lo, hi = int(flat.min()), int(flat.max())
        if hi - lo < 1 << 20:  # small integer range: a counting pass, no sort
            present = np.flatnonzero(np.bincount(flat - lo, minlength=hi - lo + 1))
            lookup = np.zeros(hi - lo + 1, dtype=np.int64)
            lookup[present] = np.arange(present.size)
            u, inv = present + lo, lookup[flat - lo]
        else:
            u, inv = np.unique(flat, return_inverse=True)
        vals = [class_value_from_text(v) for v in u]
    elif flat.dtype.kind in "iubf":
        u, inv = np.unique(flat, return_inverse=True)
        vals = [class_value(v) for v in u]
    else:
        u, inv = np.unique(flat.astype(str), return_inverse=True)
        first: dict[int, object] = {}
        for pos, k in enumerate(inv):
            if k not in first:
                first[k] = flat[pos]
                if len(first) == len(u):
                    break
        vals = [class_value_from_text(first[k]) for k in range(len(u))]
    # two raw values may canonicalise to one (1 and 1.0): merge them
    canon_index: dict[ClassValue, int] = {}
    remap = np.empty(len(vals), dtype=np.int64)
    out: list[ClassValue] = []
    for k, v in enumerate(vals):
        if v not in canon_index:
            canon_index[v] = len(out)
            out.append(v)
        remap[k] = canon_index[v]
    return out, remap[inv.reshape(-1)]


@dataclass(frozen=True, eq=False)
class DerivedFrom:
    """What a pool's derived candidates were computed from (SPEC section 2): the
    probabilities as read from the file, n x C in file column order (read-only), their
    column names, the names of the candidates derived from them (the pool's first
    candidates) and the rule that derives them (`certlib.core.derived_scores.SCORE_RULE`)."""

    probabilities: NDArray[np.float64]
    columns: tuple[str, ...]
    candidates: tuple[str, ...]
    rule: str


@dataclass(frozen=True, eq=False)
class Pool:
    """K frozen candidates on n rows: the validated input of every algorithm (SPEC section 2).

    Build one with `Pool.from_arrays` or `certlib.load_pool`; the constructor itself
    does not validate.  Its arrays are read-only, so a pool never changes once built
    (`with_labels` makes a copy with other labels).

    Parameters
    ----------
    names : tuple of str
        Candidate names in tie-priority order: an earlier candidate wins a tie.
    classes : tuple
        The class set; ``preds`` and ``labels`` hold codes into it.
    preds : numpy.ndarray of int64, shape (K, n)
        Each candidate's predicted class code on each row.
    confs : numpy.ndarray of float64, shape (K, n)
        Confidences; a larger value is accepted earlier (AUGRC order).
    weights : numpy.ndarray of int64, shape (K, n)
        Label-free integer weights of the objective (`certlib.core.weights`).
    labels : numpy.ndarray of int64, shape (n,)
        Label codes, `UNREAD` (-1) where the label is not read yet.
    row_ids : tuple
        Unique row ids, in row order.
    objective : str
        ``"augrc"`` or ``"accuracy"``.
    shared_prediction : bool
        Every candidate predicts the same class on every row (confidence-score choice).
    extra : mapping of str to tuple
        Display columns carried along, one value per row; not hashed.
    derived : DerivedFrom or None
        For a pool read from ``prob_`` columns, what its first candidates were derived
        from; the pool hash covers these in place of their confidences.

    Examples
    --------
    >>> from certlib import Pool
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         labels=[1, 0, 0, 0], names=["A", "B"])
    >>> pool.K, pool.n, pool.classes, pool.weights.tolist()
    (2, 4, (0, 1), [[7, 5, 3, 1], [5, 7, 1, 3]])
    >>> pool.risks().tolist(), pool.names[pool.winner()]
    ([10, 8], 'B')
    """

    names: tuple[str, ...]
    classes: tuple[ClassValue, ...]
    preds: NDArray[np.int64]  # (K, n) int64 class codes
    confs: NDArray[np.float64]  # (K, n) float64
    weights: NDArray[np.int64]  # (K, n) int64, label-free weights of the objective
    labels: NDArray[np.int64]  # (n,) int64 class codes, UNREAD = -1
    row_ids: tuple[ClassValue, ...]
    objective: str = "augrc"
    shared_prediction: bool = False
    extra: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    #: for a pool read from ``prob_`` columns: the probabilities its built-in candidates
    #: were derived from (`DerivedFrom`); the pool hash covers these, not the scores
    derived: DerivedFrom | None = None

    # ------------------------------------------------------------------ sizes
    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.preds.shape[1])

    @property
    def K(self) -> int:
        """Number of candidates."""
        return int(self.preds.shape[0])

    @property
    def n_classes(self) -> int:
        """Number of classes in the class set (at least 2)."""
        return len(self.classes)

    @property
    def scale(self) -> int:
        """Integer that maps a scaled risk to the objective (2 n^2 for AUGRC)."""
        return get_objective(self.objective).scale(self.n)

    @property
    def is_binary(self) -> bool:
        """Whether the class set has exactly two classes (paper eq. (4) applies)."""
        return self.n_classes == 2

    @property
    def n_labelled(self) -> int:
        """Number of rows whose label is read."""
        return int(np.count_nonzero(self.labels != UNREAD))

    @property
    def fully_labelled(self) -> bool:
        """Whether every row carries a label (needed by `risks` and `certify`)."""
        return self.n_labelled == self.n

    # ------------------------------------------------------------ lookups
    @cached_property
    def _position(self) -> dict[ClassValue, int]:
        return {rid: i for i, rid in enumerate(self.row_ids)}

    def position(self, row_id: object) -> int:
        """Zero-based row position of a row id.

        Parameters
        ----------
        row_id : int, float or str
            A row id of the pool; text that reads as an integer id ("7") also finds it.

        Returns
        -------
        int
            The position in 0..n-1.

        Raises
        ------
        ParameterError
            When ``row_id`` is not in the pool.
        """
        key = class_value(row_id)
        try:
            return self._position[key]
        except KeyError:
            pass
        # row ids read from a file may be ints while the caller passes a string (read
        # exactly: through a float, "2**60 + 1" named the row of 2**60)
        if isinstance(key, str):
            try:
                return self._position[class_value_from_text(key)]
            except KeyError:
                pass
        raise ParameterError(f"row_id {row_id!r} is not in the pool") from None

    @cached_property
    def _row_id_array(self) -> NDArray[np.int64] | None:
        """Row ids as an array when they are the default 0..n-1 or all integers."""
        if all(type(r) is int for r in self.row_ids):
            try:
                return np.asarray(self.row_ids, dtype=np.int64)
            except (OverflowError, TypeError, ValueError):
                return None
        return None

    def ids_of(self, positions: npt.ArrayLike) -> tuple[ClassValue, ...]:
        """Row ids of a sequence of row positions.

        Parameters
        ----------
        positions : array_like of int
            Row positions in 0..n-1.

        Returns
        -------
        tuple
            The row id at each position, in the order given.
        """
        arr = self._row_id_array
        pos = np.asarray(positions, dtype=np.int64)
        if arr is not None:
            ids: list[int] = arr[pos].tolist()
            return tuple(ids)
        return tuple(self.row_ids[i] for i in pos.tolist())

    def class_code(self, value: object) -> int:
        """Class code of a label value.

        Parameters
        ----------
        value : int, float or str
            A class value; numbers written as text ("1") are those numbers.

        Returns
        -------
        int
            Its index in ``classes``.

        Raises
        ------
        LabelError
            When the value is not in the class set.
        """
        try:
            return self._class_index[class_value_from_text(value)]
        except (KeyError, TypeError):
            raise LabelError(
                f"label {value!r} is not in the class set {list(self.classes)}"
            ) from None

    @cached_property
    def _class_index(self) -> dict[ClassValue, int]:
        return {c: i for i, c in enumerate(self.classes)}

    def risks(self) -> NDArray[np.int64]:
        """Scaled risks r_j = sum_i w_ji loss_ji of a fully labelled pool (int64, exact).

        Returns
        -------
        numpy.ndarray of int64, shape (K,)
            Each candidate's scaled risk; divided by `scale` it is the objective
            (AUGRC = r / (2 n^2), paper 000 eq. (2)).

        Raises
        ------
        LabelError
            When some row has no label.
        """
        if not self.fully_labelled:
            missing = int(np.flatnonzero(self.labels == UNREAD)[0])
            raise LabelError(
                f"the full-pool risks need every label; row {self.row_ids[missing]!r} "
                f"(position {missing}) has none"
            )
        loss = self.preds != self.labels[None, :]
        risks: NDArray[np.int64] = (self.weights * loss).sum(axis=1, dtype=np.int64)
        return risks

    def winner(self) -> int:
        """Full-pool winner: smallest risk, earliest candidate on ties (SPEC section 1).

        Returns
        -------
        int
            The winner's candidate index.

        Raises
        ------
        LabelError
            When some row has no label.
        """
        return int(np.argmin(self.risks()))

    def objective_values(self) -> list[Fraction]:
        """Full-pool objective (AUGRC or error rate) of every candidate, as exact Fractions.

        Returns
        -------
        list of Fraction
            ``risks() / scale``, in candidate order.

        Raises
        ------
        LabelError
            When some row has no label.
        """
        s = self.scale
        return [Fraction(int(r), s) for r in self.risks()]

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 hex digest of the label-free content (`pool_hash`), computed once: the
        arrays it covers are read-only."""
        return _content_hash(self)

    @cached_property
    def legacy_hashes(self) -> tuple[str, ...]:
        """Hashes this pool had before pool-hash format 2 (`matches_hash`), for the stores
        and records made then; empty unless its scores are derived from probabilities."""
        return _legacy_hashes(self)

    def matches_hash(self, digest: str) -> bool:
        """Whether ``digest`` names this pool: its `pool_hash`, or for a ``prob_`` pool
        the format-1 hash an earlier build gave it (over scores derived with numpy's
        ``log``, machine-dependent in the last bit: recomputed here with numpy's ``log``
        and with the C library's).

        Parameters
        ----------
        digest : str
            A SHA-256 hex digest, as a store or an evidence record keeps it.

        Returns
        -------
        bool
            True when it is this pool's hash, current or from an earlier format.
        """
        return digest == self.content_hash or digest in self.legacy_hashes

    def with_labels(self, labels: npt.ArrayLike) -> Pool:
        """A copy of this pool with other label codes (same predictions, weights).

        Parameters
        ----------
        labels : array_like of int, shape (n,)
            Label codes into ``classes``, `UNREAD` (-1) for an unread row.

        Returns
        -------
        Pool
            The copy; the arrays other than the labels are shared (read-only).

        Raises
        ------
        ParameterError
            When ``labels`` does not have length n.
        LabelError
            When a code is not a class code.
        """
        labels = np.asarray(labels, dtype=np.int64)
        if labels.shape != (self.n,):
            raise ParameterError(f"labels must have length n = {self.n}; got shape {labels.shape}")
        bad = (labels < UNREAD) | (labels >= self.n_classes)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise LabelError(f"label code {int(labels[i])} at row position {i} is not a class code")
        return Pool(self.names, self.classes, self.preds, self.confs, self.weights,
                    _readonly(labels), self.row_ids, self.objective, self.shared_prediction,
                    self.extra, self.derived)

    # --------------------------------------------------------- construction
    @classmethod
    def from_arrays(
        cls,
        preds: npt.ArrayLike,
        confs: npt.ArrayLike,
        labels: npt.ArrayLike | None = None,
        *,
        names: Sequence[str] | None = None,
        classes: Sequence[object] | None = None,
        row_ids: Sequence[object] | NDArray[Any] | None = None,
        objective: str = "augrc",
        extra: Mapping[str, Sequence[object]] | None = None,
        minus_one_unread: bool = True,
        derived: DerivedFrom | None = None,
    ) -> Pool:
        """Validate arrays into a Pool (SPEC section 2).

        Parameters
        ----------
        preds : array_like, shape (K, n) or (n,)
            Predicted classes, or one length-n vector shared by every candidate
            (confidence-score choice).
        confs : array_like of float, shape (K, n)
            Confidences; a larger value is accepted earlier.
        labels : array_like, shape (n,), optional
            Labels; None, NaN or empty marks an unread row, and so does a numeric -1
            unless ``minus_one_unread=False``.  Numbers written as text ("1") are
            those numbers.  Default: every row unread.
        names : sequence of str, optional
            Candidate names in tie-priority order (default c0, c1, ...).
        classes : sequence, optional
            The class set; default is the union of predictions and labels (padded to
            {0, 1} when that union is a single 0/1 value).
        row_ids : sequence, optional
            Unique row ids (default 0..n-1).
        objective : {"augrc", "accuracy"}
            The objective whose integer weights are computed (`certlib.core.weights`).
        extra : mapping of str to sequence, optional
            Display columns of length n, carried along and not hashed.
        minus_one_unread : bool
            Whether a numeric -1 label means unread; pass False for labels in {-1, +1}.
        derived : DerivedFrom, optional
            What the first candidates' confidences were computed from
            (`certlib.load_pool` sets it for a ``prob_`` file); the pool hash then
            covers it in their place.

        Returns
        -------
        Pool
            The validated, read-only pool.

        Raises
        ------
        ColumnError
            Fewer than two candidates, or a candidate name used twice.
        InvalidValueError
            An empty pool, a non-finite confidence, a missing prediction, a
            prediction outside the class set or a repeated or missing row id.
        LabelError
            A label outside the class set.
        ParameterError
            Arrays of inconsistent shapes, an unknown objective, a class set of fewer
            than two classes, or ``derived`` not matching the first candidates.

        Examples
        --------
        >>> from certlib import Pool
        >>> pool = Pool.from_arrays([[0, 1, 1], [0, 0, 1]], [[0.9, 0.8, 0.7], [0.6, 0.9, 0.5]],
        ...                         labels=[0, None, 1], names=["A", "B"], row_ids=["a", "b", "c"])
        >>> pool.labels.tolist(), pool.n_labelled, pool.position("b")
        ([0, -1, 1], 2, 1)
        """
        get_objective(objective)
        confs_a = np.asarray(confs, dtype=object if np.asarray(confs).dtype == object else None)
        try:
            confs_f = np.asarray(confs_a, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidValueError("confidences must be numbers") from None
        if confs_f.ndim == 1:
            confs_f = confs_f[None, :]
        if confs_f.ndim != 2:
            raise ParameterError(f"confs must be a K x n array; got {confs_f.ndim} dimensions")
        K, n = confs_f.shape
        if names is None:
            names = [f"c{j}" for j in range(K)]
        names = tuple(str(s) for s in names)
        if len(names) != K:
            raise ParameterError(f"names has {len(names)} entries for {K} candidates")
        if len(set(names)) != K:
            dup = next(s for s in names if names.count(s) > 1)
            raise ColumnError(f"candidate name {dup!r} is used twice; names must be unique")
        if K < 2:
            raise ColumnError(
                f"a pool needs at least two candidates to choose between; found {K}"
                + (f" ({names[0]!r})" if K == 1 else "")
            )
        if n == 0:
            raise InvalidValueError("the pool is empty: it has no rows")
        if n > MAX_ROWS:
            raise ParameterError(f"the pool has {n} rows; at most {MAX_ROWS} are supported")
        bad = ~np.isfinite(confs_f)
        if bad.any():
            j, i = (int(x) for x in np.argwhere(bad)[0])
            raise InvalidValueError(
                f"confidence of candidate {names[j]!r} at row position {i} is "
                f"{float(confs_f[j, i])}; confidences must be finite numbers"
            )

        preds_np = np.asarray(preds)
        shared = preds_np.ndim == 1
        if shared:
            preds_np = np.broadcast_to(preds_np[None, :], (K, preds_np.shape[0]))
        if preds_np.shape != (K, n):
            raise ParameterError(
                f"preds must be K x n = {K} x {n} (or one length-{n} vector); got {preds_np.shape}"
            )
        missing = _missing_mask(preds_np)
        if missing.any():
            j, i = (int(x) for x in np.argwhere(missing)[0])
            raise InvalidValueError(
                f"prediction of candidate {names[j]!r} at row position {i} is missing"
            )
        if not shared:
            shared = bool((preds_np == preds_np[0:1]).all())

        if labels is None:
            labels_np = np.full(n, None, dtype=object)
        else:
            labels_np = np.asarray(labels)
            if labels_np.ndim != 1 or labels_np.shape[0] != n:
                raise ParameterError(f"labels must be a length-n vector (n = {n}); got shape "
                                     f"{labels_np.shape}")
        unread = _missing_mask(labels_np)
        if minus_one_unread:
            if labels_np.dtype.kind in "iuf":
                unread |= labels_np == -1
            elif labels_np.dtype == object:
                unread |= np.fromiter((_is_minus_one(v) for v in labels_np), bool, n)

        pred_u, pred_inv = _unique_values(preds_np.reshape(-1))
        lab_u, lab_inv = _unique_values(labels_np[~unread]) if (~unread).any() \
            else ([], np.zeros(0, dtype=np.int64))
        if classes is None:
            cs = set(pred_u) | set(lab_u)
            if len(cs) < 2:
                if cs <= {0, 1}:
                    cs = {0, 1}
                else:
                    raise ParameterError(
                        f"only one class ({next(iter(cs))!r}) appears in the predictions and "
                        "labels; declare the class set (classes=..., --classes)"
                    )
            class_t = tuple(sorted(cs, key=_sort_key))
        else:
            class_t = tuple(class_value_from_text(c) for c in classes)
            if len(set(class_t)) != len(class_t):
                raise ParameterError("classes must not repeat a value")
            if len(class_t) < 2:
                raise ParameterError(
                    f"the class set needs at least two classes; got {list(class_t)}")
        index = {c: i for i, c in enumerate(class_t)}

        codes_u = np.empty(len(pred_u), dtype=np.int64)
        for u, v in enumerate(pred_u):
            if v not in index:
                pos = int(np.flatnonzero(pred_inv == u)[0])
                j, i = divmod(pos, n)
                raise InvalidValueError(
                    f"prediction {v!r} of candidate {names[j]!r} at row position {i} is not "
                    f"in the class set {list(class_t)}"
                )
            codes_u[u] = index[v]
        pred_codes = codes_u[pred_inv].reshape(K, n)

        label_codes = np.full(n, UNREAD, dtype=np.int64)
        lcodes_u = np.empty(len(lab_u), dtype=np.int64)
        read_pos = np.flatnonzero(~unread)
        for u, v in enumerate(lab_u):
            if v not in index:
                i = int(read_pos[np.flatnonzero(lab_inv == u)[0]])
                raise LabelError(
                    f"label {v!r} at row position {i} is not in the class set {list(class_t)}"
                )
            lcodes_u[u] = index[v]
        label_codes[read_pos] = lcodes_u[lab_inv]

        rid: tuple[ClassValue, ...]
        if row_ids is None:
            rid = tuple(range(n))
        elif isinstance(row_ids, np.ndarray) and row_ids.ndim == 1 and row_ids.dtype.kind in "iu" \
                and not (row_ids.dtype.kind == "u" and row_ids.size and row_ids.max() > 2**63 - 1):
            # (uint64 ids beyond int64 go the per-row way: text, as a file's are)
            # integer ids (the common file case): vectorised checks, no per-row loop
            if row_ids.shape[0] != n:
                raise ParameterError(f"row_ids has length {row_ids.shape[0]}; expected n = {n}")
            order = np.argsort(row_ids, kind="stable")
            twice = np.flatnonzero(row_ids[order][1:] == row_ids[order][:-1])
            if twice.size:
                i, k = sorted(int(x) for x in order[twice[0]:twice[0] + 2])
                raise InvalidValueError(
                    f"row_id {int(row_ids[i])!r} appears twice (row positions {i} and {k}); "
                    "row ids must be unique"
                )
            rid = tuple(row_ids.tolist())
        else:
            rid = tuple(class_value(r) for r in row_ids)
            if len(rid) != n:
                raise ParameterError(f"row_ids has length {len(rid)}; expected n = {n}")
            seen: dict[ClassValue, int] = {}
            for i, r in enumerate(rid):
                if is_empty_cell(r):
                    raise InvalidValueError(f"row_id at row position {i} is missing")
                if r in seen:
                    raise InvalidValueError(
                        f"row_id {r!r} appears twice (row positions {seen[r]} and {i}); "
                        "row ids must be unique"
                    )
                seen[r] = i

        obj = get_objective(objective)
        weights = np.stack([obj.weights(confs_f[j]) for j in range(K)])
        ex: dict[str, tuple[object, ...]] = {}
        for key, values in (extra or {}).items():
            col = tuple(values)
            if len(col) != n:
                raise ParameterError(f"extra column {key!r} has length {len(col)}; expected {n}")
            ex[str(key)] = col
        if derived is not None:
            from .derived_scores import builtin_scores

            k = len(derived.candidates)
            if derived.probabilities.shape[0] != n or k > K \
                    or tuple(names[:k]) != derived.candidates \
                    or not np.array_equal(np.vstack(builtin_scores(derived.probabilities))[:k],
                                          confs_f[:k]):
                # the hash covers the probabilities in place of these confidences: they
                # must be what the rule derives from them
                raise ParameterError("derived must describe the first candidates of this pool: "
                                     "their confidences as the scoring rule derives them")
        return cls(names, class_t, _readonly(pred_codes), _readonly(confs_f),
                   _readonly(weights), _readonly(label_codes), rid, objective, shared, ex,
                   derived)


# ------------------------------------------------------------------ hashing
def pool_hash(pool: Pool) -> str:
    """SHA-256 hex digest of the label-free content of a pool (SPEC section 12).

    It covers the objective, the candidate names and their order, the class set, the
    row ids, the predictions and the confidences (or, for a ``prob_`` pool, the
    probabilities they were derived from), and not the labels: the digest taken
    before labelling still names the pool afterwards, which is how a store and an
    evidence record find their pool.

    Parameters
    ----------
    pool : Pool
        The pool to fingerprint.

    Returns
    -------
    str
        64 lowercase hex digits, `Pool.content_hash`.

    Examples
    --------
    >>> from certlib import Pool, pool_hash
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         names=["A", "B"])
    >>> labelled = pool.with_labels([1, 0, 0, 0])
    >>> len(pool_hash(pool)), pool_hash(pool) == pool_hash(labelled)
    (64, True)
    """
    return pool.content_hash


def _content_hash(pool: Pool, confs: NDArray[np.float64] | None = None) -> str:
    """SHA-256 hex digest of the label-free content of a pool (SPEC section 12).

    Covers the objective, candidate names (their order is the tie priority),
    the class set, the row ids, the prediction codes and the confidences --
    everything fixed before the first label is read.  Labels and the display
    columns in ``extra`` are not hashed, so the digest taken before labelling
    still identifies the pool afterwards.

    Format 2, for a pool whose first candidates are derived from probabilities
    (`DerivedFrom`): the probabilities as read and the rule's name are hashed in
    place of the derived confidences, so the identity of the pool never rests on
    floats computed on this machine.  Every other pool keeps format 1.  ``confs``
    (format 1 only) replaces the pool's confidences: `_legacy_hashes`.
    """
    h = hashlib.sha256()

    def part(tag: str, payload: bytes) -> None:
        # length-prefixed parts: no two different pools give the same byte stream
        h.update(tag.encode() + len(payload).to_bytes(8, "little") + payload)

    derived = pool.derived if confs is None else None
    meta: dict[str, object] = {
        "format": "certlib-pool-hash-1" if derived is None else "certlib-pool-hash-2",
        "objective": pool.objective,
        "names": list(pool.names),
        "classes": list(pool.classes),
        "K": pool.K,
        "n": pool.n,
    }
    if derived is not None:
        meta["derived"] = {"rule": derived.rule, "columns": list(derived.columns),
                           "candidates": list(derived.candidates)}
    part("meta", json.dumps(meta, sort_keys=True, default=str).encode())
    part("row_ids", json.dumps(list(pool.row_ids), default=str).encode())
    part("preds", np.ascontiguousarray(pool.preds, dtype="<i8").tobytes())
    if derived is None:
        part("confs", np.ascontiguousarray(pool.confs if confs is None else confs,
                                           dtype="<f8").tobytes())
    else:
        part("probabilities",
             np.ascontiguousarray(derived.probabilities, dtype="<f8").tobytes())
        part("confs", np.ascontiguousarray(pool.confs[len(derived.candidates):],
                                           dtype="<f8").tobytes())
    return h.hexdigest()


def _legacy_hashes(pool: Pool) -> tuple[str, ...]:
    """The format-1 hashes of a ``prob_`` pool as builds before format 2 computed them:
    over scores derived with numpy's ``log`` (its SIMD code on this CPU) and with the C
    library's ``log`` (numpy's path on a CPU without AVX-512), distinct."""
    derived = pool.derived
    if derived is None:
        return ()
    from .derived_scores import legacy_scores

    out: list[str] = []
    for log in ("numpy", "libm"):
        confs = pool.confs.copy()
        confs[:len(derived.candidates)] = legacy_scores(derived.probabilities, log)
        digest = _content_hash(pool, confs)
        if digest not in out:
            out.append(digest)
    return tuple(out)
