"""certlib.forecast: exact replays of sampled labels, seeding, calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

import certlib
from certlib.errors import CertlibError
from certlib.planning.label_forecast import excess_at_budget, replay_draws
from certlib.policies.label_model import fit_label_sampler
from certlib.labelling.session import Session

ROOT = Path(__file__).resolve().parents[2]


def _stepped(pool, policy, tolerance, y, seed=0):
    """Reference: a Session started from the pool's known labels, stepped with y."""
    s = Session.from_pool_labels(pool, policy=policy, tolerance=tolerance, seed=seed)
    while not s.done:
        r = s.next_row()
        s = s.observe(r, pool.classes[int(y[r])])
    return s.t, s.decision.selected_index


def _partial(pool, known, rng):
    lab = np.full(pool.n, -1)
    rows = rng.choice(pool.n, size=known, replace=False)
    lab[rows] = pool.labels[rows]
    return pool.with_labels(lab)


@pytest.mark.parametrize("policy", ["static-range", "adaptive-pair-sum", "adaptive-range",
                                    "vma", "random", "expected-coverage"])
@pytest.mark.parametrize("known", [0, 9])
@pytest.mark.parametrize("tol", [0, 0.01])
def test_vectorised_replays_equal_session_stepping(policy, known, tol):
    full = certlib.load_pool(ROOT / "sample_data/panels/wine_s2_tree_k8.csv")
    rng = np.random.default_rng(known)
    pool = _partial(full, known, rng)
    Y = fit_label_sampler(pool).sample(np.random.default_rng(5), 12)
    counts, winners = replay_draws(pool, policy, Y=Y, tolerance=tol, seed=3)
    for d in range(Y.shape[0]):
        t, w = _stepped(pool, policy, tol, Y[d], seed=3)
        assert (counts[d], winners[d]) == (t, w)


@pytest.mark.parametrize("policy", ["static-range", "adaptive-pair-sum", "adaptive-range",
                                    "vma", "random", "model-selector", "expected-coverage"])
@pytest.mark.parametrize("known", [0, 9])
@pytest.mark.parametrize("tol", [0, 0.01])
def test_excess_at_budget_equals_session_stepping(policy, known, tol):
    """The capped block replay (and its stepping fallback) stops each draw where a Session
    with that budget stops: same worst-case excess, answer and certificate."""
    full = certlib.load_pool(ROOT / "sample_data/panels/wine_s2_tree_k8.csv")
    pool = _partial(full, known, np.random.default_rng(known))
    Y = fit_label_sampler(pool).sample(np.random.default_rng(5), 6)
    for budget in (0, known, known + 1, 15, 30, pool.n):
        exc, sel, cert = excess_at_budget(pool, policy, Y=Y, budget=budget, tolerance=tol,
                                          seed=3)
        for d in range(Y.shape[0]):
            s = Session.from_pool_labels(pool, policy=policy, tolerance=tol, seed=3,
                                         budget=budget)
            while not s.done:
                r = s.next_row()
                s = s.observe(r, pool.classes[int(Y[d, r])])
            assert (exc[d], sel[d], cert[d]) == (s.excess * pool.scale,
                                                 s.decision.selected_index, s.certified)


def test_excess_at_budget_bad_budget():
    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    Y = np.zeros((1, pool.n), dtype=int)
    for bad in (-1, 2.0, True):
        with pytest.raises(CertlibError, match="budget"):
            excess_at_budget(pool, "static-range", Y=Y, budget=bad)


@pytest.mark.parametrize("seed", range(3))
def test_no_known_labels_equals_replay_of_the_drawn_pool(seed):
    rng = np.random.default_rng(seed)
    n, K = 120, 4
    preds = rng.integers(0, 3, size=(K, n))
    confs = np.round(rng.uniform(1 / 3, 1, size=(K, n)), 2)
    pool = certlib.Pool.from_arrays(preds, confs, labels=[None] * n, classes=(0, 1, 2))
    Y = fit_label_sampler(pool).sample(rng, 8)
    for policy in ("adaptive-pair-sum", "static-pair-sum"):
        counts, _ = replay_draws(pool, policy, Y=Y, tolerance=0)
        for d in range(8):
            r = certlib.replay(pool.with_labels(Y[d]), policy=policy)
            assert counts[d] == r.labels_read


def test_seeded_and_reproducible():
    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    a = certlib.forecast(pool, draws=50, seed=7)
    b = certlib.forecast(pool, draws=50, seed=7)
    c = certlib.forecast(pool, draws=50, seed=8)
    assert a == b and a.labels_read == b.labels_read
    assert a.labels_read != c.labels_read
    assert len(a.labels_read) == 50 and a.known == 0
    q = a.quantiles
    assert q[0.1] <= q[0.5] <= q[0.9]
    srt = sorted(a.labels_read)
    assert q[0.5] == srt[24] and q[0.1] == srt[4] and q[0.9] == srt[44]
    assert a.p_certified(pool.n) == 1.0 and a.p_certified(q[0.9]) >= 0.9
    assert a.p_certified(min(a.labels_read) - 1) == 0.0
    # every draw needs at least the prelabel bound and at most n labels
    pre = certlib.prelabel_bound(pool).prelabel_bound
    assert pre <= min(a.labels_read) and max(a.labels_read) <= pool.n
    assert sum(a.winners.values()) == 50


def test_known_labels_count_as_read():
    full = certlib.load_pool(ROOT / "sample_data/demo_binary.csv")
    r = certlib.replay(full, policy="adaptive-pair-sum", budget=60)
    lab = np.full(full.n, -1)
    rows = [full.position(i) for i in r.order]
    lab[rows] = full.labels[rows]
    f = certlib.forecast(full.with_labels(lab), draws=30)
    assert f.known == 60 and min(f.labels_read) >= 61
    # a pool whose known labels already certify: every draw stops there
    f = certlib.forecast(full, draws=5)
    assert f.labels_read == (full.n,) * 5 and f.certified_now


def test_fallback_without_probabilities_says_so():
    rng = np.random.default_rng(0)
    pool = certlib.Pool.from_arrays(rng.integers(0, 2, size=(3, 60)),
                                    rng.uniform(0, 5, size=(3, 60)), labels=[None] * 60)
    f = certlib.forecast(pool, draws=20)
    assert f.label_model == "accuracy"
    assert "no usable probabilities" in f.label_model_note


def test_learns_from_the_labels_read():
    """Candidate A is always right, B is wrong where they disagree, both claim 0.9:
    with labels read the sampler must side with A (posterior weight and calibration)."""
    rng = np.random.default_rng(1)
    n = 400
    y = rng.integers(0, 2, size=n)
    b = np.where(rng.random(n) < 0.4, 1 - y, y)
    lab = np.full(n, -1)
    lab[:100] = y[:100]
    pool = certlib.Pool.from_arrays([y, b], np.full((2, n), 0.9), labels=lab)
    s = fit_label_sampler(pool)
    assert s.weights[0] > 0.99
    assert s.expert_q[0].mean() > 0.9 and s.expert_q[1].mean() < 0.75
    Y = s.sample(np.random.default_rng(0), 200)
    assert (Y[:, 100:] == y[100:]).mean() > 0.8


def test_bad_draws():
    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    with pytest.raises(CertlibError, match="draws"):
        certlib.forecast(pool, draws=0)


def _calibration_pool(s, n=200):
    """Labels drawn from p_label; three candidates that read p with noise of growing
    size (so one is clearly best, and the count depends on the labels), confidence
    = distance of their reading from 1/2."""
    rng = np.random.default_rng(1000 + s)
    p = rng.beta(0.7, 0.7, size=n)
    z = p[None, :] + rng.normal(0, 1, (3, n)) * np.array([0.05, 0.2, 0.3])[:, None]
    truth = (rng.random(n) < p).astype(int)
    pool = certlib.Pool.from_arrays((z > 0.5).astype(int), np.abs(z - 0.5),
                                    labels=[None] * n, extra={"p_label": tuple(p)})
    return pool, truth


def _coverage(seeds, shrink):
    hits = 0
    for s in range(seeds):
        pool, truth = _calibration_pool(s)
        sampler = fit_label_sampler(pool, shrink=shrink, jitter=0.0)
        assert sampler.source == "p_label"
        f = certlib.forecast(pool, draws=200, seed=s, sampler=sampler)
        real = certlib.replay(pool.with_labels(truth), policy="adaptive-pair-sum").labels_read
        q = f.quantiles
        hits += q[0.1] <= real <= q[0.9]
    return binomtest(hits, seeds).proportion_ci(0.99, method="exact"), hits


def test_calibration_when_labels_follow_the_stated_probabilities():
    """Labels drawn from the pool's own p_label: the 10-90% interval of the forecast
    (the label model reduced to the stated probabilities: no shrinkage, no random
    recalibration) covers the realised count on about 80% of seeds (exact binomial)."""
    ci, hits = _coverage(100, shrink=0.0)
    assert ci.low <= 0.8 <= ci.high, hits


def test_calibration_check_catches_a_wrong_model():
    """The same check fails for a label model that is wrong (probabilities shrunk 60%
    towards 1/2): the test above can fail."""
    ci, hits = _coverage(60, shrink=0.6)
    assert ci.high < 0.8, hits


@pytest.mark.parametrize("conf, right", [(0.99, 0.7), (1 - 1e-6, 0.7), (0.6, 0.95), (None, 0.8)])
def test_platt_fit_is_the_penalised_optimum(conf, right):
    """The calibration fit reaches the maximum of its concave objective, also from
    saturated confidences (full Newton steps oscillated there and returned b = -3.1)."""
    from scipy.optimize import minimize

    from certlib.policies.label_model import _logit, _platt

    rng = np.random.default_rng(0)
    x = rng.normal(2, 1.5, 200) if conf is None else np.full(60, _logit(conf))
    c = (rng.random(x.size) < right).astype(float)
    X = np.stack([np.ones_like(x), x], axis=1)

    def neg(w):
        z = X @ w
        return -(c @ z - np.logaddexp(0, z).sum() - 10.0 * ((w - [0, 1]) ** 2).sum())

    ref = minimize(neg, [0.0, 1.0], method="Nelder-Mead",
                   options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 5000}).x
    got = np.array(_platt(x, c, 20.0))
    assert neg(got) <= neg(ref) + 1e-7
    assert np.allclose(got, ref, atol=1e-3)


def test_read_rows_of_confidence_one_keep_unread_rows_plausible():
    """A reads 60 disagreement rows at confidence 1 and is right on about 70% of them;
    its unread disagreement rows (confidence 0.8) must not be called almost surely wrong,
    and rows where every candidate agrees follow the consensus of the confidences."""
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    dis = np.arange(n) < 150
    a = np.where(dis & (rng.random(n) < 0.3), 1 - y, y)
    b = np.where(dis, 1 - a, a)
    ca = np.where(np.arange(n) < 60, 1.0, 0.8)
    lab = np.full(n, -1)
    lab[:60] = y[:60]
    pool = certlib.Pool.from_arrays([a, b], [ca, np.full(n, 0.7)], labels=lab)
    s = fit_label_sampler(pool)
    assert 0.4 < s.expert_q[0, 60:150].mean() < 0.9
    # agreement rows: both experts get sigmoid(mean logit(0.8, 0.7)) shrunk 5% to 1/2
    lo = 1 / (1 + np.exp(-(np.log(0.8 / 0.2) + np.log(0.7 / 0.3)) / 2))
    assert np.allclose(s.expert_q[:, 150:], 0.95 * lo + 0.025)
