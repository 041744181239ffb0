"""Minimum certificates (SPEC section 7, paper 000 Theorem 2, section 4.1).

Three kinds of tests: the paper's numbers with their section cited, an
independent brute force over every subset of rows on small pools, and
properties (dual bound <= LP <= witness, rounding within K - 1, tolerance).
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certlib.core.bounds import batch_lower, certified_mask, decide, thresholds
from certlib.certificates.certificate import Certificate, certify, certify_partial
from certlib.core.pair_terms import initial_lower
from certlib.certificates.covering import cover_enclosure
from certlib.certificates.covering_exact import exact_dual, reduced_cost_fixing
from certlib.certificates.covering_lp import lp_direct, lp_relaxation
from certlib.certificates.covering_search import Budget, branch_and_bound
from certlib.errors import CertlibError, LabelError, ParameterError
from certlib.io import load_pool
from certlib.core.pool import Pool

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------- reference pools
def figure2_pool():
    """Paper 000 Figure 2 / SPEC 9: orders 1,2,3,4 (A) and 2,1,4,3 (B); ties favour A."""
    return Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            labels=[1, 0, 0, 0], names=["A", "B"])


# Paper 000 Figure 3 (section 4.1, "Covering two rivals with the same labels"):
# three candidates whose weights permute (7,5,3,1), y = (1,0,0,1), ties A, B, C.
# The text gives the risks (8,15,13), the initial bounds against A (-13,-15) and
# the gains of rows {2,3} (16,12) and {1,2} (16,20); `test_figure3_pool_is_inferred`
# re-runs the brute-force search that found these predictions and orders.
FIG3_PREDS = [[1, 0, 1, 0], [0, 1, 1, 1], [0, 1, 0, 0]]
FIG3_CONFS = [[1, 4, 2, 3], [2, 3, 4, 1], [4, 3, 2, 1]]  # weights (1,7,3,5), (3,5,7,1), (7,5,3,1)
FIG3_Y = [1, 0, 0, 1]


def figure3_pool():
    return Pool.from_arrays(FIG3_PREDS, FIG3_CONFS, labels=FIG3_Y, names=["A", "B", "C"])


def worst_case_pool(n):
    """SPEC 9: both predict 0, A ranks rows 2..n,1, B ranks 1..n, ties favour A, y = 0."""
    conf_a = np.r_[0, np.arange(n - 1, 0, -1)]
    conf_b = np.arange(n, 0, -1)
    return Pool.from_arrays(np.zeros(n, dtype=int), [conf_a, conf_b], labels=np.zeros(n, int),
                            names=["A", "B"], classes=[0, 1])


# ---------------------------------------------------------- independent brute force
def reference_terms(pool):
    """(K, K, n) realised and lower per-row terms of r_j - r_k, by enumerating the class set
    (independent of the closed forms in certlib.core.pair_terms)."""
    W, P, y = pool.weights, pool.preds, pool.labels
    C = pool.n_classes
    d = np.stack([(W * (P != c))[:, None, :] - (W * (P != c))[None, :, :] for c in range(C)])
    low = d.min(axis=0)
    real = np.take_along_axis(d, np.where(y < 0, 0, y)[None, None, None, :].repeat(
        pool.K, 1).repeat(pool.K, 2), axis=0)[0]
    return real, low


def brute_minimum(pool, tolerance=0.0, labels=None):
    """Smallest |S| such that, after reading S, some candidate passes the stopping test
    (SPEC 5) -- every one of the 2^n subsets is checked with exact integers."""
    if labels is not None:
        pool = pool.with_labels(labels)
    real, low = reference_terms(pool)
    n, K = pool.n, pool.K
    th = thresholds(K, pool.scale, rule="shared", tolerance=tolerance)
    masks = ((np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1).astype(np.int64)
    L = low.sum(axis=2)[None] + np.einsum("si,jki->sjk", masks, real - low)
    ok = (L >= th.need[None]).all(axis=1).any(axis=1)
    sizes = masks.sum(axis=1)
    return int(sizes[ok].min())


def random_pool(rng, mode, n=None, K=None):
    n = int(rng.integers(2, 11)) if n is None else n
    K = int(rng.integers(2, 5)) if K is None else K
    levels = int(rng.integers(2, n + 2))  # few levels -> confidence ties
    confs = rng.integers(0, levels, size=(K, n))
    if mode == "binary":
        preds = rng.integers(0, 2, size=(K, n))
        labels = rng.integers(0, 2, size=n)
        classes = [0, 1]
    elif mode == "shared":
        C = int(rng.integers(3, 5))
        preds = rng.integers(0, C, size=n)
        labels = np.where(rng.random(n) < 0.6, preds, rng.integers(0, C, size=n))
        classes = list(range(C))
    else:  # categorical, different predictions
        C = 3
        preds = rng.integers(0, C, size=(K, n))
        labels = rng.integers(0, C, size=n)
        classes = list(range(C))
    return Pool.from_arrays(preds, confs, labels=labels, classes=classes)


def check_against_brute(pool, tolerance=0.0, **kw):
    cert = certify(pool, tolerance=tolerance, **kw)
    best = brute_minimum(pool, tolerance)
    assert cert.lower <= best <= cert.upper
    assert len(cert.witness) == cert.upper
    assert cert.selected == pool.names[cert.selected_index]
    # the witness certifies its candidate (SPEC 5 test via certlib.core.bounds)
    pos = [pool.position(r) for r in cert.witness]
    L = batch_lower(pool, pos)
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=tolerance)
    assert certified_mask(L, th)[cert.selected_index]
    assert decide(L, th).certified
    if cert.exact:
        assert cert.lower == best == cert.upper
    if tolerance == 0:
        assert cert.selected_index == pool.winner()
    else:
        r = pool.risks()
        assert r[cert.selected_index] - r.min() <= th.tol_units
    return cert, best


# -------------------------------------------------------------- the paper's numbers
def test_figure2():
    """Paper 000 section 4.1 (Figure 2): winner B, LP z = 2.5, C(y) = 3."""
    pool = figure2_pool()
    assert pool.weights.tolist() == [[7, 5, 3, 1], [5, 7, 1, 3]]
    c = certify(pool)
    assert (c.selected, c.lower, c.upper, c.exact) == ("B", 3, 3, True)
    assert c.lp_value == pytest.approx(2.5) and c.dual_bound == Fraction(5, 2)
    assert c.deficits == (7, 0)  # D = 1 - L_AB = 1 - (-6)
    assert set(c.witness) == {0, 1, 2}  # rows 1, 2, 3 (one-based) contribute 8
    assert brute_minimum(pool) == 3


def test_figure3():
    """Paper 000 section 4.1 (Figure 3): risks (8,15,13), bounds against A (-13,-15),
    LP (3/8, 1, 0, 0) of value 11/8, certificate {1, 2}, C(y) = 2."""
    pool = figure3_pool()
    assert sorted(map(tuple, pool.weights.tolist())) == sorted(
        [(1, 7, 3, 5), (3, 5, 7, 1), (7, 5, 3, 1)])
    assert pool.risks().tolist() == [8, 15, 13]
    L0 = initial_lower(pool)
    assert (L0[1, 0], L0[2, 0]) == (-13, -15)
    real, low = reference_terms(pool)
    g = (real - low)[:, 0, :]
    assert (g[1, [1, 2]].sum(), g[2, [1, 2]].sum()) == (16, 12)
    assert (g[1, [0, 1]].sum(), g[2, [0, 1]].sum()) == (16, 20)
    c = certify(pool)
    assert (c.selected, c.lower, c.upper, c.exact) == ("A", 2, 2, True)
    assert c.lp_value == pytest.approx(11 / 8) and c.dual_bound == Fraction(11, 8)
    assert c.witness == (0, 1)
    assert brute_minimum(pool) == 2


def test_figure3_pool_is_inferred():
    """The search that reconstructs Figure 3 from the numbers in its text: every pool with
    weights permuting (7,5,3,1) and the stated risks, bounds and gains has our gains."""
    y = np.array(FIG3_Y)
    perms = [np.array(p) for p in itertools.permutations([7, 5, 3, 1])]
    preds = [np.array(p) for p in itertools.product([0, 1], repeat=4)]

    def with_risk(r):
        return [(w, p) for w in perms for p in preds if (w * (p != y)).sum() == r]

    def terms(j, k):
        (wj, pj), (wk, pk) = j, k
        d = np.stack([wj * (pj != c) - wk * (pk != c) for c in (0, 1)])
        return d.min(axis=0).sum(), d[y, np.arange(4)] - d.min(axis=0)

    found = set()
    for a in with_risk(8):
        for b in with_risk(15):
            lb, gb = terms(b, a)
            if lb != -13 or gb[[1, 2]].sum() != 16 or gb[[0, 1]].sum() != 16:
                continue
            for c in with_risk(13):
                lc, gc = terms(c, a)
                if lc == -15 and gc[[1, 2]].sum() == 12 and gc[[0, 1]].sum() == 20:
                    found.add((tuple(gb), tuple(gc)))
    real, low = reference_terms(figure3_pool())
    g = (real - low)[:, 0, :]
    assert found == {(tuple(g[1]), tuple(g[2]))}


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 40, 200])
def test_worst_case(n):
    """SPEC 9 / paper 000 section 4.2: C(0) = n - 1 while accuracy needs no label."""
    c = certify(worst_case_pool(n))
    assert (c.selected, c.lower, c.upper, c.exact) == ("A", n - 1, n - 1, True)
    if n <= 10:
        assert brute_minimum(worst_case_pool(n)) == n - 1


def test_no_deficit():
    pool = Pool.from_arrays([0, 1, 0], [[3, 2, 1], [3, 2, 1]], labels=[0, 0, 1])
    c = certify(pool)
    assert (c.lower, c.upper, c.exact, c.witness) == (0, 0, True, ())
    assert c.method == "none"


# ------------------------------------------------------------ brute force, random
@pytest.mark.parametrize("mode", ["binary", "shared", "categorical"])
def test_brute_force_seeded(mode):
    rng = np.random.default_rng({"binary": 1, "shared": 2, "categorical": 3}[mode])
    exact = 0
    for _ in range(70):
        pool = random_pool(rng, mode)
        c, _ = check_against_brute(pool)
        exact += c.exact
    # n <= 10: the exact branch-and-bound always finishes within the default time limit
    assert exact == 70


@pytest.mark.parametrize("tau", [0.005, 0.02, 0.1])
def test_brute_force_tolerance(tau):
    rng = np.random.default_rng(int(tau * 1000))
    for mode in ("binary", "shared", "categorical"):
        for _ in range(15):
            pool = random_pool(rng, mode)
            c_tau, best_tau = check_against_brute(pool, tau)
            c0 = certify(pool)
            assert best_tau <= brute_minimum(pool)  # tolerance certificate <= exact one
            assert c_tau.lower <= c0.upper
            if c_tau.exact and c0.exact:
                assert c_tau.upper <= c0.upper


@st.composite
def pools(draw):
    mode = draw(st.sampled_from(["binary", "shared", "categorical"]))
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 10))
    K = draw(st.integers(2, 4))
    return random_pool(np.random.default_rng(seed), mode, n=n, K=K)


@settings(derandomize=True, max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(pools(), st.sampled_from([0.0, 0.0, 0.01, 0.05]))
def test_brute_force_hypothesis(pool, tau):
    check_against_brute(pool, tau)


def test_target_terms_match_pair_terms():
    """The per-target specialisation used for speed equals certlib.core.pair_terms's
    K x K x n terms."""
    from certlib.core.pair_terms import lower_terms, potential_terms, realised_terms
    from certlib.core.pair_terms import target_terms as _target_terms

    rng = np.random.default_rng(3)
    for t in range(30):
        pool = random_pool(rng, ["binary", "shared", "categorical"][t % 3])
        rows = np.arange(pool.n)
        lo, real = lower_terms(pool, rows), realised_terms(pool, rows, pool.labels)
        pot = potential_terms(pool, rows)
        mask = rng.random(pool.n) < 0.4
        for k in range(pool.K):
            lower, gains = _target_terms(pool, k, rows, pool.labels)
            assert (lower == lo[:, k, :]).all()
            assert (gains == (real - lo)[:, k, :]).all()
            assert (lower.sum(axis=1) == initial_lower(pool)[:, k]).all()
            _, g2 = _target_terms(pool, k, rows, pool.labels, potential_mask=mask)
            assert (g2 == np.where(mask, pot[:, k, :], (real - lo)[:, k, :])).all()


def test_sifting_lp_matches_direct_lp():
    """Large LPs are solved by sifting; value and duals agree with one HiGHS call."""
    rng = np.random.default_rng(17)
    for frac in (0.3, 0.6, 0.95):
        G = (rng.integers(1, 400, size=(5, 4000)) * (rng.random((5, 4000)) < 0.6)).astype(np.int64)
        D = (G.sum(axis=1) * frac).astype(np.int64)
        x, _, val = lp_relaxation(G, D)
        _, _, ref = lp_direct(G, D)
        assert val == pytest.approx(ref, rel=1e-9, abs=1e-6)
        assert (G @ x >= D - 1e-6).all() and ((x >= 0) & (x <= 1)).all()
        assert np.count_nonzero((x > 1e-9) & (x < 1 - 1e-9)) <= G.shape[0]


# ------------------------------------------------------------- the covering core
def brute_cover(G, D):
    m = G.shape[1]
    for size in range(m + 1):
        for S in itertools.combinations(range(m), size):
            if (G[:, list(S)].sum(axis=1) >= D).all():
                return size
    return None


def random_cover(rng, m=None, r=None, levels=30):
    """Random covering problem; few ``levels`` give many identical and dominated columns
    (as tied confidences do in pools)."""
    m = int(rng.integers(3, 13)) if m is None else m
    r = int(rng.integers(2, 5)) if r is None else r
    G = rng.integers(0, levels, size=(r, m)) * (rng.random((r, m)) < 0.7)
    D = (G.sum(axis=1) * rng.uniform(0.2, 0.9, size=r)).astype(np.int64)
    return G.astype(np.int64), D


def test_cover_core_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(150):
        G, D = random_cover(rng)
        best = brute_cover(G, D)
        quick = cover_enclosure(G, D, work_limit=0)
        full = cover_enclosure(G, D)
        for e in (quick, full):
            assert e.lower <= best <= e.upper == len(e.witness)
            assert (G[:, e.witness].sum(axis=1) >= D).all()
            if e.exact:
                assert e.lower == best
        assert full.exact


def test_solver_minimum_is_a_feasible_size_in_the_enclosure():
    """HiGHS's unproved minimum, when reported, is the size of a verified cover (a
    feasible size, so >= the brute-force minimum) and lies in [lower, upper].  A work
    limit of 1 lets the MILP run on its root node and leaves no work for the proof."""
    rng = np.random.default_rng(23)
    reported = 0
    for _ in range(150):
        G, D = random_cover(rng, m=int(rng.integers(6, 13)), r=int(rng.integers(2, 5)))
        best = brute_cover(G, D)
        for work in (1, 2, 4):
            e = cover_enclosure(G, D, work_limit=work)
            assert e.lower <= best <= e.upper == len(e.witness)
            assert (G[:, e.witness].sum(axis=1) >= D).all()
            if e.solver_minimum is not None:
                reported += 1
                assert not e.exact
                assert e.lower <= e.solver_minimum <= e.upper
                assert best <= e.solver_minimum  # a feasible cover of that size exists
            if e.exact:
                assert e.solver_minimum is None and e.lower == best
    assert reported > 0


def test_solver_minimum_on_pools_brute_force():
    """The same on pools, against the minimum over every subset of rows (SPEC 7)."""
    rng = np.random.default_rng(29)
    for t in range(60):
        pool = random_pool(rng, ["binary", "shared", "categorical"][t % 3], n=10, K=4)
        best = brute_minimum(pool)
        c = certify(pool, work_limit=1)
        assert c.lower <= best <= c.upper
        if c.solver_minimum is not None:
            assert not c.exact and c.lower <= c.solver_minimum <= c.upper
            assert best <= c.solver_minimum
            assert c.to_dict()["solver_minimum"] == c.solver_minimum


@pytest.mark.parametrize("levels", [30, 4, 2])
def test_branch_and_bound_improves_a_bad_incumbent(levels):
    """The exact search alone (no MILP) finds the optimum from the all-rows incumbent;
    with few gain levels most columns are twins or dominated (symmetry breaking)."""
    rng = np.random.default_rng(5 + levels)
    for _ in range(60):
        G, D = random_cover(rng, levels=levels)
        useful = np.flatnonzero(G.any(axis=0))
        G = G[:, useful]
        keep = D > 0
        G, D = G[keep], D[keep]
        if G.shape[0] == 0:
            continue
        best = brute_cover(G, D)
        m = G.shape[1]
        bb = branch_and_bound(G, D, m + 1, 0, Budget(10**9, float("inf")))  # no incumbent
        assert bb.lower == len(bb.witness) == best
        assert (G[:, bb.witness].sum(axis=1) >= D).all()


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e9])
def test_exact_dual_matches_fractions(scale):
    """The dyadic int64 evaluation (and the Python-int path, forced by huge multipliers)
    equals the weak-dual and surrogate bounds computed with Fractions."""
    rng = np.random.default_rng(int(scale * 7) % 1000)
    for _ in range(20):
        G, D = random_cover(rng, m=int(rng.integers(3, 13)))
        lam = rng.random(G.shape[0]) * scale / max(1, G.max())
        d = exact_dual(G, D, lam)
        lam_q = [Fraction(int(v), 1 << d.s) for v in d.lam_int]
        assert all(q <= Fraction(float(v)) for q, v in zip(lam_q, lam))  # rounded down
        ref = sum(q * int(x) for q, x in zip(lam_q, D)) + sum(
            min(Fraction(0), 1 - sum(q * int(g) for q, g in zip(lam_q, col))) for col in G.T)
        assert d.value == ref and d.ceil == math.ceil(ref)
        dots = [sum(int(a) * int(g) for a, g in zip(d.lam_int, col)) for col in G.T]
        target = sum(int(a) * int(x) for a, x in zip(d.lam_int, D))
        acc, count = 0, 0
        for v in sorted(dots, reverse=True):
            if acc >= target:
                break
            acc, count = acc + v, count + 1
        assert d.surrogate == (count if acc >= target else 0)
        best = brute_cover(G, D)
        assert d.ceil <= best and d.surrogate <= best


def test_reduced_cost_fixing_is_valid():
    """Every certificate smaller than U respects the rows fixed by the exact duals."""
    rng = np.random.default_rng(19)
    fixed_any = 0
    for _ in range(80):
        G, D = random_cover(rng, m=int(rng.integers(4, 12)))
        keep = D > 0
        G, D = G[keep], D[keep]
        if G.shape[0] == 0:
            continue
        lp = lp_relaxation(G, D)
        d = exact_dual(G, D, lp[1])
        m = G.shape[1]
        best = brute_cover(G, D)
        for U in (best + 1, best + 2):
            out, into = reduced_cost_fixing(d, U)
            fixed_any += int(out.sum() + into.sum())
            for size in range(U):
                for S in itertools.combinations(range(m), size):
                    if (G[:, list(S)].sum(axis=1) >= D).all():
                        x = np.zeros(m, dtype=bool)
                        x[list(S)] = True
                        assert not (x & out).any() and (x | ~into).all()
    assert fixed_any > 0


def test_cardinality_fixing_is_valid():
    """Every cover of at most t columns respects the columns fixed by the sorting rules
    (on the constraints and a surrogate of them), and None means there is none."""
    from certlib.certificates.covering_exact import cardinality_fixing

    rng = np.random.default_rng(31)
    fixed_any = proved_empty = 0
    for _ in range(150):
        G, D = random_cover(rng, m=int(rng.integers(3, 11)), levels=int(rng.integers(2, 30)))
        m = G.shape[1]
        lam = rng.integers(0, 4, size=G.shape[0])
        rows = [(G[j], int(D[j])) for j in range(G.shape[0])] + [(lam @ G, int(lam @ D))]
        t = int(rng.integers(0, m + 1))
        none = np.zeros(m, dtype=bool)
        res = cardinality_fixing(rows, t, none, none)
        small = [S for size in range(t + 1) for S in itertools.combinations(range(m), size)
                 if (G[:, list(S)].sum(axis=1) >= D).all()]
        if res is None:
            proved_empty += 1
            assert small == []
            continue
        out, into = res
        fixed_any += int(out.sum() + into.sum())
        for S in small:
            x = np.zeros(m, dtype=bool)
            x[list(S)] = True
            assert not (x & out).any() and (x | ~into).all()
    assert fixed_any > 0 and proved_empty > 0


def test_dominance_keeps_a_minimum_cover():
    """Symmetry breaking is sound: some minimum cover is canonical (contains every
    column dominating one of its columns), and closing a status under dominance keeps
    every canonical cover that agrees with the status."""
    from certlib.certificates.covering_search import Dominance

    rng = np.random.default_rng(37)
    for _ in range(80):
        G, D = random_cover(rng, m=int(rng.integers(3, 10)), levels=3)
        m = G.shape[1]
        dom = Dominance(G)
        covers = [np.isin(np.arange(m), S) for size in range(m + 1)
                  for S in itertools.combinations(range(m), size)
                  if (G[:, list(S)].sum(axis=1) >= D).all()]
        canonical = [x for x in covers if not (dom.below[x] & ~x[None, :]).any()]
        assert min(x.sum() for x in canonical) == min(x.sum() for x in covers)
        for _ in range(3):
            status = rng.choice(np.array([-1, -1, 0, 1], dtype=np.int8), size=m)
            agree = [x for x in canonical
                     if (x[status == 1]).all() and not (x[status == 0]).any()]
            closed = dom.close(status)
            if closed is None:
                assert agree == []
                continue
            assert ((closed == status) | (status == -1)).all()
            for x in agree:
                assert (x[closed == 1]).all() and not (x[closed == 0]).any()


def test_branch_and_bound_out_of_work_gives_valid_lower():
    """Stopped after any number of nodes (or by the clock), the open nodes' bounds and
    the incumbent still enclose the optimum."""
    rng = np.random.default_rng(6)
    for _ in range(30):
        G, D = random_cover(rng, m=12, r=3)
        keep = D > 0
        G, D = G[keep], D[keep]
        if G.shape[0] == 0:
            continue
        best = brute_cover(G, D)
        m = G.shape[1]
        for work in (0, 1, 2, 3, 5, 8, 13):
            budget = Budget(work, float("inf"))
            bb = branch_and_bound(G, D, m + 1, 0, budget)
            assert bb.lower <= best
            if bb.witness is not None:
                assert (G[:, bb.witness].sum(axis=1) >= D).all() and best <= len(bb.witness)
            assert budget.used <= work + 1 + m // 500 and not budget.time_limited
        bb = branch_and_bound(G, D, m + 1, 0, Budget(10**9, 0.0))  # clock already run out
        assert bb.lower <= best and bb.witness is None


# ------------------------------------------------------------------ properties
def test_dual_lp_witness_ordering_and_rounding_gap():
    """dual bound <= LP value <= witness size; rounding stays within K - 1 of ceil(z)
    (paper 000 Theorem 2) -- checked on LP-only runs of larger pools."""
    rng = np.random.default_rng(21)
    for trial in range(25):
        K = int(rng.integers(3, 7))
        pool = random_pool(rng, ["binary", "shared", "categorical"][trial % 3],
                           n=int(rng.integers(30, 300)), K=K)
        c = certify(pool, work_limit=0)
        pos = [pool.position(r) for r in c.witness]
        assert certified_mask(batch_lower(pool, pos), thresholds(K, pool.scale))[c.selected_index]
        if c.lp_value is None:
            continue
        assert c.lower <= c.upper
        if c.method == "sorting" or c.method == "none":
            assert c.exact
            continue
        assert float(c.dual_bound) <= c.lp_value + 1e-7
        assert c.lp_value <= c.upper + 1e-7
        assert c.lower >= math.ceil(c.dual_bound)
        assert c.upper - math.ceil(c.lp_value - 1e-9) <= K - 1


def test_work_limit_only_tightens():
    rng = np.random.default_rng(8)
    for _ in range(10):
        pool = random_pool(rng, "binary", n=80, K=5)
        a = certify(pool, work_limit=0)
        b = certify(pool, work_limit=200)
        assert b.lower >= a.lower and b.upper <= a.upper
        assert b.lower <= a.upper and a.lower <= b.upper


def test_default_certificate_is_deterministic():
    """The work limit, not the clock, stops the search: on a pool where it binds (the
    gap stays open) two calls with wildly different time safety nets give the same
    certificate, field for field."""
    pool = load_pool(ROOT / "sample_data" / "panels" / "digits_s2_tree_k8.csv")
    a = certify(pool, work_limit=100, time_limit=600.0)
    b = certify(pool, work_limit=100, time_limit=1e9)
    assert a.work >= 100 and not a.exact  # the work limit bound
    assert not a.time_limited and not b.time_limited
    assert a == b and a.to_dict() == b.to_dict()


def test_time_limit_is_a_reported_safety_net():
    pool = load_pool(ROOT / "sample_data" / "panels" / "digits_s2_tree_k4.csv")
    c = certify(pool, work_limit=10**9, time_limit=0.0)
    assert c.time_limited and c.to_dict()["time_limited"]
    ref = certify(pool, work_limit=0)
    assert (c.lower, c.upper) == (ref.lower, ref.upper)  # nothing searched: the LP enclosure


def test_tolerance_reports_smallest_upper():
    rng = np.random.default_rng(9)
    for _ in range(20):
        pool = random_pool(rng, "shared", n=10, K=4)
        c = certify(pool, tolerance=0.05)
        for name in c.candidates:
            other = certify(pool, tolerance=0.05, target=name)
            assert c.upper <= other.upper
            assert c.lower <= other.lower


def test_target_and_dict():
    pool = figure2_pool()
    assert certify(pool, target="B").upper == 3
    assert certify(pool, target=1).upper == 3
    d = certify(pool).to_dict()
    assert list(d)[:6] == ["winner", "lower", "upper", "exact", "lp_value", "witness"]
    c = certify(pool)
    assert d["winner"] == c.selected == c.winner == "B"  # read-only alias, SPEC 10 JSON key
    assert d["winner_index"] == c.selected_index == c.winner_index == 1
    with pytest.raises(AttributeError):
        c.winner = "A"
    p = certify_partial(pool, range(4))
    assert p.selected == p.winner == p.to_dict()["winner"] == "B"
    assert json.loads(json.dumps(d))["witness"] == [0, 1, 2]
    with pytest.raises(dataclasses_frozen_error()):
        certify(pool).upper = 1  # frozen result


def dataclasses_frozen_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


# ------------------------------------------------------------------ partial runs
def test_partial_full_read_matches_certify():
    pool = figure3_pool()
    p = certify_partial(pool, range(4))
    c = certify(pool)
    assert (p.lower, p.upper, p.exact, p.selected) == (c.lower, c.upper, True, "A")


def test_partial_bounds_hold_for_every_completion():
    rng = np.random.default_rng(13)
    checked = 0
    for _ in range(40):
        pool = random_pool(rng, "binary", n=int(rng.integers(3, 8)), K=3)
        read = np.flatnonzero(rng.random(pool.n) < 0.6)
        unread = np.setdiff1d(np.arange(pool.n), read)
        lab = pool.labels.copy()
        lab[unread] = -1
        part = certify_partial(pool.with_labels(lab), read)
        # lower holds whatever the unread labels are
        for comp in itertools.product([0, 1], repeat=unread.size):
            full = pool.labels.copy()
            full[unread] = comp
            assert part.lower <= brute_minimum(pool, labels=full)
        if part.certified:
            checked += 1
            true_c = brute_minimum(pool)
            assert part.lower <= true_c <= part.upper
            pos = [pool.position(r) for r in part.witness]
            assert set(pos) <= set(read.tolist())
            assert certified_mask(batch_lower(pool, pos), thresholds(3, pool.scale))[
                pool.names.index(part.selected)]
        else:
            assert part.upper is None and not part.exact
    assert checked > 5


# ------------------------------------------------------------------------ errors
def test_unlabelled_pool_names_row():
    pool = Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[3, 2, 1], [1, 2, 3]], labels=[1, None, 0],
                            row_ids=["a", "b", "c"])
    with pytest.raises(LabelError, match="'b'"):
        certify(pool)


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "x"])
def test_bad_tolerance(bad):
    with pytest.raises(ParameterError, match="tolerance"):
        certify(figure2_pool(), tolerance=bad)


def test_bad_parameters():
    pool = figure2_pool()
    with pytest.raises(ParameterError, match="time_limit"):
        certify(pool, time_limit=-1)
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(ParameterError, match="work_limit"):
            certify(pool, work_limit=bad)
    with pytest.raises(ParameterError, match="target"):
        certify(pool, target="A")  # A is not the winner
    with pytest.raises(ParameterError, match="target"):
        certify(pool, target="Z")
    with pytest.raises(LabelError, match="position 1"):
        certify_partial(pool.with_labels(np.array([1, -1, 0, 0])), [0, 1])
    assert issubclass(ParameterError, CertlibError)
    assert isinstance(certify(pool), Certificate)


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


def _covers_up_to(G, D, size):
    n = G.shape[1]
    for k in range(size + 1):
        for S in itertools.combinations(range(n), k):
            if (G[:, list(S)].sum(axis=1) >= D).all():
                yield set(S)


def test_fixing_is_valid_for_any_multiplier_on_the_python_int_path():
    """Regression (adversarial review): on the Python-int path of exact_dual (s = 52) the
    reduced costs are unbounded, and capping the room at 2^62 fixed column 0 and 2 *in*
    for lam = (1e6, 0), so fix_columns claimed no cover of size 1 while {2} is one.
    Fixings must hold for every cover of size <= U - 1, whatever the multipliers."""
    from certlib.certificates.covering_exact import fix_columns

    G, D = np.array([[1, 0, 1], [0, 1, 1]]), np.array([1, 1])
    res = fix_columns(G, D, exact_dual(G, D, [1e6, 0.0]), 2)
    assert res is not None
    out, into = res
    assert not into[0] and not out[2]
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(400):
        J, n = int(rng.integers(1, 4)), int(rng.integers(2, 9))
        G = rng.integers(0, 5, size=(J, n))
        D = rng.integers(1, 8, size=J)
        if (G.sum(axis=1) < D).any():
            continue
        lam = rng.uniform(0, 1, size=J) * 10.0 ** rng.integers(0, 8)
        U = int(rng.integers(1, n + 1))
        res = fix_columns(G, D, exact_dual(G, D, lam), U)
        covers = list(_covers_up_to(G, D, U - 1))
        if res is None:
            assert not covers, (G.tolist(), D.tolist(), lam.tolist(), U)
            continue
        out, into = res
        for S in covers:
            assert not (set(np.flatnonzero(out)) & S), (G.tolist(), D.tolist(), lam, U, S)
            assert set(np.flatnonzero(into)) <= S, (G.tolist(), D.tolist(), lam, U, S)
        checked += 1
    assert checked > 100


def test_enclosure_stays_exact_with_a_badly_scaled_dual_hint(monkeypatch):
    """Solver output is a hint: a feasible but badly scaled dual must not give a false
    exact minimum (it gave lower = upper = 2, exact, for a true minimum of 1)."""
    import certlib.certificates.covering as cov

    real = cov.lp_relaxation

    def scaled(G, D):
        x, lam, v = real(G, D)
        return x, lam * 1e6, v

    monkeypatch.setattr(cov, "lp_relaxation", scaled)
    G, D = np.array([[1, 0, 1, 1], [0, 1, 1, 0]]), np.array([1, 1])
    e = cov.cover_enclosure(G, D)
    assert e.lower <= 1 <= e.upper and (not e.exact or e.lower == 1)


@settings(derandomize=True, max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(pools(), st.sampled_from([0.0, 0.01]), st.integers(0, 2**32 - 1))
def test_the_full_minimum_lies_in_a_runs_hindsight_enclosure(pool, tau, seed):
    """What the pages say of a run's hindsight beside the pool's minimum certificate
    (`versus_minimum_text`): with the same labels, the minimum lies in the hindsight's
    enclosure [lower, upper] of any set of rows read, and when they meet it equals them."""
    from certlib.labelling.progress import versus_minimum_text

    rng = np.random.default_rng(seed)
    read = sorted(rng.choice(pool.n, size=int(rng.integers(1, pool.n + 1)), replace=False))
    part = certify_partial(pool, read, tolerance=tau)
    full = certify(pool, tolerance=tau)
    assert full.exact
    assert part.lower <= full.lower
    if part.upper is not None:
        assert full.upper <= part.upper
        text = versus_minimum_text(part)
        assert (f"it is {part.upper:,} too" in text) == (part.lower == part.upper)
        if part.lower == part.upper:
            assert full.upper == part.upper
