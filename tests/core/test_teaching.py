"""certlib.teaching.worked_examples and certlib.teaching.theory: the paper's worked
examples (paper 000 sections 3-4, SPEC section 9) computed by the library,
checked against brute force."""

from __future__ import annotations

import importlib.util
import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from certlib import Pool, Session, certify, prelabel_bound
from certlib.errors import CertlibError
from certlib.teaching.worked_examples import (completions, exact_lp, figure1_pool, figure2_pool,
                              figure3_checks, figure3_pool, minimum_certificates, pair_trace,
                              reading_order, slice_region, tie_zero_moment, worst_case_pool)
from certlib.teaching.theory import (LIMITS, copula_prelabel, cyclic_shift, quarter_geometry,
                            random_orders, sample_square)

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------- Figure 1
def test_figure1_completions():
    """Paper Figure 1: before any label either candidate can win; y = (1, 0) favours B,
    (0, 1) favours A; after y1 = 0 every completion picks A; accuracy always ties."""
    comps = {c.labels: c for c in completions(figure1_pool())}
    assert {c.winner for c in comps.values()} == {"A", "B"}
    assert comps[(1, 0)].winner == "B" and comps[(0, 1)].winner == "A"
    assert all(c.errors[0] == c.errors[1] for c in comps.values())
    assert comps[(1, 0)].augrc == (Fraction(3, 8), Fraction(1, 8))  # weights 3, 1 over 2n^2
    after = completions(figure1_pool((0, None)))
    assert [c.winner for c in after] == ["A", "A"]
    s = Session.from_pool_labels(figure1_pool((0, None)))
    assert s.certified and s.selected == "A"
    # section 5: y1 = 1 guarantees B minimum loss (gap 0) without certifying it
    s1 = Session.from_pool_labels(figure1_pool((1, None)))
    assert not s1.certified and [c.winner for c in completions(figure1_pool((1, None)))] == \
        ["B", "A"]


# ----------------------------------------------------------------------- Figure 2
def test_figure2_pair_trace():
    """Paper Figure 2: static range reads rows 3, 4, 1, 2; [-6,6] -> [-2,6] -> [-2,2] ->
    [0,2] -> [2,2]; b = (+2, -2, -4, +4) and g = (2, 2, 4, 0) by row; B after the 4th."""
    p = figure2_pool()
    tr = pair_trace(p)
    assert [r + 1 for r in tr.order] == [3, 4, 1, 2]
    assert tr.intervals == ((-6, 6), (-2, 6), (-2, 2), (0, 2), (2, 2))
    by_row = {s.row: s for s in tr.steps[1:]}
    assert [by_row[i].b for i in range(4)] == [2, -2, -4, 4]
    assert [by_row[i].gain for i in range(4)] == [2, 2, 4, 0]
    assert tr.certified_at == 4 and tr.steps[-1].selected == "B"
    assert tr.steps[3].tie_zero and tr.steps[3].selected is None


def test_figure2_hindsight():
    """Paper sections 4.1-4.2: prelabel 2, LP 5/2 exactly, C(y) = 3 whose only minimum
    certificate is rows {1, 2, 3}: row 4 is never needed."""
    p = figure2_pool()
    assert prelabel_bound(p).prelabel_bound == 2
    assert exact_lp(p).value == Fraction(5, 2)
    assert minimum_certificates(p) == ((0, 1, 2),)
    c = certify(p)
    assert (c.lower, c.upper, c.exact) == (3, 3, True)


@given(hst.lists(hst.integers(0, 1), min_size=4, max_size=4), hst.permutations(range(4)))
@settings(max_examples=40, deadline=None)
def test_pair_trace_matches_session_any_order(labels, order):
    """Every step of pair_trace equals a Session stepped along the same order, and each
    gain is what L_AB rose by; reading all rows ends at the full-pool r_A - r_B."""
    p = figure2_pool(labels)
    tr = pair_trace(p, order)
    s = Session.start(p)
    for step, row in zip(tr.steps[1:], order):
        s = s.observe(row, labels[row])
        assert (step.lower, step.upper) == (int(s.lower()[0, 1]), int(s.upper()[0, 1]))
    r = p.risks()
    assert tr.steps[-1].lower == tr.steps[-1].upper == int(r[0] - r[1])


def test_pair_trace_rejects_bad_orders():
    p = figure2_pool()
    for bad in ([0, 0, 1, 2], [0, 1, 2, 7], ["x"]):
        with pytest.raises(CertlibError, match="order"):
            pair_trace(p, bad)


# ----------------------------------------------------------------------- Figure 3
def test_figure3_every_number():
    """Paper section 4.1, Figure 3: each number of caption and text on the found pool."""
    p = figure3_pool()
    assert list(p.weights.tolist()) != []
    for row in p.weights.tolist():
        assert sorted(row) == [1, 3, 5, 7]
    checks = figure3_checks(p)
    assert len(checks) == 9 and all(checks.values()), checks


def test_figure3_lp_and_slice():
    p = figure3_pool()
    lp = exact_lp(p)
    assert lp.value == Fraction(11, 8)
    assert lp.x == (Fraction(3, 8), Fraction(1), Fraction(0), Fraction(0))
    c = certify(p)
    assert c.lp_value == pytest.approx(float(lp.value))  # HiGHS agrees with the exact LP
    assert c.dual_bound == Fraction(11, 8)
    region = slice_region(p)
    # the optimum lies on the slice's boundary and every vertex satisfies both constraints
    assert (lp.x[0], lp.x[1]) in region["vertices"]
    for x1, x2 in region["vertices"]:
        for g0, g1, d in region["constraints"].values():
            assert g0 * x1 + g1 * x2 >= d
    assert reading_order(p) == (1, 2, 0, 3)


def test_figure3_search_finds_the_shipped_pool():
    """scripts/search_figure3.py's enumeration yields exactly the hard-coded pool."""
    spec = importlib.util.spec_from_file_location("s3", ROOT / "scripts" / "search_figure3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from certlib.teaching.worked_examples import FIGURE3_PREDS, FIGURE3_WEIGHTS

    assert mod.search() == [(FIGURE3_WEIGHTS, FIGURE3_PREDS)]


# ---------------------------------------------------------------- brute force checks
def _brute_lp_lower(pool):
    """A grid check of the LP: no point of a 1/8 grid beats the exact optimum."""
    from certlib.teaching.worked_examples import covering_problem

    G, D, _ = covering_problem(pool)
    best = None
    grid = [Fraction(i, 8) for i in range(9)]
    for x in itertools.product(grid, repeat=pool.n):
        if all(sum(int(G[j, i]) * x[i] for i in range(pool.n)) >= int(D[j])
               for j in range(pool.K)):
            v = sum(x)
            best = v if best is None or v < best else best
    return best


@given(hst.integers(0, 2 ** 30))
@settings(max_examples=25, deadline=None)
def test_exact_lp_and_minimum_certificates_random_small_pools(seed):
    """On random pools of 4 rows and 2-3 candidates: the exact LP lies between the dual
    bound of certify and C(y), no 1/8-grid point beats it, and the brute-force minimum
    equals certify's exact minimum."""
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 4))
    p = Pool.from_arrays(rng.integers(0, 2, (K, 4)), rng.permutation(4 * K).reshape(K, 4) + 1.0,
                         labels=rng.integers(0, 2, 4), classes=[0, 1])
    lp = exact_lp(p)
    mins = minimum_certificates(p)
    c = certify(p)
    assert c.exact and c.upper == len(mins[0])
    assert lp.value <= c.upper and -(-lp.value.numerator // lp.value.denominator) <= c.lower
    grid = _brute_lp_lower(p)
    assert grid is not None and grid >= lp.value


@pytest.mark.parametrize("n", [2, 5, 20])
def test_worst_case_pool(n):
    """Paper section 4.2: C(0) = n - 1."""
    c = certify(worst_case_pool(n))
    assert (c.selected, c.lower, c.upper) == ("A", n - 1, n - 1)


def test_tie_zero_moment():
    lower = np.array([-6, -2, -2, 0, 2])
    assert tie_zero_moment(lower, 4) == 3
    assert tie_zero_moment(lower, 3) is None  # certified first: no tie moment
    assert tie_zero_moment(np.array([-3, -1, 1]), 2) is None


# --------------------------------------------------------------------------- theory
def test_quarter_geometry_exact():
    g = quarter_geometry()
    assert (g["probability"], g["mass_share"], g["mean_abs_diff"]) == \
        (Fraction(1, 4), Fraction(1, 2), Fraction(1, 3))
    s = sample_square(20000, seed=1)
    assert abs(s["probability"] - 0.25) < 0.02 and abs(s["mass_share"] - 0.5) < 0.02


def test_cyclic_shift_is_exact():
    r = cyclic_shift(1000, 90)
    assert r.prelabel == 90 and r.spearman == pytest.approx(0.51, abs=0.005)


def test_copula_falls_with_rho():
    """Paper section 6.7: prelabel/n falls from about .25 at rho = 0 to about .20 at .99
    (n = 2000, 3 seeds; per-seed sd about .002, tolerance .01)."""
    r = copula_prelabel(rhos=(0.0, 0.99), n=2000, seeds=3)
    assert abs(r.prelabel[0] - 0.250) <= 0.01 and abs(r.prelabel[1] - 0.204) <= 0.01


def test_copula_one_rho_at_a_time_equals_the_table():
    """The explorer asks for one rho at a time: each must equal its entry in the table of
    all five (a pool's draws depend on the seed, n and its index only)."""
    rhos = (0.0, 0.3, 0.6, 0.9, 0.99)
    table = copula_prelabel(rhos=rhos, n=300, seeds=2)
    for rho, value in zip(rhos, table.prelabel):
        assert copula_prelabel(rhos=(rho,), n=300, seeds=2).prelabel == (value,)
    assert copula_prelabel(rhos=rhos[::-1], n=300, seeds=2).prelabel == table.prelabel[::-1]


def test_random_orders_default_limits():
    """Propositions 2-3 at the explorer's default (n up to 10,000, 5 pools, K = 2,
    q = .3).  Tolerances: prelabel/n within .01 of 1/4 (per-pool sd about .001 at
    n = 10,000); C(y)/n in [.40, .50] (the limit 1/2 is approached from below, the paper
    measures .46 at n = 5706); labels read by the policy in [.80, 1] (the limit 1 is slow:
    about .88 here); and prelabel <= C <= policy in every pool."""
    calls = []
    r = random_orders(progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (25, 25)
    assert abs(r.prelabel[-1] - float(LIMITS["prelabel"])) <= 0.01
    assert 0.40 <= r.cert_upper[-1] <= 0.50
    assert 0.80 <= r.policy_read[-1] <= 1.0
    for n, _s, pb, lo, hi, read in r.runs:
        assert pb <= lo <= hi <= read <= n


def test_theory_parameter_errors():
    with pytest.raises(CertlibError, match="q"):
        random_orders(ns=(10,), q=1.5)
    with pytest.raises(CertlibError, match="K"):
        random_orders(ns=(10,), K=1)
    with pytest.raises(CertlibError, match="n"):
        worst_case_pool(1)
