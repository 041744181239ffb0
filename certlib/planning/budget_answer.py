"""What a budget of B labels buys: one tolerance, one sentence (paper 000, section 6).

**The tolerance a budget certifies is a worst-case excess.**  After any labels the
exact bounds give every candidate k its worst-case excess max(0, max_j -L[j, k]): the
most its objective can exceed the best one over every completion of the unread labels
(`certlib.core.bounds.Decision.excess`, of the answer with the smallest).  The test
with tolerance tau > 0 certifies exactly when that smallest excess is at most tau
(its threshold is -floor(scale tau) for every pair, and the excess is a whole number
of 1/scale).  Three facts make the excess after B labels of one run the answer for
every tolerance at once:

* the thresholds of *elimination* do not depend on the tolerance (`thresholds`:
  ``elim`` is the tie rule), so neither do the eliminations;
* the reading order of the policies in `ORDER_IGNORES_TOLERANCE` depends on the pool,
  the seed, the labels read and the eliminations, never on the tolerance nor on the
  budget, so the run at any tolerance, stopped at B labels, reads a prefix of the
  run at tau = 0;
* reading a label only raises the lower bounds, so the excess only falls as labels
  arrive.

Hence the run at tolerance tau certifies within B labels exactly when the excess
e_B after B labels of the tau = 0 run is at most tau (tau > 0): **a budget of B
labels buys tolerance e_B**, the smallest tolerance it certifies.  At tau = 0 the test
is stricter: an excess of 0 means the answer is no worse than any rival under every
completion, yet the exact test also needs every rival earlier in the tie priority to
be strictly worse, so e_B = 0 certifies every tau > 0 and the exact choice only when
the tau = 0 run has certified (`BudgetAnswer.exact_choice`).  ``tests/core/
test_budget_answer.py`` checks all of this by brute force.  A policy outside
`ORDER_IGNORES_TOLERANCE` (``expected-coverage`` weighs the rows by the deficits
of the test, which depend on tau) reads other rows at other tolerances: its number is
that of its run aiming at the exact choice (tau = 0), and the sentence says so.

**Three cases.**

* Every label known: the tau = 0 replay stopped at B labels (`certlib.replay`) gives
  e_B exactly, with the answer and the labels the exact choice takes.
* Unread rows: the labels already known count as read (as in `certlib.forecast`), so
  every completion of the unread labels leaves the answer within the excess of the
  known labels, *for sure*; 0 when the budget reads every row (with every label read the
  exact test certifies, shared rule), or, for accuracy under a range or pair-sum
  policy, every unread disagreement row (`certlib.planning.budget_plan`,
  ``certain_from``).  And a *forecast*: the unread labels are drawn as in
  `certlib.forecast` (same label model, same draws for the same seed), the tau = 0 run is
  replayed exactly on each draw up to B labels (`excess_at_budget`), and the 80%
  quantile of e_B over the draws is the tolerance the budget certifies with 80%
  probability (the median beside it).  A forecast, not a guarantee.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:
    from ..core.pool import Pool
    from ..policies import Policy
    from ..policies.label_model import LabelSampler

__all__ = ["BudgetAnswer", "FORECAST_LEVEL", "ORDER_IGNORES_TOLERANCE", "what_budget_buys"]

#: The built-in policies whose reading order never uses the tolerance: range and
#: pair-sum orders, random, VMA (the pool and the seed) and model-selector (its
#: posterior).  ``expected-coverage`` uses the test's thresholds, which do.
ORDER_IGNORES_TOLERANCE: frozenset[str] = frozenset(
    {"static-range", "static-pair-sum", "adaptive-range", "adaptive-pair-sum", "random", "vma",
     "model-selector"})

#: The probability of the forecast tolerance: the tolerance certified in at least this
#: share of the draws.
FORECAST_LEVEL: Fraction = Fraction(4, 5)

# how the answer is known (BudgetAnswer.basis)
BASES: tuple[str, ...] = ("replay", "known", "every_row", "disagreement", "spent", "forecast")
_NAME = {"augrc": "AUGRC", "accuracy": "error rate"}
_ON = {"augrc": "AUGRC", "accuracy": "the error rate"}


def _g(x: Fraction) -> str:
    """A tolerance as the pages write it (4 significant digits)."""
    return f"{float(x):.4g}"


def _share(p: float) -> str:
    """A share of draws in whole percent, never 0% or 100% unless it is exactly so."""
    pct = round(100 * p)
    if p > 0 and pct == 0:
        return "under 1%"
    if p < 1 and pct == 100:
        return "over 99%"
    return f"{pct}%"


def _quantile(values: tuple[Fraction, ...], q: Fraction) -> Fraction:
    """The lower empirical q-quantile: the smallest value at least a share q of the
    values do not exceed (exact integer index, as `Forecast.quantiles`)."""
    a = sorted(values)
    i = max(0, -(-q.numerator * len(a) // q.denominator) - 1)  # ceil(q D) - 1
    return a[i]


@dataclass(frozen=True)
class BudgetAnswer:
    """What a budget of ``budget`` labels buys on one pool (module docstring).

    Attributes
    ----------
    budget : int
        The budget, in labels (the known labels included).
    n, K : int
        Rows and candidates of the pool.
    known : int
        Labels the pool already holds.
    objective : str
        ``"augrc"`` or ``"accuracy"`` (tolerances on the error rate).
    policy : str
        The policy's registered name.
    seed : int
        Seed of the replay (a random policy) and of the forecast's draws.
    basis : str
        How the "for sure" tolerance is known: ``"replay"`` (every label known: the
        exact replay), ``"known"`` (the known labels certify the exact choice),
        ``"every_row"`` (the budget reads every row), ``"disagreement"`` (accuracy: it
        reads every unread disagreement row), ``"spent"`` (the known labels use up the
        budget), ``"forecast"`` (the policy reads more: a forecast beside the sure bound).
    sure : Fraction
        The tolerance certified for sure: every label known, the exact e_B of the
        replay; else an upper bound of e_B over every completion of the unread labels.
    exact_choice : bool
        The exact choice (tau = 0) is certified for sure within the budget.
    selected : str or None
        The answer the sure tolerance is about (the replay's after the budget, or the
        known labels'); None when no single answer is known in advance.
    labels_read : int or None
        Every label known: the labels the replay read (the budget, or fewer when it
        certified the exact choice earlier).
    labels_needed : int or None
        Every label known: the labels the tau = 0 replay takes to certify the exact
        choice.
    tolerance_free : bool
        The policy's order ignores the tolerance (`ORDER_IGNORES_TOLERANCE`); else the
        numbers are those of its run aiming at the exact choice (tau = 0).
    draws : int
        Label draws of the forecast (0: no forecast).
    excess_draws : tuple of Fraction
        The forecast's e_B per draw (empty without a forecast).
    forecast : Fraction or None
        The tolerance certified in at least `FORECAST_LEVEL` of the draws (the lower
        empirical 80% quantile of ``excess_draws``).
    median : Fraction or None
        The median of ``excess_draws`` (lower empirical quantile).
    p_exact : float or None
        The share of draws in which the exact choice is certified within the budget.
    label_model_note : str or None
        The forecast's label model, in words.
    """

    budget: int
    n: int
    K: int
    known: int
    objective: str
    policy: str
    seed: int
    basis: str
    sure: Fraction
    exact_choice: bool
    selected: str | None = None
    labels_read: int | None = None
    labels_needed: int | None = None
    tolerance_free: bool = True
    draws: int = 0
    excess_draws: tuple[Fraction, ...] = ()
    forecast: Fraction | None = None
    median: Fraction | None = None
    p_exact: float | None = None
    label_model_note: str | None = None

    @property
    def tolerance(self) -> Fraction:
        """The headline tolerance: the forecast's when there is one, else the sure one."""
        return self.sure if self.forecast is None else self.forecast

    def text(self, fmt: Callable[[object], str] = str) -> str:
        """The answer in one sentence, as ``certlib plan --budget`` prints it.

        Parameters
        ----------
        fmt : callable, default str
            Writes each candidate name (a value from the pool file): a page passes its
            Markdown-inert form.

        Returns
        -------
        str
            One sentence naming the tolerance the budget buys, for sure or with 80%
            probability, with the objective's name and the numbers written with 4
            significant digits.

        Examples
        --------
        >>> import certlib
        >>> from certlib.planning.budget_answer import what_budget_buys
        >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
        ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
        ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
        >>> import textwrap
        >>> text = what_budget_buys(pool, 1, policy="static-range").text()
        >>> print(textwrap.fill(text, 76, break_on_hyphens=False))
        A budget of 1 label buys tolerance 0.0625 on AUGRC: after 1 label
        static-range's answer B is within 0.0625 of the best AUGRC, for sure (exact
        replay); certifying the exact choice takes 4 labels.
        """
        B = f"{self.budget:,} label{'' if self.budget == 1 else 's'}"
        head = f"A budget of {B}"
        name, on = _NAME[self.objective], _ON[self.objective]
        sel = None if self.selected is None else fmt(self.selected)
        run = "" if self.tolerance_free else (
            f"; {self.policy}'s order depends on the tolerance, so this is its run aiming "
            "at the exact choice")
        known = ("the label already known guarantees" if self.known == 1 else
                 f"the {self.known:,} labels already known guarantee" if self.known else
                 "the predictions alone guarantee")
        tie = ("a candidate earlier in the tie priority may still tie it, so the exact test "
               "does not certify it yet")
        if self.basis == "replay":
            read = f"{self.labels_read:,} label{'' if self.labels_read == 1 else 's'}"
            if self.exact_choice:
                return (f"{head} buys tolerance 0, the exact choice: {self.policy} certifies "
                        f"{sel} after {read} (exact replay{run}).")
            if self.sure == 0:
                return (f"{head} buys every tolerance above 0 on {on}: after {read} "
                        f"{self.policy}'s answer {sel} is no worse than the best {name} "
                        f"under every completion, but {tie} (exact replay{run}); certifying "
                        f"the exact choice takes {self.labels_needed:,} labels.")
            return (f"{head} buys tolerance {_g(self.sure)} on {on}: after {read} "
                    f"{self.policy}'s answer {sel} is within {_g(self.sure)} of the best "
                    f"{name}, for sure (exact replay{run}); certifying the exact choice "
                    f"takes {self.labels_needed:,} labels.")
        if self.basis == "known":
            by = (f"the {self.known:,} label{'' if self.known == 1 else 's'} already known "
                  "certify" if self.known else "with no label read the test certifies")
            return (f"{head} buys tolerance 0, the exact choice, for sure: {by} {sel} "
                    "whatever the unread labels.")
        if self.basis == "every_row":
            return (f"{head} buys tolerance 0, the exact choice, for sure: it reads all "
                    f"{self.n:,} rows, and with every label read the exact test certifies "
                    "whatever the labels.")
        if self.basis == "disagreement":
            return (f"{head} buys tolerance 0, the exact choice, for sure: {self.policy} "
                    "reads only the rows where the candidates disagree, and their labels "
                    "settle accuracy whatever they are.")
        if self.basis == "spent":
            what = (f"{sel} is no worse than the best {name} under every completion, but "
                    f"{tie}" if self.sure == 0 else
                    f"{sel} is within {_g(self.sure)} of the best {name} whatever the "
                    "unread labels")
            if self.budget < self.known:  # they are read already, whatever the budget
                return (f"{head} is below the {self.known:,} labels already known, which "
                        f"count as read and buy tolerance {_g(self.sure)} on {on} for "
                        f"sure: {what}.")
            spent = (" (they count as read, so the budget reads no more)" if self.known
                     else "")
            return (f"{head} buys tolerance {_g(self.sure)} on {on} for sure, what {known}"
                    f"{spent}: {what}.")
        assert self.forecast is not None and self.median is not None  # basis "forecast"
        p = _share(self.p_exact or 0.0)
        sure = ("the same for sure" if self.sure == self.forecast else
                f"for sure only {_g(self.sure)}")
        return (f"{head} buys tolerance {_g(self.forecast)} on {on} with "
                f"{_share(float(FORECAST_LEVEL))} probability (forecast, {self.draws:,} "
                f"draws: median {_g(self.median)}, the exact choice certified in {p} of "
                f"them{run}); {sure}, what {known}.")

    def to_dict(self) -> dict[str, Any]:
        """The answer as a JSON-ready dict (tolerances as floats), with its ``text``."""
        return {
            "budget": self.budget, "n": self.n, "K": self.K, "known": self.known,
            "objective": self.objective, "policy": self.policy, "seed": self.seed,
            "basis": self.basis, "sure": float(self.sure), "exact_choice": self.exact_choice,
            "selected": self.selected, "labels_read": self.labels_read,
            "labels_needed": self.labels_needed, "tolerance_free": self.tolerance_free,
            "draws": self.draws,
            "forecast": None if self.forecast is None else float(self.forecast),
            "median": None if self.median is None else float(self.median),
            "p_exact": self.p_exact, "label_model_note": self.label_model_note,
            "excess_draws": [float(e) for e in self.excess_draws],
            "tolerance": float(self.tolerance), "text": self.text(),
        }


def _whole(value: object, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ParameterError(f"{what} must be a whole number >= {least}; got {value!r}")
    return int(value)


def what_budget_buys(pool: Pool, budget: int, *, policy: str | Policy = "adaptive-pair-sum",
                     draws: int = 200, seed: int = 0, sampler: LabelSampler | None = None,
                     progress: Callable[[float], object] | None = None) -> BudgetAnswer:
    """The tolerance a budget of ``budget`` labels buys, for sure and, on a pool with
    unread rows, with 80% probability (module docstring).

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far (none, some or all).
    budget : int
        Labels in total, >= 0 (the known labels count as read).
    policy : str or Policy, default "adaptive-pair-sum"
        The policy reading the rows (shared rule).
    draws : int, default 200
        Label draws of the forecast, >= 1 (used only when the pool has unread rows and
        the budget reads some).
    seed : int, default 0
        Seed of a random policy and of the draws: the same draws as
        ``certlib.forecast(pool, draws=draws, seed=seed)``.
    sampler : LabelSampler, optional
        A label sampler instead of `fit_label_sampler(pool)` (tests, experiments).
    progress : callable, optional
        Called with the fraction of the forecast done in [0, 1].

    Returns
    -------
    BudgetAnswer
        The tolerances, the answer and its sentence (`BudgetAnswer.text`).

    Raises
    ------
    ParameterError
        On a bad budget, policy or number of draws.

    Examples
    --------
    >>> import certlib
    >>> from certlib.planning.budget_answer import what_budget_buys
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> a = what_budget_buys(pool, 2, policy="static-range")
    >>> a.sure, a.selected, a.exact_choice, a.labels_needed
    (Fraction(1, 16), 'A', False, 4)
    >>> u = what_budget_buys(pool.with_labels([1, 0, -1, -1]), 3, policy="static-range",
    ...                      draws=20)
    >>> u.basis, u.sure, u.forecast <= u.sure
    ('forecast', Fraction(1, 16), True)
    """
    from ..core.bounds import batch_lower, decide, thresholds
    from ..core.pool import UNREAD
    from ..labelling.replay import replay
    from ..policies import get_policy
    from .accuracy_plan import DISAGREEMENT_FIRST, disagreement_mask
    from .label_forecast import excess_at_budget

    B = _whole(budget, "budget (labels)", 0)
    draws = _whole(draws, "draws", 1)
    pol = get_policy(policy)
    common: dict[str, Any] = dict(
        budget=B, n=pool.n, K=pool.K, known=int(pool.n_labelled), objective=pool.objective,
        policy=pol.name, seed=int(seed), tolerance_free=pol.name in ORDER_IGNORES_TOLERANCE)
    if pool.fully_labelled:  # the exact replay, from no label read (as the map's)
        rb = replay(pool, policy=pol, tolerance=0, seed=seed, budget=B)
        needed = rb.labels_read if rb.certified else \
            replay(pool, policy=pol, tolerance=0, seed=seed).labels_read
        return BudgetAnswer(**common, basis="replay", sure=rb.excess,
                            exact_choice=rb.certified, selected=rb.selected,
                            labels_read=rb.labels_read, labels_needed=needed)
    known = pool.labels != UNREAD
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=0)
    now = decide(batch_lower(pool, np.flatnonzero(known), rule="shared"), th)
    named = pool.names[now.selected_index]
    certain_from = pool.n
    if pool.objective == "accuracy" and pol.name in DISAGREEMENT_FIRST:
        # they read only disagreement rows, which settle accuracy (paper 000 section 6.2)
        certain_from = int(known.sum()) + int((disagreement_mask(pool) & ~known).sum())
    if now.certified:
        return BudgetAnswer(**common, basis="known", sure=Fraction(0), exact_choice=True,
                            selected=named)
    if B >= certain_from:
        return BudgetAnswer(**common, basis="every_row" if certain_from == pool.n else
                            "disagreement", sure=Fraction(0), exact_choice=True)
    if B <= common["known"]:  # the known labels spend the budget: nothing else is read
        return BudgetAnswer(**common, basis="spent", sure=now.excess, exact_choice=False,
                            selected=named)
    from ..policies.label_model import fit_label_sampler

    if sampler is None:
        sampler = fit_label_sampler(pool)
    Y = sampler.sample(np.random.default_rng(seed), draws)  # as certlib.forecast draws
    exc, _, cert = excess_at_budget(pool, pol, Y=Y, budget=B, seed=seed, progress=progress)
    per = tuple(Fraction(int(e), pool.scale) for e in exc)
    return BudgetAnswer(**common, basis="forecast", sure=now.excess, exact_choice=False,
                        selected=named, draws=draws, excess_draws=per,
                        forecast=_quantile(per, FORECAST_LEVEL),
                        median=_quantile(per, Fraction(1, 2)), p_exact=float(cert.mean()),
                        label_model_note=sampler.note)
