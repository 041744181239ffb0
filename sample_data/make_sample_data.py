"""Deterministic generator for everything in ``sample_data/``.

Usage (from the repository root)::

    python sample_data/make_sample_data.py            # regenerate all files
    python sample_data/make_sample_data.py --out DIR  # write into DIR instead
    python sample_data/make_sample_data.py --only wine_s0_tree   # one panel pair
    python sample_data/make_sample_data.py --splits 3,4,5 --out DIR   # held-out panels only

Running it twice on the same machine (same numpy / scikit-learn builds)
rewrites every file byte-identically: all randomness is seeded, rows and
columns are written in a fixed order, and floats are written with Python's
``repr`` (shortest round-trip form), so equal confidences stay exactly equal
after a CSV round trip.  Only data that ships *inside* scikit-learn is used
(``load_breast_cancer``, ``load_wine``, ``load_digits``) plus synthetic data
from ``make_classification``; nothing is downloaded.

What it writes (see ``README.md`` next to this file):

* ``panels/<dataset>_s<split>_<model>_k<K>.csv`` -- 36 "panel pools" following
  section 6.1 of the certificate paper (feature-subset panels, trees or
  logistic regressions, K = 4 or 8), fully labelled.
* ``teaching_k4.csv`` -- copy of ``panels/breast_cancer_s1_tree_k4.csv``
  (the Figure 10 teaching condition on a shipped data set).
* ``demo_binary.csv`` / ``demo_unlabelled.csv`` -- breast cancer, four diverse
  scikit-learn candidates, with display columns; the second has no labels.
* ``digits_probs.csv`` -- 10-class digits, logistic-regression probabilities
  ``prob_0..prob_9`` (shared-prediction / confidence-score choice).
* ``figure2.csv`` / ``worst_case.csv`` -- paper Figure 2's four rows and the worst-case
  rank example (n = 20, C(0) = 19), from ``certlib.teaching.worked_examples``.
* ``digits_images.csv`` + ``digits_images/<row_id>.png`` -- the ``digits_probs`` rows
  unlabelled, with each 8 x 8 digit as a small PNG (``image`` column).
* ``audit_stream.csv`` -- 20,000-item update-audit stream (incumbent vs.
  candidate) for the Discern audit.

Panel protocol (paper section 6.1, "Panel construction"), as implemented here:

1. Stratified 70/30 train/evaluation split, ``random_state`` = split seed
   (0, 1, 2).  Binary labels: breast cancer as shipped (1 = benign), wine
   ``1{class == 0}``, digits ``1{digit is odd}``.
2. Quartile indicators from the *training* rows: for every feature and every
   distinct training quartile q in {Q1, Q2, Q3}, the indicator ``x > q``.
   Indicators that are constant on the training rows or duplicate an earlier
   indicator of the same feature (tied quartiles) are dropped.
3. Indicators are ordered by decreasing absolute class-conditional mean
   difference on the training rows (stable: ties keep feature/quartile order).
4. Minority-count error of an indicator subset S = sum over the distinct
   training patterns of S of min(#label 0, #label 1).  E_full uses all
   indicators.
5. Fixed-order backward search, one per eps in {0,.005,.01,.02,.04,.08,.12,.16}:
   starting from all indicators, visit them from the weakest (end of the
   order) to the strongest and remove one whenever the error stays
   ``<= E_full + floor(eps * n_train)``.  Because the error can only grow when
   indicators are removed, one pass already leaves a set from which no
   retained indicator can be removed within the budget.  (``<=`` rather than
   ``<``: with ``<`` no indicator could ever be removed at eps = 0.)
6. Each panel (its retained indicators, strongest first) gets a
   ``DecisionTreeClassifier(min_samples_leaf=2, random_state=0)`` or a
   ``LogisticRegression(C=1, max_iter=1000)``; prediction = ``predict``,
   confidence = maximum class probability.  K = 8 uses all panels in eps
   order, K = 4 uses panel indices 0, 2, 4, 6.  Duplicate panels produced by
   the search are kept as separate candidates (the paper merges exact
   duplicates only for its Figure 9/10 rule comparison).
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

HERE = Path(__file__).resolve().parent

DATASETS = ("breast_cancer", "wine", "digits")
SPLITS = (0, 1, 2)
MODELS = ("tree", "logreg")
EPSILONS = (0.0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.12, 0.16)
PANEL_NAMES = tuple(f"eps{round(e * 1000):03d}" for e in EPSILONS)  # eps000 .. eps160
K4_INDICES = (0, 2, 4, 6)
TREE_SEED = 0
TEACHING_SOURCE = "breast_cancer_s1_tree_k4.csv"


# --------------------------------------------------------------------------
# writing


def fmt(v) -> str:
    """Deterministic text for one cell: ints as ints, floats via repr."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not np.isfinite(f):
            raise ValueError(f"non-finite value {f!r}")
        return repr(f)
    return str(v)


def write_csv(path: Path, header: list[str], columns: list) -> None:
    """Write columns (equal-length sequences) under ``header``; LF line ends."""
    n = len(columns[0])
    assert all(len(c) == n for c in columns), "ragged columns"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for i in range(n):
            w.writerow([fmt(c[i]) for c in columns])


# --------------------------------------------------------------------------
# panel pools (paper section 6.1)


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "breast_cancer":
        d = load_breast_cancer()
        return d.data, d.target.astype(np.int64)
    if name == "wine":
        d = load_wine()
        return d.data, (d.target == 0).astype(np.int64)
    if name == "digits":
        d = load_digits()
        return d.data, (d.target % 2).astype(np.int64)
    raise ValueError(name)


def split_indices(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.arange(len(y))
    tr, ev = train_test_split(idx, test_size=0.3, stratify=y, random_state=seed)
    return np.sort(tr), np.sort(ev)


def quartile_indicators(Xtr: np.ndarray, ytr: np.ndarray):
    """Thresholds (feature, q) of the training-quartile indicators, ordered."""
    specs = []
    for f in range(Xtr.shape[1]):
        seen = []
        for q in np.quantile(Xtr[:, f], [0.25, 0.5, 0.75]):
            col = Xtr[:, f] > q
            if col.all() or not col.any():
                continue
            if any(np.array_equal(col, s) for s in seen):
                continue
            seen.append(col)
            specs.append((f, float(q)))
    Btr = np.column_stack([Xtr[:, f] > q for f, q in specs]).astype(np.uint8)
    diff = np.abs(Btr[ytr == 1].mean(axis=0) - Btr[ytr == 0].mean(axis=0))
    order = np.argsort(-diff, kind="stable")
    return [specs[i] for i in order]


def indicator_matrix(X: np.ndarray, specs) -> np.ndarray:
    return np.column_stack([X[:, f] > q for f, q in specs]).astype(np.uint8)


def minority_error(B: np.ndarray, y: np.ndarray, keep: np.ndarray) -> int:
    """Sum over distinct patterns of B[:, keep] of the minority-label count."""
    if not keep.any():
        pos = int(y.sum())
        return min(pos, len(y) - pos)
    packed = np.packbits(B[:, keep], axis=1)
    _, inv = np.unique(packed, axis=0, return_inverse=True)
    inv = inv.ravel()
    pos = np.bincount(inv, weights=y, minlength=inv.max() + 1)
    tot = np.bincount(inv, minlength=inv.max() + 1)
    return int(np.minimum(pos, tot - pos).sum())


def backward_search(B: np.ndarray, y: np.ndarray, eps: float) -> np.ndarray:
    m = B.shape[1]
    keep = np.ones(m, dtype=bool)
    bound = minority_error(B, y, keep) + int(np.floor(eps * len(y)))
    for j in range(m - 1, -1, -1):  # weakest first
        keep[j] = False
        if minority_error(B, y, keep) > bound:
            keep[j] = True
    return keep


def fit_panel(model: str, Btr, ytr, Bev):
    """Prediction and max-probability confidence on the evaluation rows."""
    if Btr.shape[1] == 0:  # empty panel: constant majority prediction
        p1 = ytr.mean()
        pred = np.full(len(Bev), int(p1 > 0.5), dtype=np.int64)
        return pred, np.full(len(Bev), max(p1, 1 - p1))
    if model == "tree":
        clf = DecisionTreeClassifier(min_samples_leaf=2, random_state=TREE_SEED)
    else:
        clf = LogisticRegression(C=1.0, max_iter=1000)
    clf.fit(Btr, ytr)
    proba = clf.predict_proba(Bev)
    pred = clf.classes_[np.argmax(proba, axis=1)].astype(np.int64)
    return pred, proba.max(axis=1)


def build_panels(dataset: str, split: int):
    """Panels (retained indicator masks) and split for one dataset/split."""
    X, y = load_binary(dataset)
    tr, ev = split_indices(y, split)
    specs = quartile_indicators(X[tr], y[tr])
    Btr = indicator_matrix(X[tr], specs)
    Bev = indicator_matrix(X[ev], specs)
    keeps = [backward_search(Btr, y[tr], e) for e in EPSILONS]
    return dict(y=y, tr=tr, ev=ev, Btr=Btr, Bev=Bev, keeps=keeps)


def panel_pools(dataset: str, split: int, model: str, out: Path, panels=None) -> dict:
    """Write the K=8 and K=4 pools of one condition; return a summary."""
    P = panels if panels is not None else build_panels(dataset, split)
    y, tr, ev = P["y"], P["tr"], P["ev"]
    preds, confs = [], []
    for keep in P["keeps"]:
        p, c = fit_panel(model, P["Btr"][:, keep], y[tr], P["Bev"][:, keep])
        preds.append(p)
        confs.append(c)
    stem = f"{dataset}_s{split}_{model}"
    for K, sel in ((8, tuple(range(8))), (4, K4_INDICES)):
        header = ["row_id", "label"]
        cols = [ev, y[ev]]
        for j in sel:
            header += [f"pred_{PANEL_NAMES[j]}", f"conf_{PANEL_NAMES[j]}"]
            cols += [preds[j], confs[j]]
        write_csv(out / "panels" / f"{stem}_k{K}.csv", header, cols)
    # duplicates: identical (pred, conf) columns on the evaluation pool
    def dup_count(sel):
        seen = {(preds[j].tobytes(), confs[j].tobytes()) for j in sel}
        return len(sel) - len(seen)
    return dict(
        stem=stem,
        n=len(ev),
        n_train=len(tr),
        sizes=[int(k.sum()) for k in P["keeps"]],
        dup_panels_k8=len(P["keeps"]) - len({k.tobytes() for k in P["keeps"]}),
        dup_cands_k8=dup_count(range(8)),
        dup_cands_k4=dup_count(K4_INDICES),
    )


def make_panels(out: Path, only: str | None = None, log=print,
                splits=SPLITS, datasets=DATASETS) -> list[dict]:
    """Write the panel pools of ``datasets`` x ``splits`` into ``out/panels``.

    The defaults are the shipped pools (split seeds 0, 1, 2).  Other split seeds
    give held-out pools with exactly the same protocol, e.g.
    ``make_panels(tmp, splits=(3, 4, 5))``: used to check out of sample the
    policies whose defaults were chosen on the shipped pools.
    """
    summaries = []
    for ds in datasets:
        for s in splits:
            models = [m for m in MODELS
                      if only is None or f"{ds}_s{s}_{m}".startswith(only)]
            if not models:
                continue
            P = build_panels(ds, s)
            for m in models:
                summ = panel_pools(ds, s, m, out, panels=P)
                log(f"  {summ['stem']}: n={summ['n']} panel sizes={summ['sizes']} "
                    f"dup panels={summ['dup_panels_k8']} dup cands k8/k4="
                    f"{summ['dup_cands_k8']}/{summ['dup_cands_k4']}")
                summaries.append(summ)
    return summaries


# --------------------------------------------------------------------------
# demo pools


DEMO_DISPLAY = ("mean radius", "mean texture", "mean area")


def make_demo(out: Path) -> None:
    d = load_breast_cancer()
    X, y = d.data, d.target.astype(np.int64)
    tr, ev = split_indices(y, 0)
    models = [
        ("logreg", make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))),
        ("tree", DecisionTreeClassifier(max_depth=4, min_samples_leaf=5, random_state=0)),
        ("naive_bayes", GaussianNB()),
        ("knn", make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=7))),
    ]
    header = ["row_id", "label"]
    cols = [ev, y[ev]]
    for name, clf in models:
        clf.fit(X[tr], y[tr])
        proba = clf.predict_proba(X[ev])
        header += [f"pred_{name}", f"conf_{name}"]
        cols += [clf.classes_[np.argmax(proba, axis=1)].astype(np.int64), proba.max(axis=1)]
    names = list(d.feature_names)
    for feat in DEMO_DISPLAY:
        header.append(feat.replace(" ", "_"))
        cols.append(X[ev, names.index(feat)])
    write_csv(out / "demo_binary.csv", header, cols)
    cols_u = list(cols)
    cols_u[1] = [None] * len(ev)
    write_csv(out / "demo_unlabelled.csv", header, cols_u)


def make_digits_probs(out: Path) -> None:
    d = load_digits()
    X, y = d.data / 16.0, d.target.astype(np.int64)
    tr, ev = split_indices(y, 0)
    clf = LogisticRegression(C=1.0, max_iter=5000).fit(X[tr], y[tr])
    proba = clf.predict_proba(X[ev])
    assert list(clf.classes_) == list(range(10))
    header = ["row_id", "label"] + [f"prob_{c}" for c in range(10)]
    cols = [ev, y[ev]] + [proba[:, c] for c in range(10)]
    write_csv(out / "digits_probs.csv", header, cols)


def make_audit_stream(out: Path) -> dict:
    X, y = make_classification(
        n_samples=40_000, n_features=20, n_informative=6, n_redundant=4,
        flip_y=0.05, class_sep=0.8, random_state=0,
    )
    Xtr, ytr, Xs, ys = X[:20_000], y[:20_000], X[20_000:], y[20_000:]
    incumbent = LogisticRegression(max_iter=1000).fit(Xtr[:300], ytr[:300])
    candidate = LogisticRegression(max_iter=1000).fit(Xtr, ytr)
    pi = incumbent.predict(Xs).astype(np.int64)
    pc = candidate.predict(Xs).astype(np.int64)
    p1 = candidate.predict_proba(Xs)[:, 1]
    judge = 1.0 - np.abs(2.0 * p1 - 1.0)  # candidate uncertainty in [0, 1]
    cuts = np.quantile(Xtr[:, 0], [0.25, 0.5, 0.75])
    bucket = np.searchsorted(cuts, Xs[:, 0], side="right")
    slices = np.array(["x0_low", "x0_midlow", "x0_midhigh", "x0_high"])[bucket]
    header = ["row_id", "pred_incumbent", "pred_candidate", "label", "slice", "judge"]
    write_csv(out / "audit_stream.csv", header,
              [np.arange(len(ys)), pi, pc, ys.astype(np.int64), slices, judge])
    return dict(n=len(ys), disagreement=float((pi != pc).mean()),
                err_incumbent=float((pi != ys).mean()), err_candidate=float((pc != ys).mean()))


# --------------------------------------------------------------------------
# teaching examples (paper Figure 2, the worst case) and digits with images

WORST_CASE_N = 20
DIGIT_PNG_SCALE = 4  # each of the 8 x 8 pixels drawn as a 4 x 4 block: a crisp 32 x 32 PNG


def _pool_columns(pool):
    """Header and columns of a certlib Pool in the pred/conf format (row ids, labels)."""
    header, cols = ["row_id", "label"], [list(pool.row_ids),
                                         [pool.classes[c] if c >= 0 else None
                                          for c in pool.labels.tolist()]]
    for j, name in enumerate(pool.names):
        header += [f"pred_{name}", f"conf_{name}"]
        cols += [[pool.classes[c] for c in pool.preds[j].tolist()],
                 [int(w) for w in pool.weights[j]]]  # no ties: the weight is a confidence
    return header, cols


def make_teaching_examples(out: Path) -> None:
    """figure2.csv and worst_case.csv, built by certlib.teaching.worked_examples (one
    definition)."""
    sys.path.insert(0, str(HERE.parent))
    from certlib.teaching.worked_examples import figure2_pool, worst_case_pool

    for name, pool in (("figure2.csv", figure2_pool()),
                       ("worst_case.csv", worst_case_pool(WORST_CASE_N))):
        write_csv(out / name, *_pool_columns(pool))


def png_gray(pixels: np.ndarray) -> bytes:
    """A minimal 8-bit grayscale PNG (zlib level 9, no metadata): deterministic bytes."""
    import struct
    import zlib

    h, w = pixels.shape
    raw = b"".join(b"\x00" + bytes(pixels[r].astype(np.uint8).tolist()) for r in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def make_digits_images(out: Path) -> None:
    """digits_images.csv: the digits_probs rows unlabelled (an annotator's pool), with an
    ``image`` column naming digits_images/<row_id>.png, the 8 x 8 digit (ink dark on
    white, pixel values 0-16 scaled to 0-255)."""
    d = load_digits()
    X, y = d.data / 16.0, d.target.astype(np.int64)
    tr, ev = split_indices(y, 0)
    clf = LogisticRegression(C=1.0, max_iter=5000).fit(X[tr], y[tr])
    proba = clf.predict_proba(X[ev])
    folder = out / "digits_images"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in ev:
        img = 255 - np.round(d.images[i] * 255 / 16).astype(np.int64)
        img = np.kron(img, np.ones((DIGIT_PNG_SCALE, DIGIT_PNG_SCALE), dtype=np.int64))
        (folder / f"{i}.png").write_bytes(png_gray(img))
        paths.append(f"digits_images/{i}.png")
    header = ["row_id", "label"] + [f"prob_{c}" for c in range(10)] + ["image"]
    cols = [ev, [None] * len(ev)] + [proba[:, c] for c in range(10)] + [paths]
    write_csv(out / "digits_images.csv", header, cols)


# --------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE,
                    help="output directory (default: sample_data/)")
    ap.add_argument("--only", default=None,
                    help="only panel pools whose stem starts with this (e.g. wine_s0_tree); "
                         "skips the other files")
    ap.add_argument("--splits", default=None,
                    help="comma-separated split seeds (e.g. 3,4,5): write ONLY the panel "
                         "pools of these splits into OUT/panels (held-out pools; "
                         "requires --out outside sample_data/)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = args.out
    if args.splits is not None:
        try:
            splits = tuple(int(x) for x in args.splits.split(",") if x.strip())
        except ValueError:
            ap.error(f"--splits must be comma-separated integers; got {args.splits!r}")
        if not splits:
            ap.error("--splits needs at least one split seed")
        if out.resolve() == HERE:
            ap.error("--splits writes held-out pools; give --out DIR outside sample_data/")
        print(f"panel pools, splits {splits}:")
        make_panels(out, args.only, splits=splits)
        print(f"done in {time.perf_counter() - t0:.1f} s")
        return 0
    print("panel pools:")
    make_panels(out, args.only)
    if args.only is None:
        shutil.copyfile(out / "panels" / TEACHING_SOURCE, out / "teaching_k4.csv")
        make_demo(out)
        make_digits_probs(out)
        make_teaching_examples(out)
        make_digits_images(out)
        a = make_audit_stream(out)
        print(f"audit stream: n={a['n']} disagreement={a['disagreement']:.4f} "
              f"err incumbent={a['err_incumbent']:.4f} candidate={a['err_candidate']:.4f}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
