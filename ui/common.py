"""Pool choice for every page: a shipped sample pool or an uploaded file."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

import certlib
from certlib.errors import CertlibError

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = {
    "Breast cancer, 4 models (demo)": ROOT / "sample_data" / "demo_binary.csv",
    "Teaching pool (paper Figure 10 protocol)": ROOT / "sample_data" / "teaching_k4.csv",
    "Digits, 3 confidence scores (prob_ columns)": ROOT / "sample_data" / "digits_probs.csv",
    "Breast cancer, unlabelled (annotator)": ROOT / "sample_data" / "demo_unlabelled.csv",
}
MAX_UPLOAD_BYTES = 200 * 1024 * 1024


@st.cache_data(show_spinner=False)
def _load_sample(path: str, mtime: float):
    return certlib.load_pool(path)


def _load_upload(name: str, data: bytes):
    suffix = Path(name).suffix.lower()
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"upload{suffix}"
        p.write_bytes(data)
        pool = certlib.load_pool(p, max_bytes=MAX_UPLOAD_BYTES)
    return pool


def choose_pool(default: int = 0):
    """Sidebar: pick a sample pool or upload one.  Returns (pool, label) or (None, None)
    after showing one clear error message; never half-loads."""
    st.sidebar.header("Pool")
    src = st.sidebar.radio("Source", ["Sample data", "Upload a file"], key="pool_source")
    if src == "Sample data":
        label = st.sidebar.selectbox("Sample pool", list(SAMPLES), index=default,
                                     key="sample_choice")
        path = SAMPLES[label]
        try:
            return _load_sample(str(path), path.stat().st_mtime), label
        except CertlibError as exc:  # pragma: no cover - shipped files are tested
            st.error(str(exc))
            return None, None
    up = st.sidebar.file_uploader(
        "CSV or Parquet pool file", type=["csv", "tsv", "parquet", "pq"], key="upload",
        help="Columns: pred_<name>/conf_<name> pairs, or pred + conf_<name>, or prob_<class>; "
        "optional row_id and label (empty = not read yet).")
    if up is None:
        st.info("Upload a pool file, or switch the source to the sample data.")
        return None, None
    try:
        return _load_upload(up.name, up.getvalue()), up.name
    except CertlibError as exc:
        st.error(f"Could not load {up.name}: {exc}")
        return None, None


def pool_key(pool) -> str:
    """Cache key of a pool: its label-free hash plus its labels."""
    import hashlib

    return certlib.pool_hash(pool) + hashlib.sha256(pool.labels.tobytes()).hexdigest()[:16]


@st.cache_data(show_spinner="Bounding the minimum certificate ...", max_entries=32)
def cached_certify(_pool, key: str, tolerance: float):
    return certlib.certify(_pool, tolerance=tolerance)  # work limit: same result everywhere


@st.cache_data(show_spinner="Replaying the policy ...", max_entries=64)
def cached_replay(_pool, key: str, policy: str, rule: str, tolerance: float, seed: int):
    return certlib.replay(_pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed)


def pool_summary(pool) -> None:
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("rows (n)", f"{pool.n:,}")
    c2.metric("candidates (K)", pool.K)
    c3.metric("classes", pool.n_classes)
    c4.metric("labels known", f"{pool.n_labelled:,}")
    st.caption("Candidates in tie priority order: " + ", ".join(pool.names)
               + (" · one shared prediction (confidence-score choice)" if pool.shared_prediction else ""))


# ------------------------------------------------------------ labelling page
_RESERVED_KEYS = {"C", "R"}  # Streamlit keeps these for its own menu (st.button docs)


def class_shortcuts(classes) -> list:
    """One keyboard key per class for `st.button(shortcut=...)`: the class itself when it
    is one letter or digit (0/1 for a binary pool), else its first free letter, else a free
    digit; None when no key is left.  C and R are reserved by Streamlit."""
    used, out = set(), []
    for c in classes:
        text = str(c).strip().upper()
        options = [ch for ch in text if ch.isascii() and ch.isalnum()]
        key = next((k for k in options if k not in used and k not in _RESERVED_KEYS), None)
        if len(text) > 1 and text.isdigit():
            key = None  # "10" must not take the key of class 1
        out.append(key)
        if key:
            used.add(key)
    free = iter([d for d in "1234567890" if d not in used])
    return [k if k is not None else next(free, None) for k in out]


def undo_shortcut(class_keys) -> str:
    return "U" if "U" not in class_keys else "Backspace"


def shortcut_kwargs(key) -> dict:
    """``{"shortcut": key}`` when this Streamlit's st.button takes one, else nothing."""
    import inspect

    if key is None or "shortcut" not in inspect.signature(st.button).parameters:
        return {}
    return {"shortcut": key}
