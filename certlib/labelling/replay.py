"""Replay a policy over a fully labelled pool (SPEC section 10 `replay`).

Policies whose reading order is known in advance (`Policy.static_order`, or
`Policy.adaptive_order` when only eliminations change it: static, adaptive,
random, vma) are replayed in vectorised blocks: along the order the bounds are
a cumulative sum of per-row gains, so the stopping test and the elimination
test are evaluated on a whole block at once, and an adaptive order is
recomputed only at an elimination (at most K - 1 times).  Other policies step
a `Session`.  Both paths give the same result (tested), and both use the same
exact test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from ..core._values import ClassValue
from ..core.bounds import (Decision, Thresholds, certified_mask, decide, eliminated_mask,
                           thresholds)
from ..core.pair_terms import check_rule, gain_terms, initial_lower
from ..core.pool import Pool
from ..errors import LabelError
from ..policies import Policy, PolicyContext, get_policy
from .label_errors import (
    LabelErrorMargin,
    check_label_errors,
    full_pool_fragility,
    label_error_margin,
)
from .session import Session, _budget

__all__ = ["ReplayResult", "replay"]


@dataclass(frozen=True)
class ReplayResult:
    """Labels a policy needed on a pool whose labels are known in hindsight.

    Attributes
    ----------
    policy : str
        The policy's registered name.
    rule : str
        The bound rule of the stopping test (SPEC section 4).
    tolerance : Fraction
        tau, exact.
    budget : int or None
        The label budget (None: none).
    labels_read : int
        Labels read when the run stopped.
    certified : bool
        The stopping test certified a candidate.
    selected : str
        The certified candidate, or the one with the smallest worst-case excess if not
        certified.
    full_pool_winner : str
        The candidate with the best objective on the whole pool (earliest on ties).
    excess : Fraction
        Guaranteed objective gap of ``selected`` to the best (0 when certified exactly).
    order : tuple
        Row ids read, in order.
    n : int
        Rows in the pool.
    candidates : tuple of str
        Candidate names in priority order.
    label_errors : int or None
        The e asked for (`replay`'s ``label_errors``); the four fields from here on are
        None when it was not asked.
    status : str or None
        The session's status at the stop ("certified but fragile", ...).
    margin : LabelErrorMargin or None
        The label-error margin of the answer at the stop.
    fragility : LabelErrorMargin or None
        The label-error margin of the full-pool choice (`full_pool_fragility`).
    """

    policy: str
    rule: str
    tolerance: Fraction
    budget: int | None
    labels_read: int
    certified: bool
    selected: str  # certified candidate, or smallest worst-case excess if not certified
    full_pool_winner: str
    excess: Fraction  # guaranteed objective gap of `selected` (0 when certified exactly)
    order: tuple[ClassValue, ...]  # row ids read, in order
    n: int
    candidates: tuple[str, ...]
    # only when replay(..., label_errors=e) was asked (None otherwise)
    label_errors: int | None = None
    status: str | None = None  # the session's status at stop ("certified but fragile", ...)
    margin: LabelErrorMargin | None = None  # of the answer at stop
    fragility: LabelErrorMargin | None = None  # of the full-pool choice

    @property
    def robust(self) -> bool | None:
        """The answer survives any ``label_errors`` wrong labels among the rows read
        (None when ``label_errors`` was not asked)."""
        if self.margin is None or self.label_errors is None:
            return None
        return self.margin.robust_to(self.label_errors)

    @property
    def labels_fraction(self) -> float:
        """Share of the pool's rows read, in [0, 1]."""
        return self.labels_read / self.n

    def to_dict(self) -> dict[str, object]:
        """The result as JSON-ready values (what ``certlib replay --json`` prints).

        Returns
        -------
        dict
            Floats for fractions, lists for tuples, with the label-error keys when
            ``label_errors`` was asked.
        """
        return {
            "policy": self.policy, "rule": self.rule, "tolerance": float(self.tolerance),
            "budget": self.budget, "labels_read": self.labels_read,
            "labels_fraction": self.labels_fraction, "selected": self.selected,
            "full_pool_winner": self.full_pool_winner, "certified": self.certified,
            "excess": float(self.excess), "n": self.n, "candidates": list(self.candidates),
            "order": list(self.order),
        } | ({} if self.label_errors is None else self._label_error_keys())

    def _label_error_keys(self) -> dict[str, object]:
        m, f = self.margin, self.fragility
        assert m is not None and f is not None  # set together with label_errors
        return {
            "label_errors": self.label_errors, "status": self.status, "robust": self.robust,
            "margin": m.flips, "margin_rival": m.rival, "margin_rows": list(m.row_ids),
            "margin_critical_rows": list(m.critical_ids),
            "full_pool_fragility": f.flips, "full_pool_fragility_rival": f.rival,
            "full_pool_fragility_rows": list(f.row_ids),
        }


def replay(pool: Pool, *, policy: str | Policy = "static-range", rule: str = "shared",
           tolerance: float | Fraction = 0.0, seed: int = 0, budget: int | None = None,
           vectorised: bool = True, label_errors: int | None = None) -> ReplayResult:
    """Run a policy with the exact stopping test on a fully labelled pool.

    The pool's labels play the annotator: the run reads them in the policy's order
    until the test certifies, the budget is spent or every row is read (paper 000,
    section 5).  How many labels that took is what a real run of the policy would
    have needed on this pool.

    Parameters
    ----------
    pool : Pool
        A pool with every label.
    policy : str or Policy, default "static-range"
        A registered policy name (`certlib.policy_names`) or a `Policy` object.
    rule : {"shared", "separate", "centered"}, default "shared"
        How the bounds treat unread rows (SPEC section 4).
    tolerance : float or Fraction, default 0.0
        tau >= 0: stop when a candidate is certified within tau of the best.
    seed : int, default 0
        Seed of the policy's random choices.
    budget : int or None, default None
        Most labels to read.
    vectorised : bool, default True
        Replay a policy whose order is known in advance in blocks (same result, faster);
        False steps a `Session` label by label.
    label_errors : int or None, default None
        e: stop only when the certificate survives any e wrong labels among the rows
        read (`Session.start`); the result then also carries the label-error margin at
        the stop and the full-pool fragility (e = 0: the plain test, with those two
        reported).

    Returns
    -------
    ReplayResult
        Labels read, the answer, its guarantee and the rows read in order.

    Raises
    ------
    LabelError
        A row of the pool has no label.
    ParameterError
        An unknown rule or policy, or a bad tolerance, budget or ``label_errors``.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> r = certlib.replay(pool, policy="static-range")
    >>> r.labels_read, r.certified, r.selected, r.order
    (4, True, 'B', (2, 3, 0, 1))
    >>> certlib.replay(pool, budget=2).certified
    False
    >>> certlib.replay(pool, label_errors=1).margin.flips   # one wrong label undoes B
    1
    """
    check_rule(rule)
    e = check_label_errors(label_errors)
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels < 0)[0])
        raise LabelError(
            f"replay needs a fully labelled pool; row {pool.row_ids[i]!r} (position {i}) has "
            f"no label ({pool.n - pool.n_labelled} of {pool.n} rows unlabelled)"
        )
    budget = _budget(budget, pool.n)
    pol = get_policy(policy)
    run = _replay_order(pool, pol, rule, tolerance, seed, budget) \
        if vectorised and not e else None
    status = None
    if run is None:
        s = Session.start(pool, policy=pol, rule=rule, tolerance=tolerance, seed=seed,
                          budget=budget, label_errors=e)
        while not s.done:
            r = s.next_row()
            assert r is not None  # a session that is not done has a next row
            s = s.observe(r, pool.classes[pool.labels[r]])
        run, status = (list(s.read_rows), s.decision), s.status
    rows, dec = run
    tol = thresholds(pool.K, pool.scale, rule=rule, tolerance=tolerance).tolerance
    margin = fragility = None
    if e is None:
        status = None  # the label-error fields are reported only when asked for
    else:
        if status is None:  # the plain test (e = 0) stopped the vectorised replay
            status = _plain_status(dec, tol, budget, len(rows), pool.n)
        margin = label_error_margin(pool, rows, tolerance=tol, rule=rule,
                                    target=dec.selected_index)
        fragility = full_pool_fragility(pool, tolerance=tol, rule=rule)
    return ReplayResult(
        policy=pol.name, rule=rule, tolerance=tol,
        budget=budget, labels_read=len(rows), certified=dec.certified,
        selected=pool.names[dec.selected_index], full_pool_winner=pool.names[pool.winner()],
        excess=dec.excess, order=pool.ids_of(rows), n=pool.n,
        candidates=pool.names, label_errors=e, status=status, margin=margin,
        fragility=fragility,
    )


def _plain_status(dec: Decision, tol: Fraction, budget: int | None, t: int, n: int) -> str:
    """`Session.status` of the plain test's stop."""
    if dec.certified:
        return "certified" if tol == 0 else "certified within tolerance"
    if budget is not None and t >= budget:
        return "budget exhausted"
    return "all labels read" if t >= n else "running"


def _newly_eliminated(L: npt.NDArray[np.int64], th: Thresholds,
                      eliminated: set[int]) -> npt.NDArray[np.bool_]:
    """`eliminated_mask` of bounds ``L`` (shape (K, K) or (K, K, m)) without the
    candidates in ``eliminated``."""
    elim = eliminated_mask(L, th)
    out = np.ones(th.K, dtype=bool)
    out[list(eliminated)] = False
    return elim & (out if elim.ndim == 1 else out[:, None])


def _advance(L: npt.NDArray[np.int64], gain: npt.NDArray[np.integer],
             hit: Callable[[npt.NDArray[np.int64]], bool]) -> tuple[int, npt.NDArray[np.int64]]:
    """Read the block's rows (gains ``gain``, shape (K, K, m)) from bounds ``L`` up to
    and including the first row after which ``hit`` holds: (rows read, bounds then).

    A row read never lowers a lower bound (its gain is realised - lower >= 0), and the
    tests ``hit`` makes are thresholds on the bounds, so once true they stay true: the
    first row is found by halving the block with sums (about 2 m terms added), never
    forming the bounds after every row (a cumulative sum over K x K x m terms, 20x
    slower at K = 64)."""
    m = gain.shape[2]
    end = L + gain.sum(axis=2, dtype=np.int64)
    if not hit(end):
        return m, end
    lo, hi, base = 0, m - 1, L  # base: bounds after rows [0, lo); the first hit is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        probe = base + gain[:, :, lo:mid + 1].sum(axis=2, dtype=np.int64)
        if hit(probe):
            hi = mid
        else:
            lo, base = mid + 1, probe
    return lo + 1, base + gain[:, :, lo].astype(np.int64)


def _replay_order(pool: Pool, pol: Policy, rule: str, tolerance: float | Fraction, seed: int,
                  budget: int | None) -> tuple[list[int], Decision] | None:
    """The replay in vectorised blocks: the rows read and the decision at the stop, or
    None when the policy's order is not known in advance."""
    th = thresholds(pool.K, pool.scale, rule=rule, tolerance=tolerance)
    L: npt.NDArray[np.int64] = initial_lower(pool, rule=rule)
    dec = decide(L, th)
    eliminated = set(dec.eliminated)
    ctx = PolicyContext(pool, rule, seed, th.tolerance, dec.eliminated)
    given = pol.static_order(ctx)
    adaptive = given is None
    if given is None:
        given = pol.adaptive_order(ctx, tuple(k for k in range(pool.K) if k not in eliminated))
        if given is None:
            return None
    order: npt.NDArray[np.int64] = given
    n = pool.n
    limit = n if budget is None else min(budget, n)
    read = np.zeros(n, dtype=bool)
    taken: list[npt.NDArray[np.int64]] = []
    t = 0
    block = 256

    def hit(state: npt.NDArray[np.int64]) -> bool:
        """Whether the run stops or, adaptive, remakes its order at bounds ``state``."""
        return bool(certified_mask(state, th).any()) or (
            adaptive and bool(_newly_eliminated(state, th, eliminated).any()))

    while not dec.certified and t < limit:
        pending = order[~read[order]]  # rows of this order still unread
        pos = 0
        restart = False
        while pos < pending.size and t < limit and not dec.certified and not restart:
            m = min(block, pending.size - pos, limit - t)
            rows = pending[pos:pos + m]
            gain = gain_terms(pool, rows, pool.labels[rows], rule=rule)
            used, L = _advance(L, gain, hit)
            if hit(L):  # a certificate ends the run; an elimination remakes the order
                restart = not certified_mask(L, th).any()
            read[rows[:used]] = True
            taken.append(rows[:used])
            t += used
            pos += used
            dec = decide(L, th)
            # at most about 4M gain terms a block (16 MB): at K = 64 the 32,768-row
            # blocks of K = 8 would take half a gigabyte
            block = min(block * 2, 1 << 15, max(256, (1 << 22) // (pool.K * pool.K)))
        if restart:
            eliminated = set(dec.eliminated)
            active = tuple(k for k in range(pool.K) if k not in eliminated)
            of_rows = getattr(pol, "order_of_rows", None)
            if of_rows is not None:  # the unread rows only (`OrderPolicy.order_of_rows`)
                order = of_rows(ctx, active, np.flatnonzero(~read))
            else:
                given = pol.adaptive_order(ctx, active)
                # a policy that gave an adaptive order gives one for every active set
                assert given is not None
                order = given
        elif pos >= pending.size:
            break
    rows = np.concatenate(taken) if taken else np.zeros(0, dtype=np.int64)
    return rows.tolist(), dec
