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
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.bounds import deficits, thresholds
from ..errors import LabelError, ParameterError
from ..core.pair_terms import initial_lower, target_terms
from ..core.pool import UNREAD, Pool

__all__ = ["MAX_BRUTE_ROWS", "Completion", "LPSolution", "PairStep", "PairTrace",
           "completions", "covering_problem", "exact_lp", "figure1_pool", "figure2_pool",
           "figure3_checks",
           "figure3_pool", "minimum_certificates", "pair_trace", "pool_from_weights",
           "reading_order", "slice_region", "tie_zero_moment", "worst_case_pool"]

MAX_BRUTE_ROWS = 16


# --------------------------------------------------------------------------- pools
def pool_from_weights(preds, weights, labels=None, names=None) -> Pool:
    """A binary pool from rank weights without ties (larger weight = accepted earlier):
    the weight itself serves as the confidence, so `Pool` recomputes the same weights.
    Row ids are 1..n, as the paper numbers rows."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or any(len(set(r.tolist())) != w.shape[1] for r in w):
        raise ParameterError("weights must be K rows of distinct numbers (no confidence ties)")
    n = w.shape[1]
    return Pool.from_arrays(preds, w, labels=labels, names=names, classes=[0, 1],
                            row_ids=list(range(1, n + 1)))


def figure1_pool(labels=(None, None)) -> Pool:
    """Paper Figure 1: two rows, A and B both predict 0; A accepts row 1 first, B row 2
    first; ties favour A (listed first).  ``labels``: None for an unread row."""
    return Pool.from_arrays([[0, 0], [0, 0]], [[2, 1], [1, 2]], labels=list(labels),
                            names=["A", "B"], classes=[0, 1], row_ids=[1, 2])


def figure2_pool(labels=(1, 0, 0, 0)) -> Pool:
    """Paper Figure 2 (SPEC section 9): confidence orders 1,2,3,4 (A) and 2,1,4,3 (B),
    predictions A = (0,0,1,0), B = (0,0,0,1), y = (1,0,0,0), ties favour A."""
    return Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            labels=list(labels), names=["A", "B"], classes=[0, 1],
                            row_ids=[1, 2, 3, 4])


# found by scripts/search_figure3.py (its only solution); inputs only
FIGURE3_WEIGHTS = ((1, 7, 3, 5), (3, 5, 7, 1), (7, 5, 3, 1))
FIGURE3_PREDS = ((1, 0, 1, 0), (0, 1, 1, 1), (0, 1, 0, 0))
FIGURE3_LABELS = (1, 0, 0, 1)


def figure3_pool(labels=FIGURE3_LABELS) -> Pool:
    """A pool consistent with every number of paper Figure 3 (see `figure3_checks`):
    three candidates A, B, C whose weights permute (7, 5, 3, 1), y = (1, 0, 0, 1)."""
    return pool_from_weights(FIGURE3_PREDS, FIGURE3_WEIGHTS, list(labels),
                             names=("A", "B", "C"))


def worst_case_pool(n: int, labels=None) -> Pool:
    """Paper section 4.2, "A worst-case rank example": both predict 0, A ranks rows
    2..n, 1, B ranks 1..n, ties favour A; default y = 0, where C(0) = n - 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ParameterError(f"n must be an integer >= 2; got {n!r}")
    n = int(n)
    conf_a = np.empty(n)
    conf_a[list(range(1, n)) + [0]] = np.arange(n, 0, -1)
    conf_b = np.arange(n, 0, -1).astype(float)
    labels = [0] * n if labels is None else list(labels)
    return Pool.from_arrays(np.zeros((2, n), dtype=int), [conf_a, conf_b], labels=labels,
                            names=["A", "B"], classes=[0, 1], row_ids=list(range(1, n + 1)))


def reading_order(pool, policy: str = "static-range") -> tuple:
    """Row positions in the order a policy with a fixed order reads them (the paper's
    static range order: decreasing s_i, ties by row index)."""
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
    label: object
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
    order: tuple  # row positions read, in order
    steps: tuple  # PairStep for t = 0..len(order)

    @property
    def intervals(self) -> tuple:
        return tuple((s.lower, s.upper) for s in self.steps)

    @property
    def certified_at(self) -> int | None:
        """Labels read when the stopping test first certifies a candidate."""
        return next((s.t for s in self.steps if s.selected is not None), None)


def _check_order(pool, order) -> tuple:
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


def pair_trace(pool, order=None, j: int = 0, k: int = 1) -> PairTrace:
    """[L_jk, H_jk] of r_j - r_k after each label of ``order`` (row positions; default
    the static range order), with the stopping test's verdict over all candidates."""
    from ..labelling.session import Session

    order = reading_order(pool) if order is None else _check_order(pool, order)
    if not (0 <= j < pool.K and 0 <= k < pool.K and j != k):
        raise ParameterError(f"j and k must be two different candidate indices in "
                             f"0..{pool.K - 1}; got {j}, {k}")
    binary = pool.is_binary and not pool.shared_prediction
    s = Session.start(pool, "static-range")
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


def tie_zero_moment(path_lower, stop) -> int | None:
    """First label count at which a winner's lower bound (min over rivals, shared rule)
    reaches 0 without the winner being certified: the tie rule alone holds it back
    (a rival listed earlier would win a tie).  None when that never happens."""
    lower = np.asarray(path_lower)
    end = lower.size if stop is None else int(stop)
    hits = np.flatnonzero(lower[:end] >= 0)
    return int(hits[0]) if hits.size else None


# ---------------------------------------------------------------- covering problem
def covering_problem(pool, target: int | None = None):
    """(gains G, deficits D, target k) of the certificate IP (paper eq. (7)-(8)): G is
    (K, n) with row k zero, D the deficits of every rival against k (0 at k)."""
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels == UNREAD)[0])
        raise LabelError(f"the covering problem needs every label; row {pool.row_ids[i]!r} "
                         f"(position {i}) has none")
    k = pool.winner() if target is None else int(target)
    if not 0 <= k < pool.K:
        raise ParameterError(f"target must be a candidate index in 0..{pool.K - 1}; "
                             f"got {target!r}")
    th = thresholds(pool.K, pool.scale, "shared", 0)
    lower, G = target_terms(pool, k, np.arange(pool.n), pool.labels)
    D = deficits(th.need[:, k], initial_lower(pool, "shared")[:, k])
    return G.astype(np.int64), np.asarray(D, dtype=np.int64), k


@dataclass(frozen=True)
class LPSolution:
    """The exact optimum of the certificate LP relaxation: its value and every optimal
    vertex (tuples of Fractions, one per row position)."""

    value: Fraction
    vertices: tuple

    @property
    def x(self) -> tuple:
        """The first optimal vertex (lexicographically smallest)."""
        return self.vertices[0]


def _solve(A, b):
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


def _check_small(pool):
    if pool.n > MAX_BRUTE_ROWS:
        raise ParameterError(f"this brute-force computation is for pools of at most "
                             f"{MAX_BRUTE_ROWS} rows; got n = {pool.n}")


def _certifiable_problem(pool, target):
    """`covering_problem`, for a target that reading every row certifies (the full-pool
    winner): any other target makes the LP and the IP infeasible."""
    G, D, k = covering_problem(pool, target)
    if (G.sum(axis=1) < D).any():
        raise ParameterError(f"target {pool.names[k]!r} cannot be certified even with every "
                             f"label (the full-pool winner is {pool.names[pool.winner()]!r})")
    return G, D, k


def exact_lp(pool, target: int | None = None) -> LPSolution:
    """min sum x subject to G x >= D, 0 <= x <= 1, solved exactly by enumerating the
    vertices (at most K - 1 fractional coordinates, each fixed by a tight constraint)."""
    _check_small(pool)
    G, D, k = _certifiable_problem(pool, target)
    rows = [j for j in range(pool.K) if j != k and D[j] > 0]
    n = pool.n
    best, verts = None, set()
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
                        if sol is None or any(not 0 <= v <= 1 for v in sol):
                            continue
                        for i, v in zip(free, sol):
                            x[i] = v
                    if any(sum(int(G[j, i]) * x[i] for i in range(n)) < int(D[j])
                           for j in rows):
                        continue
                    val = sum(x)
                    if best is None or val < best:
                        best, verts = val, {tuple(x)}
                    elif val == best:
                        verts.add(tuple(x))
    return LPSolution(best, tuple(sorted(verts)))


def minimum_certificates(pool, target: int | None = None) -> tuple:
    """Every minimum certificate (sets of row positions, as sorted tuples), by brute force."""
    _check_small(pool)
    G, D, _ = _certifiable_problem(pool, target)
    for size in range(pool.n + 1):
        found = tuple(c for c in itertools.combinations(range(pool.n), size)
                      if (G[:, list(c)].sum(axis=1) >= D).all())
        if found:
            return found
    raise AssertionError("reading every row always certifies the full-pool winner")


def slice_region(pool, free=(0, 1), target: int | None = None) -> dict:
    """The LP's feasible region in the slice where only rows ``free`` (two positions)
    may be read (the other x_i = 0): the polygon's vertices (Fractions, in order) and,
    per rival with a deficit, the constraint G_j0 x_0 + G_j1 x_1 >= D_j."""
    G, D, k = covering_problem(pool, target)
    a, b = (int(i) for i in free)
    poly = [(Fraction(0), Fraction(0)), (Fraction(1), Fraction(0)), (Fraction(1), Fraction(1)),
            (Fraction(0), Fraction(1))]
    cons = {}
    for j in range(pool.K):
        if j == k or D[j] <= 0:
            continue
        g0, g1, d = int(G[j, a]), int(G[j, b]), int(D[j])
        cons[pool.names[j]] = (g0, g1, d)
        out = []
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

    labels: tuple
    risks: tuple
    augrc: tuple  # Fractions
    winner: str
    errors: tuple


def completions(pool) -> tuple:
    """Every completion of the pool's unread labels (all 2^u of them for binary pools)."""
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
def figure3_checks(pool) -> dict:
    """Each number of paper Figure 3 and its text, checked on ``pool``: name -> bool."""
    from ..certificates.certificate import certify
    from ..labelling.replay import replay

    out = {}
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
    rep = replay(pool, "static-range")
    out["static range stops after three labels"] = (rep.labels_read == 3 and rep.certified
                                                     and rep.selected == "A")
    return out
