"""Label-free integer weights of the objectives (SPEC section 3).

AUGRC: for one candidate sort the rows by confidence, descending.  A block of
tied confidences occupying zero-based positions [s, e) gives each of its rows
the integer weight ``2n - s - e``.  The weights sum to n^2 and the scaled risk
``r = sum_i w_i loss_i`` equals ``2 n^2 AUGRC`` (paper 000, eq. (2)): the
trapezoid AUGRC averaged over all orders inside a tie.  This is the one place
where confidence ties are defined.

Accuracy: every weight is 1 and r = n * error rate.

An objective is described by its weights and by ``scale``, the integer that
turns a scaled risk back into the objective (AUGRC = r / (2 n^2), error rate =
r / n).  Tolerances are converted with ``floor(scale * tau)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..errors import ParameterError

__all__ = ["augrc_weights", "accuracy_weights", "Objective", "OBJECTIVES", "get_objective",
           "tolerance_units", "exact_fraction"]


def augrc_weights(conf: npt.ArrayLike) -> NDArray[np.int64]:
    """Tie-averaged integer AUGRC weights of one candidate's confidences (paper eq. (2)).

    Parameters
    ----------
    conf : array_like of float, shape (n,)
        The candidate's confidences; larger is accepted earlier.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        ``2n - s - e`` for a row in the tie block at sorted positions [s, e); they sum
        to n^2.

    Examples
    --------
    >>> augrc_weights(np.array([0.9, 0.8, 0.7, 0.6])).tolist()
    [7, 5, 3, 1]
    >>> augrc_weights(np.array([0.5, 0.5, 0.1])).tolist()   # tie at [0, 2)
    [4, 4, 1]
    """
    c = np.asarray(conf, dtype=np.float64)
    n = c.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # tied rows get one weight whatever their order, so no stable sort is needed
    order = np.argsort(-c)
    sc = c[order]
    # block starts: position 0 and every position whose value differs from the previous
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(sc[1:], sc[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], n)
    block_w = 2 * n - starts - ends
    sizes = ends - starts
    w_sorted = np.repeat(block_w.astype(np.int64), sizes)
    w = np.empty(n, dtype=np.int64)
    w[order] = w_sorted
    return w


def accuracy_weights(conf: npt.ArrayLike) -> NDArray[np.int64]:
    """Every row weighs 1: the scaled risk is the number of errors.

    Parameters
    ----------
    conf : array_like, shape (n,)
        One candidate's confidences (only their number is used).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Ones.
    """
    return np.ones(np.asarray(conf).shape[0], dtype=np.int64)


@dataclass(frozen=True)
class Objective:
    """A fixed-weight objective: risk_j = sum_i w_ji loss_ji / scale(n).

    Parameters
    ----------
    name : str
        The name a pool's ``objective`` gives.
    weights : callable
        One candidate's confidences (n,) to its integer weights (n,).
    scale : callable
        n to the integer that turns a scaled risk into the objective.
    """

    name: str
    weights: Callable[[npt.ArrayLike], NDArray[np.int64]]
    scale: Callable[[int], int]


OBJECTIVES = {
    "augrc": Objective("augrc", augrc_weights, lambda n: 2 * n * n),
    "accuracy": Objective("accuracy", accuracy_weights, lambda n: n),
}


def get_objective(name: str) -> Objective:
    """The objective of a name.

    Parameters
    ----------
    name : str
        "augrc" or "accuracy".

    Returns
    -------
    Objective
        Its weights and scale.

    Raises
    ------
    ParameterError
        An unknown name.

    Examples
    --------
    >>> get_objective("augrc").scale(4), get_objective("accuracy").scale(4)
    (32, 4)
    """
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise ParameterError(
            f"objective must be one of {', '.join(sorted(OBJECTIVES))}; got {name!r}"
        ) from None


def exact_fraction(value: object, what: str = "tolerance") -> Fraction:
    """A non-negative number as an exact Fraction; floats go through their
    shortest decimal repr so that 0.0005 means 5/10000, not the binary float.

    Parameters
    ----------
    value : int, float, Fraction or numeric text
        The number.
    what : str
        The parameter's name, for the error message.

    Returns
    -------
    Fraction
        The value, exactly.

    Raises
    ------
    ParameterError
        A bool, a non-number, a non-finite number or a negative one.

    Examples
    --------
    >>> exact_fraction(0.0005), exact_fraction(3)
    (Fraction(1, 2000), Fraction(3, 1))
    """
    if isinstance(value, bool):
        raise ParameterError(f"{what} must be a number >= 0; got {value!r}")
    try:
        if isinstance(value, Fraction):
            f = value
        elif isinstance(value, int):
            f = Fraction(value)
        else:
            v = float(value)  # type: ignore[arg-type]  # anything float() reads; else caught
            if not np.isfinite(v):
                raise ValueError
            f = Fraction(repr(v))
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a finite number >= 0; got {value!r}") from None
    if f < 0:
        raise ParameterError(f"{what} must be >= 0; got {value!r}")
    return f


def tolerance_units(tau: object, scale: int) -> int:
    """T = floor(scale * tau), the tolerance in scaled-risk integers (SPEC section 5).

    Scaled risk differences never exceed ``scale`` (the weights of a candidate sum
    to at most scale / 2 for AUGRC, n = scale for accuracy), so any larger T means the
    same test; it is capped there to stay far inside int64.

    Parameters
    ----------
    tau : int, float or Fraction
        The tolerance on the objective's scale.
    scale : int
        The pool's scale.

    Returns
    -------
    int
        T, at most ``scale``.

    Raises
    ------
    ParameterError
        A tolerance that is not a number >= 0.

    Examples
    --------
    >>> tolerance_units(0.0005, 2 * 100 ** 2), tolerance_units(1e30, 50)
    (10, 50)
    """
    f = exact_fraction(tau)
    return int(min(f * scale // 1, scale))
