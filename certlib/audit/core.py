"""Discern two-tier audit of a model update (SPEC section 11, paper sections 3-4).

Loss is 0/1 (B = 1): ``D_t = 1{g != y} - 1{f != y}``, ``A_t = 1{f != g}``.

Tier 0 runs PrPl-EB at level delta0 on A_t and issues Safe as soon as
``B * upper_rho < eps``.  Tier 1 labels a disagreement with probability pi_t
and runs PrPl-EB at level delta1 on ``(Z_t + c) / (2c)``, ``Z_t = A_t L_t D_t /
pi_t``, ``c = B / pi_min``; the interval [lo, hi] for that mean maps back to
``[2c lo - c, 2c hi - c]`` for Delta.

"Do not spend Tier-1 labels while Tier 0 can still certify": both tiers use
the running intersection by default, so the Tier-0 interval is nested and
once ``B * lower_rho_t >= eps`` its upper end can never fall below eps/B
again.  Tier 1 stays dormant (no labels) until that time T and starts on
items T+1, T+2, ...; T is a stopping time of the unlabelled stream, and the
increments after it still have conditional mean Delta given the past, so the
Tier-1 confidence sequence started there keeps its guarantee.  A stream with
rho well below eps/(2B) therefore gets Safe from Tier 0 with zero labels.

Verdict precedence when several fire at the same item: Regression, then
Tier-0 Safe, then Tier-1 Safe (all are true statements on the coverage event;
a regression alarm is the one an operator must not miss).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..core._values import class_value, class_value_from_text, first_text, first_true, \
    is_empty_cell, is_none_or_nan
from ..errors import InvalidValueError, LabelError, ParameterError
from .cs import PrplEBState, check_alpha, check_truncation, prpl_eb
from .routing import Routing, check_judge, check_seed, uniforms

__all__ = [
    "LOSS_RANGE",
    "AuditConfig",
    "AuditResult",
    "AuditState",
    "Routed",
    "SliceVerdict",
    "Stream",
    "TraceEntry",
    "audit",
    "make_stream",
]

#: Loss range B of the 0/1 loss.
LOSS_RANGE = 1.0


# ----------------------------------------------------------------- input edge
def _pred_array(values, name: str):
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.ndim != 1:
        raise InvalidValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        num = arr.astype(float)
        bad = ~np.isfinite(num)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            if np.isnan(num[i]):
                raise InvalidValueError(f"`{name}` at row {i} is missing (NaN); every item "
                                        "needs both predictions")
            raise InvalidValueError(
                f"`{name}` at row {i} is {float(num[i])!r}; expected a class value")
        return "num", num
    out = np.empty(arr.size, dtype=object)
    kinds = set()
    for i, v in enumerate(arr.tolist()):
        if is_empty_cell(v):  # None, NaN or blank text, as an empty cell of a file
            raise InvalidValueError(
                f"`{name}` at row {i} is missing; every item needs both predictions")
        if isinstance(v, str):
            kinds.add("str")
            out[i] = v
        elif isinstance(v, (bool, np.bool_)) or (
                isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(float(v))):
            kinds.add("num")
            out[i] = float(v)
        else:
            raise InvalidValueError(f"`{name}` at row {i} is {v!r}; expected a class value")
    if len(kinds) > 1:
        raise InvalidValueError(
            f"`{name}` mixes text and numbers; expected one kind of class value")
    kind = kinds.pop() if kinds else "num"
    return kind, (out.astype(float) if kind == "num" else out)


def stray_fraction(f, g, y, have) -> int | None:
    """The first labelled row whose numeric label has a fractional part while every
    prediction is a whole number (a typo such as 0.5 among classes 0 and 1), else None."""
    f, g = np.asarray(f, dtype=float), np.asarray(g, dtype=float)
    if not (np.all(f == np.round(f)) and np.all(g == np.round(g))):
        return None
    y = np.asarray(y, dtype=float)
    bad = np.asarray(have, dtype=bool) & (y != np.round(np.where(np.isfinite(y), y, 0)))
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def _label_array(labels, kind: str, n: int):
    if labels is None:
        empty = np.full(n, np.nan) if kind == "num" else np.empty(n, dtype=object)
        return np.zeros(n, dtype=bool), empty
    arr = np.asarray(labels, dtype=object) if not isinstance(labels, np.ndarray) else labels
    if arr.ndim != 1 or arr.size != n:
        raise InvalidValueError(
            f"`labels` must have one entry per item ({n}), got shape {arr.shape}")
    if kind == "num" and arr.dtype.kind in "biuf":
        num = arr.astype(float)
        have = ~np.isnan(num)
        if np.isinf(num).any():
            i = int(np.flatnonzero(np.isinf(num))[0])
            raise LabelError(f"label at row {i} is {float(num[i])!r}; expected a class value "
                             "like the predictions")
        return have, num
    have = np.zeros(n, dtype=bool)
    out = np.full(n, np.nan) if kind == "num" else np.empty(n, dtype=object)
    for i, v in enumerate(arr.tolist()):
        if is_empty_cell(v):  # None, NaN or blank text: unlabelled (as in audit projects)
            continue
        if kind == "num":
            # a number written as text is that number (a file's label column is text as
            # soon as one cell is not a number, so the error names the cell that is not)
            v = class_value_from_text(v) if isinstance(v, str) else v
            if isinstance(v, str) \
                    or not isinstance(v, (int, float, np.integer, np.floating, bool)) \
                    or not math.isfinite(float(v)):
                raise LabelError(f"label at row {i} is {v!r}; expected a number comparable "
                                 "with the numeric predictions (or empty for unlabelled)")
            out[i] = float(v)
        else:
            if not isinstance(v, str):
                raise LabelError(f"label at row {i} is {v!r}; expected text comparable "
                                 "with the text predictions (or empty for unlabelled)")
            out[i] = v
        have[i] = True
    return have, out


@dataclass(frozen=True, eq=False)
class Stream:
    """A validated audit stream: the core trusts it and never re-validates.

    ``a`` disagreement indicator, ``d`` loss difference g - f where the label
    is known (0 elsewhere), ``has_label``, ``labels`` (original values, for
    the trace), optional ``judge`` in [0, 1] and ``slices`` (slice keys).
    """

    a: np.ndarray
    d: np.ndarray
    has_label: np.ndarray
    labels: np.ndarray
    judge: np.ndarray | None
    slices: np.ndarray | None

    @property
    def n(self) -> int:
        return int(self.a.size)


def make_stream(incumbent, candidate, labels=None, judge=None, slices=None,
                check_fractions: bool = True) -> Stream:
    """Validate predictions, labels, judge scores and slice keys into a :class:`Stream`.
    ``check_fractions``: refuse a label with a fractional part when every prediction is a
    whole number (a typo, `stray_fraction`); off for stored data already checked."""
    kf, f = _pred_array(incumbent, "incumbent")
    kg, g = _pred_array(candidate, "candidate")
    if f.size != g.size:
        raise InvalidValueError(f"`incumbent` has {f.size} items but `candidate` has {g.size}")
    if f.size == 0:
        raise InvalidValueError("the stream is empty; expected at least one item")
    if kf != kg:
        # name the first text value of the text side: one typo makes a file's column text
        name, values = ("incumbent", f) if kf == "str" else ("candidate", g)
        i = first_text(values.tolist())
        raise InvalidValueError("`incumbent` and `candidate` must hold the same kind of class "
                                f"value (got {'text' if kf == 'str' else 'numbers'} and "
                                f"{'text' if kg == 'str' else 'numbers'}); `{name}` at row "
                                f"{i} is {values[i]!r}")
    n = f.size
    have, y = _label_array(labels, kf, n)
    if kf == "num" and check_fractions:
        i = stray_fraction(f, g, y, have)
        if i is not None:
            raise LabelError(f"label at row {i} is {float(y[i])!r}; every prediction is a "
                             "whole number (a class), so a label must be one too")
    a = f != g
    d = np.zeros(n)
    if have.any():
        idx = np.flatnonzero(have)
        d[idx] = (g[idx] != y[idx]).astype(float) - (f[idx] != y[idx]).astype(float)
    j = None if judge is None else check_judge(judge, n)
    s = None
    if slices is not None:
        s = np.asarray(slices, dtype=object)
        if s.ndim != 1 or s.size != n:
            raise InvalidValueError(
                f"`slices` must have one key per item ({n}), got shape {s.shape}")
        for i, v in enumerate(s.tolist()):
            if is_none_or_nan(v):
                raise InvalidValueError(
                    f"slice key at row {i} is missing; every item needs a slice")
        s = np.array([str(v) for v in s.tolist()], dtype=object)
    return Stream(np.asarray(a, dtype=bool), d, have, y, j, s)


# -------------------------------------------------------------- config, result
@dataclass(frozen=True)
class AuditConfig:
    """Everything that fixes an audit besides the stream."""

    epsilon: float
    delta: float
    delta0: float
    delta1: float
    routing: Routing
    seed: int
    B: float = LOSS_RANGE
    truncation: float = 0.5
    running_intersection: bool = True

    @property
    def c(self) -> float:
        """Tier-1 increment range [-c, c], c = B / pi_min."""
        return self.B / self.routing.pi_min

    def tier0_cannot_certify(self, rho_lower):
        """B * lower(rho) >= eps: Tier 0 can never issue Safe again (its interval is
        nested), so Tier 1 starts with the next item (module docstring)."""
        return self.B * rho_lower >= self.epsilon

    # The Tier-1 mapping (module docstring), for one value or an array alike: the batch
    # audit and `AuditState` both go through these two methods.
    def tier1_unit(self, z):
        """A Tier-1 increment z in [-c, c] mapped to [0, 1], the range PrPl-EB needs."""
        c = self.c
        return np.clip((z + c) / (2 * c), 0.0, 1.0)

    def tier1_delta(self, x):
        """A bound x of the [0, 1] mean mapped back to Delta: 2 c x - c, clipped to
        [-B, B] (Delta lies there whatever happens, so the interval stays valid)."""
        c, B = self.c, self.B
        return np.clip(2 * c * x - c, -B, B)

    @classmethod
    def make(cls, *, epsilon, delta=0.05, delta0=None, delta1=None, pi=None, pi_min=None,
             judge=False, seed=0, truncation=0.5, running_intersection=True) -> AuditConfig:
        try:
            eps = float(epsilon)
        except (TypeError, ValueError):
            raise ParameterError(f"`epsilon` must be a positive number, got {epsilon!r}") from None
        if not (eps > 0 and math.isfinite(eps)):
            raise ParameterError(f"`epsilon` must be a positive number, got {epsilon!r}")
        d = check_alpha(delta, "delta")
        d0 = d / 2 if delta0 is None else check_alpha(delta0, "delta0")
        d1 = d / 2 if delta1 is None else check_alpha(delta1, "delta1")
        if d0 + d1 > d * (1 + 1e-12):
            raise ParameterError(f"`delta0` + `delta1` ({d0} + {d1}) must not exceed `delta` ({d})")
        return cls(eps, d, d0, d1, Routing.make(pi, pi_min, judge), check_seed(seed),
                   LOSS_RANGE, check_truncation(truncation), bool(running_intersection))

    def to_dict(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "delta0": self.delta0,
                "delta1": self.delta1, "B": self.B, "pi_min": self.routing.pi_min,
                "routing": self.routing.to_dict(), "seed": self.seed,
                "truncation": self.truncation, "running_intersection": self.running_intersection,
                "loss": "0/1"}


@dataclass(frozen=True)
class TraceEntry:
    """One paid label: item t (1-based), its routing probability, its label."""

    t: int
    pi: float
    label: object


@dataclass(frozen=True)
class SliceVerdict:
    """Tier-1 verdict of one slice at level delta1 / K (paper Prop. 12)."""

    slice: str
    items: int
    disagreements: int
    verdict: str
    stopping_time: int | None
    labels_used: int
    delta_interval: tuple

    def to_dict(self) -> dict:
        return {"slice": self.slice, "items": self.items, "disagreements": self.disagreements,
                "verdict": self.verdict, "stopping_time": self.stopping_time,
                "labels_used": self.labels_used, "delta_interval": list(self.delta_interval)}


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit.  Field names are the JSON keys (SPEC section 10).

    ``verdict`` is ``"safe"``, ``"regression"`` or ``"continue"``; ``tier`` is
    0 or 1 for a verdict, None for continue; ``stopping_time`` is the 1-based
    item at which the verdict was issued (None for continue); ``needs_label``
    is the zero-based row whose label the audit needs next (continue only).
    ``rho_lower`` ... ``delta_upper`` are both tiers' intervals over time for
    items 1..items_seen (Delta is [-B, B] while Tier 1 is dormant).
    """

    verdict: str
    tier: int | None
    stopping_time: int | None
    labels_used: int
    rho_interval: tuple
    delta_interval: tuple
    slices: tuple
    items_seen: int
    needs_label: int | None
    tier1_start: int | None
    config: AuditConfig
    trace: tuple = field(repr=False)
    rho_lower: np.ndarray = field(repr=False, compare=False)
    rho_upper: np.ndarray = field(repr=False, compare=False)
    delta_lower: np.ndarray = field(repr=False, compare=False)
    delta_upper: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict, "tier": self.tier, "stopping_time": self.stopping_time,
            "labels_used": self.labels_used, "rho_interval": list(self.rho_interval),
            "delta_interval": list(self.delta_interval),
            "slices": [s.to_dict() for s in self.slices],
            "items_seen": self.items_seen, "needs_label": self.needs_label,
            "tier1_start": self.tier1_start, "epsilon": self.config.epsilon,
            "delta": self.config.delta, "delta0": self.config.delta0, "delta1": self.config.delta1,
            "pi_min": self.config.routing.pi_min, "routing": self.config.routing.to_dict(),
            "seed": self.config.seed,
        }


# ------------------------------------------------------------ vectorised core
def _tier1_cs(z: np.ndarray, alpha: float, cfg: AuditConfig):
    """CS for Delta from HT increments z in [-c, c] (mapped to [0, 1] and back)."""
    lo, hi = prpl_eb(cfg.tier1_unit(z), alpha, cfg.truncation, cfg.running_intersection)
    return cfg.tier1_delta(lo), cfg.tier1_delta(hi)


#: Verdict precedence when several fire at the same item (module docstring).
VERDICT_ORDER = (("regression", 1), ("safe", 0), ("safe", 1))


def _rules(cfg: AuditConfig, rho_upper=None, delta=None) -> dict:
    """Where each verdict's rule holds, {(verdict, tier): bool or boolean array}: Tier-0
    Safe from rho's upper bound, Tier-1 Regression and Safe from Delta's (lower, upper)
    while Tier 1 runs.  Arrays give the rule at every item, floats at one item."""
    out = {}
    if rho_upper is not None:
        out[("safe", 0)] = cfg.B * rho_upper < cfg.epsilon
    if delta is not None:
        out[("regression", 1)] = delta[0] > 0
        out[("safe", 1)] = delta[1] < cfg.epsilon
    return out


def _first_verdict(first: dict):
    """(item, verdict, tier) of the verdict that fires first, given the first item at
    which each (verdict, tier) fires (absent or None: never); at one item the earlier
    in `VERDICT_ORDER` wins.  None when nothing fires."""
    hits = [(first[key], rank, key) for rank, key in enumerate(VERDICT_ORDER)
            if first.get(key) is not None]
    if not hits:
        return None
    item, _, (verdict, tier) = min(hits)
    return item, verdict, tier


def _run(stream: Stream, cfg: AuditConfig, offset: int = 0, to_end: bool = False) -> AuditResult:
    n, B = stream.n, cfg.B
    a = stream.a
    pi = cfg.routing.probabilities(stream.judge, n)
    u = uniforms(cfg.seed, offset, offset + n)
    draw = a & (u < pi)                       # L_t on disagreements
    z = np.where(draw, stream.d / pi, 0.0)    # Horvitz-Thompson increment

    # Tier 0 on A_t.
    rlo, rhi = prpl_eb(a.astype(float), cfg.delta0, cfg.truncation, cfg.running_intersection)
    first = {key: first_true(holds) for key, holds in _rules(cfg, rho_upper=rhi).items()}
    i_act = first_true(cfg.tier0_cannot_certify(rlo))
    start = n if i_act is None else i_act + 1  # first Tier-1 item (0-based)

    dlo = np.full(n, -B)
    dhi = np.full(n, B)
    if start < n:
        lo1, hi1 = _tier1_cs(z[start:], cfg.delta1, cfg)
        dlo[start:], dhi[start:] = lo1, hi1
        for key, holds in _rules(cfg, delta=(lo1, hi1)).items():
            j = first_true(holds)
            first[key] = None if j is None else start + j
    stop = _first_verdict(first)  # (0-based item, verdict, tier) or None

    # Per-slice Tier-1 audits (ungated, level delta1 / K).
    slice_stops = {}
    slice_info = []
    if stream.slices is not None:
        keys = sorted(set(stream.slices.tolist()))
        alpha_k = cfg.delta1 / len(keys)
        for k in keys:
            idx = np.flatnonzero(stream.slices == k)
            lo_k, hi_k = _tier1_cs(z[idx], alpha_k, cfg)
            hit = _first_verdict({key: first_true(holds) for key, holds
                                  in _rules(cfg, delta=(lo_k, hi_k)).items()})
            j, v = (None, None) if hit is None else hit[:2]
            slice_info.append((k, idx, lo_k, hi_k, j, v))
            slice_stops[k] = None if j is None else int(idx[j])

    # Which draws are paid: Tier 1 needs item t while it is running.
    overall_end = stop[0] if stop is not None else n - 1
    needed = np.zeros(n, dtype=bool)
    if start < n:
        needed[start:overall_end + 1] = True
    for k, idx, *_ in slice_info:
        s_end = slice_stops[k] if slice_stops[k] is not None else n - 1
        needed[idx[idx <= s_end]] = True
    needed &= draw
    missing = first_true(needed & ~stream.has_label)
    horizon = n if missing is None else missing   # items processed: 0..horizon-1

    def within(i):
        return i is not None and i < horizon

    if to_end:
        end = horizon
    elif slice_info:
        ends = [stop[0] if stop is not None else None] + list(slice_stops.values())
        end = max(ends) + 1 if all(within(e) for e in ends) else horizon
    else:
        end = stop[0] + 1 if stop is not None and within(stop[0]) else horizon

    if stop is not None and within(stop[0]):
        verdict, tier, stopping_time = stop[1], stop[2], stop[0] + 1
        at = stop[0]
    else:
        verdict, tier, stopping_time = "continue", None, None
        at = end - 1
    paid = np.flatnonzero(needed[:end])
    trace = tuple(TraceEntry(int(i) + 1 + offset, float(pi[i]), class_value(stream.labels[i]))
                  for i in paid)

    slices = []
    for k, idx, lo_k, hi_k, j, v in slice_info:
        seen = idx < end
        m = int(seen.sum())
        if j is not None and within(int(idx[j])):
            sv, st, last = v, int(idx[j]) + 1, j
        else:
            sv, st, last = "continue", None, m - 1
        lab = int((needed[idx] & (idx <= (idx[last] if last >= 0 else -1))).sum())
        interval = (float(lo_k[last]), float(hi_k[last])) if last >= 0 else (-B, B)
        slices.append(SliceVerdict(k, m, int(a[idx][seen].sum()), sv, st, lab, interval))

    at_ok = at >= 0
    return AuditResult(
        verdict=verdict, tier=tier, stopping_time=stopping_time, labels_used=int(paid.size),
        rho_interval=(float(rlo[at]), float(rhi[at])) if at_ok else (0.0, 1.0),
        delta_interval=(float(dlo[at]), float(dhi[at])) if at_ok else (-B, B),
        slices=tuple(slices), items_seen=int(end),
        needs_label=None if (verdict != "continue" or missing is None or end > missing)
        else int(missing) + offset,
        tier1_start=None if start >= n or start >= end else int(start) + 1,
        config=cfg, trace=trace,
        rho_lower=rlo[:end], rho_upper=rhi[:end], delta_lower=dlo[:end], delta_upper=dhi[:end],
    )


def audit(incumbent, candidate, labels=None, *, epsilon, delta=0.05, seed=0, pi=None,
          pi_min=None, judge=None, slices=None, delta0=None, delta1=None,
          truncation=0.5, running_intersection=True, run_to_end=False) -> AuditResult:
    """Run the Discern audit on a stream of paired predictions, in one vectorised call.

    ``labels`` may be None or hold None/NaN for unlabelled items: the audit
    replays as far as the labels go and, if it reaches an item whose label
    it decides to pay for but does not have, returns ``verdict="continue"``
    with ``needs_label`` set to that row.  ``run_to_end=True`` keeps both
    tiers running to the end of the stream (coverage studies): the verdict and
    stopping time are unchanged, the trajectories and ``labels_used`` cover
    every item.

    >>> f = [0] * 4000
    >>> g = [1 if t % 500 == 0 else 0 for t in range(4000)]   # rho = 0.002
    >>> r = audit(f, g, None, epsilon=0.05)
    >>> r.verdict, r.tier, r.labels_used
    ('safe', 0, 0)
    """
    cfg = AuditConfig.make(epsilon=epsilon, delta=delta, delta0=delta0, delta1=delta1, pi=pi,
                           pi_min=pi_min, judge=judge is not None, seed=seed,
                           truncation=truncation, running_intersection=running_intersection)
    stream = make_stream(incumbent, candidate, labels, judge, slices)
    return _run(stream, cfg, to_end=bool(run_to_end))


# ------------------------------------------------------------- streaming form
@dataclass(frozen=True)
class Routed:
    """Routing decision for the next item, made before its label is drawn."""

    t: int
    disagree: bool
    pi: float
    needs_label: bool


@dataclass(frozen=True)
class AuditState:
    """Streaming audit: ``state.observe(f, g, label) -> new state`` (pure).

    Equal to :func:`audit` on every prefix (no slices).  Call
    :meth:`route` first to learn whether the next item's label is paid for.

    >>> s = AuditState.start(epsilon=0.05)
    >>> for t in range(4000):
    ...     s = s.observe(0, 1 if t % 500 == 0 else 0)
    ...     if s.verdict != "continue":
    ...         break
    >>> s.verdict, s.tier, s.labels_used
    ('safe', 0, 0)
    """

    config: AuditConfig
    tier0: PrplEBState
    tier1: PrplEBState | None
    t: int = 0
    tier1_start: int | None = None
    labels_used: int = 0
    verdict: str = "continue"
    tier: int | None = None
    stopping_time: int | None = None
    trace: tuple = ()

    @classmethod
    def start(cls, *, epsilon, delta=0.05, seed=0, pi=None, pi_min=None, judge=False,
              delta0=None, delta1=None, truncation=0.5, running_intersection=True) -> AuditState:
        cfg = AuditConfig.make(epsilon=epsilon, delta=delta, delta0=delta0, delta1=delta1,
                               pi=pi, pi_min=pi_min, judge=judge, seed=seed,
                               truncation=truncation, running_intersection=running_intersection)
        tier0 = PrplEBState.start(cfg.delta0, cfg.truncation, cfg.running_intersection)
        return cls(cfg, tier0, None)

    @property
    def rho_interval(self) -> tuple:
        return (self.tier0.lower, self.tier0.upper) if self.t else (0.0, 1.0)

    @property
    def delta_interval(self) -> tuple:
        if self.tier1 is None or self.tier1.t == 0:
            return (-self.config.B, self.config.B)
        cfg = self.config
        return (float(cfg.tier1_delta(self.tier1.lower)), float(cfg.tier1_delta(self.tier1.upper)))

    def route(self, incumbent, candidate, judge=None) -> Routed:
        """Decide, before any label is seen, whether item t+1's label is paid for."""
        t = self.t + 1
        disagree = bool(incumbent != candidate)
        if self.config.routing.kind == "judge":
            if judge is None:
                raise ParameterError("this audit routes by a judge: `judge` score is required")
            check_judge([judge], 1)
        pi = self.config.routing.probability(judge)
        active = self.tier1 is not None
        u = float(uniforms(self.config.seed, t - 1, t)[0])
        return Routed(t, disagree, pi, bool(active and disagree and u < pi))

    def observe(self, incumbent, candidate, label=None, judge=None) -> AuditState:
        """Pure transition for one item; ``label`` is required only when routed."""
        if self.verdict != "continue":
            raise ParameterError(f"the audit already reached its verdict ({self.verdict}) "
                                 f"at item {self.stopping_time}; start a new audit")
        r = self.route(incumbent, candidate, judge)
        cfg = self.config
        z = 0.0
        trace = self.trace
        labels_used = self.labels_used
        if r.needs_label:
            if is_none_or_nan(label):
                raise LabelError(f"item {r.t} needs a label (routed with pi = {r.pi:.6g}); "
                                 "pass `label=`")
            d = float(candidate != label) - float(incumbent != label)
            z = d / r.pi
            trace = trace + (TraceEntry(r.t, r.pi, class_value(label)),)
            labels_used += 1
        tier0 = self.tier0.update(float(r.disagree))
        tier1 = self.tier1
        if tier1 is not None:
            tier1 = tier1.update(float(cfg.tier1_unit(z)))
        new = replace(self, tier0=tier0, tier1=tier1, t=r.t, labels_used=labels_used, trace=trace)
        rules = _rules(cfg, rho_upper=tier0.upper,
                       delta=None if tier1 is None else new.delta_interval)
        hit = _first_verdict({key: r.t for key, holds in rules.items() if holds})
        if hit is not None:
            return replace(new, verdict=hit[1], tier=hit[2], stopping_time=r.t)
        if tier1 is None and cfg.tier0_cannot_certify(tier0.lower):
            tier1 = PrplEBState.start(cfg.delta1, cfg.truncation, cfg.running_intersection)
            return replace(new, tier1=tier1, tier1_start=r.t + 1)
        return new
