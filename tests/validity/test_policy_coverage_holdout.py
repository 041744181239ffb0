"""Out-of-sample guard for ``expected-coverage``.

The first default (``model="mixture"``) was chosen on the shipped panel pools (split
seeds 0, 1, 2).  These tests run on the panel pools of split seed 3 (held out for it),
generated once with the same protocol and shipped in ``sample_data/holdout/`` so
that the guard does not change meaning with the scikit-learn version.  The current
default (the agreement model) was chosen on development seeds that include 3, so for it
these files are a regression guard only; its held-out evidence is fresh split seeds
600-611, 700-711 and 800-811 (bench/EXPERIMENTS.md).  Every run
must certify the full-pool winner; expected-coverage must never read more than
adaptive pair-sum + 5% of n on a pool (the bound; the default never reads more
there; the first default, ``model="mixture"``, read 3 labels = 5.6% of n more on
wine_s3_logreg_k8) and must read on average at least 17 points of n fewer (18.9 with
the default, 15.5 with the mixture; each data set weighted equally).  These are guards against
regressions on files, not the held-out claim: that is bench/bench_policies_holdout.py
on fresh split seeds (docs/benchmarks.md).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from certlib import Pool, load_pool, replay
from pool_files import assert_same_pool_file

ROOT = Path(__file__).resolve().parents[2]
SD = ROOT / "sample_data"
HELD_OUT_SPLIT = 3


def _generator():
    spec = importlib.util.spec_from_file_location("make_sample_data_holdout",
                                                  SD / "make_sample_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def held_out_pools():
    """All 12 panel pools of split seed 3 (3 data sets x tree/logreg x K = 4, 8)."""
    files = sorted((SD / "holdout").glob("*.csv"))
    assert len(files) == 12
    return files


def test_generator_split_flag_reproduces_shipped_pools(tmp_path):
    """The splits= option follows the shipped protocol (wine, seeds 0 and 3):
    ids, labels and predictions exactly, confidences to 1e-9."""
    _generator().make_panels(tmp_path, only="wine_s", splits=(0, HELD_OUT_SPLIT),
                             log=lambda *a: None)
    made = sorted(p.name for p in (tmp_path / "panels").glob("*.csv"))
    assert made == [f"wine_s{s}_{m}_k{k}.csv" for s in (0, HELD_OUT_SPLIT)
                    for m in ("logreg", "tree") for k in (4, 8)]
    for name in made:
        shipped = SD / ("panels" if "_s0_" in name else "holdout") / name
        assert_same_pool_file(tmp_path / "panels" / name, shipped)


def test_generator_splits_are_new_pools(held_out_pools):
    names = {p.name for p in held_out_pools}
    assert all(f"_s{HELD_OUT_SPLIT}_" in nm for nm in names)
    # a held-out pool is not a copy of a shipped one
    shipped = load_pool(str(SD / "panels" / "wine_s0_tree_k4.csv"))
    held = load_pool(str(SD / "holdout" / "wine_s3_tree_k4.csv"))
    assert not np.array_equal(shipped.row_ids, held.row_ids)


def test_expected_coverage_held_out(held_out_pools):
    saving = {}
    for f in held_out_pools:
        pool = load_pool(str(f))
        reads = {}
        for pol in ("adaptive-pair-sum", "expected-coverage"):
            r = replay(pool, policy=pol)
            assert r.certified, (f.name, pol)
            assert r.selected == r.full_pool_winner, (f.name, pol)
            reads[pol] = r.labels_read
        # worst case: never more than 5% of n above adaptive pair-sum
        assert reads["expected-coverage"] <= reads["adaptive-pair-sum"] + 0.05 * pool.n, \
            (f.name, reads)
        gap = (reads["adaptive-pair-sum"] - reads["expected-coverage"]) / pool.n
        saving.setdefault(f.name.split("_s")[0], []).append(gap)
    assert sorted(saving) == ["breast_cancer", "digits", "wine"]
    mean = float(np.mean([np.mean(v) for v in saving.values()]))
    assert mean >= 0.17, saving


@pytest.mark.parametrize("seed", range(3))
def test_expected_coverage_uninformative_confidences(seed):
    """Errors iid and independent of the confidences (paper Prop. 2/3 setting):
    the label model is wrong, the policy must still certify the winner and stay
    within 10% of n of adaptive pair-sum."""
    rng = np.random.default_rng(seed)
    n, K = 300, 4
    y = rng.integers(0, 2, n)
    rates = 0.20 + rng.choice([0.0, 0.01, 0.02, 0.03], size=K)
    errs = rng.random((K, n)) < rates[:, None]
    preds = np.where(errs, 1 - y[None, :], y[None, :])
    confs = np.round(rng.uniform(0.5, 1.0, size=(K, n)), 3)
    pool = Pool.from_arrays(preds, confs, labels=y)
    reads = {}
    for pol in ("adaptive-pair-sum", "expected-coverage"):
        r = replay(pool, policy=pol)
        assert r.certified and r.selected == r.full_pool_winner, pol
        reads[pol] = r.labels_read
    assert reads["expected-coverage"] <= reads["adaptive-pair-sum"] + 0.10 * n, reads
