"""One file, one pool, on every machine: the built-in scores of a prob_ pool and its hash
do not depend on the CPU or the numpy build, and stores and records made under the
format-1 hash still open."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib import load_pool, pool_hash
from certlib.core.derived_scores import SCORE_RULE, builtin_scores, det_log, legacy_scores
from certlib.labelling.record import verify_record
from certlib.labelling.store import LabelStore

ROOT = Path(__file__).resolve().parents[2]
SD = ROOT / "sample_data"
FIX = Path(__file__).resolve().parents[1] / "fixtures"
# what the pre-format-2 code wrote for digits_images.csv where numpy's log is the C
# library's (no AVX-512): the hash of the fixture store's project and record
DIGITS_FORMAT1 = "d4ff7451b324de371c74616ab79bbc41a05b2a1270dfa8ee49dc6a8564d55873"


# ------------------------------------------------------------------ the logarithm
def _ulps(value: float, x: float) -> float:
    with localcontext() as ctx:
        ctx.prec = 60
        true = Decimal(x).ln()
        return float(abs(Decimal(value) - true) / Decimal(math.ulp(value or 5e-324)))


EDGES = [5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-17, 0.1, 0.5,
         0.7071067811865475, 0.7071067811865476, 0.9999999999999999, 1.0, 1.5, 2.0, 1e300]


def test_det_log_is_accurate_on_edges_and_a_sample():
    rng = np.random.default_rng(28)
    x = np.concatenate([EDGES, rng.random(3000), rng.random(500) ** 30])
    y = det_log(x)
    assert max(_ulps(v, u) for v, u in zip(y.tolist(), x.tolist())) < 1.0
    assert det_log(np.array([1.0]))[0] == 0.0


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=5e-324, max_value=1e308, allow_nan=False, allow_infinity=False))
def test_det_log_within_one_ulp(x):
    assert _ulps(float(det_log(np.array([x]))[0]), x) < 1.0


def _scalar_log(x: float) -> float:
    """The same algorithm on Python floats, one value at a time: an independent reference
    (no numpy, no SIMD) that must agree bit for bit."""
    from certlib.core import derived_scores as ds

    m, k = math.frexp(x)
    if m < ds._SQRT_HALF:
        m, k = m * 2.0, k - 1
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    r = ds._SERIES[-1]
    for c in ds._SERIES[-2::-1]:
        r = r * z + c
    r = r * z
    hfsq = 0.5 * f * f
    return k * ds._LN2_HI - ((hfsq - (s * (hfsq + r) + k * ds._LN2_LO)) - f)


def test_det_log_equals_a_pure_python_reference_bit_for_bit():
    rng = np.random.default_rng(1)
    x = np.concatenate([EDGES, rng.random(20000), rng.random(2000) ** 50])
    got = det_log(x)
    ref = np.array([_scalar_log(v) for v in x.tolist()])
    assert got.tobytes() == ref.tobytes()


def test_scores_of_permuted_rows_tie_exactly_and_zero_log_zero_is_zero():
    P = np.array([[0.2, 0.3, 0.5], [0.5, 0.2, 0.3], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    msp, ne, margin = builtin_scores(P)
    assert ne[0] == ne[1] and margin[0] == margin[1] and msp[0] == msp[1] == 0.5
    assert ne[2] == 0.0 and margin[2] == 1.0
    assert abs(ne[3] - 0.5 * math.log(0.5) * 2) < 1e-15


# --------------------------------------------- the same bytes with SIMD on and off
_PROBE = r"""
import hashlib, json, sys
import numpy as np
from certlib import load_pool, pool_hash
from certlib.core.derived_scores import builtin_scores
rng = np.random.default_rng(7)
P = rng.dirichlet(np.ones(10) * 0.3, size=20000)
out = {"scores": hashlib.sha256(np.vstack(builtin_scores(P)).tobytes()).hexdigest(),
       "log": hashlib.sha256(np.log(P).tobytes()).hexdigest()}
for name in sys.argv[1:]:
    pool = load_pool(name)
    out[name] = [pool_hash(pool), hashlib.sha256(pool.confs.tobytes()).hexdigest()]
print(json.dumps(out))
"""


def _dispatched_features() -> list[str]:
    """The CPU features numpy found here and dispatches to at run time (not its baseline):
    what ``NPY_DISABLE_CPU_FEATURES`` can switch off."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, \
        __cpu_features__

    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f) and f not in
            __cpu_baseline__]


def _probe(tmp_path, disable: list[str]) -> dict:
    env = dict(os.environ)
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    if disable:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(disable)
    files = [str(SD / "digits_images.csv"), str(SD / "digits_probs.csv"), str(tmp_path)]
    out = subprocess.run([sys.executable, "-c", _PROBE, *files[:2]], env=env,
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout)


def test_scores_and_hash_are_identical_with_numpy_simd_on_and_off(tmp_path):
    features = _dispatched_features()
    if not features:
        pytest.skip("numpy dispatches to no CPU feature beyond its baseline here")
    on, off = _probe(tmp_path, []), _probe(tmp_path, features)
    assert on["scores"] == off["scores"]
    name = str(SD / "digits_images.csv")
    assert on[name] == off[name]
    assert on[str(SD / "digits_probs.csv")] == off[str(SD / "digits_probs.csv")]
    # (on a CPU with AVX-512, numpy's own log differs: on["log"] != off["log"]; the
    # scores must not follow it)


# ------------------------------------------------------------------- the pool hash
def _prob_file(path: Path, P: np.ndarray, extra_conf=None) -> Path:
    cols = [f"prob_{c}" for c in range(P.shape[1])]
    lines = [",".join(["row_id", *cols] + (["conf_x"] if extra_conf is not None else []))]
    for i, row in enumerate(P):
        cells = [str(i), *(repr(float(v)) for v in row)]
        if extra_conf is not None:
            cells.append(repr(float(extra_conf[i])))
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_hash_covers_the_probabilities_as_read(tmp_path):
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(3), size=50)
    a = load_pool(_prob_file(tmp_path / "a.csv", P))
    assert a.derived is not None and a.derived.rule == SCORE_RULE
    assert a.derived.probabilities.tobytes() == P.tobytes()
    assert a.derived.candidates == a.names[:3] == ("msp", "neg_entropy", "margin")
    Q = P.copy()
    Q[7, 0] = np.nextafter(Q[7, 0], 1.0)  # one ulp: another file, another pool
    assert pool_hash(load_pool(_prob_file(tmp_path / "b.csv", Q))) != pool_hash(a)
    again = load_pool(_prob_file(tmp_path / "c.csv", P))
    assert pool_hash(again) == pool_hash(a)
    assert pool_hash(a.with_labels(np.zeros(a.n, dtype=np.int64))) == pool_hash(a)
    # a conf_ candidate in a prob_ file is read, not derived: it is hashed as read
    c1 = load_pool(_prob_file(tmp_path / "d.csv", P, extra_conf=np.arange(50) / 50))
    c2 = load_pool(_prob_file(tmp_path / "e.csv", P, extra_conf=np.arange(50) / 49))
    assert pool_hash(c1) != pool_hash(c2) and c1.K == 4


def _format1(pool) -> str:
    """Format 1 from its definition (SPEC section 12), written out again here."""
    h = hashlib.sha256()

    def part(tag, payload):
        h.update(tag.encode() + len(payload).to_bytes(8, "little") + payload)

    meta = {"format": "certlib-pool-hash-1", "objective": pool.objective,
            "names": list(pool.names), "classes": list(pool.classes), "K": pool.K,
            "n": pool.n}
    part("meta", json.dumps(meta, sort_keys=True, default=str).encode())
    part("row_ids", json.dumps(list(pool.row_ids), default=str).encode())
    part("preds", np.ascontiguousarray(pool.preds, dtype="<i8").tobytes())
    part("confs", np.ascontiguousarray(pool.confs, dtype="<f8").tobytes())
    return h.hexdigest()


def test_pools_of_read_confidences_keep_format_1():
    for name in ("demo_binary.csv", "demo_unlabelled.csv", "teaching_k4.csv"):
        pool = load_pool(SD / name)
        assert pool.derived is None and pool.legacy_hashes == ()
        assert pool_hash(pool) == _format1(pool)


def test_legacy_hashes_are_format_1_over_the_old_scores():
    pool = load_pool(SD / "digits_images.csv")
    assert DIGITS_FORMAT1 in pool.legacy_hashes
    assert pool_hash(pool) not in pool.legacy_hashes
    assert pool.matches_hash(pool_hash(pool)) and pool.matches_hash(DIGITS_FORMAT1)
    assert not pool.matches_hash("0" * 64)
    old = legacy_scores(pool.derived.probabilities, "libm")
    new = np.vstack(builtin_scores(pool.derived.probabilities))
    assert np.array_equal(old[[0, 2]], new[[0, 2]])  # msp and margin never changed
    assert np.allclose(old[1], new[1], rtol=0, atol=1e-15)


# ------------------------------------------- stores and records of format 1
def test_a_store_written_before_format_2_opens_its_projects(tmp_path):
    path = tmp_path / "store.db"
    shutil.copy(FIX / "store_hash_format1.db", path)
    store = LabelStore(path)
    digits = load_pool(SD / "digits_images.csv")
    demo = load_pool(SD / "demo_unlabelled.csv")
    assert store.project(1).pool_hash == DIGITS_FORMAT1
    found = store.projects(digits)
    assert [p.id for p in found] == [1] and found[0].pool_hash == pool_hash(digits)
    assert store.project(1).pool_hash == pool_hash(digits)  # rewritten once, in place
    assert [p.id for p in store.projects(demo)] == [2]  # format 1 is its hash still
    assert store.find_project(digits) == 1 and store.open_project(digits, "again") == 1
    pr = store.progress(1, digits)
    assert pr.session.t == 5
    row = pr.session.next_row()
    store.append_label(1, digits.row_ids[row], digits.classes[0], "ana", pool=digits)
    assert store.progress(1, digits).session.t == 6
    assert len(store.events(1)) == 6
    assert verify_record(store.export_record(1, digits), digits).ok


def test_a_project_opened_by_id_before_any_lookup_still_matches(tmp_path):
    path = tmp_path / "store.db"
    shutil.copy(FIX / "store_hash_format1.db", path)
    digits = load_pool(SD / "digits_images.csv")
    store = LabelStore(path)
    project = store.project(1)
    assert project.pool_hash == DIGITS_FORMAT1 and digits.matches_hash(project.pool_hash)
    LabelStore._check_pool(project, digits)  # accepted as it is


def test_records_written_before_format_2_still_verify():
    for name in ("digits_images", "demo_unlabelled"):
        record = json.loads((FIX / f"record_hash_format1_{name}.json").read_text())
        pool = load_pool(SD / f"{name}.csv")
        result = verify_record(record, pool)
        assert result.ok, result
    record = json.loads((FIX / "record_hash_format1_digits_images.json").read_text())
    record["pool"]["hash"] = "0" * 64
    assert not verify_record(record, load_pool(SD / "digits_images.csv")).ok
