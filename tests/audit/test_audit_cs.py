"""PrPl-EB confidence sequence (SPEC section 11)."""


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from certlib.audit import PrplEBState, prpl_eb
from certlib.errors import CertlibError, InvalidValueError, ParameterError

GOLDEN = np.array([0.2, 0.9, 0.4, 0.7, 0.1] * 200)


def test_golden_numbers_spec_section_11():
    # SPEC section 11 "Golden numbers": alpha = .05, c = 1/2, no running intersection.
    lo, hi = prpl_eb(GOLDEN, alpha=0.05, truncation=0.5)
    assert abs(lo[49] - 0.274492113163) < 1e-9 and abs(hi[49] - 0.645507886837) < 1e-9
    assert abs(lo[999] - 0.425560507867) < 1e-9 and abs(hi[999] - 0.494758081661) < 1e-9


def test_golden_numbers_streaming():
    s = PrplEBState.start(alpha=0.05)
    for v in GOLDEN:
        s = s.update(v)
    assert abs(s.lower - 0.425560507867) < 1e-9 and abs(s.upper - 0.494758081661) < 1e-9


@pytest.mark.parametrize("alpha,c", [(0.05, 0.5), (0.01, 0.5), (0.2, 0.8), (0.025, 0.25)])
@pytest.mark.parametrize("intersect", [False, True])
def test_matches_independent_ville_implementation(alpha, c, intersect):
    ville = pytest.importorskip("ville")
    rng = np.random.default_rng(int(alpha * 1000) + int(c * 10))
    x = rng.beta(0.5, 2.0, 3000)
    ref = ville.EmpiricalBernsteinCS(alpha=alpha, c=c, intersect=intersect).fit(x)
    lo, hi = prpl_eb(x, alpha=alpha, truncation=c, running_intersection=intersect)
    np.testing.assert_allclose(lo, ref.lower_, atol=1e-12)
    np.testing.assert_allclose(hi, ref.upper_, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=80), st.booleans(),
       st.floats(0.001, 0.5))
def test_streaming_equals_batch_on_every_prefix(xs, intersect, alpha):
    lo, hi = prpl_eb(xs, alpha=alpha, running_intersection=intersect)
    s = PrplEBState.start(alpha=alpha, running_intersection=intersect)
    for t, v in enumerate(xs):
        s = s.update(v)
        assert s.t == t + 1
        assert abs(s.lower - lo[t]) < 1e-12 and abs(s.upper - hi[t]) < 1e-12


def test_update_is_pure():
    s0 = PrplEBState.start()
    s1 = s0.update(0.3)
    assert s0.t == 0 and s1.t == 1 and s0.lower == 0.0


def test_running_intersection_is_nested_and_inside_raw():
    x = np.random.default_rng(1).random(2000)
    lo, hi = prpl_eb(x)
    ilo, ihi = prpl_eb(x, running_intersection=True)
    assert np.all(np.diff(ilo) >= 0) and np.all(np.diff(ihi) <= 0)
    assert np.all(ilo >= lo) and np.all(ihi <= hi)
    assert not np.allclose(ilo, lo)


def test_interval_clipped_to_unit_and_contains_mean_of_constant():
    lo, hi = prpl_eb(np.full(500, 0.3))
    assert np.all((lo >= 0) & (hi <= 1) & (lo <= 0.3) & (hi >= 0.3))
    assert hi[-1] - lo[-1] < 0.1


def test_one_million_points():
    """Speed is measured in bench/bench_audit.py, not asserted here."""
    lo, hi = prpl_eb(np.random.default_rng(0).random(1_000_000))
    assert lo.shape == hi.shape == (1_000_000,)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))


def test_empty_input_gives_empty_sequence():
    lo, hi = prpl_eb([])
    assert lo.size == 0 and hi.size == 0


def test_error_alpha_out_of_range():
    with pytest.raises(ParameterError, match="`alpha` must lie strictly between 0 and 1"):
        prpl_eb([0.5], alpha=1.5)


def test_error_truncation_out_of_range():
    with pytest.raises(ParameterError, match="`truncation` must lie strictly between 0 and 1"):
        prpl_eb([0.5], truncation=1.0)


def test_error_value_outside_unit_names_entry():
    with pytest.raises(InvalidValueError, match=r"`x` must lie in \[0, 1\]; entry 2 is 1.5"):
        prpl_eb([0.1, 0.2, 1.5])


def test_error_not_one_dimensional():
    with pytest.raises(InvalidValueError, match="one-dimensional"):
        prpl_eb(np.zeros((2, 2)))


def test_error_streaming_value_outside_unit():
    with pytest.raises(InvalidValueError, match=r"`x` must lie in \[0, 1\], got -0.1"):
        PrplEBState.start().update(-0.1)


def test_errors_are_certlib_errors():
    assert issubclass(ParameterError, CertlibError) and issubclass(CertlibError, ValueError)
