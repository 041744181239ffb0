"""Discern two-tier audit: tiers, routing, streaming, slices, ledger, window,
baselines, record and verifier, input errors (SPEC section 11)."""

import json

import numpy as np
import pytest

from certlib.audit import AuditState, audit
from certlib.audit.baselines import compare_baselines
from certlib.audit.ledger import PromotionLedger
from certlib.audit.record import make_record, parse_record, stream_hash, verify_record
from certlib.audit.routing import uniforms
from certlib.audit.window import audit_windowed
from certlib.errors import InvalidValueError, LabelError, ParameterError, PoolFileError
from certlib.audit.synthetic import synthetic_stream


gen = synthetic_stream


# ---------------------------------------------------------------- tiers
def test_tier0_certifies_small_rho_with_zero_labels():
    f, g, y = gen(20000, 0.004, 0.0, seed=1)      # rho well below eps / (2B) = 0.025
    r = audit(f, g, y, epsilon=0.05)
    assert (r.verdict, r.tier, r.labels_used) == ("safe", 0, 0)
    assert r.rho_interval[1] < 0.05 and r.trace == ()
    assert r.stopping_time == int(np.flatnonzero(r.rho_upper < 0.05)[0]) + 1


@pytest.mark.parametrize("tier1_from", [0.5, 1.0, 0.25])
def test_tier1_dormant_until_tier0_shows_rho_above_its_share_of_eps(tier1_from):
    f, g, y = gen(20000, 0.2, 0.0, seed=2)
    r = audit(f, g, y, epsilon=0.05, tier1_from=tier1_from)
    start = r.tier1_start
    assert start is not None and r.tier == 1 and r.config.tier1_from == tier1_from
    # Tier 1 starts on the item after the first with B * lower_rho >= tier1_from * eps.
    at = tier1_from * 0.05
    assert np.all(r.rho_lower[:start - 2] < at) and r.rho_lower[start - 2] >= at
    assert min(e.t for e in r.trace) >= start
    assert np.all(r.delta_lower[:start - 1] == -1.0)


def test_tier1_from_defaults_to_half_and_is_checked():
    assert audit([0] * 50, [0] * 50, epsilon=0.05).config.tier1_from == 0.5
    for bad in (0, -0.1, 1.5, float("nan"), "x"):
        with pytest.raises(ParameterError, match="tier1_from"):
            audit([0] * 50, [0] * 50, epsilon=0.05, tier1_from=bad)


# Streams at the tolerance: with Tier 1 waiting until Tier 0 could no longer certify
# (tier1_from = 1), B rho = eps stalled (neither tier ever finished).
STALL_STREAMS = 8


@pytest.mark.parametrize("rho_over_eps", [0.5, 1.0, 2.0])
def test_no_stall_at_the_tolerance(rho_over_eps):
    eps, n = 0.01, 150_000
    labels, uniform = [], []
    for s in range(STALL_STREAMS):
        f, g, y = gen(n, rho_over_eps * eps, 0.0, seed=700 + s)
        b = compare_baselines(f, g, y, epsilon=eps, seed=s)
        r = b.discern_result
        assert r.verdict == "safe", (s, r.verdict, r.items_seen)
        (u,) = [row for row in b.rows if row.method.startswith("uniform")]
        labels.append(r.labels_used)
        uniform.append(u.labels_used if u.verdict == "safe" else n)
    if rho_over_eps == 0.5:  # the zero-label regime B rho <= eps/2: Tier 0 alone
        assert np.median(labels) == 0
    assert np.median(labels) <= np.median(uniform) / 10, (labels, uniform)


def test_the_old_rule_stalls_at_the_tolerance():
    f, g, y = gen(150_000, 0.01, 0.0, seed=700)
    assert audit(f, g, y, epsilon=0.01, tier1_from=1.0).verdict == "continue"
    assert audit(f, g, y, epsilon=0.01).verdict == "safe"


def test_regression_at_the_tolerance_is_caught():
    f, g, y = gen(150_000, 0.02, 0.02, seed=9)  # every disagreement a regression
    r = audit(f, g, y, epsilon=0.01)
    assert (r.verdict, r.tier) == ("regression", 1) and r.delta_interval[0] > 0


def test_regression_detected():
    f, g, y = gen(20000, 0.2, 0.1, seed=3)
    r = audit(f, g, y, epsilon=0.05)
    assert (r.verdict, r.tier) == ("regression", 1)
    assert r.delta_interval[0] > 0 and r.labels_used == len(r.trace)


def test_tier1_safe_on_benign_moderate_rho():
    f, g, y = gen(40000, 0.2, -0.02, seed=4)
    r = audit(f, g, y, epsilon=0.05)
    assert (r.verdict, r.tier) == ("safe", 1) and r.delta_interval[1] < 0.05


def test_trace_is_exactly_the_seeded_draws_on_disagreements():
    f, g, y = gen(30000, 0.3, 0.0, seed=5)
    r = audit(f, g, y, epsilon=0.05, pi=0.4, seed=11)
    u = uniforms(11, 0, 30000)
    end = r.stopping_time
    assert end is not None
    expect = [t + 1 for t in range(r.tier1_start - 1, end) if f[t] != g[t] and u[t] < 0.4]
    assert [e.t for e in r.trace] == expect
    assert all(e.pi == 0.4 and e.label == y[e.t - 1] for e in r.trace)


def test_seed_changes_draws_and_is_reproducible():
    f, g, y = gen(5000, 0.3, 0.0, seed=6)
    a1, a2, b = (audit(f, g, y, epsilon=0.05, seed=s) for s in (1, 1, 2))
    assert a1.trace == a2.trace and a1.trace != b.trace


def test_judge_routing_probabilities():
    f, g, y = gen(5000, 0.3, 0.0, seed=7)
    judge = np.random.default_rng(0).random(5000)
    r = audit(f, g, y, epsilon=0.05, judge=judge, pi_min=0.2)
    assert r.trace and all(abs(e.pi - (0.2 + 0.8 * judge[e.t - 1])) < 1e-12 for e in r.trace)
    assert r.config.c == pytest.approx(1 / 0.2)


def test_uniforms_blocks_are_consistent():
    assert np.array_equal(uniforms(4, 4000, 9000), uniforms(4, 0, 9000)[4000:])


# ---------------------------------------------------------- streaming form
@pytest.mark.parametrize("rho,delta,judge", [(0.01, 0.0, False), (0.25, 0.0, False),
                                              (0.25, 0.12, True), (0.3, -0.05, True)])
def test_streaming_equals_batch_on_every_prefix(rho, delta, judge):
    f, g, y = gen(6000, rho, delta, seed=8)
    j = np.random.default_rng(1).random(6000) if judge else None
    r = audit(f, g, y, epsilon=0.05, judge=j, seed=3)
    s = AuditState.start(epsilon=0.05, judge=judge, seed=3)
    for t in range(6000):
        s = s.observe(f[t], g[t], y[t], judge=None if j is None else j[t])
        assert abs(s.rho_interval[0] - r.rho_lower[t]) < 1e-12
        assert abs(s.rho_interval[1] - r.rho_upper[t]) < 1e-12
        assert abs(s.delta_interval[0] - r.delta_lower[t]) < 1e-9
        assert abs(s.delta_interval[1] - r.delta_upper[t]) < 1e-9
        if s.verdict != "continue":
            break
    assert (s.verdict, s.tier, s.stopping_time, s.labels_used) == \
        (r.verdict, r.tier, r.stopping_time, r.labels_used)
    assert s.trace == r.trace



@pytest.mark.parametrize("rho, delta", [(0.25, 0.0), (0.3, 0.12)])
def test_betting_streaming_equals_batch(rho, delta):
    f, g, y = gen(3000, rho, delta, seed=8)
    r = audit(f, g, y, epsilon=0.05, seed=3, confidence="betting")
    assert r.config.confidence == "betting" and r.tier1_start is not None
    s = AuditState.start(epsilon=0.05, seed=3, confidence="betting")
    for t in range(3000):
        s = s.observe(f[t], g[t], y[t])
        assert abs(s.rho_interval[0] - r.rho_lower[t]) < 1e-12
        assert abs(s.rho_interval[1] - r.rho_upper[t]) < 1e-12
        assert abs(s.delta_interval[0] - r.delta_lower[t]) < 1e-9
        assert abs(s.delta_interval[1] - r.delta_upper[t]) < 1e-9
        if s.verdict != "continue":
            break
    assert (s.verdict, s.tier, s.stopping_time, s.labels_used, s.trace) == \
        (r.verdict, r.tier, r.stopping_time, r.labels_used, r.trace)


def test_betting_is_tier1_only_and_checked():
    f, g, y = gen(20000, 0.2, 0.0, seed=2)
    a = audit(f, g, y, epsilon=0.05)
    b = audit(f, g, y, epsilon=0.05, confidence="betting")
    # Tier 0 runs PrPl-EB whatever Tier 1 runs: same rho trajectory, same Tier-1 start
    m = min(a.rho_lower.size, b.rho_lower.size)
    assert np.array_equal(a.rho_lower[:m], b.rho_lower[:m])
    assert a.tier1_start == b.tier1_start
    assert b.config.to_dict()["confidence"] == "betting"
    with pytest.raises(ParameterError, match="`confidence` must be one of prpl-eb, betting"):
        audit(f, g, y, epsilon=0.05, confidence="hoeffding")


def test_baselines_run_the_audits_settings_and_aim_at_their_own_points():
    from certlib.audit.betting import betting_cs

    f, g, y = gen(20000, 0.2, 0.0, seed=2)
    b = compare_baselines(f, g, y, epsilon=0.05, confidence="betting", tier1_from=1.0)
    r = audit(f, g, y, epsilon=0.05, confidence="betting", tier1_from=1.0)
    assert b.discern_result.config == r.config and b.by_method()["discern"].labels_used == \
        r.labels_used
    # uniform labelling's increments D_t lie in [-1, 1]: its bets aim at Delta = 0 and eps
    # mapped with c = 1, not with Discern's c = 2
    d = (g != y).astype(float) - (f != y).astype(float)
    lo, hi = betting_cs((d + 1) / 2, 0.05, running_intersection=True, bets="boundary",
                        target=(0.5, (0.05 + 1) / 2))
    fire = np.flatnonzero((2 * lo - 1 > 0) | (2 * hi - 1 < 0.05))
    assert b.by_method()["uniform"].labels_used == int(fire[0]) + 1


def test_verdict_precedence_is_one_rule_for_batch_and_streaming():
    """Module docstring of certlib.audit.core: at one item Regression beats Tier-0 Safe
    beats Tier-1 Safe; an earlier item beats any precedence."""
    from certlib.audit.core import VERDICT_ORDER, _first_verdict

    assert VERDICT_ORDER == (("regression", 1), ("safe", 0), ("safe", 1))
    everything = {("safe", 1): 5, ("safe", 0): 5, ("regression", 1): 5}
    assert _first_verdict(everything) == (5, "regression", 1)
    assert _first_verdict({("safe", 1): 5, ("safe", 0): 5}) == (5, "safe", 0)
    assert _first_verdict({("safe", 1): 4, ("safe", 0): 5, ("regression", 1): None}) == (
        4, "safe", 1)
    assert _first_verdict({("safe", 0): None}) is None


def test_streaming_trace_of_bool_labels_equals_batch():
    """A label given as True/False is the class 1/0 in both traces."""
    f, g, y = gen(4000, 0.25, 0.0, seed=8)
    yb = y.astype(bool)
    r = audit(f, g, yb, epsilon=0.05, seed=3)
    s = AuditState.start(epsilon=0.05, seed=3)
    for t in range(4000):
        s = s.observe(f[t], g[t], yb[t])
        if s.verdict != "continue":
            break
    assert r.labels_used > 0 and s.trace == r.trace
    assert all(type(e.label) is int for e in s.trace)

def test_streaming_requires_routed_label():
    f, g, y = gen(3000, 0.3, 0.0, seed=9)
    s = AuditState.start(epsilon=0.05)
    for t in range(3000):
        if s.route(f[t], g[t]).needs_label:
            with pytest.raises(LabelError, match=f"item {t + 1} needs a label"):
                s.observe(f[t], g[t])
            return
        s = s.observe(f[t], g[t])
    pytest.fail("no label was ever routed")


def test_streaming_refuses_items_after_verdict():
    s = AuditState.start(epsilon=0.5)
    while s.verdict == "continue":
        s = s.observe(0, 0)
    with pytest.raises(ParameterError, match="already reached its verdict"):
        s.observe(0, 0)


# ---------------------------------------------------------- missing labels
def test_no_labels_stops_at_first_needed_row_then_resumes():
    f, g, y = gen(8000, 0.3, 0.0, seed=10)
    r = audit(f, g, None, epsilon=0.05)
    assert r.verdict == "continue" and r.stopping_time is None
    row = r.needs_label
    assert f[row] != g[row] and r.items_seen == row and r.labels_used == 0
    partial = np.full(8000, np.nan)
    partial[row] = y[row]
    r2 = audit(f, g, partial, epsilon=0.05)
    assert r2.needs_label > row and r2.labels_used == 1
    full = audit(f, g, y, epsilon=0.05)
    assert row + 1 == full.trace[0].t and r2.needs_label + 1 == full.trace[1].t


def test_partially_labelled_stream_replays_as_far_as_labels_go():
    f, g, y = gen(8000, 0.3, 0.0, seed=11)
    full = audit(f, g, y, epsilon=0.05)
    cut = full.trace[5].t - 1                 # labels known on rows < cut
    lab = [int(v) if i < cut else None for i, v in enumerate(y)]
    r = audit(f, g, lab, epsilon=0.05)
    assert r.verdict == "continue" and r.needs_label == cut and r.labels_used == 5
    assert np.allclose(r.delta_upper, full.delta_upper[:cut])


def test_tier0_verdict_needs_no_labels_at_all():
    f, g, _ = gen(20000, 0.004, 0.0, seed=12)
    r = audit(f, g, None, epsilon=0.05)
    assert (r.verdict, r.tier, r.needs_label) == ("safe", 0, None)


def test_text_classes():
    f = np.array(["cat", "dog"] * 3000, dtype=object)
    g = f.copy()
    g[::7] = "bird"
    y = f.copy()
    r = audit(f, g, y, epsilon=0.2)
    assert r.verdict == "safe"


# ------------------------------------------------------------------ slices
def test_slices_safe_overall_regressing_on_one_slice():
    rng = np.random.default_rng(13)
    n = 30000
    f, g, y = gen(n, 0.2, -0.03, seed=14)
    sl = rng.choice(["a", "b", "c", "d"], n)
    bad = (sl == "d") & (f != g)
    g[bad] = 1 - y[bad]          # candidate wrong on every disagreement of slice d
    f[bad] = y[bad]
    r = audit(f, g, y, epsilon=0.05, slices=sl)
    table = {s.slice: s for s in r.slices}
    assert table["d"].verdict == "regression" and table["d"].delta_interval[0] > 0
    assert all(table[k].verdict != "regression" for k in "abc")
    assert sum(s.items for s in r.slices) == r.items_seen
    assert r.labels_used >= max(s.labels_used for s in r.slices)


# ---------------------------------------------------------- ledger, window
def test_ledger_schedule_sums_to_lifetime_budget(tmp_path):
    led = PromotionLedger.start(0.05)
    total = sum(led.delta_for(k) for k in range(1, 200000))
    assert total < 0.05 and total > 0.05 * 0.9999
    for i in range(3):
        led = led.record({"verdict": "safe", "i": i})
    assert led.k == 4 and led.next_delta() == pytest.approx(0.05 * 6 / (np.pi ** 2 * 16))
    led.save(tmp_path / "l.json")
    again = PromotionLedger.load(tmp_path / "l.json")
    assert again.k == 4 and again.spent == pytest.approx(led.spent) and again.spent < 0.05


def test_ledger_unreadable_file(tmp_path):
    p = tmp_path / "l.json"
    p.write_text("not json")
    with pytest.raises(PoolFileError, match="cannot be read as a promotion ledger"):
        PromotionLedger.load(p)


def test_window_tracks_drift():
    f1, g1, y1 = gen(4000, 0.3, -0.05, seed=15)
    f2, g2, y2 = gen(4000, 0.3, 0.25, seed=16)
    f, g, y = (np.concatenate(p) for p in ((f1, f2), (g1, g2), (y1, y2)))
    w = audit_windowed(f, g, y, window=4000, epsilon=0.05)
    assert [x.verdict for x in w.windows] == ["safe", "regression"]
    assert w.windows[1].start == 4001 and w.windows[1].stopping_time > 4000
    assert w.labels_used == sum(x.labels_used for x in w.windows)


def test_error_window_not_positive():
    with pytest.raises(ParameterError, match="`window` must be a positive integer"):
        audit_windowed([0], [0], None, window=0, epsilon=0.1)


# --------------------------------------------------------------- baselines
def test_baselines_side_by_side_discern_uses_fewer_labels():
    f, g, y = gen(40000, 0.2, 0.0, seed=17)
    cmp = compare_baselines(f, g, y, epsilon=0.05).by_method()
    assert set(cmp) == {"discern", "uniform", "ppi", "active"}
    assert cmp["discern"].verdict == "safe"
    assert cmp["discern"].labels_used * 2 < cmp["uniform"].labels_used
    assert cmp["uniform"].labels_used == cmp["uniform"].stopping_time


def test_error_baselines_need_labels():
    f, g, _ = gen(3000, 0.3, 0.0, seed=18)
    with pytest.raises(LabelError, match="baselines replay fully labelled streams only"):
        compare_baselines(f, g, None, epsilon=0.05)
    # the item is counted from 1, as on the Audit page, and its array index is given too
    first = int(audit(f, g, None, epsilon=0.05).needs_label)
    with pytest.raises(LabelError, match=f"Discern needs the label of item {first + 1} "
                       f"\\(index {first}\\)"):
        compare_baselines(f, g, None, epsilon=0.05)


# ------------------------------------------------------- record + verifier
def test_record_verifies_and_detects_tampering():
    f, g, y = gen(6000, 0.3, 0.0, seed=19)
    sl = np.where(np.arange(6000) % 2 == 0, "x", "y")
    r = audit(f, g, y, epsilon=0.05, slices=sl)
    rec = json.loads(json.dumps(make_record(r, stream_hash(f, g, judge=None, slices=sl))))
    assert verify_record(rec, f, g, y, judge=None, slices=sl).ok
    assert verify_record(rec, f, g, None, judge=None, slices=sl).ok  # labels come from the trace
    bad = json.loads(json.dumps(rec))
    bad["delta_interval"][1] += 1e-6
    v = verify_record(bad, f, g, y, judge=None, slices=sl)
    assert not v.ok and any("delta_interval" in m for m in v.mismatches)
    bad = json.loads(json.dumps(rec))
    bad["trace"][0][2] = 1 - bad["trace"][0][2]
    v = verify_record(bad, f, g, y, judge=None, slices=sl)
    assert not v.ok and any("trace label of item" in m for m in v.mismatches)
    g2 = g.copy()
    g2[0] = 1 - g2[0]
    v = verify_record(rec, f, g2, y, judge=None, slices=sl)
    assert not v.ok and any("stream hash" in m for m in v.mismatches)


def test_a_record_made_before_tier1_from_verifies_by_its_own_rule():
    f, g, y = gen(20000, 0.2, 0.0, seed=2)
    old = audit(f, g, y, epsilon=0.05, tier1_from=1.0)
    assert old.tier1_start != audit(f, g, y, epsilon=0.05).tier1_start
    rec = json.loads(json.dumps(make_record(old, stream_hash(f, g))))
    del rec["config"]["tier1_from"], rec["config"]["confidence"]  # what such a record holds
    assert verify_record(rec, f, g, y).ok
    rec["config"]["tier1_from"] = 0.5  # another rule: the recomputed audit differs
    v = verify_record(rec, f, g, y)
    assert not v.ok and v.mismatches


def test_a_betting_record_verifies_and_names_its_sequence():
    f, g, y = gen(6000, 0.3, 0.0, seed=19)
    r = audit(f, g, y, epsilon=0.05, confidence="betting")
    rec = json.loads(json.dumps(make_record(r, stream_hash(f, g))))
    assert rec["config"]["confidence"] == "betting" and verify_record(rec, f, g, y).ok
    rec["config"]["confidence"] = "prpl-eb"  # the other sequence: other intervals
    v = verify_record(rec, f, g, y)
    assert not v.ok and any("interval" in m for m in v.mismatches)


@pytest.mark.parametrize("key, value", [
    ("epsilon", 0.01), ("delta", 0.001), ("delta0", 0.0001), ("delta1", 0.0001),
    ("pi_min", 0.25), ("seed", 7), ("routing", {"kind": "fixed", "pi": 1.0, "pi_min": 1.0}),
    ("record_version", 99)])
def test_verifier_checks_the_settings_the_record_repeats(key, value):
    """A record repeats its settings beside `config`; a reader of "epsilon": 0.01 believes
    a stricter certificate, so a changed copy is a mismatch, as is a version we do not
    write."""
    f, g, y = gen(3000, 0.3, 0.0, seed=19)
    rec = json.loads(json.dumps(make_record(audit(f, g, y, epsilon=0.05),
                                            stream_hash(f, g, judge=None, slices=None))))
    assert key in rec and rec[key] != value and verify_record(rec, f, g, y).ok
    rec[key] = value
    v = verify_record(rec, f, g, y)
    assert not v.ok and len(v.mismatches) == 1 and f"`{key}`" in v.mismatches[0]


def _forged(rec, f, g, y, **change):
    """``rec`` with ``change`` made to its config (and the copies beside it), then with
    the verifier's own recomputed outcome written back, as a forger would."""
    forged = json.loads(json.dumps(rec))
    for key, value in change.items():
        if key == "routing_kind":
            forged["config"]["routing"]["kind"] = forged["routing"]["kind"] = value
            continue
        forged["config"][key] = value
        if key in forged:
            forged[key] = value
        if key == "pi_min":
            forged["config"]["routing"]["pi_min"] = forged["routing"]["pi_min"] = value
    v = verify_record(forged, f, g, y)
    if v.recomputed:
        forged.update({k: v for k, v in json.loads(json.dumps(v.recomputed)).items()})
    return verify_record(forged, f, g, y)


@pytest.mark.parametrize("change, message", [
    ({"B": 0.05}, "`config`: record says"),  # the loss range: 'safe' with no label
    ({"pi_min": 1.0}, "`pi_min` (1.0) must not exceed `pi` (0.5)"),
    ({"delta": 0.001}, "`delta0` + `delta1` (0.025 + 0.025) must not exceed `delta`"),
    ({"delta0": 0.9, "delta1": 0.9}, "must not exceed `delta` (0.05)"),
    ({"routing_kind": "Constant"}, "routing kind 'Constant'"),
    ({"running_intersection": "false"}, "running_intersection 'false' is not true or false"),
    ({"loss": "squared error"}, "`config`: record says"),
])
def test_verifier_rebuilds_the_settings_the_audit_runs_with(change, message):
    """The record's config goes through AuditConfig.make, and the whole config must be
    the one it gives: a forger who changed a setting and copied the verifier's own
    recomputation back (a regression turned 'safe' with B = 0.05 or pi_min > pi) fails."""
    f, g, y = gen(3000, 0.3, 0.0, seed=19)
    rec = json.loads(json.dumps(make_record(audit(f, g, y, epsilon=0.05, pi=0.5),
                                            stream_hash(f, g, judge=None, slices=None))))
    assert verify_record(rec, f, g, y).ok
    v = _forged(rec, f, g, y, **change)
    assert not v.ok and any(message in m for m in v.mismatches), v.mismatches


def test_verifier_needs_every_outcome_and_one_value_per_key(tmp_path):
    f, g, y = gen(6000, 0.3, 0.0, seed=19)
    sl = np.where(np.arange(6000) % 2 == 0, "x", "y")
    rec = json.loads(json.dumps(make_record(audit(f, g, y, epsilon=0.05, slices=sl),
                                            stream_hash(f, g, judge=None, slices=sl))))
    del rec["slices"]  # would hide a slice's regression
    assert verify_record(rec, f, g, y, judge=None, slices=sl).mismatches[0].startswith(
        "the record lacks `slices`")
    text = json.dumps(rec)
    doubled = text.replace('"verdict":', '"verdict": "safe", "verdict":', 1)
    with pytest.raises(PoolFileError, match="the key 'verdict' appears twice"):
        parse_record(doubled)


# ------------------------------------------------------------ input errors
def test_error_epsilon_not_positive():
    with pytest.raises(ParameterError, match="`epsilon` must be a positive number"):
        audit([0], [1], [0], epsilon=0)


def test_error_delta_outside_unit():
    with pytest.raises(ParameterError, match="`delta` must lie strictly between 0 and 1"):
        audit([0], [1], [0], epsilon=0.1, delta=1.0)


def test_error_delta_split_exceeds_delta():
    with pytest.raises(ParameterError, match=r"`delta0` \+ `delta1`"):
        audit([0], [1], [0], epsilon=0.1, delta=0.05, delta0=0.04, delta1=0.04)


def test_error_pi_outside_unit():
    with pytest.raises(ParameterError, match=r"`pi` must lie in \(0, 1\]"):
        audit([0], [1], [0], epsilon=0.1, pi=0)


def test_error_pi_min_above_pi():
    with pytest.raises(ParameterError, match="`pi_min` .* must not exceed `pi`"):
        audit([0], [1], [0], epsilon=0.1, pi=0.3, pi_min=0.5)


def test_error_pi_with_judge():
    with pytest.raises(ParameterError, match="`pi` and a judge cannot both be given"):
        audit([0], [1], [0], epsilon=0.1, pi=0.3, judge=[0.5])


def test_error_seed_negative():
    with pytest.raises(ParameterError, match="`seed` must be a non-negative integer"):
        audit([0], [1], [0], epsilon=0.1, seed=-1)


def test_error_length_mismatch():
    with pytest.raises(InvalidValueError, match="`incumbent` has 2 items but `candidate` has 1"):
        audit([0, 1], [1], None, epsilon=0.1)


def test_error_empty_stream():
    with pytest.raises(InvalidValueError, match="the stream is empty"):
        audit([], [], None, epsilon=0.1)


def test_error_nan_prediction_names_row():
    with pytest.raises(InvalidValueError, match="`candidate` at row 1 is missing \\(NaN\\)"):
        audit(np.array([0.0, 1.0]), np.array([0.0, np.nan]), None, epsilon=0.1)


def test_error_missing_prediction_names_row():
    with pytest.raises(InvalidValueError, match="`incumbent` at row 1 is missing"):
        audit(["a", None], ["a", "b"], None, epsilon=0.1)


def test_error_mixed_kinds_between_models():
    with pytest.raises(InvalidValueError, match="must hold the same kind of class value"):
        audit(["a", "b"], [0, 1], None, epsilon=0.1)


def test_error_text_label_with_numeric_predictions():
    with pytest.raises(LabelError, match="label at row 1 is 'yes'; expected a number"):
        audit([0, 1], [1, 1], [0, "yes"], epsilon=0.1)
    # numbers written as text are numbers, blank text is unlabelled (as in audit projects)
    assert audit([0, 1, 0], [1, 1, 0], ["0", " 1.0 ", " "], epsilon=0.1).to_dict() == \
        audit([0, 1, 0], [1, 1, 0], [0, 1, None], epsilon=0.1).to_dict()


def test_error_numeric_label_with_text_predictions():
    with pytest.raises(LabelError, match="label at row 0 is 1; expected text"):
        audit(["a", "b"], ["b", "b"], [1, None], epsilon=0.1)


def test_error_labels_wrong_length():
    with pytest.raises(InvalidValueError, match="`labels` must have one entry per item"):
        audit([0, 1], [1, 1], [0], epsilon=0.1)


def test_error_judge_out_of_range_names_row():
    with pytest.raises(InvalidValueError,
                       match=r"`judge` score at row 1 is 1.5; expected a number in \[0, 1\]"):
        audit([0, 1], [1, 1], [0, 1], epsilon=0.1, judge=[0.2, 1.5])


def test_error_slice_key_missing():
    with pytest.raises(InvalidValueError, match="slice key at row 1 is missing"):
        audit([0, 1], [1, 1], [0, 1], epsilon=0.1, slices=["a", None])


def test_fractional_label_among_whole_number_classes_is_refused():
    """0.5 among classes 0 and 1 is a typo, not a third class; with fractional
    predictions a fractional label stays a class value like any other."""
    from certlib.audit.core import make_stream
    from certlib.errors import LabelError

    with pytest.raises(LabelError, match=r"label at row 2 is 0.5; every prediction is a whole"):
        make_stream([0, 1, 1], [1, 1, 0], [0, None, 0.5])
    with pytest.raises(LabelError, match=r"label at row 0 is 2.5"):
        make_stream([0, 1, 1], [1, 1, 0], ["2.5", " ", "1"])
    make_stream([0.5, 1, 1], [1, 1, 0], [0, None, 0.5])
    s = make_stream([0, 1, 1], [1, 1, 0], [0, None, 3])  # a whole class nobody predicts
    assert s.has_label.sum() == 2
    with pytest.raises(Exception, match=r"`incumbent` at row 1 is missing"):
        make_stream([0, float("nan")], [1, 1])


def test_blank_text_prediction_is_missing_like_none():
    """One rule for empty cells (`is_empty_cell`): blank text is a missing prediction in
    the Python API too, not a class of its own."""
    from certlib.audit.core import make_stream

    with pytest.raises(InvalidValueError, match=r"`candidate` at row 1 is missing"):
        make_stream(["a", "b"], ["a", "  "])


def test_mixed_kinds_name_the_first_text_value():
    """One text cell makes a file's prediction column text: the message names it."""
    f = ["0", "1", "abc", "1"]
    with pytest.raises(InvalidValueError, match=r"`incumbent` at row 2 is 'abc'"):
        audit(f, [0, 1, 1, 1], None, epsilon=0.05)
    with pytest.raises(InvalidValueError, match=r"`candidate` at row 0 is 'x'"):
        audit([0, 1], ["x", "y"], None, epsilon=0.05)
