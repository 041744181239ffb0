"""The forecast's calibrated interval (certlib.planning.forecast_calibration)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certlib
from certlib.errors import ParameterError
from certlib.planning import forecast_calibration as fc

ROOT = Path(__file__).resolve().parents[2]


@st.composite
def forecasts(draw):
    """(labels_read, known, n): draws' counts in [known, n] as a forecast gives them."""
    n = draw(st.integers(1, 400))
    known = draw(st.integers(0, n))
    counts = draw(st.lists(st.integers(known, n), min_size=1, max_size=60))
    return counts, known, n


margins = st.floats(-2.0, 2.0, allow_nan=False)
pairs = st.tuples(margins, margins)
units = st.sampled_from(fc.UNITS)


@settings(max_examples=300, deadline=None)
@given(forecasts(), st.one_of(margins, pairs), units)
def test_interval_holds_the_median_and_stays_in_range(f, qhat, unit):
    counts, known, n = f
    low, high = fc.calibrated_interval(counts, known, n, qhat=qhat, unit=unit)
    q10, q50, q90 = fc.raw_interval(counts)
    assert type(low) is int and type(high) is int
    assert known <= low <= q50 <= high <= n


@settings(max_examples=300, deadline=None)
@given(forecasts(), pairs, pairs, units)
def test_interval_is_monotone_in_each_margin(f, a, b, unit):
    counts, known, n = f
    lows, highs = sorted((a[0], b[0])), sorted((a[1], b[1]))
    lo_a, hi_a = fc.calibrated_interval(counts, known, n, qhat=(lows[0], highs[0]), unit=unit)
    lo_b, hi_b = fc.calibrated_interval(counts, known, n, qhat=(lows[1], highs[1]), unit=unit)
    assert lo_b <= lo_a and hi_a <= hi_b


@settings(max_examples=300, deadline=None)
@given(forecasts(), margins, units)
def test_one_number_is_the_same_margin_on_both_sides(f, qhat, unit):
    counts, known, n = f
    assert fc.calibrated_interval(counts, known, n, qhat=qhat, unit=unit) == \
        fc.calibrated_interval(counts, known, n, qhat=(qhat, qhat), unit=unit)


@settings(max_examples=300, deadline=None)
@given(forecasts(), st.integers(0, 400), pairs, units)
def test_inside_exactly_when_both_scores_are_at_most_their_margins(f, y, qhat, unit):
    """The conformal set: a count in [known, n] whose lower and upper scores are at most
    the lower and upper margins is inside; with margins >= 0 (no stretching to the
    median) exactly those are."""
    counts, known, n = f
    if max(counts) == known:
        return  # certified now: the exact point [known, known]
    y = known + y % (n - known + 1)
    low, high = fc.calibrated_interval(counts, known, n, qhat=qhat, unit=unit)
    e_low, e_high = fc.side_scores(y, counts, known, n, unit=unit)
    if abs(e_low - qhat[0]) < 1e-6 or abs(e_high - qhat[1]) < 1e-6:
        return  # float ties at the boundary
    if e_low <= qhat[0] and e_high <= qhat[1]:
        assert low <= y <= high
    elif min(qhat) >= 0:
        assert not low <= y <= high


@settings(max_examples=300, deadline=None)
@given(forecasts(), st.integers(0, 400), units)
def test_side_scores_and_the_symmetric_score(f, y, unit):
    counts, known, n = f
    y = known + y % (n - known + 1)
    e_low, e_high = fc.side_scores(y, counts, known, n, unit=unit)
    q10, _, q90 = fc.raw_interval(counts)
    assert fc.conformity_score(y, counts, known, n, unit=unit) == max(e_low, e_high)
    assert (e_low > 0) == (y < q10) and (e_high > 0) == (y > q90)
    # the two sides add up to minus the raw width, in the same unit
    scale = (q10 - y) / e_low if e_low else (y - q90) / e_high if e_high else None
    if scale is not None:
        assert math.isclose((e_low + e_high) * scale, q10 - q90, abs_tol=1e-9)


def _brute_quantile(scores, level):
    """The smallest score q with at least ceil((m + 1) level) scores <= q; inf if none."""
    m = len(scores)
    need = math.ceil((m + 1) * level - 1e-9)
    ok = [q for q in scores if sum(s <= q for s in scores) >= need]
    return min(ok) if ok else math.inf


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-50, 50).map(lambda v: v / 10), min_size=1, max_size=40),
       st.sampled_from([0.5, 0.8, 0.9, 0.95]))
def test_conformal_quantile_against_brute_force(scores, level):
    assert fc.conformal_quantile(scores, level) == _brute_quantile(scores, level)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-50, 50).map(lambda v: v / 10), min_size=4, max_size=40))
def test_conformal_quantile_covers_in_sample(scores):
    """At least a share 0.8 (m + 1) / m >= 0.8 of the scores are at most Qhat."""
    q = fc.conformal_quantile(scores)
    assert sum(s <= q for s in scores) >= 0.8 * len(scores)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(forecasts(), st.integers(0, 400)), min_size=9, max_size=30),
       units)
def test_side_margins_cover_at_least_80_percent_in_sample(cal, unit):
    """Asymmetric margins: each side's conformal quantile at 0.9 leaves at most 10% of the
    calibration pools out on its side, so their intervals hold at least 80% of them."""
    # a pool certified by its known labels reads exactly those
    pools = [(c, k, n, k if max(c) == k else k + y % (n - k + 1)) for (c, k, n), y in cal]
    sides = [fc.side_scores(y, c, k, n, unit=unit) for c, k, n, y in pools]
    qhat = tuple(fc.conformal_quantile([e[i] for e in sides], 0.9) for i in (0, 1))
    assert qhat == tuple(_brute_quantile([e[i] for e in sides], 0.9) for i in (0, 1))
    inside = 0
    for c, k, n, y in pools:
        low, high = fc.calibrated_interval(c, k, n, qhat=qhat, unit=unit)
        inside += low <= y <= high
    assert inside >= 0.8 * len(pools)


def test_raw_interval_is_the_forecasts_quantiles():
    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    f = certlib.forecast(pool, draws=37, seed=3)
    q = f.quantiles
    assert fc.raw_interval(f.labels_read) == (q[0.1], q[0.5], q[0.9])


def test_forecast_carries_the_calibrated_interval():
    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    f = certlib.forecast(pool, draws=40, seed=1)
    assert f.interval == fc.calibrated_interval(f.labels_read, f.known, f.n)
    assert f.known <= f.interval[0] <= f.quantiles[0.5] <= f.interval[1] <= f.n
    d = f.to_dict()
    assert d["interval"] == list(f.interval)
    assert d["quantiles"]["0.1"] == f.quantiles[0.1]  # the raw quantiles stay


def test_known_labels_that_certify_give_the_exact_count():
    full = certlib.load_pool(ROOT / "sample_data/demo_binary.csv")
    f = certlib.forecast(full, draws=5)
    assert f.certified_now and f.interval == (full.n, full.n)
    assert fc.calibrated_interval([7, 7, 7], 7, 50, qhat=1.0) == (7, 7)


def test_strata_and_constants():
    names = [name for name, _ in fc.STRATA]
    assert sorted(fc.QHAT) == sorted(names) and fc.UNIT in fc.UNITS
    assert all(math.isfinite(v) for v in fc.QHAT.values())
    assert fc.stratum(0, 100) == "none"
    assert fc.stratum(1, 100) == names[1] and fc.stratum(100, 100) == names[-1]
    # the share the holdout bench calls "after a quarter" falls in one stratum
    assert {fc.stratum(n // 4, n) for n in (54, 171, 540)} == {"some"}
    uppers = [u for _, u in fc.STRATA]
    assert uppers == sorted(uppers) and uppers[0] == 0 and uppers[-1] == 1


def test_the_stratum_picks_the_margin():
    counts = list(range(101, 111))
    for known, name in ((0, "none"), (50, "some")):
        assert fc.calibrated_interval(counts, known, 200) == fc.calibrated_interval(
            counts, known, 200, qhat=fc.QHAT[name])


@pytest.mark.parametrize("call", [
    lambda: fc.calibrated_interval([3, 4], 0, 10, level=0.9),
    lambda: fc.calibrated_interval([3, 4], 0, 10, unit="rows"),
    lambda: fc.calibrated_interval([3, 4], 11, 10),
    lambda: fc.raw_interval([]),
    lambda: fc.conformal_quantile([]),
    lambda: fc.conformal_quantile([1.0], level=1.0),
])
def test_bad_arguments(call):
    with pytest.raises(ParameterError):
        call()


def test_too_few_scores_give_no_finite_margin():
    assert fc.conformal_quantile([0.1, 0.2, 0.3]) == math.inf
    assert fc.calibrated_interval([3, 4, 5], 0, 10, qhat=math.inf) == (0, 10)
    assert fc.calibrated_interval([3, 4, 5], 0, 10, qhat=(math.inf, 0.0)) == (0, 5)
    assert fc.calibrated_interval([3, 4, 5], 0, 10, qhat=(0.0, math.inf)) == (3, 10)
    assert np.isfinite(fc.conformal_quantile([0.1, 0.2, 0.3, 0.4]))
