"""A calibrated 80% interval for the label forecast (conformalized quantile regression).

`certlib.forecast` replays the policy on label vectors drawn from a label model; the
raw 10% and 90% quantiles of those counts are an 80% interval only if the label model
were right, and it is not: on panel pools before any label the raw interval is too
narrow, once the policy has read part of the pool it is too wide.  This module widens
or narrows it by a margin measured on calibration pools, the **conformalized quantile
regression** (CQR) step of Romano, Patterson and Candes (2019):

1. On each calibration pool (the realised count ``y`` known, the forecast made from the
   labels the policy had read at that point) the **conformity score** is
   ``E = max(q10 - y, y - q90) / s``: how far ``y`` falls outside the raw interval
   (negative inside), in units of ``s`` (`UNIT`).
2. With m scores in a stratum, ``Qhat`` is the k-th smallest, ``k = ceil((m + 1) 0.8)``
   (`conformal_quantile`): under exchangeability of the calibration pools and a new
   pool, ``E <= Qhat`` holds with probability at least 0.8.
3. The calibrated interval is ``[q10 - Qhat s, q90 + Qhat s]``: of the integers, those
   whose score is at most ``Qhat``; clipped to ``[known, n]`` and stretched to contain
   the median ``q50`` (a negative ``Qhat`` narrows the raw interval and could pass it).

**Strata** (`STRATA`, `stratum`): whether part of the pool was read when the forecast
is made, since the label model learns from the labels read.  ``Qhat`` is fitted per
stratum.  The calibration forecasts were made after the policy had read 0, 1/8, 1/4,
1/2 and 3/4 of each pool; the four shares above 0 each gave a margin of exactly 0 (the
counts are integers, and on many pools the realised count equals q10 or q90, so the
k-th score is 0), so they form one stratum.  A pool whose labels already certify
(every draw equal to ``known``) gets the exact interval ``[known, known]``.

**The unit** ``s`` (`UNIT`) was chosen among the pool size n, the rows still unread
``n - known`` and the raw interval's width ``max(q90 - q10, 1)`` by cross-fitting on the
calibration pools only: the one with the narrowest cross-fitted intervals.

**Asymmetric margins** (the asymmetric CQR of Romano, Patterson and Candes): a lower
score ``(q10 - y) / s`` and an upper score ``(y - q90) / s`` (`side_scores`), each with
its own conformal quantile at level 0.9, so that each side misses at most 10% of pools
and the interval covers at least 80%; ``calibrated_interval(..., qhat=(low, high))``
builds that interval.  Before any label the forecast runs long (on the calibration pools
the realised count fell below q10 on 54 pools and above q90 on 27 of 384), yet
cross-fitted by split seed on the calibration pools the asymmetric margins covered 83.9%
of pools with a mean width of 28.0% of n, against 80.2% and 25.0% for the single margin:
the upper side's 0.9 quantile is exactly 0 (many realised counts equal q90, and only 7%
lie above it), so the interval is not narrowed on top while the lower side is widened
to its own 10%.  Wider, for coverage above the 80% aimed at, they are not the default
(the rule that chose is in `bench/bench_forecast_calibration.py`).  Once labels are read
both of their margins are 0: the same interval as the single margin's.

**Guarantee.**  None beyond the calibration pools' kind: the 80% holds for pools
exchangeable with paper 000's section 6.1 panel pools (Breast Cancer, Wine, Digits;
trees and logistic regressions; K = 4 and 8) under the adaptive pair-sum policy with
tau = 0, 200 draws; for other data, policies or tolerances the interval is the raw
one corrected by the panel pools' margin, a better guess, not a guarantee.  The
coverage measured on fresh pools is in the benchmarks (`bench/bench_forecast_calibration.py`).

Only the level 0.8 (the 10-90% interval) is calibrated; another level raises
`ParameterError`.

Examples
--------
>>> from certlib.planning.forecast_calibration import QHAT, STRATA, UNIT
>>> [name for name, _ in STRATA], sorted(QHAT) == sorted(name for name, _ in STRATA)
(['none', 'some'], True)
>>> UNIT in ("n", "unread", "width")
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ParameterError

__all__ = ["LEVEL", "QHAT", "STRATA", "UNIT", "UNITS", "calibrated_interval",
           "conformal_quantile", "conformity_score", "raw_interval", "side_scores", "stratum"]

#: The only calibrated level: the forecast's 10-90% interval.
LEVEL: float = 0.8

#: The units a conformity score can be measured in (module docstring).
UNITS: tuple[str, ...] = ("n", "unread", "width")

#: Strata of the share of the pool read before the forecast: (name, upper end of the
#: share, inclusive).  "none" is exactly 0; "some" any share above (module docstring).
STRATA: tuple[tuple[str, float], ...] = (("none", 0.0), ("some", 1.0))

#: The unit of the conformity score, chosen by cross-fitting on the calibration pools:
#: the raw interval's width (the three units gave mean widths within 0.01% of n).
UNIT: str = "width"

#: Fitted Qhat per stratum, in units of `UNIT`, rounded up to 4 decimals.  Produced by
#: ``python -m bench forecast_calibration`` on the panel pools of split seeds 0-7,
#: 40-43, 60-63, 90-93, 110-113 and 130-137 (adaptive pair-sum, tau = 0, 200 draws,
#: forecast seed 0).
QHAT: dict[str, float] = {"none": 0.0345, "some": 0.0}

_EPS = 1e-9  # float slack when turning the real-valued interval into integers


def _check_level(level: float) -> None:
    if level != LEVEL:
        raise ParameterError(f"only the level {LEVEL} (the 10-90% interval) is calibrated; "
                             f"got {level!r}")


def _check_counts(known: int, n: int) -> tuple[int, int]:
    if isinstance(known, bool) or isinstance(n, bool):
        raise ParameterError("known and n must be whole numbers")
    known, n = int(known), int(n)
    if n < 1 or not 0 <= known <= n:
        raise ParameterError(f"need 0 <= known <= n and n >= 1; got known = {known}, n = {n}")
    return known, n


def raw_interval(labels_read: ArrayLike) -> tuple[int, int, int]:
    """The raw 10%, 50% and 90% quantiles of the draws' counts (`Forecast.quantiles`).

    Parameters
    ----------
    labels_read : array_like of int
        Labels read per draw (at least one draw).

    Returns
    -------
    tuple of int
        ``(q10, q50, q90)``, lower empirical quantiles: the ``ceil(q D)``-th smallest of
        the D counts.

    Raises
    ------
    ParameterError
        On an empty sequence.

    Examples
    --------
    >>> from certlib.planning.forecast_calibration import raw_interval
    >>> raw_interval(range(1, 11))
    (1, 5, 9)
    """
    a = np.sort(np.asarray(labels_read, dtype=np.int64).ravel())
    if a.size == 0:
        raise ParameterError("labels_read must hold at least one draw")

    def q(p: float) -> int:
        return int(a[max(0, math.ceil(p * a.size) - 1)])

    return q(0.1), q(0.5), q(0.9)


def stratum(known: int, n: int) -> str:
    """The stratum of `STRATA` of a forecast made with ``known`` of ``n`` labels read.

    Parameters
    ----------
    known : int
        Labels already read.
    n : int
        Rows in the pool.

    Returns
    -------
    str
        The first stratum whose upper end is at least ``known / n``.

    Raises
    ------
    ParameterError
        Unless ``0 <= known <= n`` and ``n >= 1``.

    Examples
    --------
    >>> from certlib.planning.forecast_calibration import stratum
    >>> stratum(0, 171), stratum(42, 171), stratum(171, 171)
    ('none', 'some', 'some')
    """
    known, n = _check_counts(known, n)
    share = known / n
    for name, upper in STRATA:
        if share <= upper:
            return name
    return STRATA[-1][0]  # unreachable: the last stratum ends at 1


def _scale(unit: str, q10: int, q90: int, known: int, n: int) -> int:
    if unit == "n":
        return n
    if unit == "unread":
        return max(n - known, 1)
    if unit == "width":
        return max(q90 - q10, 1)
    raise ParameterError(f"unit must be one of {', '.join(UNITS)}; got {unit!r}")


def side_scores(realised: int, labels_read: ArrayLike, known: int, n: int, *,
                unit: str = UNIT) -> tuple[float, float]:
    """The two conformity scores of a realised count: how far below q10, how far above q90.

    Parameters
    ----------
    realised : int
        The labels the policy really read.
    labels_read : array_like of int
        The forecast's counts per draw.
    known : int
        Labels read when the forecast was made.
    n : int
        Rows in the pool.
    unit : str, default `UNIT`
        "n" (the pool size), "unread" (``n - known``) or "width" (``max(q90 - q10, 1)``).

    Returns
    -------
    tuple of float
        ``((q10 - realised) / s, (realised - q90) / s)``: each positive when the count
        falls outside the raw 10-90% interval on that side, at most 0 otherwise.

    Raises
    ------
    ParameterError
        On a bad unit or counts.

    Examples
    --------
    >>> from certlib.planning.forecast_calibration import side_scores
    >>> draws = range(101, 111)                    # q10 = 101, q90 = 109, width 8
    >>> side_scores(97, draws, 0, 200, unit="width")     # 4 rows below q10
    (0.5, -1.5)
    >>> side_scores(119, draws, 0, 200, unit="n")        # 10 rows above q90, n = 200
    (-0.09, 0.05)
    """
    known, n = _check_counts(known, n)
    q10, _, q90 = raw_interval(labels_read)
    s = _scale(unit, q10, q90, known, n)
    return (q10 - int(realised)) / s, (int(realised) - q90) / s


def conformity_score(realised: int, labels_read: ArrayLike, known: int, n: int, *,
                     unit: str = UNIT) -> float:
    """CQR's conformity score of a realised count: the larger of its two `side_scores`.

    Parameters
    ----------
    realised : int
        The labels the policy really read.
    labels_read : array_like of int
        The forecast's counts per draw.
    known : int
        Labels read when the forecast was made.
    n : int
        Rows in the pool.
    unit : str, default `UNIT`
        "n" (the pool size), "unread" (``n - known``) or "width" (``max(q90 - q10, 1)``).

    Returns
    -------
    float
        ``max(q10 - realised, realised - q90) / s``: positive outside the raw 10-90%
        interval, at most 0 inside it.  The fitted `QHAT` is its conformal quantile at
        `LEVEL`.

    Raises
    ------
    ParameterError
        On a bad unit or counts.

    Examples
    --------
    >>> from certlib.planning.forecast_calibration import conformity_score
    >>> draws = range(101, 111)                    # q10 = 101, q90 = 109
    >>> conformity_score(119, draws, 0, 200, unit="n")       # 10 rows out of n = 200
    0.05
    >>> conformity_score(119, draws, 0, 200, unit="width")   # 10 rows, width 8
    1.25
    >>> conformity_score(105, draws, 0, 200, unit="width")   # inside
    -0.5
    """
    return max(side_scores(realised, labels_read, known, n, unit=unit))


def conformal_quantile(scores: Sequence[float] | ArrayLike, level: float = LEVEL) -> float:
    """The conformal quantile of m scores: the ``ceil((m + 1) level)``-th smallest.

    Parameters
    ----------
    scores : array_like of float
        Conformity scores of the calibration pools (at least one).
    level : float, default 0.8
        The coverage aimed at, in (0, 1).

    Returns
    -------
    float
        The k-th smallest score, ``k = ceil((m + 1) level)``; ``inf`` when ``k > m``
        (too few pools for the level: no finite margin is justified).

    Raises
    ------
    ParameterError
        On no scores or a level outside (0, 1).

    Examples
    --------
    >>> from certlib.planning.forecast_calibration import conformal_quantile
    >>> conformal_quantile([0.3, -0.1, 0.0, 0.2, 0.1])     # k = ceil(6 * 0.8) = 5
    0.3
    >>> conformal_quantile([float(i) for i in range(9)])    # k = 8 of 9
    7.0
    >>> conformal_quantile([1.0, 2.0])                      # k = 3 > m = 2
    inf
    """
    s = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    if s.size == 0:
        raise ParameterError("conformal_quantile needs at least one score")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1); got {level!r}")
    # integer arithmetic for k where level is a short decimal (0.8 * 10 = 8 exactly)
    k = math.ceil(round((s.size + 1) * level, 9))
    return math.inf if k > s.size else float(s[k - 1])


def calibrated_interval(labels_read: ArrayLike, known: int, n: int, level: float = LEVEL,
                        *, qhat: float | tuple[float, float] | None = None,
                        unit: str = UNIT) -> tuple[int, int]:
    """The calibrated 80% interval of the total labels read (module docstring).

    Parameters
    ----------
    labels_read : array_like of int
        The forecast's counts per draw (`Forecast.labels_read`).
    known : int
        Labels read when the forecast was made.
    n : int
        Rows in the pool.
    level : float, default 0.8
        Only 0.8 is calibrated.
    qhat : float or (float, float), optional
        The margin, in units of ``unit``, for both sides, or a pair ``(low, high)``, one
        per side (asymmetric margins, module docstring); default the fitted `QHAT` of the
        forecast's stratum (experiments and tests pass their own).
    unit : str, default `UNIT`
        The unit of ``qhat`` (`side_scores`).

    Returns
    -------
    tuple of int
        ``(low, high)`` with ``known <= low <= q50 <= high <= n``: the integers whose
        score is at most the margin (with a pair: whose lower and upper `side_scores`
        are at most the lower and upper margins), clipped and stretched to the median.

    Raises
    ------
    ParameterError
        On a level other than 0.8, a bad unit or counts.

    Examples
    --------
    >>> from certlib.planning.forecast_calibration import calibrated_interval
    >>> draws = list(range(101, 111))                   # raw 10-90%: [101, 109], width 8
    >>> calibrated_interval(draws, 0, 200)              # the fitted margin, before any label
    (101, 109)
    >>> calibrated_interval(draws, 0, 200, qhat=0.5)    # 4 rows wider each side
    (97, 113)
    >>> calibrated_interval(draws, 0, 200, qhat=(0.5, -0.25))  # 4 rows lower, 2 narrower
    (97, 107)
    >>> calibrated_interval(draws, 0, 200, qhat=0.05, unit="n")  # 10 rows wider
    (91, 119)
    >>> calibrated_interval(draws, 0, 200, qhat=-1.0)   # never past the median
    (105, 105)
    >>> calibrated_interval(draws, 100, 200, qhat=20)   # never outside [known, n]
    (100, 200)
    """
    _check_level(level)
    known, n = _check_counts(known, n)
    q10, q50, q90 = raw_interval(labels_read)
    if int(np.max(np.asarray(labels_read))) <= known:
        return known, known  # the labels known certify already: the count is exact
    if qhat is None:
        m_low = m_high = QHAT[stratum(known, n)]
    elif isinstance(qhat, (tuple, list)):
        m_low, m_high = float(qhat[0]), float(qhat[1])
    else:
        m_low = m_high = float(qhat)
    s = _scale(unit, q10, q90, known, n)
    low = known if m_low == math.inf else math.ceil(q10 - m_low * s - _EPS)
    high = n if m_high == math.inf else math.floor(q90 + m_high * s + _EPS)
    low, high = max(known, min(low, q50)), min(n, max(high, q50))
    return int(low), int(high)
