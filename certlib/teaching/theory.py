"""Simulations behind paper 000's limits (Propositions 2 and 3, Figures 4 and 5, section 6.7).

Identical predictions (every candidate predicts 0, so a row's loss is its label),
independent uniformly random confidence orders and iid Bernoulli(q) losses.  Every
number is computed by the library on simulated pools: `prelabel_bound`, `certify` (the
minimum certificate C(y)) and `replay` (the labels an exact policy reads).  The limits
the paper proves are kept as exact Fractions:

* prelabel / n -> 1/4 (Proposition 2, any fixed K);
* C(y) / n -> 1/2 (Proposition 2, K = 2; for K > 2 only >= 1/2 is proved);
* labels read by any exact policy / n -> 1 (Proposition 3).

`quarter_geometry` gives Figure 4's analytic numbers (P(|U - V| > 1/2) = 1/4 carrying
half of E|U - V| = 1/3), `copula_prelabel` the Gaussian-copula orders of section 6.7
and `cyclic_shift` the shifted order whose prelabel bound is exactly the shift.
Randomness is seeded (numpy's default_rng); ``progress(done, total)`` is called after
each simulated pool so a page can draw a progress bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import ParameterError

__all__ = ["LIMITS", "CopulaResult", "RandomOrdersResult", "ShiftResult", "copula_prelabel",
           "cyclic_shift", "quarter_geometry", "random_orders", "random_orders_pool",
           "sample_square"]

LIMITS = {"prelabel": Fraction(1, 4), "certificate": Fraction(1, 2), "policy": Fraction(1)}


def _int(name, v, lo, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or \
            (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ParameterError(f"{name} must be an integer {rng}; got {v!r}")
    return int(v)


def _prob(name, v, open_interval=True):
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number; got {v!r}") from None
    if not (0 < f < 1 if open_interval else 0 <= f < 1):
        raise ParameterError(f"{name} must lie in {'(0, 1)' if open_interval else '[0, 1)'}; "
                             f"got {v!r}")
    return f


def random_orders_pool(n: int, K: int, q: float, rng):
    """K candidates predicting 0 everywhere, independent uniform confidence orders (no
    ties) and iid Bernoulli(q) labels (= losses)."""
    from ..core.pool import Pool

    confs = np.stack([rng.permutation(n) for _ in range(K)]).astype(float)
    labels = (rng.random(n) < q).astype(np.int64)
    return Pool.from_arrays(np.zeros((K, n), dtype=np.int64), confs, labels=labels,
                            classes=[0, 1])


@dataclass(frozen=True)
class RandomOrdersResult:
    """Per pool size n: means over the seeds of prelabel/n, C(y)/n (the certificate's
    enclosure: ``cert_lower`` and ``cert_upper``; equal when every minimum was proved)
    and the policy's labels read / n.  ``runs`` holds one (n, seed, prelabel, C lower,
    C upper, labels read) tuple per simulated pool."""

    ns: tuple
    K: int
    q: float
    seeds: int
    policy: str
    prelabel: tuple
    cert_lower: tuple
    cert_upper: tuple
    policy_read: tuple
    runs: tuple


def random_orders(ns=(100, 300, 1000, 3000, 10000), K: int = 2, q: float = 0.3, seeds: int = 5,
                  policy: str = "adaptive-pair-sum", seed: int = 0, work_limit: int = 200,
                  progress=None) -> RandomOrdersResult:
    """Propositions 2 and 3 on simulated pools: prelabel/n, C(y)/n and a policy's
    labels/n for each n in ``ns`` (``seeds`` pools each, seeded from ``seed``).
    ``work_limit`` bounds the certificate search for K > 2 (K = 2 is exact by sorting)."""
    from ..certificates.certificate import certify
    from ..certificates.prelabel import prelabel_bound
    from ..labelling.replay import replay

    ns = tuple(_int("n", n, 2, 100_000) for n in ns)
    if not ns:
        raise ParameterError("ns must list at least one pool size")
    K = _int("K", K, 2, 16)
    q = _prob("q", q)
    seeds = _int("seeds", seeds, 1, 1000)
    total, done, runs = len(ns) * seeds, 0, []
    for n in ns:
        for s in range(seeds):
            rng = np.random.default_rng([int(seed), n, K, s])
            pool = random_orders_pool(n, K, q, rng)
            pb = prelabel_bound(pool).prelabel_bound
            c = certify(pool, work_limit=work_limit)
            r = replay(pool, policy=policy)
            runs.append((n, s, pb, c.lower, c.upper, r.labels_read))
            done += 1
            if progress is not None:
                progress(done, total)
    arr = np.array(runs, dtype=float)

    def mean(col):
        return tuple(float(arr[arr[:, 0] == n, col].mean() / n) for n in ns)

    return RandomOrdersResult(ns, K, q, seeds, policy, mean(2), mean(3), mean(4), mean(5),
                              tuple(runs))


def quarter_geometry() -> dict:
    """Figure 4's analytic numbers for independent uniform U, V: the density of |U - V| is
    2(1 - t), so P(|U - V| > s) = (1 - s)^2 and E[|U - V| ; |U - V| > s] = H(s) =
    1/3 - s^2 + 2 s^3 / 3 (paper, proof of Proposition 2).  At s = 1/2: probability 1/4,
    mass 1/6, half of E|U - V| = 1/3."""
    s = Fraction(1, 2)
    H = Fraction(1, 3) - s ** 2 + Fraction(2, 3) * s ** 3
    total = Fraction(1, 3)
    return {"probability": (1 - s) ** 2, "mass": H, "mean_abs_diff": total,
            "mass_share": H / total}


def sample_square(m: int = 2000, seed: int = 0) -> dict:
    """m points (U, V) uniform on the unit square, which of them have |U - V| > 1/2, and
    the sample's share of points and of the total |U - V| in that region."""
    m = _int("m", m, 1, 1_000_000)
    rng = np.random.default_rng(seed)
    u, v = rng.random(m), rng.random(m)
    d = np.abs(u - v)
    far = d > 0.5
    return {"u": u, "v": v, "far": far, "probability": float(far.mean()),
            "mass_share": float(d[far].sum() / d.sum())}


@dataclass(frozen=True)
class CopulaResult:
    """Mean prelabel/n over the seeds for each correlation rho (section 6.7)."""

    rhos: tuple
    n: int
    seeds: int
    prelabel: tuple
    spearman: tuple  # mean Spearman correlation of the two orders


def copula_prelabel(rhos=(0.0, 0.3, 0.6, 0.9, 0.99), n: int = 1000, seeds: int = 3,
                    seed: int = 0, progress=None) -> CopulaResult:
    """Two candidates, identical predictions, confidences drawn from a bivariate normal
    with correlation rho (a Gaussian copula of the two orders): prelabel/n per rho.

    Pool s of every rho is drawn from the same two normal vectors (seeded by ``seed``,
    ``n`` and s only), so a rho's result does not depend on which other rhos are asked
    for, or in which order: one rho at a time gives the numbers of the whole table."""
    from ..core.pool import Pool
    from ..certificates.prelabel import prelabel_bound

    n = _int("n", n, 2, 1_000_000)
    seeds = _int("seeds", seeds, 1, 1000)
    rhos = tuple(_prob("rho", r, open_interval=False) for r in rhos)
    out, sp, done = [], [], 0
    for rho in rhos:
        vals, cors = [], []
        for s in range(seeds):
            rng = np.random.default_rng([int(seed), n, s])
            z1 = rng.standard_normal(n)
            z2 = rho * z1 + np.sqrt(1 - rho * rho) * rng.standard_normal(n)
            pool = Pool.from_arrays(np.zeros(n, dtype=np.int64), [z1, z2])
            vals.append(prelabel_bound(pool).prelabel_bound / n)
            r1, r2 = np.argsort(np.argsort(z1)), np.argsort(np.argsort(z2))
            cors.append(float(np.corrcoef(r1, r2)[0, 1]))
            done += 1
            if progress is not None:
                progress(done, len(rhos) * seeds)
        out.append(float(np.mean(vals)))
        sp.append(float(np.mean(cors)))
    return CopulaResult(rhos, n, seeds, tuple(out), tuple(sp))


@dataclass(frozen=True)
class ShiftResult:
    """A cyclic shift of one confidence order by s rows: its prelabel bound (= s for
    0 < s <= n/2, paper section 6.7) and the orders' Spearman correlation."""

    n: int
    s: int
    prelabel: int
    spearman: float


def cyclic_shift(n: int = 1000, s: int = 90) -> ShiftResult:
    from ..core.pool import Pool
    from ..certificates.prelabel import prelabel_bound

    n = _int("n", n, 2, 1_000_000)
    s = _int("s", s, 0, n - 1)
    a = np.arange(n, 0, -1).astype(float)  # row 0 most confident
    b = np.roll(a, s)
    pb = prelabel_bound(Pool.from_arrays(np.zeros(n, dtype=np.int64), [a, b])).prelabel_bound
    return ShiftResult(n, s, int(pb), float(np.corrcoef(a, b)[0, 1]))
