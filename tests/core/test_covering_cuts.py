"""MIR cuts for the covering problem: every cut keeps every 0/1 point of its row, the
bounds they give never exceed the brute-force minimum, and on the shipped panel pools
the certificates equal an independent solver's minimum."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib.certificates.certificate import certify, covering_problem
from certlib.certificates.covering import cover_enclosure
from certlib.certificates.covering_cuts import cut_bound, mir_cut
from certlib.certificates.covering_exact import exact_dual
from certlib.io import load_pool

PANELS = sorted((Path(__file__).resolve().parents[2] / "sample_data" / "panels").glob("*.csv"))


def all_points(m):
    return np.array(list(itertools.product((0, 1), repeat=m)), dtype=np.int64)


def brute_cover(G, D):
    """The minimum cover size over every 0/1 point."""
    X = all_points(G.shape[1])
    return int(X[(X @ G.T >= D).all(axis=1)].sum(axis=1).min())


def random_cover(rng, m, r=3):
    """A covering problem with coarse gains (ties and dominated columns, as pools have)."""
    G = rng.integers(0, 30, size=(r, m)) * (rng.random((r, m)) < 0.7)
    D = (G.sum(axis=1) * rng.uniform(0.2, 0.9, size=r)).astype(np.int64)
    return G.astype(np.int64), D


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.sampled_from([40, 2**40, 2**70]).flatmap(lambda top: st.integers(1, 8).flatmap(
    lambda m: st.tuples(
        st.lists(st.integers(-top, top), min_size=m, max_size=m),
        st.integers(-2 * top, 3 * top),
        st.lists(st.booleans(), min_size=m, max_size=m),
        st.integers(1, 2 * top)))))
def test_a_mir_cut_keeps_every_point_of_its_row(case):
    """Small values (the int64 path) and values past 2^62 (the Python-int path)."""
    a, b, comp, delta = case
    a = np.array(a, dtype=object if max(map(abs, a + [b, delta])) >= 2**62 else np.int64)
    cut = mir_cut(a, b, np.array(comp, dtype=bool), delta)
    if cut is None:
        return
    g, d = cut
    X = all_points(a.size)
    feasible = X @ a >= b
    assert (X[feasible] @ g >= d).all()


def test_mir_cuts_cut_off_fractional_points():
    """Not a test that cannot fail: the cut of 3x1 + 3x2 + 3x3 >= 4 at delta 3 is
    x1 + x2 + x3 >= 2, which removes the LP point (4/9, 4/9, 4/9)."""
    g, d = mir_cut(np.array([3, 3, 3]), 4, np.zeros(3, dtype=bool), 3)
    assert g.tolist() == [1, 1, 1] and d == 2
    assert g @ np.full(3, 4 / 9) < d


def test_the_weak_dual_holds_for_rows_of_either_sign():
    """exact_dual over G's rows and cut rows (negative entries) never exceeds the
    minimum, for any multipliers."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        G, D = random_cover(rng, m=int(rng.integers(3, 9)))
        best = brute_cover(G, D)
        g, d = mir_cut(2 * G[0] + G[1], int(2 * D[0] + D[1]), rng.random(G.shape[1]) < 0.5,
                       int(rng.integers(1, 30))) or (G[0], int(D[0]))
        rows, rhs = np.vstack([G, g[None, :]]), np.append(D, d)
        X = all_points(G.shape[1])
        ok = (X @ rows.T >= rhs).all(axis=1)
        assert ok.any() and ok.sum() == (X @ G.T >= D).all(axis=1).sum()  # the cut is valid
        dual = exact_dual(rows, rhs, rng.random(rows.shape[0]) * rng.choice([0.01, 1, 50]))
        assert max(dual.ceil, dual.surrogate) <= best


def test_cut_bounds_against_brute_force():
    """The cut rounds' bound is never above the minimum, and on these seeded problems
    it is above the LP's ceiling on some of them (the cuts do something)."""
    rng = np.random.default_rng(17)
    raised = 0
    for _ in range(150):
        G, D = random_cover(rng, m=int(rng.integers(6, 13)), r=int(rng.integers(2, 5)))
        best = brute_cover(G, D)
        root = cut_bound(G, D, best + 1, rounds=1).lower
        cb = cut_bound(G, D, best + 1, rounds=8)
        assert root <= cb.lower <= best
        raised += cb.lower > root
        enc = cover_enclosure(G, D)
        assert enc.exact and enc.lower == best
    assert raised >= 5


def _milp_minimum(pool):
    from scipy.optimize import Bounds, LinearConstraint, milp

    G, D = covering_problem(pool, int(np.argmin(pool.risks())))
    act = D > 0
    if not act.any():
        return 0
    G, D = G[act], D[act]
    res = milp(np.ones(G.shape[1]), integrality=np.ones(G.shape[1]), bounds=Bounds(0, 1),
               constraints=LinearConstraint(G.astype(float), D.astype(float), np.inf))
    assert res.status == 0
    return round(res.fun)


@pytest.mark.parametrize("path", PANELS, ids=[p.stem for p in PANELS])
def test_every_shipped_panel_pool_is_certified_exactly(path):
    """certify proves the minimum on each shipped panel pool with the default work
    limit, and it equals HiGHS's MILP optimum (an independent solver)."""
    pool = load_pool(path)
    c = certify(pool)
    assert c.exact and not c.time_limited
    assert c.lower == c.upper == _milp_minimum(pool)


def test_an_all_zero_row_with_a_large_multiplier_does_not_wrap():
    """The review's case: a zero row once passed the int64 overflow guard, wrapped its
    multiplier to -2^63 and gave a 'bound' of 2049 for a minimum of 1."""
    G, D = np.array([[1, 1], [0, 0]]), np.array([1, -1])
    dual = exact_dual(G, D, [1.0, 1e4])
    assert (np.asarray(dual.lam_int) >= 0).all()
    assert max(dual.ceil, dual.surrogate) <= 1
