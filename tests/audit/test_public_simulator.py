"""The public simulator and baseline comparison: `certlib.audit.synthetic_stream` and
`certlib.audit.compare_baselines` (paper 002, sections 3 and 6.4).

* a seed fixes the stream, and another seed gives another one;
* on a large stream the simulated rates are the asked ones, judged with exact binomial
  (Clopper-Pearson) intervals: the disagreement rate rho, the share of disagreements on
  which the candidate is the wrong model, (1 + Delta / rho) / 2, and the labels' balance;
* every out-of-range setting raises `ParameterError` naming the parameter and the value;
* the comparison's Discern row is `certlib.audit.audit` run directly with the same
  settings, and its uniform row is the confidence sequence recomputed from the stream;
* the example of docs/audit.md, "Simulate before you label", runs as printed.
"""

from __future__ import annotations

import doctest
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

import certlib.audit
from certlib.audit import (BaselineComparison, BaselineRow, SyntheticStream, audit,
                           compare_baselines, prpl_eb, synthetic_stream)
from certlib.audit.baselines import METHODS
from certlib.audit.batch import REQUIRED
from certlib.audit.routing import uniforms
from certlib.errors import CertlibError, LabelError, ParameterError

ROOT = Path(__file__).resolve().parents[2]
#: Confidence of the exact intervals the simulated rates are judged by: a seeded stream
#: misses by chance with probability at most 1e-4 per interval.
CONFIDENCE = 0.9999


def covers(successes: int, trials: int, p: float) -> bool:
    ci = binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return ci.low <= p <= ci.high


def outcome(r):
    """An audit's outcome and settings as comparable data: a judge's routing holds
    pi = NaN, and NaN equals nothing, so results with a judge compare through this."""
    return (r.verdict, r.tier, r.stopping_time, r.labels_used, r.rho_interval,
            r.delta_interval, r.items_seen, r.needs_label, r.tier1_start, r.trace,
            r.config.to_dict())


def loss_difference(s: SyntheticStream) -> np.ndarray:
    return (s.candidate != s.labels).astype(int) - (s.incumbent != s.labels).astype(int)


# ----------------------------------------------------------- reproducibility
def test_the_same_seed_gives_the_same_stream():
    a = synthetic_stream(5000, rho=0.2, regression=0.05, seed=11)
    np.random.seed(123)  # the legacy global generator plays no part
    np.random.random(10)
    b = synthetic_stream(5000, 0.2, 0.05, seed=11)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype == np.int64
        np.testing.assert_array_equal(x, y)


def test_another_seed_gives_another_stream():
    a = synthetic_stream(5000, rho=0.2, regression=0.05, seed=11)
    b = synthetic_stream(5000, rho=0.2, regression=0.05, seed=12)
    assert not np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.incumbent != a.candidate, b.incumbent != b.candidate)


def test_the_default_seed_is_a_fixed_seed():
    for x, y in zip(synthetic_stream(1000, 0.3, 0.0), synthetic_stream(1000, 0.3, 0.0, seed=0)):
        np.testing.assert_array_equal(x, y)


def test_a_stream_unpacks_and_audits_like_its_three_arrays():
    s = synthetic_stream(4000, rho=0.3, regression=0.0, seed=3)
    f, g, y = s
    assert isinstance(s, tuple) and s.n == 4000 == f.size == g.size == y.size
    assert (s.incumbent is f) and (s.candidate is g) and (s.labels is y)
    assert audit(*s, epsilon=0.05) == audit(f, g, y, epsilon=0.05)
    cols = s.columns()
    assert set(REQUIRED) | {"label"} == set(cols)
    assert cols["pred_incumbent"] is f and cols["pred_candidate"] is g and cols["label"] is y


# ---------------------------------------------------------- simulated rates
@pytest.mark.parametrize("rho,regression", [(0.1, 0.02), (0.05, 0.0), (0.3, -0.12),
                                            (0.2, 0.2), (1.0, -1.0), (1.0, 0.25)])
def test_the_simulated_rates_are_the_asked_ones(rho, regression):
    n = 400_000
    s = synthetic_stream(n, rho=rho, regression=regression, seed=2024)
    f, g, y = s
    assert set(np.unique(np.concatenate([f, g, y])).tolist()) <= {0, 1}
    disagree = f != g
    # on an agreement both models are right; on a disagreement exactly one is wrong
    assert np.array_equal(f[~disagree], y[~disagree])
    assert np.array_equal((f != y) ^ (g != y), disagree)
    k = int(disagree.sum())
    candidate_wrong = int((disagree & (g != y)).sum())
    assert covers(k, n, rho), (k, n, rho)
    assert covers(candidate_wrong, k, (1 + regression / rho) / 2)
    assert covers(int(y.sum()), n, 0.5)
    # the properties are the realised rates
    assert s.empirical_rho == k / n
    assert math.isclose(s.empirical_regression, (2 * candidate_wrong - k) / n, abs_tol=1e-15)
    assert math.isclose(s.empirical_regression, loss_difference(s).mean(), abs_tol=1e-15)


def test_no_disagreement_at_rho_zero():
    s = synthetic_stream(2000, rho=0, regression=0, seed=5)
    assert np.array_equal(s.incumbent, s.labels) and np.array_equal(s.candidate, s.labels)
    assert s.empirical_rho == 0.0 == s.empirical_regression
    r = audit(*s, epsilon=0.05)
    assert (r.verdict, r.tier, r.labels_used) == ("safe", 0, 0)


# --------------------------------------------------------------- bad settings
BAD_STREAM = [
    ({"n": 0}, "n"), ({"n": -3}, "n"), ({"n": 2.5}, "n"), ({"n": 10.0}, "n"),
    ({"n": True}, "n"), ({"n": "100"}, "n"), ({"n": None}, "n"),
    ({"rho": -0.1}, "rho"), ({"rho": 1.5}, "rho"), ({"rho": math.nan}, "rho"),
    ({"rho": math.inf}, "rho"), ({"rho": True}, "rho"), ({"rho": "0.1"}, "rho"),
    ({"rho": 10 ** 400}, "rho"),
    ({"regression": 0.3}, "regression"), ({"regression": -0.2}, "regression"),
    ({"regression": math.nan}, "regression"), ({"regression": -math.inf}, "regression"),
    ({"regression": "0"}, "regression"), ({"regression": False}, "regression"),
    ({"rho": 0.0, "regression": 0.01}, "regression"),
    ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"), ({"seed": True}, "seed"),
    ({"seed": "7"}, "seed"),
]


@pytest.mark.parametrize("change,name", BAD_STREAM, ids=[repr(c) for c, _ in BAD_STREAM])
def test_a_bad_stream_setting_is_named(change, name):
    kwargs = {"n": 100, "rho": 0.1, "regression": 0.0, "seed": 0, **change}
    with pytest.raises(ParameterError) as info:
        synthetic_stream(**kwargs)
    message = str(info.value)
    assert f"`{name}`" in message and repr(change[name]) in message, message
    assert isinstance(info.value, CertlibError) and isinstance(info.value, ValueError)


def test_the_regression_bound_is_stated_with_rho():
    with pytest.raises(ParameterError, match=r"`regression` must lie in \[-rho, rho\] with "
                                             r"rho = 0.1 .*got 0.3"):
        synthetic_stream(100, rho=0.1, regression=0.3)


def test_the_seed_is_keyword_only():
    with pytest.raises(TypeError):
        synthetic_stream(100, 0.1, 0.0, 1)


BAD_COMPARISON = [
    ({"ppi_rate": 0}, "ppi_rate"), ({"ppi_rate": 1.5}, "ppi_rate"),
    ({"ppi_rate": math.nan}, "ppi_rate"), ({"ppi_rate": True}, "ppi_rate"),
    ({"ppi_rate": "0.5"}, "ppi_rate"),
    ({"active_floor": 0.0}, "active_floor"), ({"active_floor": -0.1}, "active_floor"),
    ({"active_floor": None}, "active_floor"), ({"active_floor": 10 ** 400}, "active_floor"),
    ({"epsilon": 0}, "epsilon"), ({"epsilon": -0.02}, "epsilon"),
    ({"delta": 1.5}, "delta"), ({"delta": 0}, "delta"),
    ({"seed": -1}, "seed"), ({"pi": 0}, "pi"), ({"pi": 1.2}, "pi"),
    ({"truncation": 1.0}, "truncation"),
]


@pytest.mark.parametrize("change,name", BAD_COMPARISON, ids=[repr(c) for c, _ in BAD_COMPARISON])
def test_a_bad_comparison_setting_is_named(change, name):
    s = synthetic_stream(500, rho=0.2, regression=0.0, seed=1)
    with pytest.raises(ParameterError) as info:
        compare_baselines(*s, **{"epsilon": 0.05, **change})
    message = str(info.value)
    assert f"`{name}`" in message and repr(change[name]) in message, message


def test_the_comparison_settings_are_keyword_only():
    s = synthetic_stream(500, rho=0.2, regression=0.0, seed=1)
    with pytest.raises(TypeError):
        compare_baselines(*s, 0.05)


def test_a_missing_label_a_baseline_pays_for_is_named():
    # Discern pays only for disagreements once Tier 1 runs; uniform labelling pays for
    # item 1, an agreement here, whose label is taken away
    s = synthetic_stream(20_000, rho=0.2, regression=0.0, seed=9)
    first_agreement = int(np.flatnonzero(s.incumbent == s.candidate)[0])
    y = s.labels.astype(float)
    y[first_agreement] = np.nan
    assert audit(s.incumbent, s.candidate, y, epsilon=0.05).needs_label is None
    with pytest.raises(LabelError, match=f"baseline `uniform` needs the label of item "
                                         f"{first_agreement + 1} \\(index {first_agreement}\\)"):
        compare_baselines(s.incumbent, s.candidate, y, epsilon=0.05)


# ------------------------------------------------ the comparison and the audit
CASES = [  # (rho, regression, settings): benign, regressing and improving updates
    (0.2, 0.0, {"epsilon": 0.05}),
    (0.08, 0.0, {"epsilon": 0.02, "seed": 3}),
    (0.3, 0.1, {"epsilon": 0.02, "delta": 0.1}),
    (0.25, -0.05, {"epsilon": 0.03, "pi": 1.0, "seed": 1}),
    (0.02, 0.0, {"epsilon": 0.05}),                      # Tier 0: zero labels
    (0.3, 0.0, {"epsilon": 0.05, "pi": 0.25, "pi_min": 0.1, "truncation": 0.3}),
]


@pytest.mark.parametrize("rho,regression,settings", CASES,
                         ids=[f"rho={c[0]},Delta={c[1]}" for c in CASES])
def test_the_discern_row_is_the_audit_run_directly(rho, regression, settings):
    s = synthetic_stream(60_000, rho=rho, regression=regression, seed=77)
    cmp = compare_baselines(*s, **settings)
    direct = audit(*s, **settings)
    assert isinstance(cmp, BaselineComparison)
    assert tuple(r.method for r in cmp.rows) == METHODS
    assert all(isinstance(r, BaselineRow) for r in cmp.rows)
    row = cmp.by_method()["discern"]
    assert row == cmp.rows[0]
    assert (row.verdict, row.stopping_time, row.labels_used, row.delta_interval) == \
           (direct.verdict, direct.stopping_time, direct.labels_used, direct.delta_interval)
    assert cmp.discern_result == direct
    np.testing.assert_array_equal(cmp.discern_result.delta_upper, direct.delta_upper)
    assert cmp.to_dict() == {"baselines": [r.to_dict() for r in cmp.rows]}


@pytest.mark.parametrize("rho,regression,settings", CASES,
                         ids=[f"rho={c[0]},Delta={c[1]}" for c in CASES])
def test_the_uniform_row_is_the_confidence_sequence_on_every_item(rho, regression, settings):
    """Uniform labelling recomputed from the stream: PrPl-EB at the whole delta on
    (D_t + 1) / 2, the audit's running intersection, Safe when upper < eps and
    Regression when lower > 0 (the module's verdict rule)."""
    s = synthetic_stream(60_000, rho=rho, regression=regression, seed=77)
    row = compare_baselines(*s, **settings).by_method()["uniform"]
    cfg = audit(*s, **settings).config
    lo, hi = prpl_eb((loss_difference(s) + 1) / 2, cfg.delta, truncation=cfg.truncation,
                     running_intersection=True)
    lo, hi = 2 * lo - 1, 2 * hi - 1
    fired = np.flatnonzero((lo > 0) | (hi < cfg.epsilon))
    if fired.size == 0:
        assert (row.verdict, row.stopping_time, row.labels_used) == ("continue", None, s.n)
        return
    t = int(fired[0])
    assert row.verdict == ("regression" if lo[t] > 0 else "safe")
    assert row.stopping_time == row.labels_used == t + 1
    assert row.delta_interval == (float(lo[t]), float(hi[t]))


@pytest.mark.parametrize("rho,regression,settings", CASES[:3],
                         ids=[f"rho={c[0]},Delta={c[1]}" for c in CASES[:3]])
def test_the_ppi_row_pays_for_the_shared_draws_below_its_rate(rho, regression, settings):
    s = synthetic_stream(60_000, rho=rho, regression=regression, seed=77)
    row = compare_baselines(*s, **settings, ppi_rate=0.4).by_method()["ppi"]
    end = s.n if row.stopping_time is None else row.stopping_time
    assert row.labels_used == int((uniforms(settings.get("seed", 0), 0, end) < 0.4).sum())


def test_every_method_finds_a_clear_regression_and_a_clear_safe_update():
    # Delta far above 0 and Delta = 0 far below eps: a sound verdict on either side, for
    # Discern as for the audit itself
    bad = synthetic_stream(100_000, rho=0.3, regression=0.15, seed=8)
    good = synthetic_stream(100_000, rho=0.3, regression=0.0, seed=8)
    for stream, verdict in ((bad, "regression"), (good, "safe")):
        cmp = compare_baselines(*stream, epsilon=0.1)
        assert audit(*stream, epsilon=0.1).verdict == verdict
        assert {r.method: r.verdict for r in cmp.rows} == dict.fromkeys(METHODS, verdict)


def test_a_judge_reaches_every_method_and_discern_stays_the_audit():
    s = synthetic_stream(30_000, rho=0.2, regression=0.0, seed=4)
    judge = np.random.default_rng(4).random(s.n)
    with_judge = compare_baselines(*s, epsilon=0.05, judge=judge)
    assert outcome(with_judge.discern_result) == outcome(audit(*s, epsilon=0.05, judge=judge))
    assert with_judge.discern_result.config.routing.kind == "judge"
    assert with_judge.rows[1] == compare_baselines(*s, epsilon=0.05).rows[1]  # no judge used
    assert with_judge.rows[3] != compare_baselines(*s, epsilon=0.05).rows[3]


# ------------------------------------------------------------ the public face
def test_the_names_are_exported_from_certlib_audit():
    for name in ("synthetic_stream", "SyntheticStream", "compare_baselines",
                 "BaselineComparison", "BaselineRow"):
        assert name in certlib.audit.__all__
    assert certlib.audit.synthetic_stream is certlib.audit.synthetic.synthetic_stream
    assert certlib.audit.compare_baselines is certlib.audit.baselines.compare_baselines


def _docs_example() -> str:
    text = (ROOT / "docs" / "audit.md").read_text()
    section = text.split("## Simulate before you label", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```pycon\n(.*?)```", section, flags=re.S)
    assert blocks, "the section holds no pycon example"
    return "\n".join(blocks)


def test_the_manuals_example_prints_what_it_shows():
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner()
    test = parser.get_doctest(_docs_example(), {}, "Simulate before you label",
                              "docs/audit.md", 0)
    result = runner.run(test)
    assert result.attempted >= 8 and result.failed == 0
