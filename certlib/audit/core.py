"""Discern two-tier audit of a model update (SPEC section 11, paper sections 3-4).

Loss is 0/1 (B = 1): ``D_t = 1{g != y} - 1{f != y}``, ``A_t = 1{f != g}``.

Tier 0 runs PrPl-EB at level delta0 on A_t and issues Safe as soon as
``B * upper_rho < eps``.  Tier 1 labels a disagreement with probability pi_t
and runs PrPl-EB at level delta1 on ``(Z_t + c) / (2c)``, ``Z_t = A_t L_t D_t /
pi_t``, ``c = B / pi_min``; the interval [lo, hi] for that mean maps back to
``[2c lo - c, 2c hi - c]`` for Delta.

When Tier 1 starts paying for labels: at the first item T at which Tier 0's
lower bound shows ``B * lower_rho_T >= f * eps``, with f = ``tier1_from``
(default `TIER1_FROM` = 1/2), Tier 1 starts on items T+1, T+2, ...  Below
that, rho may lie in the zero-label regime ``B rho <= eps/2`` where Tier 0
certifies after O((B/eps) log(1/delta0)) items (paper Theorem 6, section 5),
so no label is spent; above it Tier 0 is not on course to certify soon: at
``B rho`` near eps its upper end approaches eps/B only as fast as its lower
end does, and at ``B rho >= eps`` never.  With f = 1 (the rule of records
made before ``tier1_from`` existed) Tier 1 waited until Tier 0 could no
longer certify at all, and a stream with ``B rho = eps`` stalled: neither
tier ever finished (20 of 20 simulated streams at 300,000 items).  With
f = 1/2 every rho ends: below eps by Tier 0 or Tier 1, above eps/2 by Tier 1.
T is a stopping time of the unlabelled stream and the increments after it
still have conditional mean Delta given the past, so the Tier-1 confidence
sequence started there keeps its guarantee whatever f is.

Verdict precedence when several fire at the same item: Regression, then
Tier-0 Safe, then Tier-1 Safe (all are true statements on the coverage event;
a regression alarm is the one an operator must not miss).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

from ..core._values import class_value, class_value_from_text, first_text, first_true, \
    is_empty_cell, is_none_or_nan
from ..errors import InvalidValueError, LabelError, ParameterError
from .betting import BettingState, betting_cs
from .cs import ConfidenceSequence, PrplEBState, check_alpha, check_truncation, prpl_eb
from .routing import Routing, check_judge, check_seed, uniforms

__all__ = [
    "LOSS_RANGE",
    "TIER1_FROM",
    "CONFIDENCE",
    "DEFAULT_CONFIDENCE",
    "AuditConfig",
    "AuditResult",
    "AuditState",
    "Routed",
    "SliceVerdict",
    "Stream",
    "TraceEntry",
    "audit",
    "make_stream",
    "run_stream",
    "tier1_sequence",
    "tier1_start",
]

#: Loss range B of the 0/1 loss.
LOSS_RANGE = 1.0

#: Tier 1 starts once Tier 0 shows ``B * rho >= TIER1_FROM * eps`` (module docstring).
TIER1_FROM = 0.5

#: The confidence sequences Tier 1 (and each slice audit) can run: PrPl-EB (SPEC section
#: 11) or the betting CS (`certlib.audit.betting`).  Tier 0 always runs PrPl-EB.
CONFIDENCE = ("prpl-eb", "betting")
#: The default: measured in bench/bench_audit.py (docs/audit.md, "Confidence sequence").
DEFAULT_CONFIDENCE = "prpl-eb"

_Bound = TypeVar("_Bound", float, npt.NDArray[np.float64])
#: A verdict's rule at every item (an array) or at one item (a bool).
_Holds = bool | np.bool_ | npt.NDArray[np.bool_]


# ----------------------------------------------------------------- input edge
def _pred_array(values: npt.ArrayLike,
                name: str) -> tuple[Literal["num", "str"], npt.NDArray[Any]]:
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
    kinds: set[Literal["num", "str"]] = set()
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


def stray_fraction(f: npt.ArrayLike, g: npt.ArrayLike, y: npt.ArrayLike,
                   have: npt.ArrayLike) -> int | None:
    """The first labelled row whose label has a fractional part among whole-number classes.

    A label of 0.5 where every prediction is a whole number is a typo (0/1 classes),
    not a class: the audit would count both models wrong on that item.

    Parameters
    ----------
    f, g : array_like of float
        The incumbent's and the candidate's numeric predictions.
    y : array_like of float
        The labels (any value where unlabelled).
    have : array_like of bool
        Which items are labelled.

    Returns
    -------
    int or None
        The 0-based row of the first such label, or None (also when a prediction has a
        fractional part: then a fractional label may be a class).
    """
    fa, ga = np.asarray(f, dtype=float), np.asarray(g, dtype=float)
    if not (np.all(fa == np.round(fa)) and np.all(ga == np.round(ga))):
        return None
    ya = np.asarray(y, dtype=float)
    bad = np.asarray(have, dtype=bool) & (ya != np.round(np.where(np.isfinite(ya), ya, 0)))
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def _label_array(labels: npt.ArrayLike | None, kind: str,
                 n: int) -> tuple[npt.NDArray[np.bool_], npt.NDArray[Any]]:
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

    Parameters
    ----------
    a : numpy.ndarray of bool
        The disagreement indicators A_t = 1{f != g}.
    d : numpy.ndarray of float
        The loss difference D_t = 1{g != y} - 1{f != y} where the label is known, 0
        elsewhere.
    has_label : numpy.ndarray of bool
        Which items are labelled.
    labels : numpy.ndarray
        The labels as given (for the trace).
    judge : numpy.ndarray of float, optional
        Judge scores in [0, 1].
    slices : numpy.ndarray of str, optional
        Slice keys.
    """

    a: npt.NDArray[np.bool_]
    d: npt.NDArray[np.float64]
    has_label: npt.NDArray[np.bool_]
    labels: npt.NDArray[Any]
    judge: npt.NDArray[np.float64] | None
    slices: npt.NDArray[np.object_] | None

    @property
    def n(self) -> int:
        """The number of items."""
        return int(self.a.size)

    def part(self, lo: int, hi: int) -> Stream:
        """Items ``lo .. hi - 1`` (0-based) as a stream of their own, without slice keys:
        a window of a windowed audit (paper section 5.7), which audits no slices.

        Parameters
        ----------
        lo, hi : int
            The first item and one past the last.

        Returns
        -------
        Stream
            The window's items.
        """
        return Stream(self.a[lo:hi], self.d[lo:hi], self.has_label[lo:hi], self.labels[lo:hi],
                      None if self.judge is None else self.judge[lo:hi], None)


def make_stream(incumbent: npt.ArrayLike, candidate: npt.ArrayLike,
                labels: npt.ArrayLike | None = None, *, judge: npt.ArrayLike | None = None,
                slices: npt.ArrayLike | None = None, check_fractions: bool = True) -> Stream:
    """Validate predictions, labels, judge scores and slice keys into a `Stream`.

    Parameters
    ----------
    incumbent, candidate : array_like
        The two models' predictions, numbers or text (one kind for both).
    labels : array_like, optional
        The labels, None, NaN or blank where unlabelled; numbers written as text are
        numbers when the predictions are.
    judge : array_like of float, optional
        Judge scores in [0, 1].
    slices : array_like, optional
        Slice keys.
    check_fractions : bool, default True
        Refuse a label with a fractional part when every prediction is a whole number
        (a typo, `stray_fraction`); off for stored data already checked.

    Returns
    -------
    Stream
        The validated stream.

    Raises
    ------
    InvalidValueError
        A missing or non-class prediction, predictions of two kinds or lengths, an
        empty stream, a bad judge score or a missing slice key (named by its 0-based
        row and the parameter).
    LabelError
        A label of the other kind than the predictions, or a stray fraction.

    Examples
    --------
    >>> s = make_stream([0, 1, 1], [0, 0, 1], [None, 1, None])
    >>> s.a.tolist(), s.has_label.tolist(), s.d.tolist()
    ([False, True, False], [False, True, False], [0.0, 1.0, 0.0])
    """
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
        i_frac = stray_fraction(f, g, y, have)
        if i_frac is not None:
            raise LabelError(f"label at row {i_frac} is {float(y[i_frac])!r}; every prediction "
                             "is a whole number (a class), so a label must be one too")
    a = f != g
    d = np.zeros(n)
    if have.any():
        idx = np.flatnonzero(have)
        d[idx] = (g[idx] != y[idx]).astype(float) - (f[idx] != y[idx]).astype(float)
    j = None if judge is None else check_judge(judge, n)
    keys = None
    if slices is not None:
        s = np.asarray(slices, dtype=object)
        if s.ndim != 1 or s.size != n:
            raise InvalidValueError(
                f"`slices` must have one key per item ({n}), got shape {s.shape}")
        for i, v in enumerate(s.tolist()):
            if is_none_or_nan(v):
                raise InvalidValueError(
                    f"slice key at row {i} is missing; every item needs a slice")
        keys = np.array([str(v) for v in s.tolist()], dtype=object)
    return Stream(np.asarray(a, dtype=bool), d, have, y, j, keys)


# -------------------------------------------------------------- config, result
@dataclass(frozen=True)
class AuditConfig:
    """Everything that fixes an audit besides the stream.

    Parameters
    ----------
    epsilon : float
        Tolerance eps > 0 on Delta: Safe means Delta < eps.
    delta : float
        The audit's miscoverage.
    delta0, delta1 : float
        The levels of Tier 0 and Tier 1 (delta0 + delta1 <= delta).
    routing : Routing
        The routing rule pi_t.
    seed : int
        Seed of the labelling draws U_t.
    B : float, default 1.0
        Loss range (0/1 loss).
    truncation : float, default 0.5
        The PrPl-EB bet truncation.
    running_intersection : bool, default True
        Intersect both tiers' intervals over time (module docstring).
    tier1_from : float, default 1.0
        Tier 1 starts once Tier 0's lower bound shows ``B * rho >= tier1_from * eps``
        (module docstring); `make` defaults to `TIER1_FROM`, the dataclass to 1.0, the
        rule of settings stored before the field existed.
    confidence : str, default "prpl-eb"
        Tier 1's confidence sequence, one of `CONFIDENCE` (`make` defaults to
        `DEFAULT_CONFIDENCE`).

    Examples
    --------
    >>> cfg = AuditConfig.make(epsilon=0.05)
    >>> cfg.delta0, cfg.delta1, cfg.routing.pi, cfg.c, cfg.tier1_from
    (0.025, 0.025, 0.5, 2.0, 0.5)
    """

    epsilon: float
    delta: float
    delta0: float
    delta1: float
    routing: Routing
    seed: int
    B: float = LOSS_RANGE
    truncation: float = 0.5
    running_intersection: bool = True
    tier1_from: float = 1.0
    confidence: str = "prpl-eb"

    @property
    def c(self) -> float:
        """Tier-1 increment range [-c, c], c = B / pi_min."""
        return self.B / self.routing.pi_min

    @overload
    def tier1_starts(self, rho_lower: float) -> bool: ...

    @overload
    def tier1_starts(self, rho_lower: npt.NDArray[np.float64]
                     ) -> npt.NDArray[np.bool_]: ...

    def tier1_starts(self, rho_lower: float | npt.NDArray[np.float64]
                     ) -> bool | npt.NDArray[np.bool_]:
        """Whether ``B * lower(rho) >= tier1_from * eps``: Tier 0 is not on course to
        certify soon, so Tier 1 starts with the next item (module docstring).

        Parameters
        ----------
        rho_lower : float or numpy.ndarray of float
            Tier 0's lower bound on rho, at one item or at every item.

        Returns
        -------
        bool or numpy.ndarray of bool
            The rule, of the shape of ``rho_lower``.
        """
        holds: bool | npt.NDArray[np.bool_] = (self.B * rho_lower
                                               >= self.tier1_from * self.epsilon)
        return holds

    def betting_bets(self, c: float | None = None) -> dict[str, Any]:
        """The betting CS's bets for Tier 1: aimed at the two decision points, Delta = 0
        (Regression) and Delta = eps (Safe), mapped to [0, 1] (`certlib.audit.betting`,
        "Bets"): predictable, so the sequence stays valid; measured in
        bench/bench_audit.py against the plug-in bets.

        Parameters
        ----------
        c : float, optional
            The increments' range [-c, c] of the mapping (default: Tier 1's, `c`); a
            baseline with its own range aims at its own points.

        Returns
        -------
        dict
            Keyword arguments of `certlib.audit.betting.betting_cs`.
        """
        r = self.c if c is None else float(c)
        return {"bets": "boundary", "target": ((0.0 + r) / (2 * r), (self.epsilon + r) / (2 * r))}

    # The Tier-1 mapping (module docstring), for one value or an array alike: the batch
    # audit and `AuditState` both go through these two methods.
    def tier1_unit(self, z: _Bound) -> _Bound:
        """A Tier-1 increment z in [-c, c] mapped to [0, 1], the range PrPl-EB needs.

        Parameters
        ----------
        z : float or numpy.ndarray of float
            Horvitz-Thompson increments Z_t = A_t L_t D_t / pi_t.

        Returns
        -------
        float or numpy.ndarray of float
            (z + c) / (2c), clipped to [0, 1].
        """
        c = self.c
        out: _Bound = np.clip((z + c) / (2 * c), 0.0, 1.0)
        return out

    def tier1_delta(self, x: _Bound) -> _Bound:
        """A bound x of the [0, 1] mean mapped back to Delta.

        Parameters
        ----------
        x : float or numpy.ndarray of float
            A bound of the confidence sequence on the mapped increments.

        Returns
        -------
        float or numpy.ndarray of float
            2 c x - c, clipped to [-B, B] (Delta lies there whatever happens, so the
            interval stays valid).
        """
        c, B = self.c, self.B
        out: _Bound = np.clip(2 * c * x - c, -B, B)
        return out

    @classmethod
    def make(cls, *, epsilon: float, delta: float = 0.05, delta0: float | None = None,
             delta1: float | None = None, pi: float | None = None,
             pi_min: float | None = None, judge: bool = False, seed: int = 0,
             truncation: float = 0.5, running_intersection: bool = True,
             tier1_from: float = TIER1_FROM,
             confidence: str = DEFAULT_CONFIDENCE) -> AuditConfig:
        """Checked settings of an audit.

        Parameters
        ----------
        epsilon : float
            Tolerance eps > 0 on Delta.
        delta : float, default 0.05
            Miscoverage in (0, 1).
        delta0, delta1 : float, optional
            Tier 0's and Tier 1's levels (default delta / 2 each).
        pi, pi_min : float, optional
            Routing probability and floor (`Routing.make`).
        judge : bool, default False
            Route by judge scores.
        seed : int, default 0
            Seed of the labelling draws.
        truncation : float, default 0.5
            PrPl-EB bet truncation in (0, 1).
        running_intersection : bool, default True
            Intersect the intervals over time.
        tier1_from : float, default TIER1_FROM
            Tier 1 starts once Tier 0 shows ``B * rho >= tier1_from * eps``, a number in
            (0, 1] (module docstring).
        confidence : str, default DEFAULT_CONFIDENCE
            Tier 1's confidence sequence: "prpl-eb" or "betting".

        Returns
        -------
        AuditConfig
            The settings.

        Raises
        ------
        ParameterError
            A setting out of range, or delta0 + delta1 > delta.
        """
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
        try:
            f = float(tier1_from)
        except (TypeError, ValueError):
            f = float("nan")
        if not 0.0 < f <= 1.0:
            raise ParameterError(f"`tier1_from` must be a number in (0, 1], got {tier1_from!r}")
        if confidence not in CONFIDENCE:
            raise ParameterError(f"`confidence` must be one of {', '.join(CONFIDENCE)}, got "
                                 f"{confidence!r}")
        return cls(eps, d, d0, d1, Routing.make(pi, pi_min, judge=judge), check_seed(seed),
                   LOSS_RANGE, check_truncation(truncation), bool(running_intersection), f,
                   str(confidence))

    def to_dict(self) -> dict[str, object]:
        """The settings as JSON-ready data (the record's ``config``).

        Returns
        -------
        dict
            Every setting, the routing as a dict, and ``"loss": "0/1"``.
        """
        return {"epsilon": self.epsilon, "delta": self.delta, "delta0": self.delta0,
                "delta1": self.delta1, "B": self.B, "pi_min": self.routing.pi_min,
                "routing": self.routing.to_dict(), "seed": self.seed,
                "truncation": self.truncation, "running_intersection": self.running_intersection,
                "tier1_from": self.tier1_from, "confidence": self.confidence, "loss": "0/1"}


@dataclass(frozen=True)
class TraceEntry:
    """One paid label of the trace.

    Parameters
    ----------
    t : int
        The item, 1-based.
    pi : float
        Its routing probability pi_t.
    label : int, float or str
        Its label.

    Examples
    --------
    >>> f, g = [0, 1] * 200, [1, 1] * 200
    >>> r = audit(f, g, [1] * 400, epsilon=0.05, pi=1.0)
    >>> r.tier1_start, r.trace[0]   # the first disagreement once Tier 1 runs
    (24, TraceEntry(t=25, pi=1.0, label=1))
    """

    t: int
    pi: float
    label: object


@dataclass(frozen=True)
class SliceVerdict:
    """Tier-1 verdict of one slice at level delta1 / K (paper Prop. 12).

    Parameters
    ----------
    slice : str
        The slice key.
    items : int
        Items of the slice seen.
    disagreements : int
        Disagreements among them.
    verdict : {"safe", "regression", "continue"}
        The slice's verdict.
    stopping_time : int, optional
        The 1-based (global) item at which it was issued.
    labels_used : int
        Labels the slice's audit paid for.
    delta_interval : tuple of float
        The slice's interval for Delta.

    Examples
    --------
    >>> f = [0] * 4000
    >>> g = [1 if t % 500 == 0 else 0 for t in range(4000)]
    >>> r = audit(f, g, [0] * 4000, epsilon=0.05, slices=["a", "b"] * 2000)
    >>> [(s.slice, s.verdict) for s in r.slices]
    [('a', 'safe'), ('b', 'safe')]
    """

    slice: str
    items: int
    disagreements: int
    verdict: str
    stopping_time: int | None
    labels_used: int
    delta_interval: tuple[float, float]

    def to_dict(self) -> dict[str, object]:
        """The slice verdict as JSON-ready data.

        Returns
        -------
        dict
            Every field under its own name.
        """
        return {"slice": self.slice, "items": self.items, "disagreements": self.disagreements,
                "verdict": self.verdict, "stopping_time": self.stopping_time,
                "labels_used": self.labels_used, "delta_interval": list(self.delta_interval)}


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit.  Field names are the JSON keys (SPEC section 10).

    Parameters
    ----------
    verdict : {"safe", "regression", "continue"}
        The verdict.
    tier : int, optional
        0 or 1 for a verdict, None for continue.
    stopping_time : int, optional
        The 1-based item at which the verdict was issued (None for continue).
    labels_used : int
        Labels paid for.
    rho_interval : tuple of float
        Tier 0's interval for the disagreement rate rho at the last item processed.
    delta_interval : tuple of float
        Tier 1's interval for Delta there ([-B, B] while Tier 1 is dormant).
    slices : tuple of SliceVerdict
        Per-slice verdicts.
    items_seen : int
        Items processed.
    needs_label : int, optional
        The 0-based row whose label the audit needs next (continue only).
    tier1_start : int, optional
        The 1-based item at which Tier 1 started.
    config : AuditConfig
        The settings.
    trace : tuple of TraceEntry
        Every paid label.
    rho_lower, rho_upper, delta_lower, delta_upper : numpy.ndarray of float
        Both tiers' intervals over time for items 1..items_seen.

    Examples
    --------
    >>> r = audit([0] * 4000, [1 if t % 500 == 0 else 0 for t in range(4000)], epsilon=0.05)
    >>> r.verdict, r.stopping_time is not None, r.to_dict()["labels_used"]
    ('safe', True, 0)
    """

    verdict: str
    tier: int | None
    stopping_time: int | None
    labels_used: int
    rho_interval: tuple[float, float]
    delta_interval: tuple[float, float]
    slices: tuple[SliceVerdict, ...]
    items_seen: int
    needs_label: int | None
    tier1_start: int | None
    config: AuditConfig
    trace: tuple[TraceEntry, ...] = field(repr=False)
    rho_lower: npt.NDArray[np.float64] = field(repr=False, compare=False)
    rho_upper: npt.NDArray[np.float64] = field(repr=False, compare=False)
    delta_lower: npt.NDArray[np.float64] = field(repr=False, compare=False)
    delta_upper: npt.NDArray[np.float64] = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """The result as JSON-ready data (the keys of SPEC section 10).

        Returns
        -------
        dict
            Verdict, tier, stopping time, labels, intervals, slices, items seen, the
            label needed next, Tier 1's start and the settings.
        """
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
def _tier1_cs(z: npt.NDArray[np.float64], alpha: float,
              cfg: AuditConfig) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """CS for Delta from HT increments z in [-c, c] (mapped to [0, 1] and back)."""
    lo, hi = tier1_sequence(cfg, cfg.tier1_unit(z), alpha)
    return cfg.tier1_delta(lo), cfg.tier1_delta(hi)


def tier1_sequence(cfg: AuditConfig, x: npt.NDArray[np.float64], alpha: float,
                   c: float | None = None) -> ConfidenceSequence:
    """Tier 1's confidence sequence (``cfg.confidence``) on mapped increments ``x``.

    Parameters
    ----------
    cfg : AuditConfig
        The audit's settings (its confidence sequence, truncation, running intersection).
    x : numpy.ndarray of float
        Increments mapped to [0, 1] (`AuditConfig.tier1_unit`).
    alpha : float
        The level (delta1, or delta1 / K for a slice).
    c : float, optional
        The range [-c, c] ``x`` was mapped from (default: Tier 1's); the betting CS aims
        its bets at Delta = 0 and eps in that mapping.

    Returns
    -------
    ConfidenceSequence
        PrPl-EB's or the betting CS's ends over time.
    """
    if cfg.confidence == "betting":
        return betting_cs(x, alpha, truncation=cfg.truncation,
                          running_intersection=cfg.running_intersection,
                          **cfg.betting_bets(c))
    return prpl_eb(x, alpha, truncation=cfg.truncation,
                   running_intersection=cfg.running_intersection)


def tier1_start(cfg: AuditConfig, a: npt.NDArray[np.bool_]) -> int:
    """The first item of Tier 1 on disagreements ``a``, as the audit finds it.

    Tier 1 starts with the item after the one at which Tier 0's lower bound on rho
    reaches ``tier1_from * eps / B`` (`AuditConfig.tier1_starts`, module docstring).

    Parameters
    ----------
    cfg : AuditConfig
        The audit's settings.
    a : numpy.ndarray of bool
        The disagreement indicators A_1, ..., A_n.

    Returns
    -------
    int
        The 0-based position of Tier 1's first item, or ``a.size`` when Tier 0 can
        still certify at the last item.
    """
    rlo = prpl_eb(a.astype(float), cfg.delta0, truncation=cfg.truncation,
                  running_intersection=cfg.running_intersection).lower
    i_act = first_true(cfg.tier1_starts(rlo))
    return int(a.size) if i_act is None else i_act + 1


#: Verdict precedence when several fire at the same item (module docstring).
VERDICT_ORDER = (("regression", 1), ("safe", 0), ("safe", 1))


def _rules(cfg: AuditConfig, rho_upper: _Bound | None = None,
           delta: tuple[_Bound, _Bound] | None = None) -> dict[tuple[str, int], _Holds]:
    """Where each verdict's rule holds, {(verdict, tier): bool or boolean array}: Tier-0
    Safe from rho's upper bound, Tier-1 Regression and Safe from Delta's (lower, upper)
    while Tier 1 runs.  Arrays give the rule at every item, floats at one item."""
    out: dict[tuple[str, int], _Holds] = {}
    if rho_upper is not None:
        out[("safe", 0)] = cfg.B * rho_upper < cfg.epsilon
    if delta is not None:
        out[("regression", 1)] = delta[0] > 0
        out[("safe", 1)] = delta[1] < cfg.epsilon
    return out


def _first_verdict(first: dict[tuple[str, int], int | None]) -> tuple[int, str, int] | None:
    """(item, verdict, tier) of the verdict that fires first, given the first item at
    which each (verdict, tier) fires (absent or None: never); at one item the earlier
    in `VERDICT_ORDER` wins.  None when nothing fires."""
    hits = [(item, rank, key) for rank, key in enumerate(VERDICT_ORDER)
            if (item := first.get(key)) is not None]
    if not hits:
        return None
    item, _, (verdict, tier) = min(hits)
    return item, verdict, tier


def run_stream(stream: Stream, cfg: AuditConfig, *, offset: int = 0,
               to_end: bool = False) -> AuditResult:
    """The audit engine: both tiers and the slice audits on a validated stream.

    `audit` is this function after `AuditConfig.make` and `make_stream`; the command
    line, the verifier (`certlib.audit.record.verify_record`), the windowed audit, the
    baselines and an audit project's status call it directly on a stream they have
    validated.

    Parameters
    ----------
    stream : Stream
        The validated stream (`make_stream`).
    cfg : AuditConfig
        The audit's settings.
    offset : int, default 0
        The stream's first item's global 0-based position: a window of a longer stream
        draws the uniforms U_t of its own items, and its trace and ``needs_label`` count
        items globally.
    to_end : bool, default False
        Keep both tiers running to the end of the stream (coverage studies): the
        verdict and stopping time are unchanged, the trajectories and ``labels_used``
        cover every item.

    Returns
    -------
    AuditResult
        Verdict, tier, stopping time, intervals, trace and slice verdicts.

    Examples
    --------
    >>> cfg = AuditConfig.make(epsilon=0.05)
    >>> s = make_stream([0] * 4000, [1 if t % 500 == 0 else 0 for t in range(4000)])
    >>> r = run_stream(s, cfg)
    >>> r.verdict, r.tier, r.labels_used
    ('safe', 0, 0)
    """
    n, B = stream.n, cfg.B
    a = stream.a
    pi = cfg.routing.probabilities(stream.judge, n)
    u = uniforms(cfg.seed, offset, offset + n)
    draw = a & (u < pi)                       # L_t on disagreements
    z = np.where(draw, stream.d / pi, 0.0)    # Horvitz-Thompson increment

    # Tier 0 on A_t.
    rlo, rhi = prpl_eb(a.astype(float), cfg.delta0, truncation=cfg.truncation,
                       running_intersection=cfg.running_intersection)
    first = {key: first_true(holds) for key, holds in _rules(cfg, rho_upper=rhi).items()}
    i_act = first_true(cfg.tier1_starts(rlo))
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
    slice_stops: dict[str, int | None] = {}
    slice_info: list[tuple[str, npt.NDArray[np.intp], npt.NDArray[np.float64],
                           npt.NDArray[np.float64], int | None, str | None]] = []
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
        stop_k = slice_stops[k]
        needed[idx[idx <= (n - 1 if stop_k is None else stop_k)]] = True
    needed &= draw
    missing = first_true(needed & ~stream.has_label)
    horizon = n if missing is None else missing   # items processed: 0..horizon-1

    def within(i: int | None) -> bool:
        return i is not None and i < horizon

    if to_end:
        end = horizon
    elif slice_info:
        ends = [stop[0] if stop is not None else None] + list(slice_stops.values())
        end = (max(e for e in ends if e is not None) + 1 if all(within(e) for e in ends)
               else horizon)
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
            sv, st, last = str(v), int(idx[j]) + 1, j
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


def audit(incumbent: npt.ArrayLike, candidate: npt.ArrayLike,
          labels: npt.ArrayLike | None = None, *, epsilon: float, delta: float = 0.05,
          seed: int = 0, pi: float | None = None, pi_min: float | None = None,
          judge: npt.ArrayLike | None = None, slices: npt.ArrayLike | None = None,
          delta0: float | None = None, delta1: float | None = None,
          truncation: float = 0.5, running_intersection: bool = True,
          tier1_from: float = TIER1_FROM, confidence: str = DEFAULT_CONFIDENCE,
          run_to_end: bool = False) -> AuditResult:
    """Run the Discern audit on a stream of paired predictions, in one vectorised call.

    The audit replays as far as the labels go and, if it reaches an item whose label
    it decides to pay for but does not have, returns ``verdict="continue"`` with
    ``needs_label`` set to that row.

    Parameters
    ----------
    incumbent, candidate : array_like
        The incumbent's (f) and the candidate's (g) predictions, numbers or text.
    labels : array_like, optional
        The labels, None or NaN where unlabelled (None: no labels at all).
    epsilon : float
        Tolerance eps > 0: Safe certifies Delta = E[loss(g) - loss(f)] < eps.
    delta : float, default 0.05
        Miscoverage: every verdict is true with probability at least 1 - delta, at
        any stopping time (paper Thm 5).
    seed : int, default 0
        Seed of the labelling draws U_t.
    pi, pi_min : float, optional
        Routing probability on disagreements (default 0.5) and its floor.
    judge : array_like of float, optional
        Judge scores in [0, 1]: pi_t = pi_min + (1 - pi_min) judge_t.
    slices : array_like, optional
        Slice keys: a Tier-1 audit per slice at delta1 / K (paper Prop. 12).
    delta0, delta1 : float, optional
        Tier 0's and Tier 1's levels (default delta / 2 each).
    truncation : float, default 0.5
        PrPl-EB bet truncation.
    running_intersection : bool, default True
        Intersect both tiers' intervals over time (module docstring).
    tier1_from : float, default TIER1_FROM
        Tier 1 starts paying for labels once Tier 0 shows ``B * rho >= tier1_from *
        eps`` (module docstring).
    confidence : str, default DEFAULT_CONFIDENCE
        Tier 1's confidence sequence: "prpl-eb" or "betting" (`CONFIDENCE`).
    run_to_end : bool, default False
        Keep both tiers running to the end of the stream (coverage studies): the
        verdict and stopping time are unchanged, the trajectories and
        ``labels_used`` cover every item.

    Returns
    -------
    AuditResult
        The verdict, its tier and stopping time, the intervals and the trace.

    Raises
    ------
    ParameterError
        A setting out of range.
    InvalidValueError, LabelError
        What `make_stream` refuses.

    Examples
    --------
    >>> f = [0] * 4000
    >>> g = [1 if t % 500 == 0 else 0 for t in range(4000)]   # rho = 0.002
    >>> r = audit(f, g, None, epsilon=0.05)
    >>> r.verdict, r.tier, r.labels_used
    ('safe', 0, 0)
    """
    cfg = AuditConfig.make(epsilon=epsilon, delta=delta, delta0=delta0, delta1=delta1, pi=pi,
                           pi_min=pi_min, judge=judge is not None, seed=seed,
                           truncation=truncation, running_intersection=running_intersection,
                           tier1_from=tier1_from, confidence=confidence)
    stream = make_stream(incumbent, candidate, labels, judge=judge, slices=slices)
    return run_stream(stream, cfg, to_end=bool(run_to_end))


# ------------------------------------------------------------- streaming form
@dataclass(frozen=True)
class Routed:
    """Routing decision for the next item, made before its label is drawn.

    Parameters
    ----------
    t : int
        The item, 1-based.
    disagree : bool
        Whether the models disagree on it.
    pi : float
        Its routing probability pi_t.
    needs_label : bool
        Whether its label is paid for (Tier 1 running, a disagreement, U_t < pi_t).

    Examples
    --------
    >>> AuditState.start(epsilon=0.05).route(0, 1)
    Routed(t=1, disagree=True, pi=0.5, needs_label=False)
    """

    t: int
    disagree: bool
    pi: float
    needs_label: bool


@dataclass(frozen=True)
class AuditState:
    """Streaming audit: ``state.observe(f, g, label) -> new state`` (pure).

    Equal to `audit` on every prefix (no slices).  Call `route` first to learn
    whether the next item's label is paid for.

    Parameters
    ----------
    config : AuditConfig
        The settings.
    tier0 : PrplEBState
        Tier 0's confidence sequence on A_t.
    tier1 : PrplEBState, optional
        Tier 1's, on the mapped increments (None while dormant).
    t : int
        Items observed.
    tier1_start : int, optional
        The 1-based item at which Tier 1 starts.
    labels_used : int
        Labels paid for.
    verdict : {"safe", "regression", "continue"}
        The verdict so far.
    tier : int, optional
        The verdict's tier.
    stopping_time : int, optional
        The item at which the verdict was issued.
    trace : tuple of TraceEntry
        Every paid label.

    Examples
    --------
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
    tier1: PrplEBState | BettingState | None
    t: int = 0
    tier1_start: int | None = None
    labels_used: int = 0
    verdict: str = "continue"
    tier: int | None = None
    stopping_time: int | None = None
    trace: tuple[TraceEntry, ...] = ()

    @classmethod
    def start(cls, *, epsilon: float, delta: float = 0.05, seed: int = 0,
              pi: float | None = None, pi_min: float | None = None, judge: bool = False,
              delta0: float | None = None, delta1: float | None = None,
              truncation: float = 0.5, running_intersection: bool = True,
              tier1_from: float = TIER1_FROM,
              confidence: str = DEFAULT_CONFIDENCE) -> AuditState:
        """The state before any item.

        Parameters
        ----------
        epsilon, delta, seed, pi, pi_min, delta0, delta1, truncation, running_intersection
            As in `audit`.
        tier1_from : float, default TIER1_FROM
            As in `audit`.
        confidence : str, default DEFAULT_CONFIDENCE
            As in `audit`.
        judge : bool, default False
            Route by judge scores (each `observe` then needs ``judge=``).

        Returns
        -------
        AuditState
            The initial state.

        Raises
        ------
        ParameterError
            A setting out of range.
        """
        cfg = AuditConfig.make(epsilon=epsilon, delta=delta, delta0=delta0, delta1=delta1,
                               pi=pi, pi_min=pi_min, judge=judge, seed=seed,
                               truncation=truncation, running_intersection=running_intersection,
                               tier1_from=tier1_from, confidence=confidence)
        tier0 = PrplEBState.start(cfg.delta0, truncation=cfg.truncation,
                                  running_intersection=cfg.running_intersection)
        return cls(cfg, tier0, None)

    @property
    def rho_interval(self) -> tuple[float, float]:
        """Tier 0's interval for the disagreement rate rho ([0, 1] before any item)."""
        return (self.tier0.lower, self.tier0.upper) if self.t else (0.0, 1.0)

    @property
    def delta_interval(self) -> tuple[float, float]:
        """Tier 1's interval for Delta ([-B, B] while Tier 1 has no item)."""
        if self.tier1 is None or self.tier1.t == 0:
            return (-self.config.B, self.config.B)
        cfg = self.config
        return (float(cfg.tier1_delta(self.tier1.lower)), float(cfg.tier1_delta(self.tier1.upper)))

    def route(self, incumbent: object, candidate: object, *,
              judge: float | None = None) -> Routed:
        """Decide, before any label is seen, whether item t+1's label is paid for.

        Parameters
        ----------
        incumbent, candidate : object
            The two predictions of item t+1.
        judge : float, optional
            Its judge score (required when routing by a judge).

        Returns
        -------
        Routed
            The decision.

        Raises
        ------
        ParameterError
            No judge score for a judge-routed audit.
        InvalidValueError
            A judge score outside [0, 1].
        """
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

    def observe(self, incumbent: object, candidate: object, label: object = None, *,
                judge: float | None = None) -> AuditState:
        """The state after one more item (a pure transition).

        Parameters
        ----------
        incumbent, candidate : object
            The item's two predictions.
        label : object, optional
            Its label, required only when `route` says it is paid for.
        judge : float, optional
            Its judge score (required when routing by a judge).

        Returns
        -------
        AuditState
            The new state.

        Raises
        ------
        ParameterError
            The audit already has its verdict, or a judge score is missing.
        LabelError
            The item is routed and ``label`` is missing.
        """
        if self.verdict != "continue":
            raise ParameterError(f"the audit already reached its verdict ({self.verdict}) "
                                 f"at item {self.stopping_time}; start a new audit")
        r = self.route(incumbent, candidate, judge=judge)
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
        if tier1 is None and cfg.tier1_starts(tier0.lower):
            tier1 = (BettingState.start(cfg.delta1, truncation=cfg.truncation,
                                        running_intersection=cfg.running_intersection,
                                        **cfg.betting_bets())
                     if cfg.confidence == "betting" else
                     PrplEBState.start(cfg.delta1, truncation=cfg.truncation,
                                       running_intersection=cfg.running_intersection))
            return replace(new, tier1=tier1, tier1_start=r.t + 1)
        return new
