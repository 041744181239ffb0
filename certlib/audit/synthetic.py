"""Synthetic update streams with a known disagreement rate and regression, for
teaching, tests and benchmarks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..errors import ParameterError

__all__ = ["synthetic_stream"]


def synthetic_stream(n: int, rho: float, delta: float, *, seed: int = 0
                     ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                npt.NDArray[np.int64]]:
    """A binary stream in which the models disagree at rate rho and regress by delta.

    On a disagreement exactly one model is wrong: g with probability (1 + delta/rho)/2,
    so E[loss(g) - loss(f)] = delta.

    Parameters
    ----------
    n : int
        The number of items.
    rho : float
        The disagreement rate, in (0, 1].
    delta : float
        The regression Delta, with |delta| <= rho.
    seed : int, default 0
        Seed of the generator.

    Returns
    -------
    tuple of numpy.ndarray
        (incumbent f, candidate g, labels y), each of n 0/1 integers.

    Raises
    ------
    ParameterError
        ``rho`` outside (0, 1], or |delta| > rho.

    Examples
    --------
    >>> f, g, y = synthetic_stream(100_000, 0.1, 0.02, seed=1)
    >>> round(float((f != g).mean()), 2), round(float(((g != y).astype(int) - (f != y)).mean()), 2)
    (0.1, 0.02)
    """
    if not 0 < rho <= 1:
        raise ParameterError(f"rho must be in (0, 1]; got {rho!r}")
    if abs(delta) > rho:
        raise ParameterError(f"|delta| must be at most rho = {rho}; got {delta!r}")
    rng = np.random.default_rng(seed)
    y: npt.NDArray[np.int64] = rng.integers(0, 2, n)
    a = rng.random(n) < rho
    plus = rng.random(n) < (1 + delta / rho) / 2
    f, g = y.copy(), y.copy()
    f[a & ~plus] = 1 - y[a & ~plus]
    g[a & plus] = 1 - y[a & plus]
    return f, g, y
