"""Simulated update streams with a known disagreement rate and regression (paper 002,
section 3), to try an audit before paying for labels.

The model of one item: the label y is 0 or 1 with probability 1/2 each; the incumbent f
and the candidate g disagree with probability ``rho``; on a disagreement exactly one of
them is wrong, the candidate with probability ``(1 + regression / rho) / 2``; on an
agreement both are right.  Hence ``P(f != g) = rho`` and
``Delta = E[loss(g) - loss(f)] = regression`` under the 0/1 loss, which is why
``|regression| <= rho`` (Delta is supported on the disagreements, paper section 3).

Items are independent and the stream is a function of the seed alone: the same
arguments give the same arrays on every run and platform numpy's ``default_rng``
supports.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from .routing import check_seed

__all__ = ["SyntheticStream", "synthetic_stream"]


class SyntheticStream(NamedTuple):
    """A simulated stream: both models' predictions and the labels, item by item.

    A named tuple, so ``f, g, y = stream`` unpacks it and ``audit(*stream, epsilon=...)``
    audits it.

    Parameters
    ----------
    incumbent : numpy.ndarray of int
        The incumbent's (f) predictions, 0 or 1.
    candidate : numpy.ndarray of int
        The candidate's (g) predictions, 0 or 1.
    labels : numpy.ndarray of int
        The true labels, 0 or 1.

    Examples
    --------
    >>> s = synthetic_stream(1000, rho=0.2, regression=0.05, seed=3)
    >>> s.n, s.empirical_rho
    (1000, 0.212)
    >>> f, g, y = s
    >>> int((f != g).sum()), s.labels.dtype.name
    (212, 'int64')
    """

    incumbent: npt.NDArray[np.int64]
    candidate: npt.NDArray[np.int64]
    labels: npt.NDArray[np.int64]

    @property
    def n(self) -> int:
        """The number of items."""
        return int(self.labels.size)

    @property
    def empirical_rho(self) -> float:
        """The realised disagreement rate: the share of items where f and g differ."""
        return float(np.mean(self.incumbent != self.candidate))

    @property
    def empirical_regression(self) -> float:
        """The realised regression: the mean of ``1{g != y} - 1{f != y}`` over the items."""
        loss_g = (self.candidate != self.labels).astype(np.int64)
        loss_f = (self.incumbent != self.labels).astype(np.int64)
        return float(np.mean(loss_g - loss_f))

    def columns(self) -> dict[str, npt.NDArray[np.int64]]:
        """The stream under the column names of a stream file (``certlib audit``).

        Returns
        -------
        dict of str to numpy.ndarray
            ``pred_incumbent``, ``pred_candidate`` and ``label``; ``polars.DataFrame``
            or ``pandas.DataFrame`` of it writes a file ``certlib audit`` reads.

        Examples
        --------
        >>> sorted(synthetic_stream(10, rho=0.5, regression=0.0).columns())
        ['label', 'pred_candidate', 'pred_incumbent']
        """
        return {"pred_incumbent": self.incumbent, "pred_candidate": self.candidate,
                "label": self.labels}


def _count(value: object, name: str) -> int:
    """``value`` as a positive int, or a ParameterError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or int(value) < 1:
        raise ParameterError(f"`{name}` must be a positive integer (the number of items), "
                             f"got {value!r}")
    return int(value)


def _real(value: object, name: str, what: str) -> float:
    """``value`` as a finite float, or a ParameterError naming ``name``."""
    number = math.nan
    if not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # an integer too large for a float
            pass
    if not math.isfinite(number):
        raise ParameterError(f"`{name}` must be {what}, got {value!r}")
    return number


def synthetic_stream(n: int, rho: float, regression: float, *,
                     seed: int = 0) -> SyntheticStream:
    """Simulate a binary stream whose models disagree at rate ``rho`` and regress by
    ``regression``.

    Each item is drawn independently (module docstring): the models disagree with
    probability ``rho``, and on a disagreement exactly one of them is wrong, the
    candidate with probability ``(1 + regression / rho) / 2``, so that
    ``Delta = E[loss(g) - loss(f)] = regression`` under the 0/1 loss.  The realised
    rates (`SyntheticStream.empirical_rho`, `SyntheticStream.empirical_regression`)
    differ from the asked ones by sampling noise of order ``sqrt(rho / n)``.

    Parameters
    ----------
    n : int
        The number of items, at least 1.
    rho : float
        The disagreement rate ``P(f != g)``, in [0, 1].
    regression : float
        The candidate's regression Delta (negative: an improvement), in
        ``[-rho, rho]``.
    seed : int, default 0
        Seed of the generator (a non-negative integer): the same seed gives the same
        stream.  Independent of the audit's own ``seed``, which draws the labelling.

    Returns
    -------
    SyntheticStream
        ``(incumbent, candidate, labels)``, each ``n`` integers 0 or 1.

    Raises
    ------
    ParameterError
        ``n`` is no positive integer, ``rho`` is outside [0, 1], ``regression`` is
        outside ``[-rho, rho]``, or ``seed`` is no non-negative integer; the message
        names the parameter and the value given.

    Examples
    --------
    >>> s = synthetic_stream(100_000, rho=0.1, regression=0.02, seed=1)
    >>> round(s.empirical_rho, 2), round(s.empirical_regression, 2)
    (0.1, 0.02)
    >>> from certlib.audit import audit
    >>> audit(*s, epsilon=0.05).verdict     # Delta = 0.02 < eps: promote
    'safe'
    >>> audit(*s, epsilon=0.01).verdict     # Delta = 0.02 > 0: alarm
    'regression'
    >>> synthetic_stream(10, rho=0.1, regression=0.3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    certlib.errors.ParameterError: `regression` must lie in [-rho, rho] with rho = 0.1 ..., got 0.3
    """
    size = _count(n, "n")
    r = _real(rho, "rho", "a number in [0, 1] (the disagreement rate)")
    if not 0 <= r <= 1:
        raise ParameterError(f"`rho` must be a number in [0, 1] (the disagreement rate), "
                             f"got {rho!r}")
    d = _real(regression, "regression", "a number in [-rho, rho] (the regression Delta)")
    if abs(d) > r:
        raise ParameterError(f"`regression` must lie in [-rho, rho] with rho = {rho!r} (on a "
                             f"disagreement exactly one model is wrong), got {regression!r}")
    rng = np.random.default_rng(check_seed(seed))
    y: npt.NDArray[np.int64] = rng.integers(0, 2, size, dtype=np.int64)
    disagree = rng.random(size) < r
    # P(candidate is the wrong one | disagreement); any value will do when rho = 0
    p_candidate = (1 + d / r) / 2 if r > 0 else 0.5
    candidate_wrong = rng.random(size) < p_candidate
    f, g = y.copy(), y.copy()
    f[disagree & ~candidate_wrong] = 1 - y[disagree & ~candidate_wrong]
    g[disagree & candidate_wrong] = 1 - y[disagree & candidate_wrong]
    return SyntheticStream(f, g, y)
