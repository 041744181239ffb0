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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import LabelError, ParameterError
from .core import AuditConfig, make_stream, run_stream
from .cs import prpl_eb
from .routing import uniforms

__all__ = ["BaselineRow", "BaselineComparison", "compare_baselines"]


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
        The 1-based item at which it was issued.
    labels_used : int
        Labels paid for up to then.
    delta_interval : tuple of float
        Its interval for Delta there.
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
        Discern, uniform, PPI-style and active-testing, in that order.
    """

    rows: tuple[BaselineRow, ...]

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
    lo, hi = prpl_eb((z + c) / (2 * c), alpha, truncation=cfg.truncation,
                     running_intersection=cfg.running_intersection)
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


def compare_baselines(incumbent: npt.ArrayLike, candidate: npt.ArrayLike,
                      labels: npt.ArrayLike | None, *, epsilon: float, delta: float = 0.05,
                      seed: int = 0, pi: float | None = None, pi_min: float | None = None,
                      judge: npt.ArrayLike | None = None, ppi_rate: float = 0.5,
                      active_floor: float = 0.1, truncation: float = 0.5) -> BaselineComparison:
    """Discern, uniform, PPI-style and active-testing labelling on one stream.

    Every method feeds the same confidence sequence and verdict rule (module
    docstring); only where labels are spent differs (paper section 6.4).

    Parameters
    ----------
    incumbent, candidate, labels
        As in `certlib.audit.audit`; the stream must hold every label a method pays for.
    epsilon, delta, seed, pi, pi_min, judge, truncation
        As in `certlib.audit.audit`.
    ppi_rate : float, default 0.5
        The PPI-style baseline's labelling rate q, in (0, 1].
    active_floor : float, default 0.1
        The active-testing floor with a judge, in (0, 1].

    Returns
    -------
    BaselineComparison
        One row per method.

    Raises
    ------
    ParameterError
        A setting out of range.
    LabelError
        A method needs a label the stream does not hold.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 20000); f = y.copy(); g = y.copy()
    >>> flip = rng.random(20000) < 0.2
    >>> g[flip] = 1 - g[flip]; f[flip & (rng.random(20000) < 0.5)] ^= 1
    >>> cmp = compare_baselines(f, g, y, epsilon=0.05)
    >>> [r.method for r in cmp.rows]
    ['discern', 'uniform', 'ppi', 'active']
    """
    cfg = AuditConfig.make(epsilon=epsilon, delta=delta, pi=pi, pi_min=pi_min,
                           judge=judge is not None, seed=seed, truncation=truncation)
    for name, v in (("ppi_rate", ppi_rate), ("active_floor", active_floor)):
        if not (isinstance(v, (int, float)) and 0 < v <= 1):
            raise ParameterError(f"`{name}` must lie in (0, 1], got {v!r}")
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

    q = float(ppi_rate)
    dhat = np.zeros(n) if stream.judge is None else np.where(a, B * (2 * stream.judge - 1), 0.0)
    lab = u < q
    z = dhat + np.where(lab, (d - dhat) / q, 0.0)
    rows.append(_sequential("ppi", z, lab, B * (2 / q - 1), alpha, eps, cfg, has))

    if stream.judge is None:
        p = np.full(n, cfg.routing.pi)
        floor = cfg.routing.pi
    else:
        floor = float(active_floor)
        p = floor + (1 - floor) * stream.judge
    lab = u < p
    z = np.where(lab, d / p, 0.0)
    rows.append(_sequential("active", z, lab, B / floor, alpha, eps, cfg, has))
    return BaselineComparison(tuple(rows))
