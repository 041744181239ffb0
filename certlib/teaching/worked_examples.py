"""The paper's small worked examples, computed by the library (paper 000 sections 3-4).

Figures 1, 2 and 3 of paper 000 and the worst-case rank example of section 4.2 are
tiny pools: this module builds them (inputs only: predictions, confidence orders,
labels) and computes everything the figures print with the library's own code
(`Session` for the stopping test, `prelabel_bound`, `certify`), plus what a four-row
example can afford and a large pool cannot:

* `pair_trace`: the interval [L_jk, H_jk] of one pair after each label along any
  reading order, with each row's coefficient b_i and gain g_i (Figure 2's table);
* `exact_lp`: the covering LP of Theorem 2 solved exactly, in Fractions, by
  enumerating the vertices of the box cut by the covering constraints (every optimal
  vertex is returned, so "the LP solution is (3/8, 1, 0, 0)" is a checkable claim);
* `minimum_certificates`: every minimum certificate by brute force, so "row 4 was
  never needed" is a statement about all of them, not one witness;
* `completions`: every completion of the unread labels with both candidates' exact
  AUGRC and the winner (Figure 1);
* `slice_region`: the LP's feasible region in a two-variable slice (Figure 3, right).

The Figure 3 pool is not printed in the paper; `scripts/search_figure3.py` enumerated
every four-row, three-candidate pool with weights permuting (7, 5, 3, 1) and y =
(1, 0, 0, 1) and kept those matching every number of the caption and text
(`figure3_checks`): exactly one does, and `figure3_pool` is it.  Brute force is exponential:
the functions that enumerate refuse pools beyond ``MAX_BRUTE_ROWS`` rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.bounds import deficits, thresholds
from ..errors import LabelError, ParameterError
from ..core.pair_terms import initial_lower, target_terms
from ..core.pool import UNREAD, Pool

__all__ = ["MAX_BRUTE_ROWS", "Completion", "LPSolution", "PairStep", "PairTrace",
           "completions", "covering_problem", "exact_lp", "figure1_pool", "figure2_pool",
           "figure3_checks",
           "figure3_pool", "minimum_certificates", "pair_trace", "pool_from_weights",
           "reading_order", "slice_region", "tie_zero_moment", "worst_case_pool"]

MAX_BRUTE_ROWS: int = 16

# a label: a class value, or None for an unread row
Label = int | str | None
Vertex = tuple[Fraction, ...]


# --------------------------------------------------------------------------- pools
def _labels(labels: Sequence[Label] | None) -> ArrayLike | None:
    """A label list for `Pool.from_arrays`, whose ``ArrayLike`` annotation has no None
    although a None in a list is how an unread row is given."""
    return None if labels is None else cast(ArrayLike, list(labels))


def pool_from_weights(preds: ArrayLike, weights: ArrayLike, *,
                      labels: Sequence[Label] | None = None,
                      names: Sequence[str] | None = None) -> Pool:
    """A binary pool from rank weights without ties (larger weight = accepted earlier).

    The weight itself serves as the confidence, so `Pool` recomputes the same weights.
    Row ids are 1..n, as the paper numbers rows.

    Parameters
    ----------
    preds : array_like of int, shape (K, n)
        Predictions in {0, 1}.
    weights : array_like, shape (K, n)
        Each candidate's rank weights, distinct within a row.
    labels : sequence, optional
        Labels in {0, 1}, None for an unread row (default: none read).
    names : sequence of str, optional
        Candidate names.

    Returns
    -------
    Pool
        The binary pool.

    Raises
    ------
    ParameterError
        When ``weights`` is not K rows of distinct numbers.

    Examples
    --------
    >>> pool = pool_from_weights([[0, 1], [1, 0]], [[2, 1], [1, 2]], labels=[0, None])
    >>> pool.row_ids, pool.n_labelled
    ((1, 2), 1)
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or any(len(set(r.tolist())) != w.shape[1] for r in w):
        raise ParameterError("weights must be K rows of distinct numbers (no confidence ties)")
    n = w.shape[1]
    return Pool.from_arrays(preds, w, labels=_labels(labels), names=names, classes=[0, 1],
                            row_ids=list(range(1, n + 1)))


def figure1_pool(labels: Sequence[Label] = (None, None)) -> Pool:
    """Paper 000 Figure 1: two rows, A and B both predict 0; A accepts row 1 first, B row 2
    first; ties favour A (listed first).

    Parameters
    ----------
    labels : sequence of two labels, default (None, None)
        Labels in {0, 1}, None for an unread row.

    Returns
    -------
    Pool
        The two-row pool.
    """
    return Pool.from_arrays([[0, 0], [0, 0]], [[2, 1], [1, 2]], labels=_labels(labels),
                            names=["A", "B"], classes=[0, 1], row_ids=[1, 2])


def figure2_pool(labels: Sequence[Label] = (1, 0, 0, 0)) -> Pool:
    """Paper 000 Figure 2 (SPEC section 9): confidence orders 1,2,3,4 (A) and 2,1,4,3 (B),
    predictions A = (0,0,1,0), B = (0,0,0,1), y = (1,0,0,0), ties favour A.

    Parameters
    ----------
    labels : sequence of four labels, default (1, 0, 0, 0)
        Labels in {0, 1}, None for an unread row.

    Returns
    -------
    Pool
        The four-row pool.
    """
    return Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            labels=_labels(labels), names=["A", "B"], classes=[0, 1],
                            row_ids=[1, 2, 3, 4])


# found by scripts/search_figure3.py (its only solution); inputs only
FIGURE3_WEIGHTS: tuple[tuple[int, ...], ...] = ((1, 7, 3, 5), (3, 5, 7, 1), (7, 5, 3, 1))
FIGURE3_PREDS: tuple[tuple[int, ...], ...] = ((1, 0, 1, 0), (0, 1, 1, 1), (0, 1, 0, 0))
FIGURE3_LABELS: tuple[int, ...] = (1, 0, 0, 1)


def figure3_pool(labels: Sequence[Label] = FIGURE3_LABELS) -> Pool:
    """A pool consistent with every number of paper 000 Figure 3 (see `figure3_checks`):
    three candidates A, B, C whose weights permute (7, 5, 3, 1), y = (1, 0, 0, 1).

    Parameters
    ----------
    labels : sequence of four labels, default FIGURE3_LABELS
        Labels in {0, 1}, None for an unread row.

    Returns
    -------
    Pool
        The four-row, three-candidate pool.
    """
    return pool_from_weights(FIGURE3_PREDS, FIGURE3_WEIGHTS, labels=list(labels),
                             names=("A", "B", "C"))


def worst_case_pool(n: int, labels: Sequence[Label] | None = None) -> Pool:
    """Paper 000 section 4.2, "A worst-case rank example": both predict 0, A ranks rows
    2..n, 1, B ranks 1..n, ties favour A; default y = 0, where C(0) = n - 1.

    Parameters
    ----------
    n : int
        Rows, >= 2.
    labels : sequence of n labels, optional
        Labels in {0, 1}, None for an unread row (default: every label 0).

    Returns
    -------
    Pool
        The n-row pool.

    Raises
    ------
    ParameterError
        When ``n`` is not an integer >= 2.

    Examples
    --------
    >>> from certlib import certify
    >>> certify(worst_case_pool(6)).lower
    5
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ParameterError(f"n must be an integer >= 2; got {n!r}")
    n = int(n)  # an int or a numpy integer, checked above
    conf_a = np.empty(n)
    conf_a[list(range(1, n)) + [0]] = np.arange(n, 0, -1)
    conf_b = np.arange(n, 0, -1).astype(float)
    labels = [0] * n if labels is None else list(labels)
    return Pool.from_arrays(np.zeros((2, n), dtype=int), [conf_a, conf_b],
                            labels=_labels(labels),
                            names=["A", "B"], classes=[0, 1], row_ids=list(range(1, n + 1)))


def reading_order(pool: Pool, policy: str = "static-range") -> tuple[int, ...]:
    """Row positions in the order a policy with a fixed order reads them.

    Parameters
    ----------
    pool : Pool
        The pool.
    policy : str, default "static-range"
        A policy with a fixed order (the paper's static range order: decreasing s_i,
        ties by row index).

    Returns
    -------
    tuple of int
        Every row position, in reading order.

    Raises
    ------
    ParameterError
        When the policy's order depends on the labels.

    Examples
    --------
    >>> reading_order(figure2_pool())
    (2, 3, 0, 1)
    """
    from ..policies import PolicyContext, get_policy

    order = get_policy(policy).static_order(PolicyContext(pool, "shared", 0))
    if order is None:
        raise ParameterError(f"policy {policy!r} has no fixed reading order")
    return tuple(int(i) for i in order)


# -------------------------------------------------------------------- pair intervals
@dataclass(frozen=True)
class PairStep:
    """The state after ``t`` labels: the row just read (position; None at t = 0), its
    label, its coefficient ``b`` in r_j - r_k (binary pools; None otherwise), its gain
    (what L_jk rose by), the exact interval [lower, upper] of r_j - r_k, and the
    stopping test's verdict (`Session.status` / `Session.selected`)."""

    t: int
    row: int | None
    label: Label
    b: int | None
    gain: int | None
    lower: int
    upper: int
    status: str
    selected: str | None

    @property
    def tie_zero(self) -> bool:
        """The interval touches 0 from one side: every completion gives one candidate a
        risk no larger than the other's, and only the tie rule decides whether that
        certifies it (L = 0 does not certify the later candidate; H = 0 does certify
        the earlier one)."""
        return self.lower == 0 or self.upper == 0


@dataclass(frozen=True)
class PairTrace:
    """[L_jk, H_jk] along a reading order (paper Figure 2), in scaled integer risks."""

    j: str
    k: str
    order: tuple[int, ...]  # row positions read, in order
    steps: tuple[PairStep, ...]  # PairStep for t = 0..len(order)

    @property
    def intervals(self) -> tuple[tuple[int, int], ...]:
        """[lower, upper] of r_j - r_k after each label, t = 0..len(order)."""
        return tuple((s.lower, s.upper) for s in self.steps)

    @property
    def certified_at(self) -> int | None:
        """Labels read when the stopping test first certifies a candidate."""
        return next((s.t for s in self.steps if s.selected is not None), None)


def _check_order(pool: Pool, order: Iterable[Any]) -> tuple[int, ...]:
    try:
        rows = tuple(int(r) for r in order)
    except (TypeError, ValueError):
        raise ParameterError("order must be row positions") from None
    if len(set(rows)) != len(rows) or any(not 0 <= r < pool.n for r in rows):
        raise ParameterError(f"order must list distinct row positions in 0..{pool.n - 1}; "
                             f"got {list(rows)}")
    missing = [r for r in rows if pool.labels[r] == UNREAD]
    if missing:
        raise ParameterError(f"order reads row {pool.row_ids[missing[0]]!r}, which has no label")
    return rows


def pair_trace(pool: Pool, order: Iterable[int] | None = None, *, j: int = 0,
               k: int = 1) -> PairTrace:
    """[L_jk, H_jk] of r_j - r_k after each label of a reading order (paper 000 Figure 2).

    With each row's coefficient b_i and gain, and the stopping test's verdict over all
    candidates after each label.

    Parameters
    ----------
    pool : Pool
        A pool whose rows in ``order`` hold labels.
    order : iterable of int, optional
        Distinct row positions (default: the static range order).
    j, k : int, default 0, 1
        Two different candidate indices.

    Returns
    -------
    PairTrace
        One `PairStep` per label count t = 0..len(order).

    Raises
    ------
    ParameterError
        On a bad order (repeated or out-of-range rows, or a row with no label) or bad
        candidate indices.

    Examples
    --------
    >>> tr = pair_trace(figure2_pool())
    >>> tr.order, tr.intervals[0], tr.certified_at
    ((2, 3, 0, 1), (-6, 6), 4)
    """
    from ..labelling.session import Session

    order = reading_order(pool) if order is None else _check_order(pool, order)
    if not (0 <= j < pool.K and 0 <= k < pool.K and j != k):
        raise ParameterError(f"j and k must be two different candidate indices in "
                             f"0..{pool.K - 1}; got {j}, {k}")
    binary = pool.is_binary and not pool.shared_prediction
    s = Session.start(pool, policy="static-range")
    steps = [PairStep(0, None, None, None, None, int(s.lower()[j, k]), int(s.upper()[j, k]),
                      s.status, s.selected)]
    for t, row in enumerate(order, 1):
        before = int(s.lower()[j, k])
        label = pool.classes[pool.labels[row]]
        s = s.observe(row, label)
        b = None
        if binary:  # a_ji = w_ji (1 - 2 pred_ji), paper eq. (3), on class codes 0 / 1
            w, p = pool.weights[:, row], pool.preds[:, row]
            b = int(w[j]) * (1 - 2 * int(p[j])) - int(w[k]) * (1 - 2 * int(p[k]))
        steps.append(PairStep(t, row, label, b, int(s.lower()[j, k]) - before,
                              int(s.lower()[j, k]), int(s.upper()[j, k]), s.status,
                              s.selected))
    return PairTrace(pool.names[j], pool.names[k], order, tuple(steps))


def tie_zero_moment(path_lower: ArrayLike, stop: int | None) -> int | None:
    """First label count at which a winner's lower bound reaches 0 uncertified.

    At that moment the tie rule alone holds the winner back (a rival listed earlier
    would win a tie).

    Parameters
    ----------
    path_lower : array_like of int
        The winner's lower bound (min over rivals, shared rule) after each label
        (`BoundPath.lower`).
    stop : int or None
        Labels read when the winner is certified (`BoundPath.stop`).

    Returns
    -------
    int or None
        The label count; None when that never happens before ``stop``.

    Examples
    --------
    >>> tie_zero_moment([-3, -1, 0, 2], 3), tie_zero_moment([-3, 1], 1)
    (2, None)
    """
    lower = np.asarray(path_lower)
    end = lower.size if stop is None else int(stop)
    hits = np.flatnonzero(lower[:end] >= 0)
    return int(hits[0]) if hits.size else None


# ---------------------------------------------------------------- covering problem
def covering_problem(pool: Pool, target: int | None = None
                     ) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """The certificate's covering problem of a fully labelled pool (paper 000 eq. (7)-(8)).

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    target : int, optional
        The candidate index k to certify (default: the full-pool winner).

    Returns
    -------
    G : ndarray of int64, shape (K, n)
        The gains of each row against each rival, row k zero.
    D : ndarray of int64, shape (K,)
        The deficit of every rival against k (0 at k).
    k : int
        The target.

    Raises
    ------
    LabelError
        When a row has no label.
    ParameterError
        When ``target`` is out of range.

    Examples
    --------
    >>> G, D, k = covering_problem(figure2_pool())
    >>> G.tolist(), D.tolist(), k
    ([[2, 2, 4, 0], [0, 0, 0, 0]], [7, 0], 1)
    """
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels == UNREAD)[0])
        raise LabelError(f"the covering problem needs every label; row {pool.row_ids[i]!r} "
                         f"(position {i}) has none")
    k = pool.winner() if target is None else int(target)
    if not 0 <= k < pool.K:
        raise ParameterError(f"target must be a candidate index in 0..{pool.K - 1}; "
                             f"got {target!r}")
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=0)
    lower, G = target_terms(pool, k, np.arange(pool.n), pool.labels)
    D = deficits(th.need[:, k], initial_lower(pool, "shared")[:, k])
    return G.astype(np.int64), np.asarray(D, dtype=np.int64), k


@dataclass(frozen=True)
class LPSolution:
    """The exact optimum of the certificate LP relaxation: its value and every optimal
    vertex (tuples of Fractions, one per row position)."""

    value: Fraction
    vertices: tuple[Vertex, ...]

    @property
    def x(self) -> Vertex:
        """The first optimal vertex (lexicographically smallest)."""
        return self.vertices[0]


def _solve(A: Sequence[Sequence[int]], b: Sequence[Fraction | int]) -> list[Fraction] | None:
    """Solve the square system A x = b in Fractions; None when singular."""
    m = len(A)
    M = [list(map(Fraction, row)) + [Fraction(v)] for row, v in zip(A, b)]
    for c in range(m):
        piv = next((r for r in range(c, m) if M[r][c] != 0), None)
        if piv is None:
            return None
        M[c], M[piv] = M[piv], M[c]
        for r in range(m):
            if r != c and M[r][c] != 0:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [M[r][m] / M[r][r] for r in range(m)]


def _check_small(pool: Pool) -> None:
    if pool.n > MAX_BRUTE_ROWS:
        raise ParameterError(f"this brute-force computation is for pools of at most "
                             f"{MAX_BRUTE_ROWS} rows; got n = {pool.n}")


def _certifiable_problem(pool: Pool, target: int | None
                         ) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """`covering_problem`, for a target that reading every row certifies (the full-pool
    winner): any other target makes the LP and the IP infeasible."""
    G, D, k = covering_problem(pool, target)
    if (G.sum(axis=1) < D).any():
        raise ParameterError(f"target {pool.names[k]!r} cannot be certified even with every "
                             f"label (the full-pool winner is {pool.names[pool.winner()]!r})")
    return G, D, k


def exact_lp(pool: Pool, target: int | None = None) -> LPSolution:
    """The certificate's LP relaxation (paper 000 Theorem 2), solved exactly in Fractions.

    min sum x subject to G x >= D, 0 <= x <= 1 (`covering_problem`), by enumerating the
    vertices: at most K - 1 fractional coordinates, each fixed by a tight constraint.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool of at most `MAX_BRUTE_ROWS` rows.
    target : int, optional
        The candidate index to certify (default: the full-pool winner).

    Returns
    -------
    LPSolution
        The optimum and every optimal vertex.

    Raises
    ------
    ParameterError
        When the pool is too large or the target cannot be certified.
    LabelError
        When a row has no label.

    Examples
    --------
    >>> lp = exact_lp(figure3_pool())
    >>> str(lp.value), [str(v) for v in lp.x]
    ('11/8', ['3/8', '1', '0', '0'])
    """
    _check_small(pool)
    G, D, k = _certifiable_problem(pool, target)
    rows = [j for j in range(pool.K) if j != k and D[j] > 0]
    n = pool.n
    best: Fraction | None = None
    verts: set[Vertex] = set()
    for size in range(len(rows) + 1):
        for tight in itertools.combinations(rows, size):
            for free in itertools.combinations(range(n), size):
                others = [i for i in range(n) if i not in free]
                for fixed in itertools.product((0, 1), repeat=len(others)):
                    x = [Fraction(0)] * n
                    for i, v in zip(others, fixed):
                        x[i] = Fraction(v)
                    if size:
                        A = [[int(G[j, i]) for i in free] for j in tight]
                        rhs = [int(D[j]) - sum(int(G[j, i]) * x[i] for i in others)
                               for j in tight]
                        sol = _solve(A, rhs)
                        if sol is None or any(not 0 <= xi <= 1 for xi in sol):
                            continue
                        for i, xi in zip(free, sol):
                            x[i] = xi
                    if any(sum(int(G[j, i]) * x[i] for i in range(n)) < int(D[j])
                           for j in rows):
                        continue
                    val = sum(x, Fraction(0))
                    if best is None or val < best:
                        best, verts = val, {tuple(x)}
                    elif val == best:
                        verts.add(tuple(x))
    assert best is not None  # x = 1 everywhere is feasible: the full pool certifies
    return LPSolution(best, tuple(sorted(verts)))


def minimum_certificates(pool: Pool, target: int | None = None) -> tuple[tuple[int, ...], ...]:
    """Every minimum certificate, by brute force over the subsets of rows.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool of at most `MAX_BRUTE_ROWS` rows.
    target : int, optional
        The candidate index to certify (default: the full-pool winner).

    Returns
    -------
    tuple of tuple of int
        Each minimum certificate as sorted row positions.

    Raises
    ------
    ParameterError
        When the pool is too large or the target cannot be certified.
    LabelError
        When a row has no label.

    Examples
    --------
    >>> minimum_certificates(figure3_pool())
    ((0, 1),)
    """
    _check_small(pool)
    G, D, _ = _certifiable_problem(pool, target)
    for size in range(pool.n + 1):
        found = tuple(c for c in itertools.combinations(range(pool.n), size)
                      if (G[:, list(c)].sum(axis=1) >= D).all())
        if found:
            return found
    raise AssertionError("reading every row always certifies the full-pool winner")


def slice_region(pool: Pool, *, free: Sequence[int] = (0, 1),
                 target: int | None = None) -> dict[str, Any]:
    """The LP's feasible region in a two-row slice (paper 000 Figure 3, right).

    Only rows ``free`` may be read (every other x_i = 0).

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    free : sequence of two int, default (0, 1)
        The two row positions of the slice.
    target : int, optional
        The candidate index to certify (default: the full-pool winner).

    Returns
    -------
    dict
        ``"vertices"``: the polygon's vertices (pairs of Fractions, in order);
        ``"constraints"``: per rival name with a deficit, (G_j0, G_j1, D_j) of the
        constraint G_j0 x_0 + G_j1 x_1 >= D_j.

    Raises
    ------
    LabelError
        When a row has no label.

    Examples
    --------
    >>> region = slice_region(figure3_pool())
    >>> region["constraints"]
    {'B': (4, 12, 13), 'C': (8, 12, 15)}
    """
    G, D, k = covering_problem(pool, target)
    a, b = (int(i) for i in free)
    poly = [(Fraction(0), Fraction(0)), (Fraction(1), Fraction(0)), (Fraction(1), Fraction(1)),
            (Fraction(0), Fraction(1))]
    cons: dict[str, tuple[int, int, int]] = {}
    for j in range(pool.K):
        if j == k or D[j] <= 0:
            continue
        g0, g1, d = int(G[j, a]), int(G[j, b]), int(D[j])
        cons[pool.names[j]] = (g0, g1, d)
        out: list[tuple[Fraction, Fraction]] = []
        for p, q in zip(poly, poly[1:] + poly[:1]):  # Sutherland-Hodgman, one half-plane
            fp, fq = g0 * p[0] + g1 * p[1] - d, g0 * q[0] + g1 * q[1] - d
            if fp >= 0:
                out.append(p)
            if (fp >= 0) != (fq >= 0):
                s = fp / (fp - fq)
                out.append((p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1])))
        poly = out
    return {"vertices": tuple(poly), "constraints": cons}


# ------------------------------------------------------------------- completions
@dataclass(frozen=True)
class Completion:
    """One completion of the unread labels: the labels, each candidate's scaled risk and
    exact AUGRC, the AUGRC winner (tie rule) and the number of errors per candidate."""

    labels: tuple[Label, ...]
    risks: tuple[int, ...]
    augrc: tuple[Fraction, ...]
    winner: str
    errors: tuple[int, ...]


def completions(pool: Pool) -> tuple[Completion, ...]:
    """Every completion of the pool's unread labels (paper 000 Figure 1).

    Parameters
    ----------
    pool : Pool
        A pool with at most `MAX_BRUTE_ROWS` unread rows.

    Returns
    -------
    tuple of Completion
        All C^u of them (2^u for binary pools), in lexicographic order of the codes.

    Raises
    ------
    ParameterError
        When too many rows are unread.

    Examples
    --------
    >>> [(c.labels, c.winner) for c in completions(figure1_pool())]
    [((0, 0), 'A'), ((0, 1), 'A'), ((1, 0), 'B'), ((1, 1), 'A')]
    """
    unread = [i for i in range(pool.n) if pool.labels[i] == UNREAD]
    if len(unread) > MAX_BRUTE_ROWS:
        raise ParameterError(f"at most {MAX_BRUTE_ROWS} unread rows can be enumerated; "
                             f"got {len(unread)}")
    out = []
    for fill in itertools.product(range(pool.n_classes), repeat=len(unread)):
        codes = pool.labels.copy()
        codes[unread] = fill
        full = pool.with_labels(codes)
        r = full.risks()
        errs = (full.preds != codes[None, :]).sum(axis=1)
        out.append(Completion(tuple(pool.classes[c] for c in codes.tolist()),
                              tuple(int(v) for v in r),
                              tuple(Fraction(int(v), pool.scale) for v in r),
                              pool.names[full.winner()], tuple(int(e) for e in errs)))
    return tuple(out)


# ------------------------------------------------------------------------ Figure 3
def figure3_checks(pool: Pool) -> dict[str, bool]:
    """Each number of paper 000 Figure 3 and its text, checked on a pool.

    Parameters
    ----------
    pool : Pool
        A candidate for the figure's pool (four rows, three candidates, labelled).

    Returns
    -------
    dict of str to bool
        Each claim (e.g. ``"LP value 11/8"``) and whether the pool meets it; the checks
        stop at the first group that fails.

    Examples
    --------
    >>> all(figure3_checks(figure3_pool()).values())
    True
    """
    from ..certificates.certificate import certify
    from ..labelling.replay import replay

    out: dict[str, bool] = {}
    r = pool.risks()
    out["risks (8, 15, 13)"] = tuple(int(v) for v in r) == (8, 15, 13)
    if not out["risks (8, 15, 13)"]:
        return out
    G, D, k = covering_problem(pool)
    L0 = initial_lower(pool, "shared")
    out["lower bounds against A (-13, -15)"] = (int(L0[1, 0]), int(L0[2, 0])) == (-13, -15)
    out["rows 2, 3 give (16, 12)"] = tuple(int(v) for v in G[1:, [1, 2]].sum(axis=1)) == (16, 12)
    out["rows 1, 2 give (16, 20)"] = tuple(int(v) for v in G[1:, [0, 1]].sum(axis=1)) == (16, 20)
    if not all(out.values()):
        return out
    lp = exact_lp(pool)
    out["LP value 11/8"] = lp.value == Fraction(11, 8)
    out["LP solution (3/8, 1, 0, 0), unique"] = lp.vertices == (
        (Fraction(3, 8), Fraction(1), Fraction(0), Fraction(0)),)
    mins = minimum_certificates(pool)
    c = certify(pool)
    out["C(y) = 2, {1, 2} a minimum certificate"] = (
        c.exact and c.lower == c.upper == 2 and (0, 1) in mins)
    out["static range reads 2, 3, 1, 4"] = reading_order(pool) == (1, 2, 0, 3)
    rep = replay(pool, policy="static-range")
    out["static range stops after three labels"] = (rep.labels_read == 3 and rep.certified
                                                     and rep.selected == "A")
    return out
