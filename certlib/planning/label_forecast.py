"""Label forecast: how many labels will the policy read before it certifies?

``forecast(pool, policy=..., tolerance=..., draws=..., seed=...)`` treats the labels already in the
pool as read (in the state `Session.from_pool_labels` gives), draws the unread labels
``draws`` times from a label model (`certlib.policies.label_model.fit_label_sampler`,
documented there) and replays the policy with the exact stopping test (shared rule)
on each draw.  The result is a distribution of the total labels read (known labels
included): a **forecast, not a guarantee**; the guarantees are the prelabel bound
and the stopping test itself.

**Exactness of the replays.**  Given the sampled labels, each draw's count is the
count `certlib.Session` (and so `certlib.replay`) would give on the pool holding
those labels: for policies whose reading order is known in advance (static orders,
random, VMA, and the adaptive orders that change only at eliminations) the draws
are replayed together in blocks along the order (`_replay_draws`): the bounds of
every draw are ``L + cumsum(gains)`` over the rows of the block that the draw has
not read, the stopping test and the elimination test are the library's own
(`certified_mask` / `eliminated_mask` semantics, in integers), and a draw whose set
of remaining candidates changes restarts on that set's order, exactly as
`OrderPolicy.update` does.  Draws that share a candidate set share the order, so an
adaptive policy costs one order per distinct set.  Other policies
(``expected-coverage``, ``model-selector``) step one `Session` per draw: exact, but
about as slow as one replay per draw.  The tests compare both paths with `Session`
stepping on the same sampled labels.

`excess_at_budget` runs the same replays stopped at a budget (a draw also stops once it
has read that many labels, as a `Session` with that budget) and gives each draw's
worst-case excess and answer there: what `certlib.planning.budget_answer` forecasts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.weights import exact_fraction
from ..errors import ParameterError

if TYPE_CHECKING:
    from ..core.bounds import Thresholds
    from ..core.pool import Pool
    from ..policies import Policy, PolicyContext
    from ..policies.label_model import LabelSampler

Progress = Callable[[float], object]

__all__ = ["Forecast", "QUANTILES", "excess_at_budget", "forecast", "replay_draws"]

QUANTILES: tuple[float, ...] = (0.1, 0.5, 0.9)
_BLOCK_ELEMENTS: int = 1 << 22  # int64 entries of one (draws, rows, K, K) block (32 MiB)


@dataclass(frozen=True)
class Forecast:
    """A distribution of the labels the policy will read in total (a forecast).

    Attributes
    ----------
    policy : str
        The policy replayed on each draw.
    tolerance : Fraction
        The objective tolerance tau of the stopping test.
    draws : int
        Label vectors drawn.
    seed : int
        The seed of the draws.
    n : int
        Rows in the pool.
    known : int
        Labels already in the pool (read before the forecast starts).
    labels_read : tuple of int
        One total per draw, known labels included.
    certified_now : bool
        Whether the labels already known certify the choice.
    winners : dict of str to int
        Candidate name -> number of draws it was certified in.
    label_model : str
        The label model's source (see `certlib.policies.label_model.fit_label_sampler`).
    label_model_note : str
        What the model is, in words; says so when it is a fallback.
    """

    policy: str
    tolerance: Fraction
    draws: int
    seed: int
    n: int
    known: int
    labels_read: tuple[int, ...]
    certified_now: bool
    winners: dict[str, int]
    label_model: str
    label_model_note: str

    @property
    def quantiles(self) -> dict[float, int]:
        """{0.1, 0.5, 0.9} -> labels read (the lower empirical quantile, an integer)."""
        a = np.sort(np.asarray(self.labels_read))
        return {q: int(a[min(a.size - 1, int(np.ceil(q * a.size)) - 1)]) if q > 0 else int(a[0])
                for q in QUANTILES}

    @property
    def interval(self) -> tuple[int, int]:
        """The calibrated 80% interval of the labels read in total, ``(low, high)``.

        The raw 10-90% quantiles widened or narrowed by a margin fitted on panel pools
        (conformalized quantile regression,
        `certlib.planning.forecast_calibration.calibrated_interval`); integers with
        ``known <= low <= quantiles[0.5] <= high <= n``.  Calibrated for adaptive
        pair-sum at tau = 0 on panel pools; elsewhere a corrected guess.

        Examples
        --------
        >>> import certlib
        >>> pool = certlib.load_pool("sample_data/demo_unlabelled.csv")
        >>> f = certlib.forecast(pool, draws=20)
        >>> low, high = f.interval
        >>> 0 <= low <= f.quantiles[0.5] <= high <= pool.n
        True
        """
        from .forecast_calibration import calibrated_interval

        return calibrated_interval(self.labels_read, self.known, self.n)

    def p_certified(self, budget: int) -> float:
        """Forecast probability that the policy certifies within ``budget`` labels.

        Parameters
        ----------
        budget : int
            A total label count (known labels included).

        Returns
        -------
        float
            The share of draws whose replay read at most ``budget`` labels.
        """
        a = np.asarray(self.labels_read)
        return float((a <= budget).mean())

    def to_dict(self) -> dict[str, Any]:
        """The forecast as a JSON-ready dict (the tolerance as a float)."""
        return {
            "policy": self.policy, "tolerance": float(self.tolerance), "draws": self.draws,
            "seed": self.seed, "n": self.n, "known": self.known,
            "certified_now": self.certified_now,
            "quantiles": {str(q): v for q, v in self.quantiles.items()},
            "interval": list(self.interval),
            "labels_read": list(self.labels_read), "winners": dict(self.winners),
            "label_model": self.label_model, "label_model_note": self.label_model_note,
        }


def _check_draws(draws: object) -> int:
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ParameterError(f"draws must be a whole number >= 1; got {draws!r}")
    return int(draws)  # an int or a numpy integer, checked above


def forecast(pool: Pool, *, policy: str | Policy = "adaptive-pair-sum",
             tolerance: float | Fraction = 0.0, draws: int = 200, seed: int = 0,
             progress: Progress | None = None,
             sampler: LabelSampler | None = None) -> Forecast:
    """Forecast the labels ``policy`` reads before the exact test certifies.

    The labels already in the pool count as read; the unread ones are drawn ``draws``
    times from a label model and the policy is replayed exactly on each draw (module
    docstring).  A forecast, not a guarantee (paper 000 section 6).

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far (none, some or all).
    policy : str or Policy, default "adaptive-pair-sum"
        The policy to forecast.
    tolerance : float or Fraction, default 0.0
        The objective tolerance tau >= 0 of the stopping test (shared rule).
    draws : int, default 200
        Label vectors to draw, >= 1.
    seed : int, default 0
        Seed of the draws (numpy's default_rng) and of a random policy.
    progress : callable, optional
        Called with the fraction done in [0, 1].
    sampler : LabelSampler, optional
        A label sampler to use instead of `fit_label_sampler(pool)` (tests, experiments).

    Returns
    -------
    Forecast
        The labels read per draw, their quantiles and the winners.

    Raises
    ------
    ParameterError
        On a bad policy, tolerance or number of draws.

    Examples
    --------
    Two of four labels known, the other two drawn five times:

    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, None, None], names=["A", "B"],
    ...                                 classes=[0, 1])
    >>> f = certlib.forecast(pool, policy="static-range", draws=5)
    >>> f.known, f.labels_read, f.p_certified(3)
    (2, (3, 4, 3, 4, 3), 0.6)
    """
    from ..policies import get_policy
    from ..policies.label_model import fit_label_sampler

    draws = _check_draws(draws)
    pol = get_policy(policy)
    tol = exact_fraction(tolerance)
    known = int(pool.n_labelled)
    if sampler is None:
        sampler = fit_label_sampler(pool)
    rng = np.random.default_rng(seed)
    Y = sampler.sample(rng, draws)  # (draws, n) codes; known rows hold the known labels
    counts, winners = replay_draws(pool, pol, Y=Y, tolerance=tol, seed=seed, progress=progress)
    win = {name: int((winners == k).sum()) for k, name in enumerate(pool.names)}
    return Forecast(
        policy=pol.name, tolerance=tol, draws=draws, seed=int(seed), n=pool.n, known=known,
        labels_read=tuple(int(c) for c in counts),
        certified_now=bool((counts == known).all()),
        winners={k: v for k, v in win.items() if v},
        label_model=sampler.source, label_model_note=sampler.note,
    )


def replay_draws(pool: Pool, policy: str | Policy, *, Y: ArrayLike,
                 tolerance: float | Fraction, seed: int = 0,
                 progress: Progress | None = None
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Labels read per draw, and the certified candidate per draw, on given label draws.

    The policy starts from the pool's known labels and the unread labels of draw d are
    ``Y[d]``.  Exact: equals stepping a `Session` on each draw (module docstring).

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far.
    policy : str or Policy
        The policy to replay.
    Y : array_like of int, shape (draws, n)
        Class codes of every row per draw; the known rows of Y are ignored.
    tolerance : float or Fraction
        The objective tolerance tau >= 0 of the stopping test (shared rule).
    seed : int, default 0
        Seed of a random policy.
    progress : callable, optional
        Called with the fraction of draws done in [0, 1].

    Returns
    -------
    counts : ndarray of int64, shape (draws,)
        Total labels read per draw (known labels included).
    winners : ndarray of int64, shape (draws,)
        The index of the candidate selected at stop per draw.

    Raises
    ------
    ParameterError
        On a bad policy or tolerance, or a ``Y`` of the wrong shape or with a code
        outside the class set.

    Examples
    --------
    >>> import numpy as np, certlib
    >>> from certlib.planning.label_forecast import replay_draws
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"],
    ...                                 classes=[0, 1])
    >>> counts, winners = replay_draws(pool, "static-range", Y=np.zeros((2, 4), dtype=int),
    ...                                tolerance=0)
    >>> counts.tolist(), winners.tolist()
    ([3, 3], [0, 0])
    """
    from ..policies import get_policy

    pol = get_policy(policy)
    run = _setup(pool, pol, Y, tolerance, seed)
    if run is None:
        return _step_draws(pool, pol, exact_fraction(tolerance), _codes(pool, Y), seed,
                           progress)[:2]
    return _replay_draws(pool, pol, *run, progress)[:2]


def excess_at_budget(pool: Pool, policy: str | Policy, *, Y: ArrayLike, budget: int,
                     tolerance: float | Fraction = 0, seed: int = 0,
                     progress: Progress | None = None
                     ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Worst-case excess and answer per draw after ``budget`` labels (known ones included).

    The run of `replay_draws` stopped at ``budget`` labels in total: the policy starts
    from the pool's known labels, reads the unread labels ``Y[d]`` of draw d and stops
    when the test certifies or ``budget`` labels are read (the known labels count, so a
    budget below them reads nothing).  Exact: equals stepping a `Session` started with
    ``budget`` on each draw (module docstring; the same block replay, capped, for
    policies whose order is known in advance).

    Parameters
    ----------
    pool : Pool
        The pool, with the labels read so far.
    policy : str or Policy
        The policy to replay.
    Y : array_like of int, shape (draws, n)
        Class codes of every row per draw; the known rows of Y are ignored.
    budget : int
        Most labels in total, >= 0.
    tolerance : float or Fraction, default 0
        The objective tolerance tau >= 0 of the stopping test (shared rule); 0: the run
        aiming at the exact choice.
    seed : int, default 0
        Seed of a random policy.
    progress : callable, optional
        Called with the fraction of draws done in [0, 1].

    Returns
    -------
    excess : ndarray of int64, shape (draws,)
        The worst-case excess of the answer when the run stops (`Decision.excess`) times
        ``pool.scale``: draw d's answer is within ``excess[d] / pool.scale`` of the best
        objective under every completion of the labels it has not read.
    selected : ndarray of int64, shape (draws,)
        The candidate index of that answer (`Decision.selected_index`).
    certified : ndarray of bool, shape (draws,)
        Whether the test certified it within the budget.

    Raises
    ------
    ParameterError
        On a bad policy, tolerance or budget, or a bad ``Y`` (`replay_draws`).

    Examples
    --------
    >>> import numpy as np, certlib
    >>> from certlib.planning.label_forecast import excess_at_budget
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"],
    ...                                 classes=[0, 1])
    >>> Y = np.zeros((2, 4), dtype=int)
    >>> exc, sel, cert = excess_at_budget(pool, "static-range", Y=Y, budget=1)
    >>> exc.tolist(), pool.scale, sel.tolist(), cert.tolist()   # B within 2/32 of the best
    ([2, 2], 32, [1, 1], [False, False])
    >>> excess_at_budget(pool, "static-range", Y=Y, budget=3)[0].tolist()
    [0, 0]
    """
    from ..core.bounds import excess_units, thresholds
    from ..policies import get_policy

    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise ParameterError(f"budget must be a whole number of labels >= 0; got {budget!r}")
    pol = get_policy(policy)
    run = _setup(pool, pol, Y, tolerance, seed)
    if run is None:
        th = thresholds(pool.K, pool.scale, rule="shared", tolerance=tolerance)
        _, winners, L = _step_draws(pool, pol, th.tolerance, _codes(pool, Y), seed, progress,
                                    cap=int(budget))
    else:
        th = run[1]
        _, winners, L = _replay_draws(pool, pol, *run, progress, cap=int(budget))
    exc = excess_units(np.moveaxis(L, 0, 2), th)  # (K, draws)
    D = L.shape[0]
    cert, _ = _certified_any(L, th.need)
    return exc[winners, np.arange(D)] // th.unit, winners, np.asarray(cert, dtype=bool)


def _codes(pool: Pool, Y: ArrayLike) -> NDArray[np.int64]:
    """``Y`` checked, its known rows replaced by the pool's known labels."""
    from ..core.pool import UNREAD

    Y = np.asarray(Y, dtype=np.int64)
    if Y.ndim != 2 or Y.shape[1] != pool.n:
        raise ParameterError(f"Y must be a (draws, n = {pool.n}) array of label codes; got "
                             f"shape {Y.shape}")
    known = pool.labels != UNREAD
    Y = np.where(known[None, :], pool.labels[None, :], Y)
    if ((Y < 0) | (Y >= pool.n_classes)).any():
        raise ParameterError("Y must hold a class code for every unread row")
    return Y


def _setup(pool: Pool, pol: Policy, Y: ArrayLike, tolerance: float | Fraction, seed: int
           ) -> tuple[PolicyContext, Thresholds, NDArray[np.int64], NDArray[np.bool_],
                      NDArray[np.int64], NDArray[np.int64] | None] | None:
    """The block replay's inputs (context, thresholds, bounds of the known labels, known
    mask, checked ``Y``, static order), or None for a policy without a known order."""
    from ..core.bounds import thresholds
    from ..core.pair_terms import initial_lower
    from ..core.pool import UNREAD
    from ..policies import PolicyContext

    Y = _codes(pool, Y)
    known = pool.labels != UNREAD
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=tolerance)
    L0 = initial_lower(pool, "shared")
    rows = np.flatnonzero(known)
    if rows.size:
        from ..core.bounds import batch_lower
        L0 = batch_lower(pool, rows, labels=pool.labels[rows], rule="shared")
    ctx = PolicyContext(pool, "shared", seed, th.tolerance, ())
    static = pol.static_order(ctx)
    has_adaptive = static is None and pol.adaptive_order(
        ctx, tuple(range(pool.K))) is not None
    if static is None and not has_adaptive:
        return None
    return ctx, th, L0, known, Y, static


def _certified_any(L: NDArray[np.int64], need: NDArray[np.int64]
                   ) -> tuple[NDArray[np.bool_], NDArray[np.intp]]:
    # L (..., K, K): candidate k certified when L[j, k] >= need[j, k] for every j
    # (0-d arrays for one K x K matrix, which test as bools)
    ok = (L >= need).all(axis=-2)
    return np.asarray(ok.any(axis=-1)), np.asarray(np.argmax(ok, axis=-1))


def _eliminated(L: NDArray[np.int64], elim: NDArray[np.int64]) -> NDArray[np.bool_]:
    # candidate k out when L[k, j] >= elim[k, j] for some j
    return np.asarray((L >= elim).any(axis=-1))


def _selected(L: NDArray[np.int64], th: Thresholds) -> int:
    from ..core.bounds import decide

    return decide(L, th).selected_index


def _replay_draws(pool: Pool, pol: Policy, ctx: PolicyContext, th: Thresholds,
                  L0: NDArray[np.int64], known: NDArray[np.bool_], Y: NDArray[np.int64],
                  static: NDArray[np.int64] | None, progress: Progress | None, *,
                  cap: int | None = None
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Labels read, selected candidate and final bounds per draw; with ``cap`` a draw
    also stops once it has read ``cap`` labels in total (a budget, as `Session`)."""
    from ..core.pair_terms import gain_terms

    D, n, K, C = Y.shape[0], pool.n, pool.K, pool.n_classes
    need, elim = th.need, th.elim
    L = np.broadcast_to(L0, (D, K, K)).copy()
    counts = np.full(D, int(known.sum()), dtype=np.int64)
    read = np.broadcast_to(known, (D, n)).copy()
    winners = np.full(D, -1, dtype=np.int64)
    done = np.zeros(D, dtype=bool)
    cert0, _ = _certified_any(L0, need)
    if cert0 or (cap is not None and counts[0] >= cap):  # nothing left to read
        winners[:] = _selected(L0, th)
        return counts, winners, L
    out0 = _eliminated(L0, elim)
    active_of = [tuple(int(k) for k in np.flatnonzero(~out0))] * D
    orders: dict[tuple[int, ...], NDArray[np.int64]] = {}

    def order_for(active: tuple[int, ...]) -> NDArray[np.int64]:
        if static is not None:
            return static
        if active not in orders:
            orders[active] = np.asarray(pol.adaptive_order(ctx, active), dtype=np.int64)
        return orders[active]

    # gains per class for every row, computed lazily per block: (m, C, K, K)
    m_max = max(16, _BLOCK_ELEMENTS // max(1, D * K * K))
    finished = 0
    while not done.all():
        d0 = int(np.flatnonzero(~done)[0])
        key = active_of[d0]
        members = np.array([d for d in range(D) if not done[d] and active_of[d] == key])
        order = order_for(key)
        act_mask = np.zeros(K, dtype=bool)
        act_mask[list(key)] = True
        running = members
        # first position of the order that some member has not read
        unread_any = ~read[np.ix_(running, order)].all(axis=0)
        pos = int(np.argmax(unread_any)) if unread_any.any() else order.size
        m = 64
        while running.size and pos < order.size:
            m = min(m, m_max, order.size - pos)
            rows = order[pos:pos + m]
            G = np.stack([gain_terms(pool, rows, np.full(rows.size, c), rule="shared")
                          for c in range(C)])  # (C, K, K, m)
            G = np.moveaxis(G, 3, 0)  # (m, C, K, K)
            yb = Y[np.ix_(running, rows)]  # (S, m)
            fresh = ~read[np.ix_(running, rows)]  # (S, m)
            g = G[np.arange(rows.size)[None, :], yb]  # (S, m, K, K)
            g *= fresh[:, :, None, None]
            cum = np.cumsum(g, axis=1)
            cum += L[running][:, None, :, :]
            cert, _ = _certified_any(cum, need)  # (S, m)
            event = cert.copy()
            if static is None:
                newly = (_eliminated(cum, elim) & act_mask).any(axis=-1)
                event |= newly
            if cap is not None:  # the read that spends the budget ends the run
                left = cap - counts[running]
                event |= fresh & (np.cumsum(fresh, axis=1) >= left[:, None])
            hit = event.any(axis=1)
            first = np.where(hit, np.argmax(event, axis=1), rows.size - 1)
            S = running.size
            Lnew = cum[np.arange(S), first]
            L[running] = Lnew
            upto = np.arange(rows.size)[None, :] <= first[:, None]
            took = fresh & upto
            counts[running] += took.sum(axis=1)
            sub = read[running]
            r_idx = np.broadcast_to(rows, took.shape)
            sub[np.nonzero(took)[0], r_idx[took]] = True
            read[running] = sub
            stop_c = hit & cert[np.arange(S), first]
            for s in np.flatnonzero(hit):
                d = int(running[s])
                if stop_c[s] or (cap is not None and counts[d] >= cap):
                    done[d] = True
                    winners[d] = _selected(Lnew[s], th)
                    finished += 1
                else:
                    out = _eliminated(Lnew[s], elim)
                    active_of[d] = tuple(int(k) for k in np.flatnonzero(~out))
            running = running[~hit]
            pos += rows.size
            m *= 2
            if progress is not None:
                progress(finished / D)
        # members still running past the end of the order read every row (only for
        # rules that never certify; the shared rule always certifies on a full pool)
        for d in running:
            done[d] = True
            winners[d] = _selected(L[d], th)
            finished += 1
    if progress is not None:
        progress(1.0)
    return counts, winners, L


def _step_draws(pool: Pool, pol: Policy, tolerance: Fraction, Y: NDArray[np.int64],
                seed: int, progress: Progress | None, *, cap: int | None = None
                ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """One `Session` per draw (policies whose order depends on the labels), with budget
    ``cap``: labels read, selected candidate and final bounds per draw."""
    from ..labelling.session import Session

    D = Y.shape[0]
    counts = np.zeros(D, dtype=np.int64)
    winners = np.zeros(D, dtype=np.int64)
    L = np.zeros((D, pool.K, pool.K), dtype=np.int64)
    base = Session.from_pool_labels(pool, policy=pol, tolerance=tolerance, seed=seed,
                                    budget=cap)
    for d in range(D):
        s = base
        while not s.done:
            r = s.next_row()
            assert r is not None  # a session that is not done has a next row
            s = s.observe(r, pool.classes[int(Y[d, r])])
        counts[d] = s.t
        winners[d] = s.decision.selected_index
        L[d] = s.L
        if progress is not None:
            progress((d + 1) / D)
    return counts, winners, L
