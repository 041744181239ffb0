"""Pool choice for every page: a shipped sample pool or a saved upload.

The pool chosen on one page is the pool of every page: it is kept in the session
(``pool_ref``) and in the URL (``?pool=sample:demo`` or ``?pool=upload:<sha256>``), so
a reload, a server restart or a second tab opens it again.  An upload is validated
and saved at once under its content hash (`certlib.labelling.saved_pools`), and the
pool read to validate it is the one the page shows (read once, unless a class set
declared on the Pool page asks for a second read with it); a bad file gets
the library's one message next to the uploader and the previous pool stays active.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import certlib
from certlib.errors import CertlibError
from certlib.labelling.saved_pools import SavedPools
from ui.column_map import PENDING, convention_map, map_without, mapping_form, plan_upload
from ui.text import plain


ROOT = Path(__file__).resolve().parents[1]
SAMPLES = {  # key in the URL -> (label, file)
    "demo": ("Breast cancer, 4 models (demo)", ROOT / "sample_data" / "demo_binary.csv"),
    "teaching": ("Teaching pool (paper Figure 10 protocol)",
                 ROOT / "sample_data" / "teaching_k4.csv"),
    "digits": ("Digits, 3 confidence scores (prob_ columns)",
               ROOT / "sample_data" / "digits_probs.csv"),
    "unlabelled": ("Breast cancer, unlabelled (annotator)",
                   ROOT / "sample_data" / "demo_unlabelled.csv"),
    "figure2": ("Paper Figure 2: four rows, two candidates", ROOT / "sample_data" / "figure2.csv"),
    "worst_case": ("Worst case: C(0) = n - 1 (n = 20)", ROOT / "sample_data" / "worst_case.csv"),
    "digits_images": ("Digits with images, unlabelled (annotator)",
                      ROOT / "sample_data" / "digits_images.csv"),
}


MAX_UPLOAD_BYTES = 200 * 1024 * 1024


@st.cache_data(show_spinner=False)
def _load_sample(path: str, mtime: float, declared: tuple | None = None):
    return certlib.load_pool(path, classes=declared)


@st.cache_data(show_spinner=False, max_entries=16)
def _load_saved(folder: str, digest: str, mtime: tuple, declared: tuple | None = None,
                _read=None):
    """The pool of a saved upload; ``mtime``: its file's and its note's (a mapping saved
    again for the same files changes the pool); ``_read`` (left out of the cache key):
    the pool just read from the same bytes to validate them (`SavedPools.add`), kept as
    this entry so the file is not read a second time."""
    if _read is not None:
        return _read
    return SavedPools(folder).load(digest, max_bytes=MAX_UPLOAD_BYTES, classes=declared)


def _mtimes(folder: SavedPools, saved) -> tuple:
    note = folder.folder / f"{saved.digest}.json"
    return saved.path.stat().st_mtime_ns, note.stat().st_mtime_ns if note.exists() else 0


# the paper's panel protocol on other data sets (sample_data/README.md): offered by the
# Figure 10 page, in the picker only once chosen (36 files would bury the samples)
PANELS = ROOT / "sample_data" / "panels"


def panel_about(stem: str) -> tuple[str, str]:
    """(short, long) description of a shipped panel pool from its file name,
    ``<dataset>_s<split>_<model>_k<K>`` (sample_data/README.md)."""
    data, split, model, k = stem.rsplit("_", 3)
    data = {"breast_cancer": "Breast Cancer", "wine": "Wine", "digits": "Digits"}.get(
        data, data)
    kind = {"tree": "trees", "logreg": "logistic regressions"}.get(model, model)
    short = f"{data}, split {split[1:]}, {kind}, K = {k[1:]}"
    return short, (f"{data} (scikit-learn), evaluation split {split[1:]}; the candidates are "
                   f"{kind} on {k[1:]} feature panels of the paper's backward search "
                   "(section 6.1)")


def panels() -> dict:
    """Panel pool reference (``panel:<file stem>``) -> label, for every shipped panel."""
    return {f"panel:{p.stem}": f"Panel pool: {panel_about(p.stem)[0]}"
            for p in sorted(PANELS.glob("*.csv"))}


def load_ref(ref: str, declared: tuple | None = None):
    """(pool, label) of a pool reference, read with the declared class set (None: the
    classes are inferred); raises the library's `CertlibError`."""
    kind, key = ref.split(":", 1)
    if kind == "sample":
        label, path = SAMPLES[key]
        return _load_sample(str(path), path.stat().st_mtime, declared), label
    if kind == "panel":
        path = PANELS / f"{key}.csv"
        if ref not in panels():  # a name from the listing only: nothing outside is read
            raise CertlibError(f"no shipped panel pool is called {key!r}")
        return _load_sample(str(path), path.stat().st_mtime, declared), panels()[ref]
    folder = SavedPools()
    s = folder.get(key)
    return _load_saved(str(folder.folder), key, _mtimes(folder, s), declared), s.name


def class_settings():
    """The active pool's `ClassSettings` (declared class set and display names)."""
    return SavedPools().class_settings(pool_ref() or "sample:demo")


def _options(saved) -> dict:
    """Selectbox label -> pool reference, samples first, then saved uploads (newest first)."""
    opts = {label: f"sample:{key}" for key, (label, _) in SAMPLES.items()}
    for s in saved:
        opts[f"{s.name} (uploaded {s.uploaded[:16].replace('T', ' ')}, {s.digest[:8]})"] = \
            f"upload:{s.digest}"
    return opts


def _uploader_key() -> str:
    return f"upload_{st.session_state.get('_upload_gen', 0)}"


def _refuse(names: str, exc: CertlibError) -> None:
    """Say why an upload was refused, under the page's title, and empty the uploader (a
    refused file must not stay listed as if it had loaded)."""
    st.session_state["_upload_error"] = f"Could not load {plain(names)}: {plain(exc)}"
    st.session_state["_upload_error_page"] = st.session_state.get("_page")
    st.session_state["_upload_gen"] = st.session_state.get("_upload_gen", 0) + 1


def _save(folder: SavedPools, files, column_map=None):
    """Validate and save an upload with a progress bar saying what is being done; the
    pool read to validate it is kept as the cached pool of the saved upload."""
    bar = st.progress(0.0, text="Reading the upload")

    def step(stage: str, done: float) -> None:
        bar.progress(min(1.0, max(0.0, float(done))), text=stage)

    try:
        saved = folder.add_files(files, column_map=column_map, max_bytes=MAX_UPLOAD_BYTES,
                                 progress=step)
    finally:
        bar.empty()
    if saved.pool is not None:  # read without declared classes, as `load_ref(ref, None)`
        _load_saved(str(folder.folder), saved.digest, _mtimes(folder, saved), None,
                    _read=saved.pool)
    # an empty uploader: the uploader keeps every file it was given, so the next file
    # would otherwise be read together with this one as a pool of one file per model
    st.session_state["_upload_gen"] = st.session_state.get("_upload_gen", 0) + 1
    return saved


def _take_upload(folder: SavedPools):
    """Save newly chosen uploads; returns the reference of the saved pool, or None after
    showing why not, or when the files wait for their column mapping (`ui.column_map`)."""
    ups = st.session_state.get(_uploader_key()) or []
    if not isinstance(ups, list):
        ups = [ups]
    if not ups:
        return None
    seen = tuple(u.file_id for u in ups)
    if st.session_state.get("_upload_seen") == seen:
        return None
    st.session_state["_upload_seen"] = seen
    _drop_pending(folder)  # a new choice of files replaces a pending one
    files = [(u.name, u.getvalue()) for u in ups]
    names = " + ".join(u.name for u in ups)
    try:  # the same files saved before (under another name too): the same pool, its map
        digest = folder.digest_of(files)
        before = folder.get(digest).name
        saved_map = folder.column_map(digest)
    except CertlibError:
        before, saved_map = None, None
    try:
        if saved_map is None:
            pending = plan_upload(files)
            if pending is not None:
                _hold(folder, pending)
                st.session_state.pop("_upload_error", None)
                return None
        saved = _save(folder, files, column_map=saved_map)
    except CertlibError as exc:
        _refuse(names, exc)
        return None
    st.session_state.pop("_upload_error", None)
    if before is not None and before != saved.name:
        st.session_state["_upload_note"] = (
            f"{plain(saved.name)} holds the same content as {plain(before)}, saved before: "
            "it is the same pool (its labels included), now listed under the new name.")
    if saved_map is not None:
        st.session_state["_upload_note"] = (
            f"{plain(saved.name)} was read with the column mapping saved with it before "
            "(the Pool page shows it and can change it).")
    return f"upload:{saved.digest}"


def _hold(folder: SavedPools, pending: dict) -> None:
    """A pending upload in the session, its files on disk and their key in the address:
    a reload (a new session) finds it again."""
    pending["held"] = folder.hold(pending["files"])
    st.session_state[PENDING] = pending
    st.query_params["pending"] = pending["held"]


def _drop_pending(folder: SavedPools) -> None:
    pending = st.session_state.pop(PENDING, None) or {}
    if pending.get("held"):
        folder.release(pending["held"])
    st.query_params.pop("pending", None)


def _restore_pending(folder: SavedPools) -> None:
    """After a reload: the upload that waited for its mapping, from the address."""
    key = st.query_params.get("pending")
    if not key or st.session_state.get(PENDING):
        return
    try:
        pending = plan_upload(folder.held(key), force=True)
    except CertlibError as exc:
        st.query_params.pop("pending", None)
        st.warning(f"The upload that waited for its column mapping could not be reopened: "
                   f"{plain(exc)}")
        return
    pending["held"] = key
    st.session_state[PENDING] = pending
    st.info("Your upload is still waiting for its column mapping (choices made before the "
            "page was reloaded start again from the guess).")


def _pending_form(folder: SavedPools, active: str) -> None:
    """The pending upload's mapping form in the main area; the page stops under it."""
    pending = st.session_state[PENDING]

    def save(cmap):
        try:
            saved = _save(folder, pending["files"], column_map=cmap)
        except CertlibError as exc:
            return (f"Could not load {plain(pending['where'])} with this mapping: "
                    f"{plain(exc)}  \nNothing was saved; the active pool is still "
                    f"{plain(active)}.")
        _drop_pending(folder)
        st.session_state["pool_ref"] = f"upload:{saved.digest}"
        st.query_params["pool"] = f"upload:{saved.digest}"
        return None

    def cancel():
        _drop_pending(folder)
        st.session_state["_upload_gen"] = st.session_state.get("_upload_gen", 0) + 1

    def rejoin(column):
        try:
            again = plan_upload(pending["files"], force=True, join_on=column)
            again["held"] = pending.get("held")
            st.session_state[PENDING] = again
        except CertlibError as exc:
            pending["join_failed"] = column
            st.session_state["_map_error"] = (f"Could not join the files on {plain(column)}: "
                                              f"{plain(exc)}; they stay joined on "
                                              f"{plain(pending['join_on'])}.")

    mapping_form(pending, save, cancel, rejoin)
    st.caption(f"The active pool is still {plain(active)} until the upload is loaded.")
    st.stop()


def saved_column_map():
    """The column map the active upload was saved with (None: a sample, or a file in the
    convention's columns)."""
    kind, key = (pool_ref() or "sample:demo").split(":", 1)
    if kind != "upload":
        return None
    try:
        return SavedPools().column_map(key)
    except CertlibError:
        return None


def remap_saved() -> None:
    """Open the mapping form again on the active upload's saved files, its saved map
    proposed."""
    folder = SavedPools()
    key = (pool_ref() or "").split(":", 1)[1]
    try:
        pending = plan_upload(folder.files(key), force=True)
    except CertlibError as exc:
        st.session_state["_upload_error"] = f"Could not reopen the mapping: {plain(exc)}"
        st.session_state["_upload_error_page"] = st.session_state.get("_page")
        return
    cmap = folder.column_map(key)
    if pending is not None and cmap is not None:
        pending["guess"] = cmap.to_json()
    if pending is not None:
        _hold(folder, pending)


def merge_upload_duplicates(pool, never_win) -> str | None:
    """Save the active upload again with a map that leaves out ``never_win`` (candidates
    that can never win: duplicates of an earlier one); the merged pool becomes active.
    Returns why it cannot, or None."""
    kind, key = (pool_ref() or "sample:demo").split(":", 1)
    if kind != "upload":
        return ("A shipped sample is not changed here; add a copy of its file to merge its "
                "duplicates, or use `certlib ... --merge-duplicates`.")
    folder = SavedPools()
    try:
        files = folder.files(key)
        cmap = folder.column_map(key)
        if cmap is None and len(files) == 1:
            cmap = convention_map(pool, plan_upload(files, force=True)["columns"])
        if cmap is None:
            return ("This file's layout (one shared prediction, or prob_ columns) has no "
                    "column map to leave a candidate out of; use `certlib ... "
                    "--merge-duplicates`.")
        saved = _save(folder, files, column_map=map_without(cmap, never_win))
    except CertlibError as exc:
        return f"Could not merge: {plain(exc)}"
    st.session_state["pool_ref"] = f"upload:{saved.digest}"
    st.session_state["_upload_note"] = (
        f"Merged: {', '.join(plain(n) for n in never_win)} left out (the same candidate as "
        "an earlier one, which it can never beat); its columns are now shown with the rows "
        "only. Change the mapping brings it back.")
    return None


def _picked() -> None:
    st.session_state.pop("_upload_error", None)  # the user moved on to another pool
    options = st.session_state["_pool_options"]
    st.session_state["pool_ref"] = options[st.session_state["pool_choice"]]


def choose_panel(ref: str) -> None:
    """Make the shipped panel pool ``ref`` (`panels`) the active pool of every page."""
    st.session_state.pop("_upload_error", None)
    st.session_state["pool_ref"] = ref


def pool_ref() -> str | None:
    """The reference of the pool every page shows (None before the first choice)."""
    return st.session_state.get("pool_ref")


def choose_pool(default: str = "demo"):
    """Sidebar: the active pool (a sample or a saved upload) and an uploader.

    Returns (pool, label) or (None, None) after one clear message; never half-loads.
    ``default`` is the sample shown when nothing was chosen yet in this session or URL.
    """
    folder = SavedPools()
    new_ref = _take_upload(folder)
    saved = folder.recent()
    options = _options(saved)
    by_ref = {ref: label for label, ref in options.items()}
    # this session's choice first (a page switch may carry an old address), then the
    # address (a reload or a new tab), then the page's default
    ref = new_ref or pool_ref() or st.query_params.get("pool") or f"sample:{default}"
    if ref not in by_ref and ref.startswith("upload:"):
        try:  # an older upload beyond the recent list, or one named in a shared URL
            s = folder.get(ref.split(":", 1)[1])
            options[f"{s.name} ({s.digest[:8]})"] = ref
            by_ref[ref] = f"{s.name} ({s.digest[:8]})"
        except CertlibError as exc:
            st.sidebar.warning(f"The pool in the address is not available: {plain(exc)}")
    elif ref not in by_ref and ref in panels():  # chosen on the Figure 10 page
        options[panels()[ref]] = ref
        by_ref[ref] = panels()[ref]
    elif ref not in by_ref:  # a hand-edited or old address: say what is shown instead
        samples = ", ".join(r for r in by_ref if r.startswith("sample:"))
        st.sidebar.warning(f"The pool in the address, {plain(ref)}, is not one this server "
                           f"knows (samples: {plain(samples)}; uploads: upload:<hash>); "
                           f"showing {plain(by_ref.get(f'sample:{default}', default))}.")
    if ref not in by_ref:
        ref = f"sample:{default}"
    # the widget shows the session's pool; a user's pick reaches pool_ref by its callback
    st.session_state["pool_choice"] = by_ref[ref]
    st.session_state["_pool_options"] = options
    st.session_state["pool_ref"] = ref

    st.sidebar.header("Pool")
    st.sidebar.selectbox("Active pool (every page)", list(options), key="pool_choice",
                         on_change=_picked)
    st.query_params["pool"] = ref
    st.sidebar.file_uploader(
        "Add a pool file (CSV or Parquet)", type=["csv", "tsv", "parquet", "pq", "zip"],
        key=_uploader_key(), accept_multiple_files=True,
        help="One file with a prediction and a confidence (or probability) column per "
        "model, or one file per model (or a zip of them) sharing an id column. Columns "
        "named otherwise than certlib's (pred_<name>/conf_<name>, label, row_id) are "
        "mapped on the page before anything is saved. Saved on this server under its "
        "content hash, so a reload or a restart finds it again.")
    note = st.session_state.pop("_upload_note", None)
    if note:
        st.info(note)
    if st.session_state.get("_upload_error_page") != st.session_state.get("_page"):
        st.session_state.pop("_upload_error", None)  # the user went on to another page
    if st.session_state.get("_upload_error"):
        # in the main area, under the page's title: the sidebar's foot is often off screen
        st.error(st.session_state["_upload_error"]
                 + f"  \nNothing was saved; the active pool is still {plain(by_ref[ref])}.")
    _restore_pending(folder)
    if st.session_state.get(PENDING):
        _pending_form(folder, by_ref[ref])

    declared = folder.class_settings(ref).declared
    try:
        return load_ref(ref, declared)
    except CertlibError as exc:
        if declared is None:
            st.error(f"Could not load the pool: {plain(exc)}")
            return None, None
        # the file holds a class outside the declared set: one message by the picker;
        # the Pool page's class form can change or clear the declaration
        st.sidebar.error(f"The pool does not fit its declared classes "
                         f"{', '.join(plain(c) for c in declared)}: {plain(exc)}")
        st.info("Change or clear the declared class set on the Pool page.")
        return None, None


def mismatch_message(store, project_id, exc) -> str:
    """Why a labelling project does not open on the active pool, in words an annotator can
    act on (the store's message speaks of pool hashes).  The usual cause on one file: a
    class set declared on the Pool page after the project started."""
    try:
        project = store.project(int(project_id))
    except (CertlibError, TypeError, ValueError):
        return plain(exc)
    name = f"Project {project.id} ({plain(project.pool_name)})"
    ref = pool_ref()
    declared = SavedPools().class_settings(ref).declared if ref else None
    if declared is not None:
        try:
            bare = load_ref(ref, None)[0]
        except CertlibError:
            bare = None
        if bare is not None and bare.matches_hash(project.pool_hash):
            return (f"{name} was started on this pool before its class set was declared as "
                    f"{', '.join(plain(c) for c in declared)} on the Pool page. Clear the "
                    "declared class set there to resume it; its labels are kept.")
    return (f"{name} was started on another pool file, or on this one with another class "
            "set declared on the Pool page. Choose the pool it was started on in the sidebar "
            "(with the class set it had) to resume it, or start a new project on this pool. "
            f"(Its pool hash begins {project.pool_hash[:12]}.)")


def pool_folder() -> Path:
    """The folder of the active pool's file: sample_data for a sample, the saved-pools
    folder for an upload (so an upload's image paths usually name nothing)."""
    kind, key = (pool_ref() or "sample:demo").split(":", 1)
    if kind == "sample" and key in SAMPLES:
        return SAMPLES[key][1].parent
    if kind == "panel":
        return PANELS
    return SavedPools().folder


def pool_summary(pool) -> None:
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("rows (n)", f"{pool.n:,}")
    c2.metric("candidates (K)", pool.K)
    c3.metric("classes", pool.n_classes)
    c4.metric("labels known", f"{pool.n_labelled:,}")
    names = ", ".join(plain(n) for n in pool.names)
    st.caption("Candidates in tie priority order: " + names
               + (" · one shared prediction (confidence-score choice)"
                  if pool.shared_prediction else ""))
