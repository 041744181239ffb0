"""The built-in confidence scores of a ``prob_`` pool, the same bits on every machine
(SPEC section 2).

A pool read from class probabilities has three derived candidates: ``msp`` (the top
probability), ``neg_entropy`` (sum of p log p, with 0 log 0 = 0) and ``margin`` (the
gap between the top two).  Only their order and their ties matter to AUGRC, but a
pool is identified by its content and its certificates by its ties, so the scores
must not depend on the CPU or on the numpy build.  numpy's ``np.log`` does: it
dispatches to SIMD code (AVX-512 among others) that differs from the C library's
``log`` in the last bit on some inputs, and a float reduction may add in a
different order from one build to another.

So every score here is computed with IEEE-754 basic operations only (``+ - * /``,
each correctly rounded by the standard, whatever the vector width), ``frexp``
(exact) and comparisons, in a fixed order: the logarithm is the classical
reduction ``x = 2**k (1 + f)`` with ``sqrt(1/2) <= 1 + f < sqrt(2)`` and the series
``log(1 + f) = 2 atanh(s)``, ``s = f / (2 + f)``, to 11 terms (truncation below
1e-19), with ln 2 split in two parts so that ``k ln 2`` is exact; the sum runs over
the row's probabilities sorted ascending, left to right.  The logarithm is within one
unit in the last place of the true value (a test checks against `decimal` at 60
digits: within one unit in the last place) and identical, bit for bit, with numpy's SIMD
paths on or off (a test runs it both ways in subprocesses).  It assumes subnormal
numbers are kept (no flush-to-zero, which a library built with -ffast-math can switch on
for the whole process): then a tiny p's p log p would be 0 on that process only.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

__all__ = ["SCORE_RULE", "builtin_scores", "det_log", "legacy_scores", "row_sums"]

#: names the rule in the pool hash: a change to any formula here is a new rule
SCORE_RULE = "certlib-scores-2"

_SQRT_HALF = 0.7071067811865476  # just above sqrt(1/2): m below it is doubled


def _ln2_parts() -> tuple[float, float]:
    """ln 2 = hi + lo, hi with 32 significant bits (so k * hi is exact for |k| < 2**21)."""
    with localcontext() as ctx:
        ctx.prec = 50
        ln2 = Decimal(2).ln()
        hi = float(int(ln2 * 2**32)) / 2**32
        lo = float(ln2 - Decimal(hi))
    return hi, lo


_LN2_HI, _LN2_LO = _ln2_parts()
# series of (2 atanh(s) - 2 s) / s in z = s^2: sum over j >= 1 of 2 z^j / (2j + 1)
_SERIES = tuple(2.0 / (2 * j + 1) for j in range(1, 12))


def det_log(x: npt.ArrayLike) -> NDArray[np.float64]:
    """Natural log of positive finite float64 values, from basic operations only.

    The same bits on every machine, within one unit in the last place of the true
    value (module docstring).

    Parameters
    ----------
    x : array_like of float
        Positive finite values (subnormals included).

    Returns
    -------
    numpy.ndarray of float64
        ln x, same shape.

    Examples
    --------
    >>> float(det_log(np.array([1.0]))[0]), float(det_log(np.array([0.5]))[0])
    (0.0, -0.6931471805599453)
    """
    xs = np.asarray(x, dtype=np.float64)
    m, k = np.frexp(xs)  # x = m 2**k, 1/2 <= m < 1, exact (subnormals too)
    low = m < _SQRT_HALF
    m = np.where(low, m * 2.0, m)  # exact: now sqrt(1/2) <= m < sqrt(2)
    kf = (k - low).astype(np.float64)
    f = m - 1.0  # exact (Sterbenz)
    s = f / (2.0 + f)
    z = s * s
    r = np.full_like(z, _SERIES[-1])
    for c in _SERIES[-2::-1]:
        r = r * z + c
    r = r * z  # R(z) = sum_j 2 z^j / (2j + 1)
    hfsq = 0.5 * f * f
    # log(1 + f) = f - hfsq + s (hfsq + R), as fdlibm arranges it for accuracy
    out: NDArray[np.float64] = kf * _LN2_HI - ((hfsq - (s * (hfsq + r) + kf * _LN2_LO)) - f)
    return out


def row_sums(P: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row's sum, added left to right (a reduction's order may vary by build).

    Parameters
    ----------
    P : numpy.ndarray of float64, shape (n, C)
        Values, e.g. class probabilities.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        ``P[:, 0] + P[:, 1] + ...`` in that order.

    Examples
    --------
    >>> row_sums(np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])).tolist()
    [1.0, 1.0]
    """
    total: NDArray[np.float64] = np.zeros(P.shape[0])
    for c in range(P.shape[1]):
        total = total + P[:, c]
    return total


def builtin_scores(P: npt.ArrayLike) -> list[NDArray[np.float64]]:
    """``[msp, neg_entropy, margin]`` of an n x C array of probabilities in [0, 1].

    Computed from each row sorted ascending, so two rows holding the same
    probabilities in another order get the same scores (exact ties).

    Parameters
    ----------
    P : array_like of float, shape (n, C)
        Class probabilities, one row per pool row.

    Returns
    -------
    list of numpy.ndarray of float64, each shape (n,)
        The top probability, sum p log p (0 log 0 = 0) and the gap between the top two.

    Examples
    --------
    >>> msp, ne, margin = builtin_scores(np.array([[0.25, 0.75], [0.75, 0.25]]))
    >>> msp.tolist(), margin.tolist(), bool(ne[0] == ne[1])
    ([0.75, 0.75], [0.5, 0.5], True)
    """
    S = np.sort(np.asarray(P, dtype=np.float64), axis=1)  # sorting moves values, exactly
    msp = S[:, -1].copy()
    neg_entropy: NDArray[np.float64] = np.zeros(S.shape[0])
    for c in range(S.shape[1]):
        p = S[:, c]
        pos = p > 0
        term = np.zeros_like(p)
        term[pos] = p[pos] * det_log(p[pos])
        neg_entropy = neg_entropy + term
    margin = S[:, -1] - S[:, -2]
    return [msp, neg_entropy, margin]


def legacy_scores(P: npt.ArrayLike, log: str = "numpy") -> NDArray[np.float64]:
    """The three scores as builds before `SCORE_RULE` computed them, to recognise the
    pool hashes they gave (`certlib.core.pool.Pool.legacy_hashes`).

    Parameters
    ----------
    P : array_like of float, shape (n, C)
        Class probabilities.
    log : {"numpy", "libm"}
        ``"numpy"``: numpy's own (SIMD) logarithm on this CPU; ``"libm"``: the C
        library's, which numpy uses where it has no SIMD code.  Either way the sum is
        numpy's.

    Returns
    -------
    numpy.ndarray of float64, shape (3, n)
        msp, neg_entropy and margin, as those builds computed them.
    """
    import math

    S = np.sort(np.asarray(P, dtype=np.float64), axis=1)
    plogp = np.zeros_like(S)
    if log == "numpy":
        np.log(S, out=plogp, where=S > 0)
    else:
        values, inverse = np.unique(S, return_inverse=True)
        logs = np.array([math.log(v) if v > 0 else 0.0 for v in values.tolist()])
        plogp = logs[inverse.reshape(S.shape)]
    out: NDArray[np.float64] = np.vstack([S[:, -1], (S * plogp).sum(axis=1),
                                          S[:, -1] - S[:, -2]])
    return out
