"""Minimum certificates in hindsight (SPEC section 7, paper 000 Theorem 2, section 4.1).

With every label known and target k (the full-pool winner), a set S of rows
certifies k iff, for every rival j != k,

    sum_{i in S} g_ji >= D_j,     D_j = max(0, need_jk - L_jk(nothing read)),

where g_ji = realised - lower term of row i for the pair (j, k) under the
shared rule (`certlib.core.pair_terms`).  C(y) is the smallest such |S|: a covering
integer program with one constraint per rival, solved by `certlib.certificates.covering`,
which reports an **enclosure** ``lower <= C(y) <= upper`` with a witness
verified in integers (rounding a basic LP solution adds at most K - 1 rows,
paper Theorem 2).  This module is the pool layer: it builds the gains and
deficits of each possible target, maps columns back to row ids, and with a
tolerance minimises over every candidate within tau.

One rival with a deficit (always the case for K = 2) is solved exactly by
sorting (paper 4.1, "Two candidates").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from ..core.bounds import batch_lower, certified_mask, decide, deficits, thresholds
from ..core.pair_terms import initial_lower, target_terms
from .covering import (
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORK_LIMIT,
    Enclosure,
    check_limits,
    cover_enclosure,
)
from ..errors import LabelError, ParameterError
from ..core._values import ClassValue
from ..core.pool import UNREAD, Pool
from ..core.weights import exact_fraction

__all__ = ["Certificate", "Enclosure", "PartialCertificate", "certify", "certify_partial",
           "cover_enclosure", "covering_problem"]

# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Certificate:
    """Enclosure ``lower <= C(y) <= upper`` of the minimum certificate, with a verified witness.

    ``selected`` is the name of the candidate certified (the full-pool winner at
    tau = 0; with a tolerance, the candidate within tau whose certificate is
    smallest), ``selected_index`` its index; the JSON keys are "winner" and
    "winner_index" (SPEC section 10), and ``winner`` / ``winner_index`` remain as
    read-only aliases.  ``witness`` the row ids of a
    certificate of size ``upper``.  ``exact`` means ``lower == upper`` with
    ``lower`` proved in exact arithmetic.  ``lp_value`` is the LP relaxation
    value (float, a hint): 0.0 when there is nothing to cover, the fractional
    greedy value (that LP's optimum) when one rival has a deficit, None when
    HiGHS failed.  ``deficits`` holds
    D_j for every candidate j against the selected one (0 at itself).
    ``dual_bound`` is the exact weak-dual value (a Fraction) when an LP was
    solved.  ``method`` says what last tightened the enclosure: "none" (nothing
    to cover), "sorting" (one rival), "lp", "fixing", "milp", "cuts", "branch-and-bound".
    ``solver_minimum`` is **not proved**: when the enclosure is not exact and
    HiGHS's MILP claims that ``upper`` is the minimum, it is that claim (equal to
    ``upper``), else None.  ``work`` counts the search nodes spent
    (`certlib.certificates.covering`); ``time_limited`` says the wall-clock safety net stopped
    the search, so the result may then depend on the machine.
    """

    selected: str
    lower: int
    upper: int
    exact: bool
    lp_value: float | None
    witness: tuple[ClassValue, ...]
    selected_index: int
    tolerance: Fraction
    deficits: tuple[int, ...]
    dual_bound: Fraction | None = None
    method: str = "lp"
    candidates: tuple[str, ...] = ()  # names of the candidates that were minimised over
    solver_minimum: int | None = None
    work: int = 0
    time_limited: bool = False

    @property
    def gap(self) -> int:
        """``upper - lower``: how many labels the enclosure leaves open (0 when exact)."""
        return self.upper - self.lower

    @property
    def winner(self) -> str:
        """Alias of ``selected`` (the SPEC section 10 JSON key)."""
        return self.selected

    @property
    def winner_index(self) -> int:
        """Alias of ``selected_index``."""
        return self.selected_index

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: the SPEC section 10 keys first, then extras."""
        return {
            "winner": self.selected,
            "lower": int(self.lower),
            "upper": int(self.upper),
            "exact": bool(self.exact),
            "lp_value": None if self.lp_value is None else float(self.lp_value),
            "witness": list(self.witness),  # Pool row ids are plain Python scalars
            "winner_index": int(self.selected_index),
            "tolerance": float(self.tolerance),
            "deficits": [int(d) for d in self.deficits],
            "dual_bound": None if self.dual_bound is None else float(self.dual_bound),
            "method": self.method,
            "candidates": list(self.candidates),
            "solver_minimum": self.solver_minimum,
            "work": int(self.work),
            "time_limited": bool(self.time_limited),
        }


@dataclass(frozen=True)
class PartialCertificate:
    """Bounds on C(y) after a partial run (SPEC section 7, last paragraph).

    ``upper``: size of a verified sub-certificate among the read rows, or None
    when the read rows do not certify any candidate.  ``lower``: holds for
    every completion of the unread labels (unread rows count with their
    potential gain).  ``selected`` is the certified candidate's name, or None
    (JSON key "winner"; ``winner`` remains as a read-only alias).
    ``time_limited``: the wall-clock safety net stopped the search for ``upper``.
    """

    lower: int
    upper: int | None
    exact: bool
    certified: bool
    selected: str | None
    witness: tuple[ClassValue, ...]
    tolerance: Fraction
    labels_read: int
    time_limited: bool = False

    @property
    def winner(self) -> str | None:
        """Alias of ``selected``."""
        return self.selected

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict with the keys of the fields; ``selected`` is written "winner"."""
        return {"lower": int(self.lower), "upper": self.upper, "exact": bool(self.exact),
                "certified": self.certified, "winner": self.selected,
                "witness": list(self.witness),  # Pool row ids are plain Python scalars
                "tolerance": float(self.tolerance), "labels_read": self.labels_read,
                "time_limited": bool(self.time_limited)}


# --------------------------------------------------------------------- the pool layer
def _target_index(pool: Pool, target: object) -> int:
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        k = int(target)
        if not 0 <= k < pool.K:
            raise ParameterError(f"target index {k} is out of range 0..{pool.K - 1}")
        return k
    if isinstance(target, str) and target in pool.names:
        return pool.names.index(target)
    raise ParameterError(f"target must be a candidate name {list(pool.names)} or index; "
                         f"got {target!r}")


def _check_tolerance(tolerance: float | Fraction) -> Fraction:
    return exact_fraction(tolerance, "tolerance")


def _enclose_each(problems: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]],
                  work_limit: int, time_limit: float) -> list[Enclosure]:
    """`cover_enclosure` of each (G, D) in turn under one work limit and one deadline.

    Each problem gets an equal share of the work still left, so what one does not
    use goes to the next; the shares depend on work done, never on time."""
    check_limits(work_limit, time_limit)
    deadline = time.perf_counter() + time_limit
    left, out = int(work_limit), []
    for pos, (G, D) in enumerate(problems):
        share = left // (len(problems) - pos)
        enc = cover_enclosure(G, D, work_limit=share,
                              time_limit=max(0.0, deadline - time.perf_counter()))
        left -= enc.work
        out.append(enc)
    return out


def covering_problem(pool: Pool, target: int, tolerance: float | Fraction = 0.0,
                     ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The covering problem behind `certify` for one target candidate: gains G (rivals
    x rows) and deficits D, so that a set S of rows certifies ``target`` exactly when
    ``G[:, S].sum(1) >= D`` (paper 000 Theorem 2, SPEC section 7).

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    target : int
        The candidate's index.
    tolerance : float or Fraction
        tau >= 0, as in `certify`.

    Returns
    -------
    G : numpy.ndarray of int64, shape (K, n)
        Each row's gain against each rival (the target's own row is 0).
    D : numpy.ndarray of int64, shape (K,)
        The deficits; rows with D <= 0 are met already.

    Examples
    --------
    >>> from certlib import Pool
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         labels=[1, 0, 0, 0], names=["A", "B"])
    >>> G, D = covering_problem(pool, 1)
    >>> G.tolist(), D.tolist()  # three rows meet the deficit 7 (4 + 2 + 2): C(y) = 3
    ([[2, 2, 4, 0], [0, 0, 0, 0]], [7, 0])
    """
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=_check_tolerance(tolerance))
    lo, gains = target_terms(pool, target, np.arange(pool.n), pool.labels)
    return gains, deficits(th.need[:, target], lo.sum(axis=1, dtype=np.int64))


def certify(pool: Pool, *, tolerance: float | Fraction = 0.0,
            work_limit: int = DEFAULT_WORK_LIMIT, time_limit: float = DEFAULT_TIME_LIMIT,
            target: str | int | None = None) -> Certificate:
    """Enclose the minimum certificate C(y) of a fully labelled pool (SPEC section 7).

    C(y) is the fewest labels that, read in any order, let the exact stopping test
    certify the full-pool winner (paper 000 Theorem 2, section 4.1): the benchmark
    a labelling policy is measured against in hindsight.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    tolerance : float or Fraction
        tau >= 0 on the objective's scale.  With tau > 0 the deficits use
        need = -floor(scale * tau) and every candidate within tau of the best on
        the full pool is a possible target; the one with the smallest ``upper``
        (then smallest ``lower``, then earliest) is reported, and ``lower`` is
        the minimum of the targets' lowers.
    work_limit : int
        Search nodes for closing a gap (HiGHS MILP, then the exact
        branch-and-bound; see `certlib.certificates.covering`), shared by the targets;
        0 stops after the LP, rounding and exact dual bounds.  It, not time, decides
        when to stop, so a pool gives the same certificate on every machine.
    time_limit : float
        Seconds, a safety net for pathological pools; when it stops the search the
        result says ``time_limited``.
    target : str or int, optional
        A candidate name or index to certify instead; it must be the winner
        (tau = 0) or within tau.

    Returns
    -------
    Certificate
        The enclosure ``lower <= C(y) <= upper`` and a witness of size ``upper``
        checked with integer sums.

    Raises
    ------
    LabelError
        When some row has no label (`certify_partial` handles a partial run).
    ParameterError
        A negative or non-numeric tolerance, bad limits, or a ``target`` that is not
        a candidate or not a possible target.

    Examples
    --------
    >>> from certlib import Pool, certify
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         labels=[1, 0, 0, 0], names=["A", "B"])
    >>> c = certify(pool)
    >>> (c.selected, c.lower, c.upper, c.exact, c.lp_value)
    ('B', 3, 3, True, 2.5)
    """
    tau = _check_tolerance(tolerance)
    check_limits(work_limit, time_limit)
    if not pool.fully_labelled:
        i = int(np.flatnonzero(pool.labels == UNREAD)[0])
        raise LabelError(
            f"certify needs every label; row {pool.row_ids[i]!r} (position {i}) has none "
            "(for a partial run: certlib.certify_partial, or certlib certificate --partial)")
    risks = pool.risks()
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=tau)
    T = th.tol_units
    if tau > 0:
        targets = [int(k) for k in np.flatnonzero(risks - risks.min() <= T)]
    else:
        targets = [int(np.argmin(risks))]  # earliest on ties, as Pool.winner
    if target is not None:
        k = _target_index(pool, target)
        if k not in targets:
            what = (f"within tolerance {float(tau)} of the best" if tau > 0
                    else "the full-pool winner")
            raise ParameterError(f"target {pool.names[k]!r} is not {what}; "
                                 f"possible targets: {[pool.names[t] for t in targets]}")
        targets = [k]
    problems = [covering_problem(pool, k, tau) for k in targets]
    encs = _enclose_each(problems, work_limit, time_limit)
    i = min(range(len(targets)), key=lambda t: (encs[t].upper, encs[t].lower, targets[t]))
    k, enc, D = targets[i], encs[i], problems[i][1]
    lower = min(e.lower for e in encs)
    exact = lower == enc.upper
    # HiGHS's claim for the whole minimisation: each target's minimum is proved or claimed
    claims = [e.lower if e.exact else e.solver_minimum for e in encs]
    known = [c for c in claims if c is not None]
    solver_minimum = None if exact or len(known) < len(claims) else min(known)
    return Certificate(
        selected=pool.names[k], lower=int(lower), upper=int(enc.upper), exact=exact,
        lp_value=enc.lp_value, witness=tuple(map(pool.row_ids.__getitem__, enc.witness.tolist())),
        selected_index=k, tolerance=tau, deficits=tuple(int(d) for d in D),
        dual_bound=enc.dual_bound, method=enc.method,
        candidates=tuple(pool.names[t] for t in targets), solver_minimum=solver_minimum,
        work=sum(e.work for e in encs), time_limited=any(e.time_limited for e in encs))


def certify_partial(pool: Pool, read_rows: npt.ArrayLike | None = None, *,
                    tolerance: float | Fraction = 0.0,
                    work_limit: int = DEFAULT_WORK_LIMIT,
                    time_limit: float = DEFAULT_TIME_LIMIT) -> PartialCertificate:
    """Bounds on the minimum certificate after a partial run (SPEC section 7).

    The result's ``upper``: if the read rows certify a candidate (the stopping test;
    with tau > 0 possibly several), the smallest verified certificate among the read
    rows of any of them -- a certificate under the true labels.  Its ``lower``: the
    exact LP/surrogate lower bound of the covering problem in which read rows have
    their realised gain and unread rows their potential gain (an unread row could
    contribute at most that under any completion); it is minimised over the
    candidates that can still win (tau = 0: not eliminated, or k alone when
    certified; tau > 0: every candidate).  So ``lower <= C(y)`` for every completion
    of the unread labels.

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far.
    read_rows : array_like of int, optional
        Row positions read so far (default: every labelled row); each must carry a
        label.
    tolerance : float or Fraction
        tau >= 0 on the objective's scale, as for `certify`.
    work_limit : int
        As for `certify`, spent on ``upper``.
    time_limit : float
        As for `certify`, spent on ``upper``.

    Returns
    -------
    PartialCertificate
        ``lower``, ``upper`` (None when the read rows certify nothing) and a witness
        among the read rows.

    Raises
    ------
    ParameterError
        A bad tolerance or limit, or a read row outside 0..n-1.
    LabelError
        A row listed as read that has no label.

    Examples
    --------
    >>> from certlib import Pool, certify_partial
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         labels=[1, 0, 0, None], names=["A", "B"])
    >>> p = certify_partial(pool)
    >>> (p.certified, p.selected, p.lower, p.upper, p.witness)
    (True, 'B', 2, 3, (0, 1, 2))
    """
    tau = _check_tolerance(tolerance)
    check_limits(work_limit, time_limit)
    if read_rows is None:
        read = np.flatnonzero(pool.labels != UNREAD)
    else:
        read = np.unique(np.asarray(read_rows, dtype=np.int64))
        if read.size and (read.min() < 0 or read.max() >= pool.n):
            raise ParameterError(f"read_rows must be row positions in 0..{pool.n - 1}")
        missing = read[pool.labels[read] == UNREAD]
        if missing.size:
            i = int(missing[0])
            raise LabelError(f"row {pool.row_ids[i]!r} (position {i}) is listed as read "
                             "but has no label")
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=tau)
    L0 = initial_lower(pool, "shared")
    L = batch_lower(pool, read)
    dec = decide(L, th)
    unread = np.ones(pool.n, dtype=bool)
    unread[read] = False
    if tau > 0:
        # within a tolerance any candidate within tau under the completion may be the
        # one certified most cheaply, whichever the read rows certify now
        targets = list(range(pool.K))
    elif dec.certified:
        targets = [dec.selected_index]
    else:
        out = set(dec.eliminated)
        targets = [k for k in range(pool.K) if k not in out]
    rows = np.arange(pool.n)
    placeholder = np.where(pool.labels == UNREAD, 0, pool.labels)
    lowers: list[int] = []
    for k in targets:
        D = deficits(th.need[:, k], L0[:, k])
        _, G = target_terms(pool, k, rows, placeholder, potential_mask=unread)
        if (G.sum(axis=1, dtype=np.int64) < D).any():
            continue  # k cannot be certified under any completion
        lowers.append(cover_enclosure(G, D, work_limit=0).lower)
    lower = min(lowers) if lowers else 0
    if not dec.certified:
        return PartialCertificate(int(lower), None, False, False, None, (), tau, int(read.size))
    # every candidate the read rows certify (one at tau = 0; possibly several within
    # tau): the smallest verified sub-certificate among them is the upper bound
    ks = [int(k) for k in np.flatnonzero(certified_mask(L, th))]
    encs = _enclose_each([(target_terms(pool, k, read, pool.labels[read])[1],
                           deficits(th.need[:, k], L0[:, k])) for k in ks], work_limit, time_limit)
    i = min(range(len(ks)), key=lambda t: (encs[t].upper, t))
    k, enc = ks[i], encs[i]
    lower = min(max(lower, 0), enc.upper)
    witness = tuple(pool.row_ids[int(read[i])] for i in enc.witness)
    return PartialCertificate(int(lower), int(enc.upper), int(lower) == int(enc.upper), True,
                              pool.names[k], witness, tau, int(read.size),
                              any(e.time_limited for e in encs))
