"""Betting (hedged capital) confidence sequence, certlib.audit.betting."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import binomtest

from certlib.audit import BettingState, betting_cs, prpl_eb
from certlib.audit.betting import BETS
from certlib.errors import InvalidValueError, ParameterError


def audit_like(n, rng):
    """Mostly 0.5, rare values near 0 and 1: the audit's (Z + c) / (2c)."""
    u = rng.random(n)
    x = np.full(n, 0.5)
    x[u < 0.02] = 0.02
    x[(u >= 0.02) & (u < 0.035)] = 0.98
    return x


def is_checkpoint(t):
    """The module's checkpoints: every t up to 63, then every 2^(bits(t) - 6)."""
    return t % (1 << max(0, min(12, t.bit_length() - 6))) == 0


def brute_bets(kind, lam, mu, s2, ref, target):
    """Bets (lam+, lam-) written out from the module docstring."""
    if kind == "prpl":
        return lam, lam
    lo, hi = ref
    if target is not None:
        lo = target[0] if lo < target[0] < mu else lo
        hi = target[1] if mu < target[1] < hi else hi
    bp = max(0.0, (mu - lo) / (s2 + (mu - lo) ** 2))
    bm = max(0.0, (hi - mu) / (s2 + (hi - mu) ** 2))
    if kind == "boundary":
        return bp, bm
    return (lam + bp) / 2, (lam + bm) / 2


def brute_force(x, alpha, c, theta, grid, running_intersection, bets="prpl", reported=None,
                target=None):
    """K_t(m) by plain loops over time on a grid; True where m is not excluded.

    Boundary bets aim at the interval reported at the last checkpoint: ``reported``
    is betting_cs's (lower, upper), from which only the checkpoints' values are read.
    """
    log_term = math.log(2 / alpha)
    kp = np.ones(grid.size)
    km = np.ones(grid.size)
    out = np.ones(grid.size, dtype=bool)
    sum_x = sum_dev = 0.0
    s2 = 0.25
    ref = (0.0, 1.0)
    alive = []
    for t, v in enumerate(x, start=1):
        lam = math.sqrt(2 * log_term / (s2 * t * math.log1p(t)))
        bp, bm = brute_bets(bets, lam, (0.5 + sum_x) / t, s2, ref, target)
        with np.errstate(divide="ignore"):
            lp = np.minimum(bp, c / grid)
            lm = np.minimum(bm, c / (1 - grid))
        kp = kp * (1 + lp * (v - grid))
        km = km * (1 - lm * (v - grid))
        inside = theta * kp + (1 - theta) * km < 1 / alpha
        out = out & inside if running_intersection else inside
        alive.append(out.copy())
        sum_x += v
        mu = (0.5 + sum_x) / (t + 1)
        sum_dev += (v - mu) ** 2
        s2 = (0.25 + sum_dev) / (t + 1)
        if bets != "prpl" and is_checkpoint(t):
            ref = (float(reported[0][t - 1]), float(reported[1][t - 1]))
    return alive


@pytest.mark.parametrize("intersect", [True, False])
@pytest.mark.parametrize("alpha,c,theta,seed", [(0.05, 0.5, 0.5, 0), (0.1, 0.7, 0.3, 1),
                                                (0.01, 0.4, 0.5, 2)])
def test_contains_brute_force_set_and_is_tight(alpha, c, theta, seed, intersect):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.beta(2, 5, 60), audit_like(60, rng)])
    grid = np.linspace(0, 1, 20001)
    alive = brute_force(x, alpha, c, theta, grid, intersect)
    lo, hi = betting_cs(x, alpha, truncation=c, theta=theta, running_intersection=intersect)
    for t, a in enumerate(alive):
        m = grid[a]
        assert m.size
        assert lo[t] <= m.min() and hi[t] >= m.max()
        # Tightness.  Between checkpoints an end that jumps (here the data change at
        # t = 60) can outrun its bracket; without the running intersection an end that
        # moves outward falls back on the coarse grid (step 1/32).  Both conservative.
        slack = 2e-4 + (0.1 * (m.max() - m.min()) if intersect else 1 / 32)
        assert lo[t] >= m.min() - slack and hi[t] <= m.max() + slack


@pytest.mark.parametrize("alpha,c,theta", [(0.05, 0.5, 0.5), (0.1, 0.6, 0.5), (0.05, 0.5, 0.3)])
def test_sandwiched_by_independent_ville(alpha, c, theta):
    # ville.BettingCS hedges with max(theta K+, (1-theta) K-), same bets min(lam, c/m)
    # (its means.py): sum >= max gives ours inside ville(alpha); sum <= 2 max gives
    # ours around ville(2 alpha).  Up to both grids (ville's step 5e-5).
    ville = pytest.importorskip("ville")
    x = np.random.default_rng(7).beta(0.5, 2.0, 400)
    va = ville.BettingCS(alpha=alpha, c=c, theta=theta, grid=20001, intersect=True).fit(x)
    v2 = ville.BettingCS(alpha=2 * alpha, c=c, theta=theta, grid=20001,
                         intersect=True).fit(x)
    lo, hi = betting_cs(x, alpha, truncation=c, theta=theta)
    tol = 2e-4
    assert np.all(lo <= v2.lower_ + tol) and np.all(hi >= v2.upper_ - tol)
    # inside ville(alpha), but for an end that outruns its bracket between
    # checkpoints (conservative lag, as in the brute-force test)
    slack = tol + 0.1 * (va.upper_ - va.lower_)
    assert np.all(lo >= va.lower_ - slack) and np.all(hi <= va.upper_ + slack)
    # and close to ville(alpha) itself: the hedge's sum and max differ little at the ends
    assert np.median(np.abs(lo - va.lower_)[50:]) < 2e-4
    assert abs(lo[-1] - va.lower_[-1]) < 2e-4 and abs(hi[-1] - va.upper_[-1]) < 2e-4


@pytest.mark.parametrize("bets,target", [("boundary", None), ("mixed", None),
                                         ("boundary", (0.5, 0.505)), ("mixed", (0.3, 0.6))])
@pytest.mark.parametrize("intersect", [True, False])
@pytest.mark.parametrize("alpha,c,theta,seed", [(0.05, 0.5, 0.5, 0), (0.1, 0.7, 0.3, 1),
                                                (0.01, 0.4, 0.5, 2)])
def test_other_bets_contain_brute_force_set(alpha, c, theta, seed, intersect, bets, target):
    # i.i.d. data (a change of mean, as in the test above, can empty the set, and
    # these bets make the interval collapse fast: ends then lag between checkpoints)
    rng = np.random.default_rng(seed)
    x = rng.beta(2, 5, 150) if seed % 2 else audit_like(150, rng)
    grid = np.linspace(0, 1, 20001)
    lo, hi = betting_cs(x, alpha, truncation=c, theta=theta, running_intersection=intersect,
                        bets=bets, target=target)
    alive = brute_force(x, alpha, c, theta, grid, intersect, bets, (lo, hi), target)
    for t, a in enumerate(alive):
        m = grid[a]
        assert m.size
        assert lo[t] <= m.min() and hi[t] >= m.max()
        slack = 2e-4 + (0.1 * (m.max() - m.min()) if intersect else 1 / 32)
        assert lo[t] >= m.min() - slack and hi[t] <= m.max() + slack


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.02, 0.5, 0.98, 1.0]) | st.floats(0, 1),
                min_size=1, max_size=200), st.booleans(), st.floats(0.01, 0.3),
       st.sampled_from([("prpl", None), ("boundary", None), ("mixed", None),
                        ("boundary", (0.5, 0.52)), ("mixed", (0.2, 0.9))]))
def test_streaming_equals_batch_on_every_prefix(xs, intersect, alpha, bets_target):
    bets, target = bets_target
    lo, hi = betting_cs(xs, alpha, running_intersection=intersect, bets=bets, target=target)
    s = BettingState.start(alpha=alpha, running_intersection=intersect, bets=bets,
                           target=target)
    for t, v in enumerate(xs):
        s = s.update(v)
        assert s.t == t + 1
        assert s.interval == (lo[t], hi[t])


@pytest.mark.parametrize("bets", BETS)
def test_update_is_pure_and_branches(bets):
    s = BettingState.start(bets=bets)
    for v in [0.2, 0.9, 0.4] * 30:
        s = s.update(v)
    a = s.update(0.1)
    b = s.update(0.9)          # branch from the same state
    a2 = s.update(0.1)
    assert s.t == 90 and a.t == b.t == 91
    assert a.interval == a2.interval
    assert a.interval == tuple(float(e[-1]) for e in betting_cs([0.2, 0.9, 0.4] * 30 + [0.1],
                                                                  bets=bets))


def at_most(k, n, rate):
    return binomtest(k, n).proportion_ci(confidence_level=0.999).low <= rate


@pytest.mark.slow
@pytest.mark.parametrize("bets,target", [("prpl", None), ("boundary", None), ("mixed", None),
                                         ("boundary", (0.49, 0.4985))])
@pytest.mark.parametrize("kind", ["bernoulli", "audit-like"])
def test_monte_carlo_time_uniform_coverage(kind, bets, target):
    # the target, just around the audit-like mean 0.4976, makes the bets aim at it
    alpha, runs, n = 0.05, 400, 2000
    miss = 0
    for r in range(runs):
        rng = np.random.default_rng(50_000 + r)
        if kind == "bernoulli":
            x, mean = (rng.random(n) < 0.3).astype(float), 0.3
        else:
            x, mean = audit_like(n, rng), 0.5 + 0.015 * 0.48 - 0.02 * 0.48
        lo, hi = betting_cs(x, alpha, bets=bets, target=target)
        miss += bool(np.any(lo > mean) or np.any(hi < mean))
    assert at_most(miss, runs, alpha), miss


@pytest.mark.parametrize("n,bound", [(2000, 1.0), (20000, 1.03)])
def test_width_against_prpl_eb_on_audit_like_data(n, bound):
    # Measured ratios betting / PrPl-EB (same alpha, c, running intersection), seed 1:
    # about 0.49 at t=100, 0.74 at t=500, 0.93 at n=2000, 1.015 at n=20000 (ville's
    # betting CS gives the same 1.015): the gain is early; later the two are alike.
    x = audit_like(n, np.random.default_rng(1))
    lo, hi = betting_cs(x, 0.05, truncation=0.5)
    plo, phi = prpl_eb(x, 0.05, truncation=0.5, running_intersection=True)
    assert (hi[-1] - lo[-1]) / (phi[-1] - plo[-1]) <= bound
    assert np.all((hi - lo)[:n // 10] <= (phi - plo)[:n // 10] + 1e-4)


def test_resolution_of_final_interval():
    x = audit_like(20000, np.random.default_rng(3))
    lo, hi = betting_cs(x)
    fine_lo, fine_hi = betting_cs(x, resolution=2e-6)
    assert 0 <= fine_lo[-1] - lo[-1] <= 1e-4 and 0 <= hi[-1] - fine_hi[-1] <= 1e-4


def test_running_intersection_nested():
    lo, hi = betting_cs(np.random.default_rng(4).random(3000))
    assert np.all(np.diff(lo) >= 0) and np.all(np.diff(hi) <= 0)


def test_empty_input():
    lo, hi = betting_cs([])
    assert lo.size == hi.size == 0


@pytest.mark.parametrize("kw,name", [({"alpha": 1.0}, "alpha"), ({"truncation": 0.0}, "truncation"),
                                     ({"theta": 1.5}, "theta"), ({"resolution": 0}, "resolution"),
                                     ({"bets": "kelly"}, "bets"),
                                     ({"target": (0.4, 0.6)}, "target"),
                                     ({"bets": "boundary", "target": 0.5}, "target"),
                                     ({"bets": "mixed", "target": (0.4, 1.2)}, "target")])
def test_parameter_errors(kw, name):
    with pytest.raises(ParameterError, match=f"`{name}`"):
        betting_cs([0.5], **kw)


def test_parameter_errors_streaming():
    with pytest.raises(ParameterError, match="`bets`"):
        BettingState.start(bets="kelly")


def test_value_errors():
    with pytest.raises(InvalidValueError, match=r"entry 1 is 1.5"):
        betting_cs([0.1, 1.5])
    with pytest.raises(InvalidValueError, match=r"got -0.1"):
        BettingState.start().update(-0.1)
