"""How good can a forecast with independent rows be?  A ceiling for the forecast's targets.

    python -m bench forecast_ceiling --splits 40-43
    python -m bench forecast_ceiling --splits 4-7,40-43,60-63,90-93,110-113 --dir DIR

The forecast's misses could come from a badly estimated label model or from the
model family itself (every unread label drawn independently given its row's
features).  This bench separates the two with a *correctness model* fitted with
hindsight:

    P(candidate e is right on row i) = sigmoid(a + b logit(conf_ei) + c share_ei),

``share_ei`` the fraction of the other candidates that predict what e predicts (the
strongest label-free feature on the panel pools: c = 2-6 in every data set, model
family and K), conf clipped to [1/C, 0.99].  A row's label is the class of a group of
agreeing candidates with the group's mean P(right) (normalised when they add up to
more than 1; otherwise the rest is spread over the classes nobody predicted).  Each
draw shifts (a, b, c) by N(0, (0.6, 0.15, 0.6)) / sqrt(1 + labels read / 50).

* ``share``: (a, b, c) from the prior (-2.5, 0.6, 4.5) (pooled fits on the development
  pools, rounded), refitted MAP on the labels read with a ridge of 20 to the prior.
* ``oracle``: (a, b, c) fitted by maximum likelihood on **every label of the pool**
  (in-sample, hindsight), then the forecast runs as usual on the hidden labels.  No
  label-free or label-read estimate of these three numbers can do better than the
  pool's own best fit, so its errors are (about) what this family of models cannot
  avoid: the order in which the true labels fall is not in the row's features.
* ``oracle, no jitter``: the same coefficients without the per-draw shift; its *own
  expected |err|* (the mean distance of its draws from their median, printed for every
  model) is what the median would miss by if the labels really were drawn from it.

``--pseudo G`` (several, comma-separated) runs instead the library's label model with its
expert weights multiplied by exp(G (L_e - max L)), L_e the log-likelihood under expert e's
calibrated view of the leave-one-out majority vote of the other experts (rows with a
clear majority): a label-free guess of which candidate's view of the labels is right.

Not a library feature: nothing here is used by `certlib.forecast`.  Results are in
bench/EXPERIMENTS.md ("Label forecast").
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from certlib.io import load_pool
from certlib.policies.label_model import (
    _logistic_map,
    _logit,
    agreement_groups,
    fit_label_sampler,
    label_probabilities,
    unread_frame,
)

from .bench_forecast_holdout import evaluate, panel_files, parse_splits, splits_tag, stats, summary
from .results import command, table, write_results

SHARE_PRIOR = (-2.5, 0.6, 4.5)


@dataclass(frozen=True, eq=False)
class ShareSampler:
    source: str
    note: str
    labels: np.ndarray
    n_classes: int
    pred: np.ndarray  # (E, n)
    feats: np.ndarray  # (3, E, n): 1, logit conf, share
    coef: np.ndarray  # (3,)
    jitter: np.ndarray  # (3,) sd per coefficient per draw

    def sample(self, rng, draws: int) -> np.ndarray:
        C = self.n_classes
        Y, unread = unread_frame(self.labels, draws)
        m = unread.size
        if m == 0:
            return Y
        pred = self.pred[:, unread]
        F = self.feats[:, :, unread]
        E = pred.shape[0]
        same = pred[:, None, :] == pred[None, :, :]  # (E, E, m)
        first = np.array([~(same[e, :e]).any(axis=0) for e in range(E)])  # (E, m)
        W = self.coef[None, :] + rng.normal(size=(draws, 3)) * self.jitter[None, :]
        for d0 in range(0, draws, 16):
            d1 = min(draws, d0 + 16)
            z = np.einsum("dk,kem->dem", W[d0:d1], F)
            # P(y = pred_e) per draw, one entry per predicted class (the library's model)
            p = agreement_groups(pred, 1.0 / (1.0 + np.exp(-z)), C) * first[None]
            cdf = np.cumsum(p, axis=1)  # (d, E, m)
            u = rng.random((d1 - d0, 1, m))
            k = (u > cdf).sum(axis=1)  # (d, m): index of the chosen expert, E = other
            k = np.minimum(k, E)
            lab = np.where(k < E, pred[np.minimum(k, E - 1), np.arange(m)[None, :]], -1)
            if (lab < 0).any():
                # a class nobody predicted: uniformly among those
                dd, mm = np.nonzero(lab < 0)
                for a, b in zip(dd, mm):
                    taken = set(pred[:, b].tolist())
                    free = [c for c in range(C) if c not in taken]
                    lab[a, b] = free[rng.integers(len(free))]
            Y[d0:d1, unread] = lab
        return Y


def _fit_coef(F, t, prior, ridge, steps=30):
    """MAP coefficients on the rows read: the library's penalised logistic fit."""
    return _logistic_map(F.T, t, prior, ridge, steps)


def fit_share_sampler(pool, ridge=20.0, jit=(0.6, 0.15, 0.6), jscale=50.0, clip=0.99,
                      prior=SHARE_PRIOR):
    C = pool.n_classes
    labels = np.asarray(pool.labels, dtype=np.int64)
    known = np.flatnonzero(labels >= 0)
    lm = label_probabilities(pool)
    if lm.source != "confidences":
        return fit_label_sampler(pool)
    pred = lm.expert_pred
    E, n = pred.shape
    x = _logit(np.clip(lm.expert_conf, 1.0 / C, clip))
    share = (np.stack([(pred == pred[e]).sum(axis=0) for e in range(E)]) - 1) / max(E - 1, 1)
    F = np.stack([np.ones_like(x), x, share])
    coef = np.array(prior, dtype=float)
    if known.size:
        t = (pred[:, known] == labels[known][None, :]).astype(float).ravel()
        coef = _fit_coef(F[:, :, known].reshape(3, -1), t, prior, ridge)
    j = np.asarray(jit, dtype=float) / np.sqrt(1.0 + known.size / jscale)
    return ShareSampler("confidences", "share model", labels, C, pred, F, coef, j)


def pseudo_loglik(s) -> np.ndarray:
    """Per expert of sampler ``s``: log-likelihood of the others' majority vote."""
    pred, q, C = s.expert_pred, s.expert_q, s.n_classes
    E = pred.shape[0]
    out = np.zeros(E)
    for e in range(E):
        others = np.delete(pred, e, axis=0)
        cnt = np.stack([(others == c).sum(axis=0) for c in range(C)])
        clear = (cnt == cnt.max(axis=0)).sum(axis=0) == 1
        ok = pred[e] == cnt.argmax(axis=0)
        ll = np.where(ok, np.log(q[e]), np.log((1 - q[e]) / (C - 1)))
        out[e] = ll[clear].sum()
    return out


def pseudo_weighted(gamma):
    def make(seen, full):
        s = fit_label_sampler(seen)
        if s.expert_pred is None or s.weights.size < 2:
            return s
        L = pseudo_loglik(s)
        z = np.log(np.maximum(s.weights, 1e-300)) + gamma * (L - L.max())
        w = np.exp(z - z.max())
        return replace(s, weights=w / w.sum())
    return make


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", default="40-43")
    ap.add_argument("--dir", default=None, help="also evaluate the pool files in DIR")
    ap.add_argument("--pseudo", default="", help="expert weights from the majority vote, "
                    "strengths G,G,... (instead of the share models)")
    a = ap.parse_args(argv)
    tmp, files = panel_files(parse_splits(a.splits) if a.splits else ())
    if a.dir:
        files += sorted(Path(a.dir).glob("*.csv"))
    pools = [(f.stem, load_pool(f)) for f in files]

    def oracle(seen, full):
        s = fit_share_sampler(seen)
        return replace(s, coef=fit_share_sampler(full, ridge=1e-6).coef)

    def oracle_fixed(seen, full):
        s = oracle(seen, full)
        return replace(s, jitter=np.zeros_like(s.jitter))

    makers = [("the library's model", None),
              ("share model, refitted on the labels read",
               lambda seen, full: fit_share_sampler(seen)),
              ("hindsight coefficients", oracle),
              ("hindsight, no jitter", oracle_fixed)]
    if a.pseudo:
        makers = [("the library's model", None)] + [
            (f"expert weights from the majority vote, G = {g}", pseudo_weighted(float(g)))
            for g in a.pseudo.split(",")]
    print(f"{len(pools)} pools, split seeds {a.splits}, 200 draws")
    out = []
    for name, make in makers:
        rows = [evaluate(p, {}, make=make) for _, p in pools]
        print(name)
        print("  " + summary(rows, "before"))
        print("  " + summary(rows, "quarter"))
        cells = []
        for tag in ("before", "quarter"):
            s = stats(rows, tag)
            cells.append(f"{s['coverage']:.1f}%, {s['mae']:.2f}, own {s['own']:.2f}")
        out.append([name, *cells])
    tmp.cleanup()
    md = (f"{len(pools)} pools (split seeds {a.splits}"
          + (f", and the files of `{Path(a.dir).name}`" if a.dir else "")
          + "), adaptive pair-sum, tau = 0, 200 draws. Cells: coverage of the 10-90% "
          "interval, MAE of the median (% of n), and the forecast's own expected error (the "
          "mean distance of its draws from their median, % of n).\n\n"
          + table(["label model", "before any label", "after a quarter"], out))
    name = "forecast_ceiling_" + splits_tag(a.splits) + ("_pseudo" if a.pseudo else "")
    write_results(name, md, command=command("forecast_ceiling", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
