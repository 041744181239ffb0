"""Baselines on the same stream and the same confidence sequence (SPEC section 11, paper 6.4).

Every method feeds increments with conditional mean Delta and a known range
[-c, c] into the same PrPl-EB CS (mapped to [0, 1]) and the same verdict rule
(Safe when upper < eps, Regression when lower > 0), so the only difference
is where labels are spent:

* ``uniform``: label every item, Z_t = D_t, c = B.
* ``ppi``: PPI-style control variate; the surrogate Dhat_t is 0 on
  agreements and ``B (2 judge_t - 1)`` on disagreements (0 without a judge);
  every item is labelled with probability q (default 1/2) and
  Z_t = Dhat_t + (L_t / q)(D_t - Dhat_t), c = B (2/q - 1).
* ``active``: active-testing routing over all items (no disagreement
  restriction): pi_t = floor + (1 - floor) judge_t (a constant ``pi`` without
  a judge), Horvitz-Thompson Z_t = L_t D_t / pi_t, c = B / floor.

Baselines have a single tier, so they run at the whole ``delta`` (Discern's
Tier 1 runs at delta/2): the comparison is tilted in the baselines' favour.
Labelling draws use the same seeded uniforms U_t as Discern.

Every method replays a fully labelled stream (a simulated one,
`certlib.audit.synthetic_stream`, or one labelled after the fact): each pays for
different items, and the comparison needs the label of every item any of them pays for.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..errors import LabelError, ParameterError
from .core import (DEFAULT_CONFIDENCE, TIER1_FROM, AuditConfig, AuditResult, make_stream,
                   run_stream, tier1_sequence)
from .routing import uniforms

__all__ = ["METHODS", "BaselineRow", "BaselineComparison", "compare_baselines"]

#: The methods of a comparison, in the order of its rows.
METHODS = ("discern", "uniform", "ppi", "active")


@dataclass(frozen=True)
class BaselineRow:
    """One method's labels to verdict on the stream.

    Parameters
    ----------
    method : {"discern", "uniform", "ppi", "active"}
        The labelling method (module docstring).
    verdict : {"safe", "regression", "continue"}
        Its verdict.
    stopping_time : int, optional
        The 1-based item at which it was issued (None for continue).
    labels_used : int
        Labels paid for up to then (to the end of the stream for continue).
    delta_interval : tuple of float
        Its interval for Delta there.

    Examples
    --------
    >>> from certlib.audit import compare_baselines, synthetic_stream
    >>> row = compare_baselines(*synthetic_stream(20_000, 0.2, 0.0, seed=2),
    ...                         epsilon=0.05).by_method()["uniform"]
    >>> row.method, row.verdict, row.labels_used == row.stopping_time   # labels every item
    ('uniform', 'safe', True)
    """

    method: str
    verdict: str
    stopping_time: int | None
    labels_used: int
    delta_interval: tuple[float, float]

    def to_dict(self) -> dict[str, object]:
        """The row as JSON-ready data.

        Returns
        -------
        dict
            Every field under its own name.
        """
        return {"method": self.method, "verdict": self.verdict,
                "stopping_time": self.stopping_time, "labels_used": self.labels_used,
                "delta_interval": list(self.delta_interval)}


@dataclass(frozen=True)
class BaselineComparison:
    """Side-by-side labels to verdict; ``rows[0]`` is Discern itself.

    Parameters
    ----------
    rows : tuple of BaselineRow
        Discern, uniform, PPI-style and active-testing, in that order (`METHODS`).
    discern_result : AuditResult
        Discern's full audit of the stream, the result `certlib.audit.audit` returns
        with the same settings; ``rows[0]`` repeats its verdict, stopping time, labels
        and interval.

    Examples
    --------
    >>> from certlib.audit import audit, compare_baselines, synthetic_stream
    >>> s = synthetic_stream(20_000, 0.2, 0.0, seed=2)
    >>> cmp = compare_baselines(*s, epsilon=0.05)
    >>> [(r.method, r.verdict) for r in cmp.rows]
    [('discern', 'safe'), ('uniform', 'safe'), ('ppi', 'safe'), ('active', 'safe')]
    >>> cmp.discern_result == audit(*s, epsilon=0.05)
    True
    """

    rows: tuple[BaselineRow, ...]
    discern_result: AuditResult = field(repr=False)

    def by_method(self) -> dict[str, BaselineRow]:
        """The rows by method name.

        Returns
        -------
        dict of str to BaselineRow
            ``{"discern": ..., "uniform": ..., "ppi": ..., "active": ...}``.
        """
        return {r.method: r for r in self.rows}

    def to_dict(self) -> dict[str, object]:
        """The comparison as JSON-ready data (``certlib audit --baselines``).

        Returns
        -------
        dict
            ``{"baselines": [row, ...]}``.
        """
        return {"baselines": [r.to_dict() for r in self.rows]}


def _sequential(method: str, z: npt.NDArray[np.float64], paid: npt.NDArray[np.bool_], c: float,
                alpha: float, eps: float, cfg: AuditConfig,
                has_label: npt.NDArray[np.bool_]) -> BaselineRow:
    lo, hi = tier1_sequence(cfg, (z + c) / (2 * c), alpha, c)
    lo, hi = 2 * c * lo - c, 2 * c * hi - c
    fire = (lo > 0) | (hi < eps)
    hits = np.flatnonzero(fire)
    end = int(hits[0]) if hits.size else z.size - 1
    gap = np.flatnonzero(paid[:end + 1] & ~has_label[:end + 1])
    if gap.size:
        raise LabelError(f"baseline `{method}` needs the label of item {int(gap[0]) + 1} "
                         f"(index {int(gap[0])}), which is missing; baselines replay fully "
                         "labelled streams only")
    verdict = "continue"
    if hits.size:
        verdict = "regression" if lo[end] > 0 else "safe"
    return BaselineRow(method, verdict, end + 1 if hits.size else None,
                       int(paid[:end + 1].sum()), (float(lo[end]), float(hi[end])))


def _rate(value: object, name: str) -> float:
    """A rate in (0, 1] as a float, or a ParameterError naming ``name``."""
    rate = math.nan
    if not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real):
        try:
            rate = float(value)
        except OverflowError:  # an integer too large for a float
            pass
    if not 0 < rate <= 1:  # NaN fails too
        raise ParameterError(f"`{name}` must lie in (0, 1], got {value!r}")
    return rate


def compare_baselines(incumbent: npt.ArrayLike, candidate: npt.ArrayLike,
                      labels: npt.ArrayLike | None, *, epsilon: float, delta: float = 0.05,
                      seed: int = 0, pi: float | None = None, pi_min: float | None = None,
                      judge: npt.ArrayLike | None = None, ppi_rate: float = 0.5,
                      active_floor: float = 0.1, truncation: float = 0.5,
                      confidence: str = DEFAULT_CONFIDENCE,
                      tier1_from: float = TIER1_FROM) -> BaselineComparison:
    """Discern, uniform, PPI-style and active-testing labelling on one stream.

    Every method feeds the same confidence sequence and verdict rule (module
    docstring); only where labels are spent differs (paper section 6.4).  The Discern
    row is `certlib.audit.audit` with the same settings.

    Parameters
    ----------
    incumbent, candidate : array_like
        The incumbent's (f) and the candidate's (g) predictions, numbers or text, as
        in `certlib.audit.audit`.
    labels : array_like or None
        The labels, None or NaN where unlabelled, as in `certlib.audit.audit`; the
        stream must hold every label a method pays for (a simulated stream,
        `certlib.audit.synthetic_stream`, holds them all).
    epsilon : float
        Tolerance eps > 0: Safe certifies Delta < eps.
    delta : float, default 0.05
        Miscoverage in (0, 1): Discern's (split between its tiers), and each
        baseline's whole level.
    seed : int, default 0
        Seed of the labelling draws U_t, shared by every method.
    pi, pi_min : float, optional
        Discern's routing probability on disagreements (default 0.5) and its floor;
        without a judge the active-testing baseline labels every item with
        probability ``pi``.
    judge : array_like of float, optional
        Judge scores in [0, 1]: Discern's routing, the PPI-style surrogate on
        disagreements and the active-testing routing.
    ppi_rate : float, default 0.5
        The PPI-style baseline's labelling rate q, in (0, 1] (the paper's q = 1/2).
    active_floor : float, default 0.1
        The active-testing baseline's floor with a judge, in (0, 1] (the paper's 0.1).
    truncation : float, default 0.5
        PrPl-EB bet truncation in (0, 1).
    confidence : str, default DEFAULT_CONFIDENCE
        The confidence sequence of Discern's Tier 1 and of every baseline alike
        (`certlib.audit.core.CONFIDENCE`).
    tier1_from : float, default TIER1_FROM
        When Discern's Tier 1 starts (`certlib.audit.audit`).

    Returns
    -------
    BaselineComparison
        One row per method, in the order of `METHODS`, and Discern's full result.

    Raises
    ------
    ParameterError
        A setting out of range, named with the value given.
    InvalidValueError
        What `certlib.audit.audit` refuses in the predictions or judge scores.
    LabelError
        A method needs a label the stream does not hold (named by item and index).

    Examples
    --------
    >>> from certlib.audit import compare_baselines, synthetic_stream
    >>> s = synthetic_stream(40_000, rho=0.2, regression=0.0, seed=17)
    >>> cmp = compare_baselines(*s, epsilon=0.05)
    >>> for r in cmp.rows:
    ...     print(f"{r.method:8} {r.verdict:5} {r.labels_used:5} labels by item {r.stopping_time}")
    discern  safe    207 labels by item 2047
    uniform  safe    849 labels by item 849
    ppi      safe    813 labels by item 1662
    active   safe    940 labels by item 1883
    >>> compare_baselines(*s, epsilon=0.05, ppi_rate=0)
    Traceback (most recent call last):
    ...
    certlib.errors.ParameterError: `ppi_rate` must lie in (0, 1], got 0
    """
    cfg = AuditConfig.make(epsilon=epsilon, delta=delta, pi=pi, pi_min=pi_min,
                           judge=judge is not None, seed=seed, truncation=truncation,
                           confidence=confidence, tier1_from=tier1_from)
    q = _rate(ppi_rate, "ppi_rate")
    floor_judge = _rate(active_floor, "active_floor")
    stream = make_stream(incumbent, candidate, labels, judge=judge)
    n, B, eps, alpha = stream.n, cfg.B, cfg.epsilon, cfg.delta
    res = run_stream(stream, cfg)
    if res.needs_label is not None:
        raise LabelError(f"Discern needs the label of item {res.needs_label + 1} (index "
                         f"{res.needs_label}), which is missing; baselines replay fully "
                         "labelled streams only")
    rows = [BaselineRow("discern", res.verdict, res.stopping_time, res.labels_used,
                        res.delta_interval)]
    d, a, has = stream.d, stream.a, stream.has_label
    u = uniforms(cfg.seed, 0, n)

    rows.append(_sequential("uniform", d, np.ones(n, dtype=bool), B, alpha, eps, cfg, has))

    dhat = np.zeros(n) if stream.judge is None else np.where(a, B * (2 * stream.judge - 1), 0.0)
    lab = u < q
    z = dhat + np.where(lab, (d - dhat) / q, 0.0)
    rows.append(_sequential("ppi", z, lab, B * (2 / q - 1), alpha, eps, cfg, has))

    if stream.judge is None:
        p = np.full(n, cfg.routing.pi)
        floor = cfg.routing.pi
    else:
        floor = floor_judge
        p = floor + (1 - floor) * stream.judge
    lab = u < p
    z = np.where(lab, d / p, 0.0)
    rows.append(_sequential("active", z, lab, B / floor, alpha, eps, cfg, has))
    return BaselineComparison(tuple(rows), res)
