"""Betting confidence sequence (Waudby-Smith & Ramdas 2024, JRSSB, Thm 3, "Hedged-CS").

For a candidate mean m in [0, 1] the two capital processes

    K_t^+(m) = prod_{i<=t} (1 + l_i^+(m) (x_i - m)),   l_i^+(m) = min(lam_i, c / m),
    K_t^-(m) = prod_{i<=t} (1 - l_i^-(m) (x_i - m)),   l_i^-(m) = min(lam_i, c / (1 - m)),

are nonnegative martingales at the true mean, for predictable bets lam_i^+, lam_i^-
("Bets" below; by default lam_i^+ = lam_i^- = lam_i, the PrPl plug-in of
`certlib.audit.cs`, WSR section 3.3).  So is the hedged mixture
K_t(m) = theta K_t^+(m) + (1 - theta) K_t^-(m) (WSR section 4.2 / Thm 3, the
convex combination; its max variant is dominated by it), and Ville's inequality
makes C_t = {m : K_t(m) < 1/alpha} a (1 - alpha) confidence sequence (with the
running intersection: m is out once K_s(m) >= 1/alpha at any s <= t).

Bets (``bets``).  "prpl": lam_t = sqrt(2 log(2/alpha) / (sigma^2_{t-1} t log(1+t)))
on both sides.  "boundary": aGRAPA (WSR section 5.3, the approximate growth-optimal
bet) evaluated at a reference point instead of at each m,

    lam_t^- = max(0, d / (sigma^2_{t-1} + d^2)),  d = ref_upper - mu_{t-1},
    lam_t^+ = max(0, d / (sigma^2_{t-1} + d^2)),  d = mu_{t-1} - ref_lower,

with mu_{t-1} = (1/2 + x_1 + ... + x_{t-1}) / t, sigma^2_{t-1} the PrPl variance
estimate, and [ref_lower, ref_upper] the interval reported at the last checkpoint
([0, 1] before the first): the bets aim at excluding the points at the current
ends.  With ``target = (a, b)`` the reference end is the target instead while it
lies strictly between mu_{t-1} and the reference end (b for K^-, a for K^+).
"mixed": the mean of the PrPl and the boundary bets (its log-capital is at least
the mean of theirs, log being concave).  Why every choice is valid: each bet is
decided from x_1..x_{t-1} alone (the reference ends change only at checkpoints,
from the interval reported there, and ``target`` is fixed in advance), it is
nonnegative and finite (sigma^2_{t-1} >= 1/(4(t+1)) > 0), and it does not depend
on m; the caps c/m and c/(1 - m) keep every factor >= 1 - c > 0.  So at the true
mean K^+ and K^- are nonnegative (super)martingales, the hedged K_t too, Ville's
inequality gives P(exists t: K_t >= 1/alpha) <= alpha (WSR Thm 3), and the
monotonicity in m below still holds factor by factor (the bet is the same for
every m, only the caps vary, and min(lam, c/m)(x - m) is non-increasing in m).

Computation, and why it is valid off the grid.  Each factor of K^+ is
non-increasing in m and each factor of K^- non-decreasing (both stay >= 1 - c > 0),
so on a cell [a, b] every m has K_t(m) >= theta K_t^+(b) + (1 - theta) K_t^-(a).
A cell whose bound reaches 1/alpha is excluded whole; the reported interval is the
hull of the cells never so certified.  It therefore contains the exact set
whatever the grid: the grid only decides how tight the ends are.  The grid is
small and adaptive: a bracket of `_P` cells of width s at each end,
s = min(resolution, width / 64), one wide cell between them, and (without the
running intersection) a coarse uniform grid behind.  Capitals of the grid points
are advanced in blocks of time, vectorised (cumulative sums of log factors).  At
checkpoints (a schedule fixed in t, so the batch and the streaming forms agree
bit for bit) points outside the running interval are dropped and, when an end
nears the edge of its bracket, a new bracket is placed there, its points' capitals
recomputed over the whole past (O(t) each; it happens a logarithmic-in-width
number of times).  New cells start "not excluded": past exclusions they would
have had are forgotten, which only widens the interval (the running intersection
of the reported ends is kept, as PrPl-EB's).

Floats throughout (STYLE rule 4).  A margin of 1e-6 on log(1/alpha) absorbs the
rounding of sums of up to ~1e8 log factors, so rounding cannot exclude a point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidValueError, ParameterError
from .cs import ConfidenceSequence, _check_unit, check_alpha, check_truncation

__all__ = ["betting_cs", "BettingState", "BETS"]

_F = npt.NDArray[np.float64]

_P = 16                # cells in an end bracket
_LOOKAHEAD = 4         # re-bracket when fewer fine cells than this remain at an end
_REL = 64              # cells across the interval when it is narrow (relative regime)
_COARSE = 33           # coarse grid kept without the running intersection
_MARGIN = 1e-6         # log-capital margin against rounding (module docstring)
_ELEMENTS = 1 << 18    # size of the (time x grid) temporaries
_LOG2 = math.log(2.0)

#: The bets `betting_cs` can place (module docstring, "Bets").
BETS = ("prpl", "boundary", "mixed")


def _check_open(value: object, name: str) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]  # any value; errors become ParameterError
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be a number in (0, 1), got {value!r}") from None
    if not (0.0 < v < 1.0):
        raise ParameterError(f"`{name}` must lie strictly between 0 and 1, got {value!r}")
    return v


def _block(t: int) -> int:
    """Checkpoint spacing at time t: 1 up to t = 63, then t/32 .. t/64, at most 4096.

    t is a checkpoint iff t % _block(t) == 0; from a checkpoint t the next one is
    t + _block(t).  Fixed in t alone, so every way of feeding the data meets them.
    """
    return 1 << max(0, min(12, t.bit_length() - 6))


@dataclass(frozen=True)
class _Params:
    alpha: float
    c: float
    theta: float
    resolution: float
    ri: bool
    bets: str = "prpl"
    target: tuple[float, float] | None = None
    log_term: float = field(init=False)
    thr: float = field(init=False)
    log_th: float = field(init=False)
    log_1mth: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "log_term", math.log(2.0 / self.alpha))
        object.__setattr__(self, "thr", -math.log(self.alpha) + _MARGIN)
        object.__setattr__(self, "log_th", math.log(self.theta))
        object.__setattr__(self, "log_1mth", math.log1p(-self.theta))

    def step(self, width: float) -> float:
        """Bracket cell width for an interval of this width."""
        return max(self.resolution / _REL, min(self.resolution, width / _REL))


@dataclass(frozen=True)
class _Sums:
    """The plug-in sums after t points (as `PrplEBState`) and the reference ends.

    ``ref_lower``, ``ref_upper`` are the interval reported at the last checkpoint
    ([0, 1] before the first): the points the boundary bets aim at.
    """

    sum_x: float = 0.0
    sum_dev: float = 0.0
    s2: float = 0.25
    ref_lower: float = 0.0
    ref_upper: float = 1.0


def _bets(x: _F, t0: int, st: _Sums, p: _Params) -> tuple[_F, _F, _Sums]:
    """Bets (lam^+, lam^-) for times t0+1.., from carried sums (module docstring).

    PrPl: lam_t = sqrt(2 log(2/alpha) / (sigma^2_{t-1} t log(1+t))), as `cs._raw`
    (SPEC section 11), on both sides.  Boundary: aGRAPA (WSR section 5.3) at the
    reference ends, lam_t^+ = max(0, d / (sigma^2_{t-1} + d^2)) with
    d = mu_{t-1} - ref_lower, and lam_t^- likewise with d = ref_upper - mu_{t-1}.
    Mixed: the mean of the two.  Sums are carried as the first term of a
    sequential cumulative sum, and the reference ends are fixed between
    checkpoints, so any split of the data into blocks gives the same bits.
    """
    t = np.arange(t0 + 1, t0 + x.size + 1, dtype=float)
    csum = np.cumsum(np.concatenate(([st.sum_x], x)))[1:]
    mu = (0.5 + csum) / (t + 1.0)
    cdev = np.cumsum(np.concatenate(([st.sum_dev], (x - mu) ** 2)))[1:]
    s2_all = (0.25 + cdev) / (t + 1.0)
    s2_prev = np.concatenate(([st.s2], s2_all[:-1]))
    new = replace(st, sum_x=float(csum[-1]), sum_dev=float(cdev[-1]), s2=float(s2_all[-1]))
    lam = np.sqrt(2.0 * p.log_term / (s2_prev * t * np.log1p(t)))
    if p.bets == "prpl":
        return lam, lam, new
    # mu_{t-1} = (1/2 + x_1 + ... + x_{t-1}) / t, the plug-in mean before x_t
    mu_prev = (0.5 + np.concatenate(([st.sum_x], csum[:-1]))) / t
    lo: _F | float = st.ref_lower
    hi: _F | float = st.ref_upper
    if p.target is not None:  # aim at a target while it lies between mu_{t-1} and the end
        tl, tu = p.target
        lo = np.where((st.ref_lower < tl) & (tl < mu_prev), tl, st.ref_lower)
        hi = np.where((mu_prev < tu) & (tu < st.ref_upper), tu, st.ref_upper)
    dp = mu_prev - lo
    dm = hi - mu_prev
    bp = np.maximum(dp / (s2_prev + dp * dp), 0.0)
    bm = np.maximum(dm / (s2_prev + dm * dm), 0.0)
    if p.bets == "boundary":
        return bp, bm, new
    return 0.5 * (lam + bp), 0.5 * (lam + bm), new


def _caps(pts: _F, c: float) -> tuple[_F, _F]:
    with np.errstate(divide="ignore"):
        return c / pts, c / (1.0 - pts)


def _capital(x: _F, lp: _F, lm: _F, pts: _F, c: float) -> tuple[_F, _F]:
    """log K_t^+ and log K_t^- of new points over the whole past (x, bets lp, lm)."""
    capp, capm = _caps(pts, c)
    kp = np.zeros(pts.size)
    km = np.zeros(pts.size)
    rows = max(1, _ELEMENTS // max(1, pts.size))
    for a in range(0, x.size, rows):
        d = x[a:a + rows, None] - pts
        kp += np.log1p(np.minimum(lp[a:a + rows, None], capp) * d).sum(axis=0)
        km += np.log1p(-np.minimum(lm[a:a + rows, None], capm) * d).sum(axis=0)
    return kp, km


def _capital_history(x: _F, lp: _F, lm: _F, pts: _F,
                     p: _Params) -> tuple[_F, _F, npt.NDArray[np.bool_]]:
    """`_capital` of sorted points, and which cells between them were ever excluded.

    With the running intersection a new cell is out if its bound reached 1/alpha at
    any past time (WSR Thm 3, running intersection), so the capitals' whole paths
    are needed.  Laid out (point, time) so the cumulative sums run along memory;
    the exact bound is evaluated only where max(theta K^+, (1 - theta) K^-) is within
    a factor 2 of 1/alpha (the sum is at most twice the max).
    """
    capp, capm = _caps(pts, p.c)
    k = pts.size
    kp = np.zeros(k)
    km = np.zeros(k)
    dead = np.zeros(k - 1, dtype=bool)
    cols = max(1, _ELEMENTS // k)
    for a in range(0, x.size, cols):
        d = x[None, a:a + cols] - pts[:, None]
        r = d.shape[1]
        cp = np.empty((k, r + 1))
        cp[:, 0] = kp
        np.log1p(np.minimum(lp[None, a:a + cols], capp[:, None]) * d, out=cp[:, 1:])
        np.cumsum(cp, axis=1, out=cp)
        cm = np.empty((k, r + 1))
        cm[:, 0] = km
        np.log1p(-np.minimum(lm[None, a:a + cols], capm[:, None]) * d, out=cm[:, 1:])
        np.cumsum(cm, axis=1, out=cm)
        if p.ri:
            up = cp[1:, 1:] + p.log_th
            down = cm[:-1, 1:] + p.log_1mth
            near = np.flatnonzero(~dead & (np.maximum(up, down).max(axis=1) >= p.thr - _LOG2))
            if near.size:
                dead[near] = (np.logaddexp(up[near], down[near]) >= p.thr).any(axis=1)
        kp, km = cp[:, -1].copy(), cm[:, -1].copy()
    return kp, km, dead


@dataclass
class _Grid:
    """Grid points, their log-capitals now, their role, and the cells' exclusion."""

    pts: _F
    kp: _F
    km: _F
    role: npt.NDArray[np.int8]    # 0 coarse, 1 lower bracket, 2 upper bracket
    dead: npt.NDArray[np.bool_]   # per cell: excluded (ever, or now without RI)

    def copy(self) -> _Grid:
        return _Grid(self.pts.copy(), self.kp.copy(), self.km.copy(), self.role.copy(),
                     self.dead.copy())

    def ends(self) -> tuple[int, int] | None:
        """Indices of the first and last cell not excluded, or None if all are."""
        alive = np.flatnonzero(~self.dead)
        if alive.size == 0:
            return None
        return int(alive[0]), int(alive[-1])


def _initial_grid(p: _Params) -> _Grid:
    s = p.step(1.0)
    k = np.arange(_P + 1) * s
    parts = [k, 1.0 - k]
    roles = [np.full(k.size, 1, np.int8), np.full(k.size, 2, np.int8)]
    if not p.ri:
        parts.append(np.linspace(0.0, 1.0, _COARSE))
        roles.append(np.zeros(_COARSE, np.int8))
    pts, idx = np.unique(np.concatenate(parts), return_index=True)
    role = np.concatenate(roles)[idx]
    return _Grid(pts, np.zeros(pts.size), np.zeros(pts.size), role,
                 np.zeros(pts.size - 1, dtype=bool))


def _advance(g: _Grid, x: _F, lp: _F, lm: _F, p: _Params) -> tuple[_F, _F]:
    """Advance the capitals over a block; the interval after each of its points."""
    pts = g.pts
    n_pts = pts.size
    capp, capm = _caps(pts, p.c)
    lower = np.empty(x.size)
    upper = np.empty(x.size)
    rows = max(1, _ELEMENTS // n_pts)
    for a0 in range(0, x.size, rows):
        xc = x[a0:a0 + rows]
        r = xc.size
        d = xc[:, None] - pts
        kp = np.empty((r + 1, n_pts))
        kp[0] = g.kp
        np.log1p(np.minimum(lp[a0:a0 + rows, None], capp) * d, out=kp[1:])
        np.cumsum(kp, axis=0, out=kp)
        km = np.empty((r + 1, n_pts))
        km[0] = g.km
        np.log1p(-np.minimum(lm[a0:a0 + rows, None], capm) * d, out=km[1:])
        np.cumsum(km, axis=0, out=km)
        # cell [p_j, p_{j+1}]: theta K^+(p_{j+1}) + (1 - theta) K^-(p_j) bounds K on it
        cert = np.logaddexp(kp[1:, 1:] + p.log_th, km[1:, :-1] + p.log_1mth) >= p.thr
        if p.ri:
            cert[0] |= g.dead
            dead = np.logical_or.accumulate(cert, axis=0)
        else:
            dead = cert
        alive = ~dead
        any_alive = alive.any(axis=1)
        first = np.argmax(alive, axis=1)
        last = n_pts - 2 - np.argmax(alive[:, ::-1], axis=1)
        # all cells excluded: the set is empty, reported as lower > upper
        lower[a0:a0 + r] = np.where(any_alive, pts[first], pts[-1])
        upper[a0:a0 + r] = np.where(any_alive, pts[last + 1], pts[0])
        g.kp, g.km, g.dead = kp[-1].copy(), km[-1].copy(), dead[-1].copy()
    return lower, upper


def _cert_now(kp_right: _F, km_left: _F, p: _Params) -> npt.NDArray[np.bool_]:
    return np.asarray(np.logaddexp(kp_right + p.log_th, km_left + p.log_1mth) >= p.thr)


def _locate(end: float, k_end: float, toward: float, upper: bool, s: float, x: _F, lp: _F,
            lm: _F, p: _Params) -> tuple[_F, _F, _F]:
    """Points from ``end`` toward ``toward`` whose cells are all excluded now.

    A geometric ladder end +- P s 2^j finds the cell holding the interval's end at
    time t, then uniform ladders of P cells narrow it down to width P s.  Returns
    the chain of points (ordered away from ``end``) and their log-capitals; ``k_end``
    is log K^- (lower end) or log K^+ (upper end) at ``end``.
    """
    sign = -1.0 if upper else 1.0
    span = abs(toward - end)
    q: _F = np.asarray(end + sign * _P * s * 2.0 ** np.arange(
        int(math.log2(max(1.0, span / (_P * s)))) + 1), dtype=np.float64)
    q = q[q > toward] if upper else q[q < toward]
    out: list[tuple[_F, _F, _F]] = []
    a, ka = end, k_end
    while q.size:
        qkp, qkm = _capital(x, lp, lm, q, p.c)
        if upper:  # cell [q_j, a_j]: K^+ at its top a_j, K^- at q_j
            ok = _cert_now(np.concatenate(([ka], qkp[:-1])), qkm, p)
        else:
            ok = _cert_now(qkp, np.concatenate(([ka], qkm[:-1])), p)
        j = q.size if bool(ok.all()) else int(np.argmin(ok))
        if j:
            out.append((q[:j], qkp[:j], qkm[:j]))
            a, ka = float(q[j - 1]), float((qkp if upper else qkm)[j - 1])
        right = float(q[j]) if j < q.size else toward
        if abs(right - a) <= _P * s:
            break
        q = np.asarray(a + (right - a) * np.arange(1, _P) / _P, dtype=np.float64)
    if not out:
        return np.empty(0), np.empty(0), np.empty(0)
    return (np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out]),
            np.concatenate([o[2] for o in out]))


def _checkpoint(g: _Grid, x: _F, lp: _F, lm: _F, p: _Params) -> _Grid:
    """Drop points outside the running interval; re-bracket an end that needs it."""
    ends = g.ends()
    if ends is None:
        return g
    f, last = ends
    if p.ri:  # cells outside [L, U] are excluded for good
        g = _Grid(g.pts[f:last + 2], g.kp[f:last + 2], g.km[f:last + 2],
                  g.role[f:last + 2], g.dead[f:last + 1])
        f, last = 0, last - f
    pts = g.pts
    lo, hi = float(pts[f]), float(pts[last + 1])
    s = p.step(hi - lo)
    cw = np.diff(pts)
    lo_cells = cw[f:min(f + _LOOKAHEAD, last + 1)]
    hi_cells = cw[max(last + 1 - _LOOKAHEAD, f):last + 1]
    redo_lo = bool(np.any(lo_cells > 2.0 * s))
    redo_hi = bool(np.any(hi_cells > 2.0 * s))
    if not (redo_lo or redo_hi):
        return g
    keep = np.ones(pts.size, dtype=bool)
    if redo_lo:
        keep &= g.role != 1
    if redo_hi:
        keep &= g.role != 2
    keep[f] = keep[last + 1] = True
    new_pts: list[_F] = []
    new_role: list[npt.NDArray[np.int8]] = []
    new_kp: list[_F] = []
    new_km: list[_F] = []
    history: list[tuple[_F, npt.NDArray[np.bool_]]] = []
    if p.ri:
        history.append((g.pts, g.dead))
    mid = 0.5 * (lo + hi)
    for upper, redo in ((False, redo_lo), (True, redo_hi)):
        if not redo:
            continue
        i = last + 1 if upper else f
        end = float(pts[i])
        if cw[last if upper else f] > 2.0 * s:  # the end has left its bracket: find it
            q, qkp, qkm = _locate(end, float(g.kp[i] if upper else g.km[i]), mid, upper, s,
                                  x, lp, lm, p)
            if q.size:
                new_pts.append(q)
                new_kp.append(qkp)
                new_km.append(qkm)
                new_role.append(np.full(q.size, 2 if upper else 1, np.int8))
                end = float(q[-1])
        b: _F = np.asarray(end + (-s if upper else s) * np.arange(_P + 1), dtype=np.float64)
        b = np.sort(b[(b >= lo) & (b <= hi)])
        if b.size > 1:
            bkp, bkm, bdead = _capital_history(x, lp, lm, b, p)
            new_pts.append(b)
            new_kp.append(bkp)
            new_km.append(bkm)
            new_role.append(np.full(b.size, 2 if upper else 1, np.int8))
            history.append((b, bdead))
    allp = np.concatenate([pts[keep], *new_pts])
    order = np.argsort(allp, kind="stable")
    allp = allp[order]
    uniq = np.concatenate(([True], allp[1:] != allp[:-1]))
    sel = order[uniq]

    def pick(old: npt.NDArray[Any], new: Sequence[npt.NDArray[Any]]) -> npt.NDArray[Any]:
        return np.concatenate([old[keep], *new])[sel]

    out = _Grid(allp[uniq], pick(g.kp, new_kp).astype(float), pick(g.km, new_km).astype(float),
                pick(g.role, new_role).astype(np.int8), np.zeros(int(uniq.sum()) - 1, dtype=bool))
    # The cells found excluded now (the ladder) are excluded from the next point on:
    # record it, so the reported end moves there at once (valid at time t).
    out.dead = _cert_now(out.kp[1:], out.km[:-1], p)
    for cells, dead in history:  # running intersection: cells excluded in the past
        out.dead |= _inherit(out.pts, cells, dead)
    return out


def _report(g: _Grid) -> tuple[float, float]:
    """The interval on a grid just re-bracketed at a checkpoint (its cells' state now)."""
    ends = g.ends()
    if ends is None:
        return float(g.pts[-1]), float(g.pts[0])
    return float(g.pts[ends[0]]), float(g.pts[ends[1] + 1])


def _inherit(pts: _F, cells: _F, dead: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Cells of grid ``pts`` lying inside an excluded cell of grid ``cells``."""
    k = np.searchsorted(cells, pts[:-1], side="right") - 1
    ok = (k >= 0) & (k < cells.size - 1)
    kk = np.clip(k, 0, max(0, cells.size - 2))
    return np.asarray(ok & (pts[1:] <= cells[kk + 1]) & dead[kk])


def _check_target(target: object, bets: str) -> tuple[float, float] | None:
    if target is None:
        return None
    if bets == "prpl":
        raise ParameterError("`target` needs bets 'boundary' or 'mixed', got bets 'prpl'")
    try:
        tl, tu = (float(v) for v in target)  # type: ignore[attr-defined]  # errors below
    except (TypeError, ValueError):
        raise ParameterError(f"`target` must be a pair (lower, upper) of numbers in [0, 1], "
                             f"got {target!r}") from None
    if not (0.0 <= tl <= 1.0 and 0.0 <= tu <= 1.0):
        raise ParameterError(f"`target` must lie in [0, 1], got {target!r}")
    return tl, tu


def _params(alpha: object, truncation: object, theta: object, resolution: object,
            running_intersection: bool, bets: object, target: object) -> _Params:
    if bets not in BETS:
        raise ParameterError(f"`bets` must be one of {', '.join(map(repr, BETS))}, got {bets!r}")
    b = str(bets)
    return _Params(check_alpha(alpha), check_truncation(truncation),
                   _check_open(theta, "theta"), _check_open(resolution, "resolution"),
                   bool(running_intersection), b, _check_target(target, b))


def betting_cs(x: npt.ArrayLike, alpha: float = 0.05, *, truncation: float = 0.5,
               theta: float = 0.5, resolution: float = 5e-5,
               running_intersection: bool = True, bets: str = "prpl",
               target: tuple[float, float] | None = None) -> ConfidenceSequence:
    """Hedged betting confidence sequence for the mean of [0, 1]-valued ``x``.

    Waudby-Smith & Ramdas (2024, JRSSB), Theorem 3 ("Hedged-CS"), by default with
    the predictable plug-in bets of PrPl-EB: m is excluded once
    theta K_t^+(m) + (1 - theta) K_t^-(m) >= 1/alpha (module docstring).  Usually
    narrower than `certlib.audit.cs.prpl_eb` at the same level, most of all on
    low-variance data.

    Parameters
    ----------
    x : array_like of float
        The observations x_1, ..., x_n, each in [0, 1].
    alpha : float, default 0.05
        Miscoverage level in (0, 1).
    truncation : float, default 0.5
        The bet truncation c in (0, 1): bets are capped at c/m and c/(1 - m).
    theta : float, default 0.5
        The share of capital on the upward bet, in (0, 1).
    resolution : float, default 5e-5
        Width of the grid cells at the interval's ends (or 1/64 of the interval's
        width when that is smaller).  Each reported end lies outside the exact
        set's hull, typically by less than one cell; never inside it.
    running_intersection : bool, default True
        Exclude m for good once excluded at any time.
    bets : {"prpl", "boundary", "mixed"}, default "prpl"
        The predictable bets (module docstring, "Bets"): PrPl plug-in,
        aGRAPA aimed at the ends reported at the last checkpoint, or their mean.
        All give valid (1 - alpha) confidence sequences.
    target : (float, float), optional
        With "boundary" or "mixed": points (a, b) in [0, 1] the bets aim at while
        they lie between the running mean and the reference end (K^+ at a, K^- at
        b), e.g. the decision thresholds of a test.  Fixed in advance.

    Returns
    -------
    ConfidenceSequence
        Lower and upper ends over time (index i is time i + 1); unpacks as
        ``lower, upper``.  An empty set (every m excluded; only on the
        miscoverage event) is reported as lower > upper.

    Raises
    ------
    ParameterError
        ``alpha``, ``truncation``, ``theta`` or ``resolution`` outside (0, 1),
        ``bets`` not in `BETS`, or ``target`` no pair in [0, 1] (or given with
        bets "prpl").
    InvalidValueError
        ``x`` is not one-dimensional or holds a value outside [0, 1].

    Examples
    --------
    >>> from certlib.audit.cs import prpl_eb
    >>> x = [0.2, 0.9, 0.4, 0.7, 0.1] * 200
    >>> lo, hi = betting_cs(x)
    >>> bool(lo[-1] < 0.46 < hi[-1])
    True
    >>> plo, phi = prpl_eb(x, running_intersection=True)
    >>> bool(hi[-1] - lo[-1] < phi[-1] - plo[-1])
    True
    >>> blo, bhi = betting_cs(x, bets="mixed")
    >>> bool(blo[-1] < 0.46 < bhi[-1])
    True
    """
    p = _params(alpha, truncation, theta, resolution, running_intersection, bets, target)
    arr = _check_unit(x)
    n = arr.size
    lower = np.empty(n)
    upper = np.empty(n)
    if n:
        lp = np.empty(n)
        lm = np.empty(n)
        st = _Sums()
        g = _initial_grid(p)
        t = 0
        while t < n:
            e = min(n, t + _block(t))
            lp[t:e], lm[t:e], st = _bets(arr[t:e], t, st, p)
            lower[t:e], upper[t:e] = _advance(g, arr[t:e], lp[t:e], lm[t:e], p)
            t = e
            if t % _block(t) == 0:
                g = _checkpoint(g, arr[:t], lp[:t], lm[:t], p)
                lower[t - 1], upper[t - 1] = _report(g)
                st = replace(st, ref_lower=float(lower[t - 1]), ref_upper=float(upper[t - 1]))
    return ConfidenceSequence(lower, upper, p.alpha, p.c, p.ri)


class _History:
    """Append-only store of (x_i, lam_i^+, lam_i^-) shared by a line of streaming states.

    A state reads only its own prefix; appending past another state's length
    leaves that state's view unchanged, so `BettingState.update` stays pure.
    """

    def __init__(self) -> None:
        self.x = np.empty(64)
        self.lp = np.empty(64)
        self.lm = np.empty(64)
        self.n = 0

    def append(self, t: int, x: float, lp: float, lm: float) -> _History:
        h = self
        if self.n != t:  # an older state branches: copy its prefix
            h = _History()
            h.x, h.lp, h.lm = self.x[:t].copy(), self.lp[:t].copy(), self.lm[:t].copy()
            h.n = t
        if h.n == h.x.size:
            more = np.empty(max(64, h.x.size))
            h.x = np.concatenate((h.x, more))
            h.lp = np.concatenate((h.lp, more))
            h.lm = np.concatenate((h.lm, more))
        h.x[h.n], h.lp[h.n], h.lm[h.n] = x, lp, lm
        h.n += 1
        return h


@dataclass(frozen=True, eq=False)
class BettingState:
    """Streaming `betting_cs`: ``state.update(x)`` returns the state after one more point.

    Its interval equals `betting_cs`'s on every prefix (the same block arithmetic
    and the same checkpoints).  It keeps the past observations, since a new grid
    point's capital is computed over all of them.

    Parameters
    ----------
    alpha, truncation, theta, resolution, running_intersection
        As in `betting_cs`.
    t : int
        Points seen.
    sum_x, sum_dev, s2 : float
        The plug-in sums and sigma^2_t of the bets (as `PrplEBState`).
    lower, upper : float
        The interval C_t ([0, 1] before any point).
    bets, target
        As in `betting_cs`.
    ref_lower, ref_upper : float
        The interval reported at the last checkpoint, the boundary bets' reference.

    Examples
    --------
    >>> s = BettingState.start(alpha=0.05)
    >>> for v in [0.2, 0.9, 0.4, 0.7, 0.1] * 40:
    ...     s = s.update(v)
    >>> lo, hi = s.interval
    >>> (s.t, bool(lo < 0.46 < hi))
    (200, True)
    >>> blo, bhi = betting_cs([0.2, 0.9, 0.4, 0.7, 0.1] * 40)
    >>> (lo, hi) == (float(blo[-1]), float(bhi[-1]))
    True
    """

    alpha: float
    truncation: float
    theta: float
    resolution: float
    running_intersection: bool
    t: int = 0
    sum_x: float = 0.0
    sum_dev: float = 0.0
    s2: float = 0.25
    lower: float = 0.0
    upper: float = 1.0
    bets: str = "prpl"
    target: tuple[float, float] | None = None
    ref_lower: float = 0.0
    ref_upper: float = 1.0
    _grid: _Grid | None = field(default=None, repr=False)
    _hist: _History | None = field(default=None, repr=False)

    @classmethod
    def start(cls, alpha: float = 0.05, *, truncation: float = 0.5, theta: float = 0.5,
              resolution: float = 5e-5, running_intersection: bool = True,
              bets: str = "prpl",
              target: tuple[float, float] | None = None) -> BettingState:
        """The state before any point.

        Parameters
        ----------
        alpha, truncation, theta, resolution, running_intersection, bets, target
            As in `betting_cs`.

        Returns
        -------
        BettingState
            The initial state, interval [0, 1].

        Raises
        ------
        ParameterError
            A parameter outside (0, 1), or ``bets``, ``target`` as in `betting_cs`.

        Examples
        --------
        >>> BettingState.start().interval
        (0.0, 1.0)
        """
        p = _params(alpha, truncation, theta, resolution, running_intersection, bets, target)
        return cls(p.alpha, p.c, p.theta, p.resolution, p.ri, bets=p.bets, target=p.target)

    @property
    def interval(self) -> tuple[float, float]:
        """The current interval ``(lower, upper)``.

        Examples
        --------
        >>> BettingState.start().update(0.5).interval
        (0.0, 1.0)
        """
        return self.lower, self.upper

    def update(self, x: float) -> BettingState:
        """The state after one more point (pure: this state is unchanged).

        Parameters
        ----------
        x : float
            The next observation, in [0, 1].

        Returns
        -------
        BettingState
            The new state.

        Raises
        ------
        InvalidValueError
            ``x`` is no number in [0, 1].

        Examples
        --------
        >>> s0 = BettingState.start()
        >>> s1 = s0.update(0.3)
        >>> s0.t, s1.t
        (0, 1)
        """
        try:
            x = float(x)
        except (TypeError, ValueError):
            raise InvalidValueError(f"`x` must be a number in [0, 1], got {x!r}") from None
        if not (0.0 <= x <= 1.0):
            raise InvalidValueError(f"`x` must lie in [0, 1], got {x!r}")
        p = _Params(self.alpha, self.truncation, self.theta, self.resolution,
                    self.running_intersection, self.bets, self.target)
        xa = np.array([x])
        st = _Sums(self.sum_x, self.sum_dev, self.s2, self.ref_lower, self.ref_upper)
        lp, lm, st = _bets(xa, self.t, st, p)
        hist = (self._hist or _History()).append(self.t, x, float(lp[0]), float(lm[0]))
        g = (self._grid or _initial_grid(p)).copy()
        lo, hi = _advance(g, xa, lp, lm, p)
        t = self.t + 1
        lower, upper = float(lo[0]), float(hi[0])
        ref_lower, ref_upper = self.ref_lower, self.ref_upper
        if t % _block(t) == 0:
            g = _checkpoint(g, hist.x[:t], hist.lp[:t], hist.lm[:t], p)
            lower, upper = _report(g)
            ref_lower, ref_upper = lower, upper
        return replace(self, t=t, sum_x=st.sum_x, sum_dev=st.sum_dev, s2=st.s2,
                       lower=lower, upper=upper, ref_lower=ref_lower, ref_upper=ref_upper,
                       _grid=g, _hist=hist)
