"""PrPl-EB confidence sequence (SPEC section 11; Waudby-Smith & Ramdas 2024, Thm 2).

Two forms of the same arithmetic:

* :func:`prpl_eb` is vectorised over a whole [0, 1]-valued array (cumulative
  sums, a 1,000,000-point stream in a few tens of milliseconds);
* :class:`PrplEBState` is the streaming form, ``state.update(x) -> new state``,
  a pure transition whose interval equals the batch interval on every prefix.

Floats throughout: this module is numeric by nature (STYLE rule 4).

Running intersection: off by default, as in SPEC's golden numbers.  With
``running_intersection=True`` the reported interval at t is the intersection
of the intervals at 1..t (still a valid confidence sequence, since the event
"the mean is in every C_t" is unchanged).  It can come out empty (lower >
upper) only on the miscoverage event; it is then reported as is.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InvalidValueError, ParameterError

__all__ = ["prpl_eb", "ConfidenceSequence", "PrplEBState", "check_alpha", "check_truncation"]


def _open_unit(value: object, name: str) -> float:
    """A number strictly between 0 and 1, or a ParameterError naming it."""
    try:
        v = float(value)  # type: ignore[arg-type]  # any value; errors become ParameterError
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be a number in (0, 1), got {value!r}") from None
    if not (0.0 < v < 1.0):
        raise ParameterError(f"`{name}` must lie strictly between 0 and 1, got {value!r}")
    return v


def check_alpha(alpha: object, name: str = "alpha") -> float:
    """Validate a miscoverage level in (0, 1).

    Parameters
    ----------
    alpha : float
        The level (a delta or an alpha).
    name : str, default "alpha"
        The parameter's name in the message.

    Returns
    -------
    float
        ``alpha`` as a float.

    Raises
    ------
    ParameterError
        ``alpha`` is no number strictly between 0 and 1.
    """
    return _open_unit(alpha, name)


def check_truncation(truncation: object) -> float:
    """Validate the bet truncation c in (0, 1).

    Parameters
    ----------
    truncation : float
        The largest bet lambda_t of PrPl-EB (SPEC section 11).

    Returns
    -------
    float
        ``truncation`` as a float.

    Raises
    ------
    ParameterError
        ``truncation`` is no number strictly between 0 and 1.
    """
    return _open_unit(truncation, "truncation")


def _check_unit(x: npt.ArrayLike) -> npt.NDArray[np.float64]:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise InvalidValueError(f"`x` must be a one-dimensional array, got shape {arr.shape}")
    bad = ~np.isfinite(arr) | (arr < 0.0) | (arr > 1.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidValueError(f"`x` must lie in [0, 1]; entry {i} is {float(arr[i])!r}")
    return arr


@dataclass(frozen=True)
class ConfidenceSequence:
    """Lower and upper ends of C_1, ..., C_n (index i is time t = i + 1).

    Unpacks as ``lower, upper = prpl_eb(x)`` (SPEC section 10).

    Parameters
    ----------
    lower, upper : numpy.ndarray of float
        The interval's ends at every time, in [0, 1].
    alpha : float
        The miscoverage level: with probability at least 1 - alpha, the mean lies in
        every C_t at once.
    truncation : float
        The bet truncation c.
    running_intersection : bool
        Whether C_t is the intersection of C_1, ..., C_t.

    Examples
    --------
    >>> cs = prpl_eb([0.5] * 100)
    >>> lo, hi = cs
    >>> bool(lo[-1] < 0.5 < hi[-1]), len(lo)
    (True, 100)
    """

    lower: npt.NDArray[np.float64]
    upper: npt.NDArray[np.float64]
    alpha: float
    truncation: float
    running_intersection: bool

    def __iter__(self) -> Iterator[npt.NDArray[np.float64]]:
        return iter((self.lower, self.upper))

    def __len__(self) -> int:
        return 2


def _raw(x: npt.NDArray[np.float64], alpha: float,
         c: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    n = x.size
    t = np.arange(1, n + 1, dtype=float)
    csum = np.cumsum(x)
    mu = (0.5 + csum) / (t + 1.0)  # mu_t, t = 1..n
    s2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1.0)
    mu_prev = np.concatenate(([0.5], mu[:-1]))
    s2_prev = np.concatenate(([0.25], s2[:-1]))
    log_term = math.log(2.0 / alpha)
    lam = np.minimum(np.sqrt(2.0 * log_term / (s2_prev * t * np.log1p(t))), c)
    v = 4.0 * (x - mu_prev) ** 2
    psi = (-np.log1p(-lam) - lam) / 4.0
    lam_sum = np.cumsum(lam)
    centre = np.cumsum(lam * x) / lam_sum
    radius = (log_term + np.cumsum(v * psi)) / lam_sum
    return np.maximum(centre - radius, 0.0), np.minimum(centre + radius, 1.0)


def prpl_eb(x: npt.ArrayLike, alpha: float = 0.05, *, truncation: float = 0.5,
            running_intersection: bool = False) -> ConfidenceSequence:
    """PrPl-EB confidence sequence for the mean of [0, 1]-valued ``x``.

    Exactly the formulas of SPEC section 11 (Waudby-Smith & Ramdas 2024, Thm 2):
    predictable plug-in bets on the empirical-Bernstein supermartingale.

    Parameters
    ----------
    x : array_like of float
        The observations x_1, ..., x_n, each in [0, 1].
    alpha : float, default 0.05
        Miscoverage level in (0, 1).
    truncation : float, default 0.5
        The bet truncation c in (0, 1).
    running_intersection : bool, default False
        Report the intersection of C_1, ..., C_t at every t (module docstring).

    Returns
    -------
    ConfidenceSequence
        Lower and upper ends over time; unpacks as ``lower, upper``.

    Raises
    ------
    ParameterError
        ``alpha`` or ``truncation`` outside (0, 1).
    InvalidValueError
        ``x`` is not one-dimensional or holds a value outside [0, 1].

    Examples
    --------
    >>> x = [0.2, 0.9, 0.4, 0.7, 0.1] * 200
    >>> lo, hi = prpl_eb(x)
    >>> round(float(lo[49]), 12), round(float(hi[49]), 12)
    (0.274492113163, 0.645507886837)
    """
    alpha = check_alpha(alpha)
    c = check_truncation(truncation)
    arr = _check_unit(x)
    lower: npt.NDArray[np.float64]
    upper: npt.NDArray[np.float64]
    if arr.size == 0:
        lower = upper = np.empty(0)
    else:
        lower, upper = _raw(arr, alpha, c)
        if running_intersection:
            lower = np.maximum.accumulate(lower)
            upper = np.minimum.accumulate(upper)
    return ConfidenceSequence(lower, upper, alpha, c, bool(running_intersection))


@dataclass(frozen=True)
class PrplEBState:
    """Streaming PrPl-EB: ``state.update(x)`` returns the state after one more point.

    Its interval equals `prpl_eb`'s on every prefix.

    Parameters
    ----------
    alpha, truncation, running_intersection
        As in `prpl_eb`.
    t : int
        Points seen.
    sum_x, sum_dev : float
        Running sums of x_i and of (x_i - mu_i)^2.
    mu, s2 : float
        The predictable mean and variance estimates mu_t and sigma^2_t.
    lam_sum, lam_x_sum, penalty : float
        Running sums of lambda_i, lambda_i x_i and v_i psi(lambda_i).
    lower, upper : float
        The interval C_t ([0, 1] before any point).

    Examples
    --------
    >>> s = PrplEBState.start(alpha=0.05)
    >>> for v in [0.2, 0.9, 0.4, 0.7, 0.1] * 10:
    ...     s = s.update(v)
    >>> s.t, round(s.lower, 12), round(s.upper, 12)
    (50, 0.274492113163, 0.645507886837)
    """

    alpha: float
    truncation: float
    running_intersection: bool
    t: int = 0
    sum_x: float = 0.0
    sum_dev: float = 0.0
    mu: float = 0.5       # mu_t
    s2: float = 0.25      # s2_t
    lam_sum: float = 0.0
    lam_x_sum: float = 0.0
    penalty: float = 0.0
    lower: float = 0.0
    upper: float = 1.0

    @classmethod
    def start(cls, alpha: float = 0.05, *, truncation: float = 0.5,
              running_intersection: bool = False) -> PrplEBState:
        """The state before any point.

        Parameters
        ----------
        alpha : float, default 0.05
            Miscoverage level in (0, 1).
        truncation : float, default 0.5
            The bet truncation c in (0, 1).
        running_intersection : bool, default False
            Intersect the intervals over time.

        Returns
        -------
        PrplEBState
            The initial state, interval [0, 1].

        Raises
        ------
        ParameterError
            ``alpha`` or ``truncation`` outside (0, 1).
        """
        return cls(check_alpha(alpha), check_truncation(truncation), bool(running_intersection))

    def update(self, x: float) -> PrplEBState:
        """The state after one more point (a pure transition: validate, then build).

        Parameters
        ----------
        x : float
            The next observation, in [0, 1].

        Returns
        -------
        PrplEBState
            The new state.

        Raises
        ------
        InvalidValueError
            ``x`` is no number in [0, 1].
        """
        try:
            x = float(x)
        except (TypeError, ValueError):
            raise InvalidValueError(f"`x` must be a number in [0, 1], got {x!r}") from None
        if not (0.0 <= x <= 1.0):
            raise InvalidValueError(f"`x` must lie in [0, 1], got {x!r}")
        t = self.t + 1
        log_term = math.log(2.0 / self.alpha)
        lam = min(math.sqrt(2.0 * log_term / (self.s2 * t * math.log1p(t))), self.truncation)
        v = 4.0 * (x - self.mu) ** 2
        psi = (-math.log1p(-lam) - lam) / 4.0
        sum_x = self.sum_x + x
        mu = (0.5 + sum_x) / (t + 1)
        sum_dev = self.sum_dev + (x - mu) ** 2
        lam_sum = self.lam_sum + lam
        lam_x_sum = self.lam_x_sum + lam * x
        penalty = self.penalty + v * psi
        centre = lam_x_sum / lam_sum
        radius = (log_term + penalty) / lam_sum
        lower, upper = max(centre - radius, 0.0), min(centre + radius, 1.0)
        if self.running_intersection and self.t > 0:
            lower, upper = max(lower, self.lower), min(upper, self.upper)
        return PrplEBState(self.alpha, self.truncation, self.running_intersection, t,
                           sum_x, sum_dev, mu, (0.25 + sum_dev) / (t + 1),
                           lam_sum, lam_x_sum, penalty, lower, upper)
