"""The shipped sample data: present, well-formed, and reproducible."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pool_files import assert_same_pool_file

ROOT = Path(__file__).resolve().parents[2]
SD = ROOT / "sample_data"

DATASETS = ("breast_cancer", "wine", "digits")
SPLITS = (0, 1, 2)
MODELS = ("tree", "logreg")
NAMES8 = ["eps000", "eps005", "eps010", "eps020", "eps040", "eps080", "eps120", "eps160"]
NAMES4 = ["eps000", "eps010", "eps040", "eps120"]
N_EVAL = {"breast_cancer": 171, "wine": 54, "digits": 540}
DEMO_NAMES = ["logreg", "tree", "naive_bayes", "knn"]
DEMO_DISPLAY = ["mean_radius", "mean_texture", "mean_area"]

PANEL_FILES = [
    f"panels/{d}_s{s}_{m}_k{k}.csv"
    for d in DATASETS for s in SPLITS for m in MODELS for k in (4, 8)
]
POOL_FILES = PANEL_FILES + [
    "teaching_k4.csv", "demo_binary.csv", "demo_unlabelled.csv", "digits_probs.csv",
]


def pair_columns(names):
    cols = []
    for n in names:
        cols += [f"pred_{n}", f"conf_{n}"]
    return cols


def read(rel: str) -> pl.DataFrame:
    path = SD / rel
    assert path.is_file(), f"missing sample file {rel}"
    return pl.read_csv(path)


def check_binary_pairs(df: pl.DataFrame, names, labelled=True):
    assert df["row_id"].null_count() == 0
    assert df["row_id"].n_unique() == df.height
    if labelled:
        assert df["label"].null_count() == 0
        assert set(df["label"].unique().to_list()) <= {0, 1}
    for n in names:
        p = df[f"pred_{n}"]
        c = df[f"conf_{n}"].cast(pl.Float64).to_numpy()
        assert p.null_count() == 0 and set(p.unique().to_list()) <= {0, 1}
        assert np.isfinite(c).all()
        assert (c >= 0.5 - 1e-12).all() and (c <= 1.0).all()  # binary max-probability


def load_generator():
    spec = importlib.util.spec_from_file_location("make_sample_data", SD / "make_sample_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_total_size_small():
    total = sum(p.stat().st_size for p in SD.rglob("*") if p.is_file())
    assert total < 10 * 1024 * 1024


def test_readme_mentions_every_file():
    text = (SD / "README.md").read_text()
    for rel in POOL_FILES + ["audit_stream.csv"]:
        assert Path(rel).name in text, rel


@pytest.mark.parametrize("rel", PANEL_FILES)
def test_panel_pool(rel):
    df = read(rel)
    names = NAMES8 if rel.endswith("_k8.csv") else NAMES4
    assert df.columns == ["row_id", "label"] + pair_columns(names)
    dataset = Path(rel).name.split("_s")[0]
    assert df.height == N_EVAL[dataset]
    check_binary_pairs(df, names)
    assert 0 < df["label"].sum() < df.height


@pytest.mark.parametrize(
    "stem", [f"{d}_s{s}_{m}" for d in DATASETS for s in SPLITS for m in MODELS])
def test_k4_is_subset_of_k8(stem):
    k4 = read(f"panels/{stem}_k4.csv")
    k8 = read(f"panels/{stem}_k8.csv")
    assert k4.equals(k8.select(k4.columns))


def test_trees_have_confidence_ties():
    df = read("panels/breast_cancer_s1_tree_k4.csv")
    for n in NAMES4:
        assert df[f"conf_{n}"].n_unique() < df.height // 4


def test_confidences_survive_csv_round_trip_exactly():
    """polars and Python's float() read the same doubles: ties are preserved."""
    rel = "teaching_k4.csv"
    df = read(rel)
    with open(SD / rel, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for n in NAMES4:
        py = np.array([float(r[f"conf_{n}"]) for r in rows])
        assert np.array_equal(py, df[f"conf_{n}"].to_numpy())
        assert all(repr(float(v)) == r[f"conf_{n}"] for v, r in zip(py, rows))


def test_teaching_is_copy_of_panel_pool():
    assert_same_pool_file(SD / "teaching_k4.csv", SD / "panels/breast_cancer_s1_tree_k4.csv",
                          conf_atol=0.0)


def test_demo_binary():
    df = read("demo_binary.csv")
    assert df.columns == ["row_id", "label"] + pair_columns(DEMO_NAMES) + DEMO_DISPLAY
    assert df.height == 171
    check_binary_pairs(df, DEMO_NAMES)
    for c in DEMO_DISPLAY:
        assert df[c].null_count() == 0 and np.isfinite(df[c].to_numpy()).all()


def test_demo_unlabelled_matches_demo_without_labels():
    lab = read("demo_binary.csv")
    unl = read("demo_unlabelled.csv")
    assert unl.columns == lab.columns
    assert unl["label"].null_count() == unl.height
    check_binary_pairs(unl, DEMO_NAMES, labelled=False)
    rest = [c for c in lab.columns if c != "label"]
    assert unl.select(rest).equals(lab.select(rest))


def test_digits_probs():
    df = read("digits_probs.csv")
    assert df.columns == ["row_id", "label"] + [f"prob_{c}" for c in range(10)]
    assert df.height == 540
    assert df.null_count().sum_horizontal().item() == 0
    assert set(df["label"].unique().to_list()) == set(range(10))
    P = df.select([f"prob_{c}" for c in range(10)]).to_numpy()
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1).all()
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-9)
    acc = (P.argmax(axis=1) == df["label"].to_numpy()).mean()
    assert 0.85 < acc < 1.0  # a real but imperfect classifier


def test_audit_stream():
    """Digits traffic an annotator can judge: every item names its digit's image, which
    exists inside sample_data/ (the Audit page shows it); ten classes; the two models
    disagree on a few percent of items and the candidate is the better one."""
    from certlib.audit.batch import read_batch

    from ui.label_panel import image_in_folder

    df = read("audit_stream.csv")
    assert df.columns == ["row_id", "pred_incumbent", "pred_candidate", "label", "slice",
                          "judge", "image"]
    assert df.height == 20_000 and (SD / "audit_stream.csv").stat().st_size < 2 * 1024**2
    assert df.null_count().sum_horizontal().item() == 0
    for c in ("pred_incumbent", "pred_candidate", "label"):
        assert set(df[c].unique().to_list()) == set(range(10))
    j = df["judge"].to_numpy()
    assert np.isfinite(j).all() and (j >= 0).all() and (j <= 1).all()
    assert df["slice"].n_unique() == 4
    images = df["image"].unique().to_list()
    assert len(images) > 1000 and all(image_in_folder(v, SD) for v in images)
    # the content is the image alone: no column but the label says which digit it is
    assert set(read_batch(df.drop("label"), "s").columns) == {
        "row_id", "pred_incumbent", "pred_candidate", "slice", "judge", "image"}
    y = df["label"].to_numpy()
    f = df["pred_incumbent"].to_numpy()
    g = df["pred_candidate"].to_numpy()
    dis = (f != g).mean()
    assert 0.01 < dis < 0.10
    assert (g != y).mean() < (f != y).mean()  # the candidate is the better one


def test_generator_is_deterministic(tmp_path):
    """Two runs write the same file; the shipped file is what the protocol gives
    today (confidences to 1e-9: their last bits belong to scikit-learn)."""
    gen = load_generator()
    quiet = lambda *a, **k: None  # noqa: E731
    a, b = tmp_path / "a", tmp_path / "b"
    gen.make_panels(a, only="wine_s0_tree", log=quiet)
    gen.make_panels(b, only="wine_s0_tree", log=quiet)
    for k in (4, 8):
        rel = f"panels/wine_s0_tree_k{k}.csv"
        assert_same_pool_file(a / rel, b / rel, conf_atol=0.0)
        assert_same_pool_file(a / rel, SD / rel)


def _load_pool_function():
    try:
        import certlib.io as cio
    except ImportError:
        cio = None
    if cio is not None and hasattr(cio, "load_pool"):
        return cio.load_pool
    pytest.skip("certlib.io.load_pool is not available yet")


@pytest.mark.parametrize("rel", POOL_FILES)
def test_loads_through_certlib(rel):
    load_pool = _load_pool_function()
    pool = load_pool(SD / rel)
    df = read(rel)
    assert pool.n == df.height
    if rel == "digits_probs.csv":  # built-in scores msp, neg_entropy, margin
        assert pool.K == 3
        return
    expected_k = sum(c.startswith("pred_") for c in df.columns)
    assert pool.K == expected_k
