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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:
    from ..core.pool import Pool

# progress(done, total), called after each simulated pool
Progress = Callable[[int, int], object]

__all__ = ["LIMITS", "CopulaResult", "RandomOrdersResult", "ShiftResult", "copula_prelabel",
           "cyclic_shift", "quarter_geometry", "random_orders", "random_orders_pool",
           "sample_square", "shipped_random_orders"]

LIMITS: dict[str, Fraction] = {"prelabel": Fraction(1, 4), "certificate": Fraction(1, 2),
                               "policy": Fraction(1)}


def _int(name: str, v: object, lo: int, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or \
            (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ParameterError(f"{name} must be an integer {rng}; got {v!r}")
    return int(v)  # an int or a numpy integer, checked above


def _prob(name: str, v: object, open_interval: bool = True) -> float:
    try:
        f = float(v)  # type: ignore[arg-type]  # any input; a failure is the error below
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number; got {v!r}") from None
    if not (0 < f < 1 if open_interval else 0 <= f < 1):
        raise ParameterError(f"{name} must lie in {'(0, 1)' if open_interval else '[0, 1)'}; "
                             f"got {v!r}")
    return f


def random_orders_pool(n: int, K: int, *, q: float, rng: np.random.Generator) -> Pool:
    """One simulated pool of Propositions 2 and 3 (paper 000 section 6).

    K candidates predicting 0 everywhere, independent uniform confidence orders (no
    ties) and iid Bernoulli(q) labels (= losses).

    Parameters
    ----------
    n : int
        Rows.
    K : int
        Candidates.
    q : float
        P(label = 1), the loss rate.
    rng : numpy.random.Generator
        The source of the orders and labels.

    Returns
    -------
    Pool
        A fully labelled binary pool.

    Examples
    --------
    >>> import numpy as np
    >>> pool = random_orders_pool(6, 3, q=0.5, rng=np.random.default_rng(0))
    >>> pool.n, pool.K, pool.fully_labelled
    (6, 3, True)
    """
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

    ns: tuple[int, ...]
    K: int
    q: float
    seeds: int
    policy: str
    prelabel: tuple[float, ...]
    cert_lower: tuple[float, ...]
    cert_upper: tuple[float, ...]
    policy_read: tuple[float, ...]
    runs: tuple[tuple[int, int, int, int, int, int], ...]


def random_orders(ns: Iterable[int] = (100, 300, 1000, 3000, 10000), *, K: int = 2,
                  q: float = 0.3, seeds: int = 5, policy: str = "adaptive-pair-sum",
                  seed: int = 0, work_limit: int = 200,
                  progress: Progress | None = None) -> RandomOrdersResult:
    """Propositions 2 and 3 on simulated pools: prelabel/n, C(y)/n and a policy's labels/n.

    Parameters
    ----------
    ns : iterable of int, default (100, 300, 1000, 3000, 10000)
        Pool sizes, each in 2..100000.
    K : int, default 2
        Candidates, 2..16.
    q : float, default 0.3
        The loss rate, in (0, 1).
    seeds : int, default 5
        Pools per size, 1..1000.
    policy : str, default "adaptive-pair-sum"
        The exact policy replayed.
    seed : int, default 0
        Seeds every pool (with n, K and the pool's number).
    work_limit : int, default 200
        Bounds the certificate search for K > 2 (K = 2 is exact by sorting).
    progress : callable, optional
        Called as ``progress(done, total)`` after each pool.

    Returns
    -------
    RandomOrdersResult
        Per size, the means over the seeds of each fraction, and every run.

    Raises
    ------
    ParameterError
        On a parameter out of range.

    Examples
    --------
    >>> r = random_orders(ns=(40,), seeds=2, policy="static-range")
    >>> r.ns, len(r.runs), 0 < r.prelabel[0] <= r.cert_lower[0] <= r.policy_read[0] <= 1
    ((40,), 2, True)
    """
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
            pool = random_orders_pool(n, K, q=q, rng=rng)
            pb = prelabel_bound(pool).prelabel_bound
            c = certify(pool, work_limit=work_limit)
            r = replay(pool, policy=policy)
            runs.append((n, s, pb, c.lower, c.upper, r.labels_read))
            done += 1
            if progress is not None:
                progress(done, total)
    return _summarise(ns, K, q, seeds, policy, runs)


def _summarise(ns: tuple[int, ...], K: int, q: float, seeds: int, policy: str,
               runs: Iterable[tuple[int, int, int, int, int, int]]) -> RandomOrdersResult:
    """The per-n means of the runs: shared by the live simulation and the shipped table,
    so a shipped result is the same object the simulation would return."""
    # plain ints whatever the source: numpy integers from a run, literals from the table
    runs = tuple((int(a), int(b), int(c), int(d), int(e), int(f))
                 for a, b, c, d, e, f in runs)
    arr = np.array(runs, dtype=float)

    def mean(col: int) -> tuple[float, ...]:
        return tuple(float(arr[arr[:, 0] == n, col].mean() / n) for n in ns)

    return RandomOrdersResult(ns, K, q, seeds, policy, mean(2), mean(3), mean(4), mean(5),
                              runs)


def shipped_random_orders(n: int, *, K: int = 2, q: float = 0.3, seeds: int = 5,
                          policy: str = "adaptive-pair-sum", seed: int = 0,
                          work_limit: int = 200) -> RandomOrdersResult | None:
    """``random_orders(ns=(n,), ...)`` read from the table shipped with the library, or
    None when these settings are not in it (then simulate).

    The table (`certlib.teaching._theory_table`, written by
    ``scripts/make_theory_table.py`` with `random_orders` itself) holds the Theory
    explorer's default settings, so the page opens without simulating 25 pools; a test
    recomputes it and checks it equals the shipped file.

    Parameters
    ----------
    n : int
        The pool size.
    K, q, seeds, policy, seed, work_limit
        As in `random_orders`.

    Returns
    -------
    RandomOrdersResult or None
        What `random_orders` returns for ``ns=(n,)`` and these settings, or None when
        the table does not hold them.

    Examples
    --------
    >>> r = shipped_random_orders(1000)
    >>> r == random_orders(ns=(1000,), K=2, q=0.3, seeds=5, policy="adaptive-pair-sum")
    True
    >>> shipped_random_orders(1000, q=0.5) is None
    True
    """
    from . import _theory_table as table

    settings = {"K": K, "q": q, "seeds": seeds, "policy": policy, "seed": seed,
                "work_limit": work_limit}
    # compared as given: a float q equal to the table's 0.3 (0.30000000000000004 from a
    # slider's steps is not) and ints equal to the table's ints
    if settings != table.SETTINGS or n not in table.RUNS:
        return None
    return _summarise((n,), K, float(q), seeds, policy, table.RUNS[n])


def quarter_geometry() -> dict[str, Fraction]:
    """Figure 4's analytic numbers for independent uniform U, V: the density of |U - V| is
    2(1 - t), so P(|U - V| > s) = (1 - s)^2 and E[|U - V| ; |U - V| > s] = H(s) =
    1/3 - s^2 + 2 s^3 / 3 (paper, proof of Proposition 2).  At s = 1/2: probability 1/4,
    mass 1/6, half of E|U - V| = 1/3."""
    s = Fraction(1, 2)
    H = Fraction(1, 3) - s ** 2 + Fraction(2, 3) * s ** 3
    total = Fraction(1, 3)
    return {"probability": (1 - s) ** 2, "mass": H, "mean_abs_diff": total,
            "mass_share": H / total}


def sample_square(m: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Points uniform on the unit square and their share beyond |U - V| > 1/2 (Figure 4).

    Parameters
    ----------
    m : int, default 2000
        Points, 1..1000000.
    seed : int, default 0
        Seed of numpy's default_rng.

    Returns
    -------
    dict
        ``"u"``, ``"v"`` (float arrays), ``"far"`` (bool array: |U - V| > 1/2),
        ``"probability"`` (the share of far points, near 1/4) and ``"mass_share"`` (their
        share of the total |U - V|, near 1/2).

    Raises
    ------
    ParameterError
        When ``m`` is out of range.

    Examples
    --------
    >>> d = sample_square(4000)
    >>> round(d["probability"], 1), round(d["mass_share"], 1)
    (0.2, 0.5)
    """
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

    rhos: tuple[float, ...]
    n: int
    seeds: int
    prelabel: tuple[float, ...]
    spearman: tuple[float, ...]  # mean Spearman correlation of the two orders


def copula_prelabel(rhos: Iterable[float] = (0.0, 0.3, 0.6, 0.9, 0.99), *, n: int = 1000,
                    seeds: int = 3, seed: int = 0,
                    progress: Progress | None = None) -> CopulaResult:
    """Prelabel/n per correlation rho of two confidence orders (paper 000 section 6.7).

    Two candidates, identical predictions, confidences drawn from a bivariate normal
    with correlation rho (a Gaussian copula of the two orders).  Pool s of every rho is
    drawn from the same two normal vectors (seeded by ``seed``, ``n`` and s only), so a
    rho's result does not depend on which other rhos are asked for, or in which order:
    one rho at a time gives the numbers of the whole table.

    Parameters
    ----------
    rhos : iterable of float, default (0.0, 0.3, 0.6, 0.9, 0.99)
        Correlations, each in [0, 1).
    n : int, default 1000
        Rows per pool, 2..1000000.
    seeds : int, default 3
        Pools per rho, 1..1000.
    seed : int, default 0
        Seeds the normal vectors.
    progress : callable, optional
        Called as ``progress(done, total)`` after each pool.

    Returns
    -------
    CopulaResult
        Mean prelabel/n and mean Spearman correlation per rho.

    Raises
    ------
    ParameterError
        On a parameter out of range.

    Examples
    --------
    >>> r = copula_prelabel(rhos=(0.0, 0.99), n=400, seeds=1)
    >>> r.prelabel[0] > r.prelabel[1]
    True
    """
    from ..core.pool import Pool
    from ..certificates.prelabel import prelabel_bound

    n = _int("n", n, 2, 1_000_000)
    seeds = _int("seeds", seeds, 1, 1000)
    rhos = tuple(_prob("rho", r, open_interval=False) for r in rhos)
    out: list[float] = []
    sp: list[float] = []
    done = 0
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
    """The prelabel bound of two confidence orders, one a cyclic shift of the other.

    Paper 000 section 6.7: the bound is exactly s for 0 < s <= n/2; the shift moves s
    rows from the top of the order to the bottom, so a correlation of about 0.5 comes
    with a bound of only s labels.

    Parameters
    ----------
    n : int, default 1000
        Rows, 2..1000000.
    s : int, default 90
        The shift, 0..n - 1.

    Returns
    -------
    ShiftResult
        The prelabel bound and the orders' correlation.

    Raises
    ------
    ParameterError
        When ``n`` or ``s`` is out of range.

    Examples
    --------
    >>> r = cyclic_shift(100, 9)
    >>> r.prelabel, round(r.spearman, 2)
    (9, 0.51)
    """
    from ..core.pool import Pool
    from ..certificates.prelabel import prelabel_bound

    n = _int("n", n, 2, 1_000_000)
    s = _int("s", s, 0, n - 1)
    a = np.arange(n, 0, -1).astype(float)  # row 0 most confident
    b = np.roll(a, s)
    pb = prelabel_bound(Pool.from_arrays(np.zeros(n, dtype=np.int64), [a, b])).prelabel_bound
    return ShiftResult(n, s, int(pb), float(np.corrcoef(a, b)[0, 1]))
