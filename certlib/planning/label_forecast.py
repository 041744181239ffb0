"""Label forecast: how many labels will the policy read before it certifies?

``forecast(pool, policy, tolerance, draws, seed)`` treats the labels already in the
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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import ParameterError

__all__ = ["Forecast", "QUANTILES", "forecast", "replay_draws"]

QUANTILES = (0.1, 0.5, 0.9)
_BLOCK_ELEMENTS = 1 << 22  # int64 entries of one (draws, rows, K, K) block (32 MiB)


@dataclass(frozen=True)
class Forecast:
    """A distribution of the labels the policy will read in total (a forecast)."""

    policy: str
    tolerance: Fraction
    draws: int
    seed: int
    n: int
    known: int  # labels already in the pool (read before the forecast starts)
    labels_read: tuple  # one total per draw, known labels included
    certified_now: bool  # the labels already known certify the choice
    winners: dict  # candidate -> number of draws it was certified in
    label_model: str  # the label model's source (see label_model.fit_label_sampler)
    label_model_note: str  # what the model is, in words; says so when it is a fallback

    @property
    def quantiles(self) -> dict:
        """{0.1, 0.5, 0.9} -> labels read (the lower empirical quantile, an integer)."""
        a = np.sort(np.asarray(self.labels_read))
        return {q: int(a[min(a.size - 1, int(np.ceil(q * a.size)) - 1)]) if q > 0 else int(a[0])
                for q in QUANTILES}

    def p_certified(self, budget: int) -> float:
        """Forecast probability that the policy certifies within ``budget`` labels."""
        a = np.asarray(self.labels_read)
        return float((a <= budget).mean())

    def to_dict(self) -> dict:
        return {
            "policy": self.policy, "tolerance": float(self.tolerance), "draws": self.draws,
            "seed": self.seed, "n": self.n, "known": self.known,
            "certified_now": self.certified_now,
            "quantiles": {str(q): v for q, v in self.quantiles.items()},
            "labels_read": list(self.labels_read), "winners": dict(self.winners),
            "label_model": self.label_model, "label_model_note": self.label_model_note,
        }


def _check_draws(draws) -> int:
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ParameterError(f"draws must be a whole number >= 1; got {draws!r}")
    return int(draws)


def forecast(pool, policy="adaptive-pair-sum", tolerance=0.0, draws: int = 200,
             seed: int = 0, *, progress: Callable | None = None, sampler=None) -> Forecast:
    """Forecast the labels ``policy`` reads before the exact test certifies (module
    docstring).  ``progress``: optional callable(fraction done); ``sampler``: a label
    sampler to use instead of `fit_label_sampler(pool)` (tests, experiments)."""
    from ..policies import get_policy
    from ..policies.label_model import fit_label_sampler

    draws = _check_draws(draws)
    pol = get_policy(policy)
    known = int(pool.n_labelled)
    if sampler is None:
        sampler = fit_label_sampler(pool)
    rng = np.random.default_rng(seed)
    Y = sampler.sample(rng, draws)  # (draws, n) codes; known rows hold the known labels
    counts, winners = replay_draws(pool, pol, tolerance, Y, seed=seed, progress=progress)
    from ..core.bounds import thresholds

    tol = thresholds(pool.K, pool.scale, "shared", tolerance).tolerance
    win = {name: int((winners == k).sum()) for k, name in enumerate(pool.names)}
    return Forecast(
        policy=pol.name, tolerance=tol, draws=draws, seed=int(seed), n=pool.n, known=known,
        labels_read=tuple(int(c) for c in counts),
        certified_now=bool((counts == known).all()),
        winners={k: v for k, v in win.items() if v},
        label_model=sampler.source, label_model_note=sampler.note,
    )


def replay_draws(pool, policy, tolerance, Y: np.ndarray, seed: int = 0,
                 progress: Callable | None = None):
    """Labels read per draw (and the certified candidate per draw) when the policy starts
    from the pool's known labels and the unread labels are ``Y[d]`` (codes, (D, n); the
    known rows of Y are ignored).  Exact: equals stepping a `Session` (module docstring)."""
    from ..core.bounds import thresholds
    from ..core.pair_terms import initial_lower
    from ..policies import PolicyContext, get_policy
    from ..core.pool import UNREAD

    pol = get_policy(policy)
    Y = np.asarray(Y, dtype=np.int64)
    if Y.ndim != 2 or Y.shape[1] != pool.n:
        raise ParameterError(f"Y must be a (draws, n = {pool.n}) array of label codes; got "
                             f"shape {Y.shape}")
    known = pool.labels != UNREAD
    Y = np.where(known[None, :], pool.labels[None, :], Y)
    if ((Y < 0) | (Y >= pool.n_classes)).any():
        raise ParameterError("Y must hold a class code for every unread row")
    th = thresholds(pool.K, pool.scale, "shared", tolerance)
    L0 = initial_lower(pool, "shared")
    rows = np.flatnonzero(known)
    if rows.size:
        from ..core.bounds import batch_lower
        L0 = batch_lower(pool, rows, pool.labels[rows], "shared")
    ctx = PolicyContext(pool, "shared", seed, th.tolerance, ())
    static = pol.static_order(ctx)
    has_adaptive = static is None and pol.adaptive_order(
        ctx, tuple(range(pool.K))) is not None
    if static is None and not has_adaptive:
        return _step_draws(pool, pol, th.tolerance, Y, seed, progress)
    return _replay_draws(pool, pol, ctx, th, L0, known, Y, static, progress)


def _certified_any(L, need):
    # L (..., K, K): candidate k certified when L[j, k] >= need[j, k] for every j
    ok = (L >= need).all(axis=-2)
    return ok.any(axis=-1), np.argmax(ok, axis=-1)


def _eliminated(L, elim):
    # candidate k out when L[k, j] >= elim[k, j] for some j
    return (L >= elim).any(axis=-1)


def _selected(L, th):
    from ..core.bounds import decide

    return decide(L, th).selected_index


def _replay_draws(pool, pol, ctx, th, L0, known, Y, static, progress):
    from ..core.pair_terms import gain_terms

    D, n, K, C = Y.shape[0], pool.n, pool.K, pool.n_classes
    need, elim = th.need, th.elim
    L = np.broadcast_to(L0, (D, K, K)).copy()
    counts = np.full(D, int(known.sum()), dtype=np.int64)
    read = np.broadcast_to(known, (D, n)).copy()
    winners = np.full(D, -1, dtype=np.int64)
    done = np.zeros(D, dtype=bool)
    cert0, _ = _certified_any(L0, need)
    if cert0:
        winners[:] = _selected(L0, th)
        return counts, winners
    out0 = _eliminated(L0, elim)
    active_of = [tuple(int(k) for k in np.flatnonzero(~out0))] * D
    orders: dict = {}

    def order_for(active):
        if static is not None:
            return static
        if active not in orders:
            orders[active] = np.asarray(pol.adaptive_order(ctx, active))
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
            G = np.stack([gain_terms(pool, rows, np.full(rows.size, c), "shared")
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
                if stop_c[s]:
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
    return counts, winners


def _step_draws(pool, pol, tolerance, Y, seed, progress):
    """One `Session` per draw (policies whose order depends on the labels)."""
    from ..labelling.session import Session

    D = Y.shape[0]
    counts = np.zeros(D, dtype=np.int64)
    winners = np.zeros(D, dtype=np.int64)
    base = Session.from_pool_labels(pool, policy=pol, tolerance=tolerance, seed=seed)
    for d in range(D):
        s = base
        while not s.done:
            r = s.next_row()
            s = s.observe(r, pool.classes[int(Y[d, r])])
        counts[d] = s.t
        winners[d] = s.decision.selected_index
        if progress is not None:
            progress((d + 1) / D)
    return counts, winners
