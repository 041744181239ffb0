"""The paper's numbers (SPEC section 9), each test citing its section of paper 000
("How Many Labels Does Model Choice Need?", /work/shared/papers/000_*.txt).

Monte-Carlo numbers are seeded and averaged; each tolerance is justified next to
its assertion by the standard error measured over the seeds used.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from certlib import Pool, Session, prelabel_bound, replay
from certlib.core.weights import augrc_weights

certificate = pytest.importorskip("certlib.certificates.certificate")
certify = certificate.certify

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


# ---------------------------------------------------------------------------- Figure 2
def figure2_pool(labels=(1, 0, 0, 0)):
    # confidence orders 1,2,3,4 (A) and 2,1,4,3 (B); ties favour A (listed first)
    return Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            labels=labels, names=["A", "B"])


def test_figure2_weights():
    """Paper section 3, Figure 2 (weights from eq. (2)): A = (7,5,3,1), B = (5,7,1,3)."""
    p = figure2_pool()
    assert p.weights.tolist() == [[7, 5, 3, 1], [5, 7, 1, 3]]
    assert augrc_weights(np.array([4, 3, 2, 1])).tolist() == [7, 5, 3, 1]
    assert augrc_weights(np.array([3, 4, 1, 2])).tolist() == [5, 7, 1, 3]


def test_figure2_risk_difference_all_16_labellings():
    """Paper section 3, Figure 2: r_A - r_B = 2y1 - 2y2 - 4y3 + 4y4 for every y in {0,1}^4."""
    p = figure2_pool()
    for y in itertools.product((0, 1), repeat=4):
        r = p.with_labels(np.array(y)).risks()
        assert r[0] - r[1] == 2 * y[0] - 2 * y[1] - 4 * y[2] + 4 * y[3], y


def test_figure2_static_range_trace():
    """Paper section 3, Figure 2: static range reads rows 3,4,1,2 and [L_AB, H_AB] goes
    [-6,6] -> [-2,6] -> [-2,2] -> [0,2] -> [2,2]; B is certified after the 4th label only."""
    p = figure2_pool()
    s = Session.start(p, policy="static-range")
    trace = [(int(s.lower()[0, 1]), int(s.upper()[0, 1]))]
    rows, certified = [], [s.certified]
    while not s.done:
        r = s.next_row()
        rows.append(r)
        s = s.observe(r, p.classes[p.labels[r]])
        trace.append((int(s.lower()[0, 1]), int(s.upper()[0, 1])))
        certified.append(s.certified)
    assert [r + 1 for r in rows] == [3, 4, 1, 2]
    assert trace == [(-6, 6), (-2, 6), (-2, 2), (0, 2), (2, 2)]
    assert certified == [False, False, False, False, True]
    assert s.selected == "B" and s.status == "certified"
    # [0, 2] after three labels: L_AB = 0 does not beat A's tie priority (eq. (5))
    res = replay(p, policy="static-range")
    assert res.labels_read == 4 and res.selected == "B" and res.full_pool_winner == "B"
    assert res.order == (2, 3, 0, 1)


def test_figure2_prelabel_lp_and_certificate():
    """Paper sections 4.1-4.2, Figure 2: prelabel bound 2, LP value 2.5, C(y) = 3."""
    p = figure2_pool()
    pb = prelabel_bound(p)
    assert pb.prelabel_bound == 2
    assert pb.ruled_out(1) and not pb.ruled_out(2)
    c = certify(p)
    assert (c.selected, c.lower, c.upper, c.exact) == ("B", 3, 3, True)
    assert c.lp_value == pytest.approx(2.5)


# --------------------------------------------------------------------- worst case
def worst_case_pool(n, objective="augrc", labels=None):
    # both predict 0; A ranks rows 2..n,1 (1-based), B ranks 1..n; ties favour A
    conf_a = np.empty(n)
    conf_a[list(range(1, n)) + [0]] = np.arange(n, 0, -1)
    conf_b = np.arange(n, 0, -1).astype(float)
    labels = np.zeros(n, dtype=int) if labels is None else labels
    return Pool.from_arrays(np.zeros((2, n), dtype=int), [conf_a, conf_b], labels=labels,
                            names=["A", "B"], objective=objective)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 40])
def test_worst_case_needs_n_minus_1(n):
    """Paper section 4.2, "A worst-case rank example": at y = 0, C(0) = n - 1 for AUGRC,
    while accuracy ties under every completion and needs no label (prelabel 0, replay 0)."""
    p = worst_case_pool(n)
    # the integer contrast r_B - r_A = 2((n-1) y_1 - sum_{i>=2} y_i), checked on labellings
    rng = np.random.default_rng(n)
    for _ in range(20):
        y = rng.integers(0, 2, size=n)
        r = p.with_labels(y).risks()
        assert r[1] - r[0] == 2 * ((n - 1) * y[0] - y[1:].sum())
    c = certify(p)
    assert (c.selected, c.lower, c.upper, c.exact) == ("A", n - 1, n - 1, True)
    assert sorted(c.witness) == list(range(1, n))
    acc = worst_case_pool(n, objective="accuracy")
    assert prelabel_bound(acc).prelabel_bound == 0
    r = replay(acc)
    assert r.labels_read == 0 and r.certified and r.selected == "A"
    assert certify(acc).upper == 0


# ------------------------------------------------------------ random orders (Prop. 2)
def _random_orders(rng, n):
    return np.stack([rng.permutation(n), rng.permutation(n)]).astype(float)


@pytest.mark.parametrize("n,seeds", [(500, 20), (5706, 10)])
def test_random_orders_prelabel_quarter(n, seeds):
    """Paper section 4.3, Proposition 2, and section 6.7: with identical predictions and
    independent uniform orders, prelabel/n -> 1/4 (it rounds to .25 from n = 500 on).
    Per-seed sd is about .007 at n = 500 and .002 at n = 5706, so the mean over the seeds
    has sd <= .0016; +-.01 is about six standard errors."""
    vals = []
    for s in range(seeds):
        rng = np.random.default_rng(1000 + s)
        p = Pool.from_arrays(np.zeros(n, dtype=int), _random_orders(rng, n))
        vals.append(prelabel_bound(p).prelabel_bound / n)
    assert 0.24 <= np.mean(vals) <= 0.26


@pytest.mark.parametrize("n,seeds,expected", [(50, 400, 0.37), (5706, 60, 0.46)])
def test_random_orders_certificate_fraction(n, seeds, expected):
    """Paper section 6.7 (illustrating Proposition 2): with iid Bernoulli(q) errors, mean
    C(y)/n is about .37 at n = 50 and .46 at n = 5706 (q = .3 here; the paper's value of q
    is not stated, and the limit 1/2 does not depend on it).  K = 2: certify is exact by
    sorting (section 4.1).  Measured standard errors of the mean: .003 (n = 50, 400 seeds)
    and .002 (n = 5706, 60 seeds), so the tolerance .03 is about ten of them."""
    vals = []
    for s in range(seeds):
        rng = np.random.default_rng(2000 + s)
        y = (rng.random(n) < 0.3).astype(int)
        p = Pool.from_arrays(np.zeros(n, dtype=int), _random_orders(rng, n), labels=y)
        c = certify(p)
        assert c.exact and c.lower == c.upper
        vals.append(c.upper / n)
    assert abs(np.mean(vals) - expected) <= 0.03


@pytest.mark.parametrize("rho,expected", [(0.0, 0.250), (0.3, 0.237), (0.6, 0.223),
                                          (0.9, 0.209), (0.99, 0.204)])
def test_gaussian_copula_orders(rho, expected):
    """Paper section 6.7: Gaussian-copula orders with correlation rho give prelabel/n about
    .250, .237, .223, .209, .204.  n = 2000, five seeds; per-seed sd about .002, so the
    mean is within +-.01 with a wide margin."""
    n, vals = 2000, []
    for s in range(5):
        rng = np.random.default_rng(3000 + s)
        z = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=n).T
        vals.append(prelabel_bound(Pool.from_arrays(np.zeros(n, dtype=int), z)).prelabel_bound / n)
    assert abs(np.mean(vals) - expected) <= 0.01


@pytest.mark.parametrize("n", [2, 7, 10, 37, 100, 1000])
def test_cyclic_shift_prelabel_equals_shift(n):
    """Paper section 6.7: a cyclic shift of one order by 0 < s <= n/2 rows gives prelabel = s
    exactly, in both candidate orders (which one wins ties)."""
    a = np.arange(n, 0, -1).astype(float)  # row 0 most confident
    for s in sorted(s for s in {1, 2, n // 3, n // 2} if 0 < s <= n // 2):
        b = np.roll(a, s)
        preds = np.zeros(n, dtype=int)
        assert prelabel_bound(Pool.from_arrays(preds, [a, b])).prelabel_bound == s
        assert prelabel_bound(Pool.from_arrays(preds, [b, a])).prelabel_bound == s


def test_cyclic_shift_spearman_example():
    """Paper section 6.7: n = 1000, s = 90 has Spearman .51 but prelabel/n = .09."""
    n, s = 1000, 90
    a = np.arange(n, 0, -1).astype(float)
    b = np.roll(a, s)
    spearman = np.corrcoef(a, b)[0, 1]  # a and b are already ranks (no ties)
    assert spearman == pytest.approx(0.51, abs=0.005)
    assert prelabel_bound(Pool.from_arrays(np.zeros(n, dtype=int), [a, b])).prelabel_fraction \
        == pytest.approx(0.09)


# ---------------------------------------------------------- Figure 10 (the shape only)
def test_teaching_pool_shape():
    """Paper section 6.4, Figure 10 (Ionosphere, K = 4: shared 73 <= centered 77 <= separate
    106; certificate 49-50; prelabel 16).  Ionosphere is not shipped; SPEC section 9 asks
    for the picture's shape on a shipped pool: prelabel <= C(y) <= shared <= centered <=
    separate along the same static-range order, all three selecting the full-pool winner."""
    path = SAMPLE / "teaching_k4.csv"
    if not path.exists():
        pytest.skip("teaching pool not shipped")
    from certlib import load_pool

    pool = load_pool(path)
    assert pool.K == 4
    read = {}
    for rule in ("shared", "centered", "separate"):
        r = replay(pool, policy="static-range", rule=rule)
        read[rule] = r.labels_read
        assert r.selected == r.full_pool_winner or not r.certified
    c = certify(pool)
    pb = prelabel_bound(pool).prelabel_bound
    assert pb <= c.lower <= c.upper <= read["shared"] <= read["centered"] <= read["separate"]
    assert read["shared"] < read["separate"]  # the shared test saves labels here
