"""Variants of ``expected-coverage`` tried for the held-out target and rejected
(bench/EXPERIMENTS.md).

    python -m bench coverage_variants DIR 'ExpectedCoverage()'
    python -m bench coverage_variants DIR 'GroupPosterior(m=10)'
    python -m bench coverage_variants DIR 'Interleave(lam=0.5)'
    python -m bench coverage_variants DIR 'InterleaveOnDisagreement(lam=0.5)'
    python -m bench coverage_variants DIR 'CalibrationGated(z=3)'
    python -m bench coverage_variants sample_data/holdout 'ExpectedCoverage(model="mixture")' \
        'ExpectedCoverage(branch=False, temper=3)' 'ExpectedCoverage()'
    python -m bench coverage_variants --splits 600-611 'ExpectedCoverage()'  # generated pools

DIR holds panel pools in DIR/panels, e.g. written by
``bench.bench_policies_holdout.make_holdout(DIR, splits)`` (adaptive pair-sum's counts
are then cached in DIR/aps.json), or is a folder of pool files such as
``sample_data/holdout`` (nothing is written into it).  Several variants give one row
each in ``docs/results/coverage_variants_SPLITS.md``.  Prints the saving in points of n
(each data set weighted equally), the pools read more than adaptive pair-sum, over +5%
and +10% of n, and the worst pool.  The variants are kept here, outside the library, so
that the numbers in bench/EXPERIMENTS.md can be reproduced; none is the default.  They
were measured on the first default's label model, so they use ``model="mixture"`` unless
given another;
``'ExpectedCoverage(model="mixture")'`` is that default itself, ``'ExpectedCoverage()'``
the current one (the agreement model with the hedge's no-error branch) and
``'ExpectedCoverage(branch=False, temper=3)'`` the agreement model's first version.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from certlib.core.pair_terms import rule_unit
from certlib.io import load_pool
from certlib.labelling.replay import replay
from certlib.policies.coverage import ExpectedCoverage
from certlib.policies.heuristics import AdaptivePairSum
from certlib.policies.label_model import agreement_pred_prob

from .bench_policies_holdout import make_holdout, parse_splits, splits_of
from .results import command, table, write_results


def _column(W, P, q, lo, unit):
    """Expected gains and variances of one row (the formulas of coverage._moments)."""
    loss = W * (1 - q)
    ed = loss[:, None] - loss[None, :]
    same = P[:, None] == P[None, :]
    v = q * (1 - q)
    cov = np.where(same, v[:, None], -q[:, None] * q[None, :])
    var = (W[:, None] ** 2 * v[:, None] + W[None, :] ** 2 * v[None, :]
           - 2 * W[:, None] * W[None, :] * cov)
    return np.maximum(unit * ed.reshape(-1) - lo, 0), np.maximum(var, 0).reshape(-1) * unit ** 2


class GroupPosterior(ExpectedCoverage):
    """Rows with identical predictions, weights and label-model probabilities form a
    group whose labels are treated as exchangeable: P(y = pred_j) of the group's unread
    rows is the Dirichlet posterior (m q_j + hits_j) / (m + reads) of the labels read in
    the group (prior strength ``m`` rows at the model's q).  Prototype (copies the gain
    arrays on each update; small pools only)."""

    def __init__(self, m: float = 10.0, **kw):
        kw.setdefault("model", "mixture")  # measured on the first default's label model
        if kw.setdefault("branch", False):
            # its update rewrites the gains of a group's unread rows, which the no-error
            # branch's sums (coverage.ExpectedCoverage._read_branch) do not follow
            raise ValueError("GroupPosterior keeps no no-error branch; use branch=False")
        super().__init__(**kw)
        self.m = m

    def start(self, ctx):
        s = super().start(ctx)
        if s.fallback is not None:
            return s
        pool = ctx.pool
        lm, _, lo = self._static(ctx)
        q = lm.pred_prob(pool, shrink=self.settings(pool, lm)[1])
        key = np.concatenate([pool.preds.T.astype(np.float64),
                              pool.weights.T.astype(np.float64), q.T], axis=1)
        gid = np.unique(key, axis=0, return_inverse=True)[1].reshape(-1)
        G = int(gid.max()) + 1
        self._g = dict(gid=gid, q=q, lo=lo, members=[np.flatnonzero(gid == g) for g in range(G)])
        object.__setattr__(s, "grp", (np.zeros((pool.K, G)), np.zeros(G)))
        return s

    def update(self, state, view, row, label):
        if state.fallback is not None:
            return super().update(state, view, row, label)
        pool, K = view.pool, view.pool.K
        hits, r = (a.copy() for a in state.grp)
        g = self._g["gid"][row]
        hits[:, g] += pool.preds[:, row] == label
        r[g] += 1
        mem = self._g["members"][g]
        unread = np.array([i for i in mem if not view.is_read(int(i))], dtype=np.int64)
        sum_eg = state.sum_eg - state.eg[:, row].astype(np.float64).reshape(K, K)
        sum_vg = state.sum_vg - state.vg[:, row].astype(np.float64).reshape(K, K)
        eg, vg = state.eg, state.vg
        if unread.size:
            i0 = mem[0]
            qn = (self.m * self._g["q"][:, i0] + hits[:, g]) / (self.m + r[g])
            e1, v1 = _column(pool.weights[:, i0].astype(np.float64), pool.preds[:, i0], qn,
                             self._g["lo"][:, i0].astype(np.float64),
                             rule_unit(view.policy_context.rule))
            e1, v1 = e1.astype(np.float32), v1.astype(np.float32)
            old_e = eg[:, unread[0]].astype(np.float64)
            old_v = vg[:, unread[0]].astype(np.float64)
            eg, vg = eg.copy(), vg.copy()
            eg[:, unread] = e1[:, None]
            vg[:, unread] = v1[:, None]
            sum_eg = sum_eg + ((e1 - old_e) * unread.size).reshape(K, K)
            sum_vg = sum_vg + ((v1 - old_v) * unread.size).reshape(K, K)
        s = replace(state, eg=eg, vg=vg, sum_eg=sum_eg, sum_vg=sum_vg)
        W = self._pair_weights(s, view.L, view.th.need, view.eliminated)
        order, ptr = s.order, s.ptr
        while ptr < order.size and view.is_read(int(order[ptr])):
            ptr += 1
        moved = np.abs(W - s.weights).sum() > self.refresh * max(np.abs(s.weights).sum(), 1e-300)
        um = view.unread_mask()
        if (unread.size or ptr >= order.size or moved) and um.any():
            out = self._rank(view.policy_context, s, view.L, view.th.need, view.eliminated,
                             um, W)
        else:
            out = replace(s, ptr=ptr)
        object.__setattr__(out, "grp", (hits, r))
        return out


@dataclass(frozen=True, eq=False)
class _MixState:
    ec: object
    aps: object
    t: int


class Interleave(ExpectedCoverage):
    """Step t reads the next adaptive-pair-sum row when floor(lam (t + 1)) > floor(lam t),
    else the next expected-coverage row."""

    def __init__(self, lam: float = 0.5, **kw):
        kw.setdefault("model", "mixture")  # measured on the first default's label model
        super().__init__(**kw)
        self.lam = lam
        self.base = ExpectedCoverage(**kw)
        self.aps = AdaptivePairSum()

    def start(self, ctx):
        return _MixState(self.base.start(ctx), self.aps.start(ctx), 0)

    def _aps_turn(self, state, view) -> bool:
        return math.floor(self.lam * (state.t + 1)) > math.floor(self.lam * state.t)

    def choose(self, state, view):
        if self._aps_turn(state, view):
            return self.aps.choose(state.aps, view)
        return self.base.choose(state.ec, view)

    def update(self, state, view, row, label):
        return _MixState(self.base.update(state.ec, view, row, label),
                         self.aps.update(state.aps, view, row, label), state.t + 1)


class InterleaveOnDisagreement(Interleave):
    """`Interleave`, but only while the winner belief's mode differs from the leader by
    the bound midpoints (L_jk - L_kj) / 2 of the candidates not eliminated."""

    def _aps_turn(self, state, view) -> bool:
        L = view.L.astype(np.float64)
        mid = (L - L.T) / 2
        np.fill_diagonal(mid, np.inf)
        out = list(view.eliminated)
        mid[out, :] = np.inf
        lead = mid.min(axis=0)
        lead[out] = -np.inf
        pi = self.base.win_probabilities(state.ec, view.L, view.th.need, view.eliminated)
        return int(np.argmax(pi)) != int(np.argmax(lead)) and super()._aps_turn(state, view)


class CalibrationGated(ExpectedCoverage):
    """The regret guard (``regret=slack``), switched on only once a calibration test on
    the rows read rejects the label model: per candidate, z = (errors read - errors the
    model expected on those rows) / sqrt(sum q (1 - q) + 1); on when max |z| > ``z``
    (``side="both"``), max -z (``"over"``: the model expected too many errors) or max z
    (``"under"``).  The first direction tried.  The test's running sums live on the
    policy object, so a policy object serves one replay (as in `main`)."""

    def __init__(self, z: float = 3.0, slack: float = 0.05, side: str = "both", **kw):
        super().__init__(regret=slack, **kw)
        self.z, self.side = z, side
        self.on_at = None  # labels read when the guard was switched on

    def start(self, ctx):
        s = super().start(ctx)
        pool, K = ctx.pool, ctx.pool.K
        if s.fallback is None:
            lm = self._static(ctx)[0]
            agree, shrink = self.settings(pool, lm)[:2]
            self._q = ((1 - shrink) * agreement_pred_prob(pool) + shrink / pool.n_classes
                       if agree else lm.pred_prob(pool, shrink=shrink))
            self._sums = np.zeros((3, K))  # errors read, expected, variance
        self.on_at = None
        return s

    def update(self, state, view, row, label):
        if state.fallback is None and self.on_at is None:
            q = self._q[:, row]
            self._sums += [view.pool.preds[:, row] != label, 1 - q, q * (1 - q)]
            o, e, v = self._sums
            z = (o - e) / np.sqrt(v + 1)
            stat = {"both": np.abs(z), "over": -z, "under": z}[self.side].max()
            if stat > self.z:
                self.on_at = view.t
        return super().update(state, view, row, label)

    def _forced_row(self, state, view):
        return None if self.on_at is None else super()._forced_row(state, view)


def run_variant(files: list[Path], cache: dict, expr: str) -> list[object]:
    """Replay one variant on every pool; print its line, return its Markdown row."""
    rows, t0 = [], time.perf_counter()
    names = {c.__name__: c for c in (ExpectedCoverage, GroupPosterior, Interleave,
                                     InterleaveOnDisagreement, CalibrationGated)}
    for f in files:
        pool = load_pool(str(f))
        if f.stem not in cache:
            cache[f.stem] = replay(pool, policy="adaptive-pair-sum").labels_read
        r = replay(pool, policy=eval(expr, names))  # a fresh policy per pool
        rows.append((f.stem, pool.n, cache[f.stem], r.labels_read,
                     bool(r.certified and r.selected == r.full_pool_winner)))
    by: dict = {}
    for name, n, a, e, _ in rows:
        by.setdefault(name.split("_s")[0], []).append((a - e) / n)
    pts = 100 * float(np.mean([np.mean(v) for v in by.values()]))
    d_ = [100 * (e - a) / n for _, n, a, e, _ in rows]
    w = int(np.argmax(d_))
    ok = all(r[4] for r in rows)
    per = ", ".join(f"{k} {100 * np.mean(v):.1f}" for k, v in sorted(by.items()))
    print(f"{expr}: {pts:.2f} points ({per}); more than adaptive pair-sum on "
          f"{sum(x > 0 for x in d_)}/{len(rows)} pools, over +5% of n on "
          f"{sum(x > 5 for x in d_)}, over +10% on {sum(x > 10 for x in d_)}; worst "
          f"{rows[w][0]} {d_[w]:+.1f}% of n; every run certified the winner: "
          f"{ok} ({time.perf_counter() - t0:.0f} s)")
    worst = f"{rows[w][0]} {d_[w]:+.1f}%" if d_[w] > 0 else f"{d_[w]:+.1f}%"
    return [f"`{expr}`", f"{pts:.2f}", sum(x > 0 for x in d_), sum(x > 5 for x in d_),
            sum(x > 10 for x in d_), worst, "yes" if ok else "**no**"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] in ("-h", "--help") or (argv[0] == "--splits"
                                                         and len(argv) < 3):
        print(__doc__)
        return 2
    if argv[0] == "--splits":
        # pools generated into a temporary folder, deleted afterwards
        with tempfile.TemporaryDirectory(prefix="certlib_variants_") as tmp:
            make_holdout(Path(tmp), parse_splits(argv[1]))
            return run(Path(tmp), argv[2:], argv)
    return run(Path(argv[0]), argv[1:], argv)


def run(d: Path, exprs: list[str], argv: list[str]) -> int:
    panels = d / "panels"
    folder = panels if panels.is_dir() else d
    cache_f = d / "aps.json" if panels.is_dir() else None
    cache = json.loads(cache_f.read_text()) if cache_f and cache_f.exists() else {}
    files = sorted(folder.glob("*.csv"))
    out = [run_variant(files, cache, e) for e in exprs]
    if cache_f is not None:
        cache_f.write_text(json.dumps(cache))
    tag = splits_of(files)
    md = (f"{len(files)} pools, split seeds {tag.replace('_', ', ')}; exact test, tau = 0. "
          "Points of n below adaptive pair-sum (each data set weighted equally), pools read "
          "more than it, over +5% and over +10% of n, the worst pool:\n\n"
          + table(["variant", "points", "more", "over +5%", "over +10%", "worst pool",
                   "winner certified"], out))
    write_results(f"coverage_variants_{tag}", md, command=command("coverage_variants", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
