"""Pool choice for every page: a shipped sample pool or a saved upload.

The pool chosen on one page is the pool of every page: it is kept in the session
(``pool_ref``) and in the URL (``?pool=sample:demo`` or ``?pool=upload:<sha256>``), so
a reload, a server restart or a second tab opens it again.  An upload is validated
and saved at once under its content hash (`certlib.labelling.saved_pools`); a bad file gets
the library's one message next to the uploader and the previous pool stays active.
"""

from __future__ import annotations

import hashlib
import html
import math
import numbers
import re
from pathlib import Path, PurePosixPath

import numpy as np
import streamlit as st

import certlib
from certlib.errors import CertlibError
from certlib.labelling.saved_pools import SavedPools

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
# settings that pages share (`sticky`): one name per setting
TOLERANCE, POLICY, RULE, SEED = "tolerance", "policy", "rule", "seed"
DEFAULT_POLICY = "adaptive-pair-sum"
MAX_TOLERANCE = 0.5  # every page's tolerance box
RULES = ("shared", "centered", "separate")
URL_SETTINGS = {  # name: (default, the values any page can take)
    TOLERANCE: (0.0, lambda v: 0 <= v <= MAX_TOLERANCE),
    POLICY: (DEFAULT_POLICY, lambda v: v in certlib.policy_names()),
    RULE: ("shared", lambda v: v in RULES),
    SEED: (0, lambda v: 0 <= v < 2 ** 53),  # a browser's integers end there
}


_PLAIN_WORD = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")


def plain(text) -> str:
    """Text from a file, a file name or a user, for an element that renders Markdown:
    a code span, inside which Markdown, HTML, math and bare-URL autolinks are inert,
    so no link or image can form and the reader sees the text as typed.  The fence is
    longer than any run of backticks in the text (CommonMark)."""
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        return str(text)  # a number cannot hold Markdown
    s = " ".join(str(text).splitlines())
    if not s:
        return ""
    if _PLAIN_WORD.fullmatch(s):
        return s  # letters and digits joined by inner - or _: nothing Markdown reads
    runs = [len(r) for r in re.findall(r"`+", s)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if s[0] in "` " or s[-1] in "` " else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def plot_text(text) -> str:
    """Text from a file for a plotly title or label (plotly reads a little HTML,
    links included): HTML-escaped."""
    return html.escape(str(text))


@st.cache_data(show_spinner=False)
def _load_sample(path: str, mtime: float, declared: tuple | None = None):
    return certlib.load_pool(path, classes=declared)


@st.cache_data(show_spinner=False, max_entries=16)
def _load_saved(folder: str, digest: str, mtime: float, declared: tuple | None = None):
    return SavedPools(folder).load(digest, max_bytes=MAX_UPLOAD_BYTES, classes=declared)


def load_ref(ref: str, declared: tuple | None = None):
    """(pool, label) of a pool reference, read with the declared class set (None: the
    classes are inferred); raises the library's `CertlibError`."""
    kind, key = ref.split(":", 1)
    if kind == "sample":
        label, path = SAMPLES[key]
        return _load_sample(str(path), path.stat().st_mtime, declared), label
    folder = SavedPools()
    s = folder.get(key)
    return _load_saved(str(folder.folder), key, s.path.stat().st_mtime, declared), s.name


def class_settings():
    """The active pool's `ClassSettings` (declared class set and display names)."""
    return SavedPools().class_settings(pool_ref() or "sample:demo")


def class_label(cls) -> str:
    """The display name of a class of the active pool, or the class itself as text
    (from a file or a user: pass it through `plain` for Markdown)."""
    return class_settings().label(cls)


def _options(saved) -> dict:
    """Selectbox label -> pool reference, samples first, then saved uploads (newest first)."""
    opts = {label: f"sample:{key}" for key, (label, _) in SAMPLES.items()}
    for s in saved:
        opts[f"{s.name} (uploaded {s.uploaded[:16].replace('T', ' ')}, {s.digest[:8]})"] = \
            f"upload:{s.digest}"
    return opts


def _uploader_key() -> str:
    return f"upload_{st.session_state.get('_upload_gen', 0)}"


def _take_upload(folder: SavedPools):
    """Save a newly chosen upload; returns its reference, or None after showing why not."""
    up = st.session_state.get(_uploader_key())
    if up is None:
        return None
    if st.session_state.get("_upload_seen") == up.file_id:
        return None
    st.session_state["_upload_seen"] = up.file_id
    data = up.getvalue()
    try:  # the same content saved before under another name: the same pool, labels too
        before = folder.get(hashlib.sha256(data).hexdigest()).name
    except CertlibError:
        before = None
    try:
        saved = folder.add(up.name, data, max_bytes=MAX_UPLOAD_BYTES)
    except CertlibError as exc:
        st.session_state["_upload_error"] = f"Could not load {plain(up.name)}: {plain(exc)}"
        st.session_state["_upload_error_page"] = st.session_state.get("_page")
        # a fresh, empty uploader: a refused file must not stay listed as if it had loaded
        st.session_state["_upload_gen"] = st.session_state.get("_upload_gen", 0) + 1
        return None
    st.session_state.pop("_upload_error", None)
    if before is not None and before != saved.name:
        st.session_state["_upload_note"] = (
            f"{plain(saved.name)} holds the same content as {plain(before)}, saved before: "
            "it is the same pool (its labels included), now listed under the new name.")
    return f"upload:{saved.digest}"


def _picked() -> None:
    st.session_state.pop("_upload_error", None)  # the user moved on to another pool
    options = st.session_state["_pool_options"]
    st.session_state["pool_ref"] = options[st.session_state["pool_choice"]]


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
        "Add a pool file (CSV or Parquet)", type=["csv", "tsv", "parquet", "pq"],
        key=_uploader_key(),
        help="Columns: pred_<name>/conf_<name> pairs, or pred + conf_<name>, or prob_<class>; "
        "optional row_id and label (empty = not read yet). Saved on this server under its "
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


def url_state(key: str, default, parse=str):
    """Seed session-state ``key`` once per session from the address (``?key=...``), so a
    reload shows the same step or choice; ``parse`` turns the text into a value and
    raises (anything) when it is not one: then ``default``.  Widgets keyed ``key`` are
    created without a value of their own.  `write_url_state` puts the values back."""
    if key not in st.session_state:
        raw = st.query_params.get(key)
        try:
            st.session_state[key] = default if raw is None else parse(raw)
        except Exception:  # noqa: BLE001 - a hand-edited address: fall back, never crash
            st.session_state[key] = default
    return st.session_state[key]


def write_url_state(*keys: str) -> None:
    """The current values of ``keys`` into the address (see `url_state`, `url_widget`)."""
    for k in keys:
        if k in st.session_state:
            text = str(st.session_state[k])
            if st.query_params.get(k) != text:  # write only a change (each is sent out)
                st.query_params[k] = text


def url_widget(key: str, default, parse=str, options=None, low=None, high=None) -> dict:
    """The keyword arguments (``key`` and ``value``, or ``index`` into ``options``) for
    a page's own widget whose value is kept in the address (a reload or a sent link
    shows it; `write_url_state` writes it after the widget is drawn) and in the session
    (`sticky`: a visit to another page keeps it, and the widget always shows the value
    in use).  The address is read when the session has no value yet; text ``parse``
    rejects (raises) is ignored; a value not among ``options`` or outside ``low``..``high``
    gives way to ``default``."""
    kept = st.session_state.setdefault("_sticky", {})
    raw = st.query_params.get(key)
    if key not in kept and key not in st.session_state and raw is not None:
        try:
            value = parse(raw)
            kept[key] = value
        except Exception:  # noqa: BLE001 - a hand-edited address: ignore it, never crash
            pass
    return sticky(key, default, options=options, low=low, high=high,
                  index=options is not None)


_UNSET = object()


def sticky(key: str, default, shared: str | None = None, options=None, low=None,
           high=None, index: bool = False) -> dict:
    """The keyword arguments (``key`` and ``value``, or ``index`` into ``options`` with
    ``index=True``) for a setting's widget whose value outlives a page switch.

    Streamlit drops a widget's state at the end of a run that did not draw it, so every
    page switch put its settings back to their defaults.  The value is kept in the
    session under ``shared`` (default: ``key``): pages that give the same ``shared``
    name share the setting (the tolerance chosen on *Plan and certify* is the one
    *Replay*, *Certificate* and a new labelling project start from); a name that
    changes for the same box (a budget kept per pool, after a pool change) gives the box
    that name's value.  The settings named in ``URL_SETTINGS`` also live in the address
    (`sync_url_settings`), so a reload or a shared link starts from them.  A value this
    widget cannot take (not among ``options``, outside ``low``..``high``) gives way to
    ``default`` here, and stays the kept value for the other pages until the user
    chooses another one here.

    The widget is always given its current value as its value: the browser falls back
    to that when it redraws a page whose switch it gave up (a page link clicked while
    the page reran) -- given only a key, the boxes then showed Streamlit's own defaults
    (0, the first option) beside results computed from other values."""
    kept = st.session_state.setdefault("_sticky", {})
    names = st.session_state.setdefault("_sticky_names", {})
    fallback = st.session_state.setdefault("_sticky_fallback", {})
    name = shared or key
    if name in URL_SETTINGS:
        _url_setting(name, kept)  # a new session (a reload, a link) starts from the address
    if key in st.session_state and names.get(key, name) != name:
        del st.session_state[key]  # the box now stands for another name (another pool)
        fallback.pop(key, None)
    names[key] = name
    if key in st.session_state:  # drawn in the last run: the widget's own state
        value = st.session_state[key]
        chosen = fallback.get(key, _UNSET) != value  # not the fallback shown untouched
    else:  # a page switch: the kept value
        value, chosen = kept.get(name, default), True
    if (options is None or value in options) and (low is None or value >= low) and \
            (high is None or value <= high):
        if chosen:
            kept[name] = value
            fallback.pop(key, None)
    else:
        value = fallback[key] = default
    if name in URL_SETTINGS:
        _url_setting(name, kept)
    if index:
        return {"key": key, "index": list(options).index(value)}
    return {"key": key, "value": value}


def _number_text(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:.15g}"  # 0.5000001 is not "0.5"


def _typed(key: str, shared: str | None):
    """The number a box holds from the last run, when it still stands for the same
    setting (`sticky` forgets it when the name changed, e.g. with the pool)."""
    typed = st.session_state.get(key)
    names = st.session_state.get("_sticky_names", {})
    if names.get(key, shared or key) != (shared or key) or isinstance(typed, bool) \
            or not isinstance(typed, (int, float)):
        return None
    return typed


def _bring_in(key: str, shared: str | None, low, high, step) -> tuple:
    """Before a box is drawn: a number it holds outside ``low``..``high`` is replaced by
    the nearer end, so the box shows what is used.  Returns (number typed, end), or
    (None, None) when nothing is to be said: the number was in range, or the box's - / +
    button went one ``step`` past the end (Streamlit's bound disabled it there).  A number
    to be said is noted for `brought_in`."""
    typed = _typed(key, shared)
    if typed is None:
        return None, None
    end = low if low is not None and typed < low else \
        high if high is not None and typed > high else None
    if end is None:
        return None, None
    st.session_state[key] = end
    if step and math.isclose(abs(typed - end), step, rel_tol=1e-9):
        return None, None
    st.session_state.setdefault("_brought_in", {})[key] = typed
    return typed, end


def number_box(container, label: str, key: str, default, *, low=None, high=None,
               shared: str | None = None, what: str = "", **kwargs):
    """A `sticky` number box that takes any number and brings one outside ``low``..``high``
    to the nearer end, in the box itself, saying so once ("-5 is below 0, so 0 is used").
    Streamlit's own ``min_value``/``max_value`` turned the box red and kept the last valid
    number in use while the box showed the new one, and a button pressed then (Start)
    used the old number without a word.  ``what`` names the quantity in the message."""
    typed, end = _bring_in(key, shared, low, high, kwargs.get("step"))
    value = container.number_input(label, **kwargs,
                                   **sticky(key, default, shared, low=low, high=high))
    if typed is not None:
        side = "below the smallest" if end == low else "above the largest"
        container.warning(f"{what or label}: {_number_text(typed)} is {side} value allowed, "
                          f"so {_number_text(end)} is used.")
    return value


def held_back(action: str = "started") -> str:
    """What a page says when `brought_in` holds a press back."""
    return (f"Nothing was {action}: a number was outside what its box allows, so the box "
            "now holds the nearest allowed one. Check it and press again.")


def brought_in(*keys: str) -> dict:
    """{key: number typed} for the boxes among ``keys`` that `number_box` or
    `budget_input` brought into range since the last call.  A page with a button that
    acts on its boxes (Start) calls it on every run, after drawing them, and does not act
    in a run where a box was just changed under the user's eyes."""
    notes = st.session_state.get("_brought_in", {})
    return {k: notes.pop(k) for k in keys if k in notes}


def tolerance_input(container, key: str, label: str = "AUGRC tolerance tau (0 = exact)") -> float:
    """The shared tolerance box (0 to 0.5; `sticky`)."""
    return number_box(container, label, key, 0.0, low=0.0, high=MAX_TOLERANCE,
                      shared=TOLERANCE, what="The tolerance", step=0.0005, format="%g")


def policy_input(container, key: str) -> str:
    """The shared policy box (`sticky`)."""
    names = list(certlib.policy_names())
    return container.selectbox("Policy", names,
                               **sticky(key, DEFAULT_POLICY, POLICY, names, index=True))


def seed_input(container, key: str, label: str = "Seed (random policies)") -> int:
    """The shared seed box (`sticky`)."""
    return int(number_box(container, label, key, 0, low=0, shared=SEED, what="The seed",
                          step=1))


def sync_url_settings() -> None:
    """The shared settings of ``URL_SETTINGS`` between the session and the address
    (`_url_setting` for each).  app.py calls it on every page, since a page switch
    empties the address of what the new page does not write."""
    kept = st.session_state.setdefault("_sticky", {})
    for name in URL_SETTINGS:
        _url_setting(name, kept)


def _url_setting(name: str, kept: dict) -> None:
    """One shared setting between the session and the address: not chosen in this
    session yet, it is read from the address (text that is no value any page takes is
    dropped from it); chosen, it is written back, or left out at its default."""
    default, valid = URL_SETTINGS[name]
    raw = st.query_params.get(name)
    if name not in kept:
        if raw is None:
            return
        try:
            value = type(default)(raw)
            if not valid(value):
                raise ValueError(raw)
        except ValueError:
            st.query_params.pop(name, None)
            return
        kept[name] = value
    text = None if kept[name] == default else str(kept[name])
    if text is None and raw is not None:
        st.query_params.pop(name, None)
    elif text is not None and raw != text:  # write only a change (each is sent out)
        st.query_params[name] = text


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


def default_budget(pool) -> int:
    """The budget a planning box starts from: half the pool, or on a partly labelled
    pool the labels already known (they count as read) plus half the unread rows."""
    known = pool.n_labelled if not pool.fully_labelled else 0
    return max(1, known + (pool.n - known) // 2)


def budget_input(container, label: str, n: int, value: int, key: str,
                 shared: str | None = None, zero: str = "0") -> int:
    """A budget box that takes any whole number and brings one outside 0..n to the nearer
    end, in the box, saying so once (Streamlit's own bounds kept the last valid answer on
    the page while the box showed the new number in red).  ``zero`` says what 0 means
    ("0 (no budget)").  Its value outlives a page switch and is shared with the boxes of
    the same ``shared`` name (`sticky`)."""
    typed, _ = _bring_in(key, shared, 0, n, 1)
    budget = int(container.number_input(label, step=1, **sticky(key, value, shared)))
    if typed is not None and typed < 0:
        container.warning(f"A budget is a number of labels; {typed:,} is below 0, so "
                          f"{zero} is used.")
    elif typed is not None and typed > n:
        container.info(f"The pool has {n:,} rows, so a budget of {typed:,} buys no more than "
                       f"{n:,}; {n:,} is used.")
    return budget


def pool_folder() -> Path:
    """The folder of the active pool's file: sample_data for a sample, the saved-pools
    folder for an upload (so an upload's image paths usually name nothing)."""
    kind, key = (pool_ref() or "sample:demo").split(":", 1)
    if kind == "sample" and key in SAMPLES:
        return SAMPLES[key][1].parent
    return SavedPools().folder


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


def image_in_folder(value, folder) -> Path | None:
    """The image file a cell names, only when it is a relative path that stays inside
    ``folder`` once resolved (no ``..``, no absolute path, no URL or drive, no symlink
    out) and the file exists; else None (the page then shows the text).  Nothing
    outside the folder is ever read or fetched."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text.lower().endswith(IMAGE_SUFFIXES) or ":" in text or "\\" in text:
        return None  # a URL (scheme:), a Windows drive or separator
    rel = PurePosixPath(text)
    if rel.is_absolute() or ".." in rel.parts:
        return None
    base = Path(folder).resolve()
    full = (base / rel).resolve()
    if not full.is_relative_to(base) or not full.is_file():
        return None
    return full


def split_extra(pool, row: int, folder) -> tuple:
    """The extra columns of one row by type: (numbers {name: value}, images {name: path},
    texts {name: text}); empty cells are left out."""
    nums, images, texts = {}, {}, {}
    for name, col in pool.extra.items():
        v = col[row]
        if v is None or (isinstance(v, float) and v != v):
            continue
        if isinstance(v, numbers.Number) and not isinstance(v, bool):
            nums[name] = v
        elif (img := image_in_folder(v, folder)) is not None:
            images[name] = img
        else:
            texts[name] = str(v)
    return nums, images, texts


def acted() -> None:
    """Called by a button's callback: the press reached the server and did its work."""
    st.session_state["_acted"] = True


def lost_press(*prefixes: str) -> bool:
    """Whether a button whose key starts with one of ``prefixes`` (``cls_0@``, ``review_``
    ...) was pressed in this run but its callback did not run (call after drawing them,
    on every run).  A session Streamlit starts anew -- after a server restart the browser
    reconnects to a fresh one -- knows no callback until its first run has drawn the
    buttons, so the first press after a restart was dropped without a word (the label was
    never saved; measured in a browser probe); a press on a view this session never drew
    is found too (`_undrawn_presses`)."""
    if st.session_state.pop("_acted", False):
        return False
    drawn = (k for k in st.session_state if isinstance(k, str) and k.startswith(prefixes))
    return (any(st.session_state.get(k) is True for k in drawn)
            or any(k.startswith(prefixes) for k in _undrawn_presses()))


def _undrawn_presses() -> set[str]:
    """The keys of buttons the browser says were pressed in this run that no run of this
    session has drawn (Streamlit hides them from ``st.session_state`` and runs no
    callback): a press on the view the browser showed before the server restarted,
    when someone else has labelled since, so this run draws the buttons of a newer view
    (stop 24's diff review found the page silent there).  Read from Streamlit's
    widget states, which it offers no public way to read; an empty set wherever its
    internals differ from 1.62-1.67's."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        states = get_script_run_ctx().session_state._state._new_widget_state.states
        sent = {wid: getattr(w, "value", None) for wid, w in list(states.items())}
        return {wid.split("-", 2)[-1] for wid, w in sent.items()  # Serialized(proto)
                if hasattr(w, "WhichOneof") and w.WhichOneof("value") == "trigger_value"
                and w.trigger_value}
    except Exception:  # noqa: BLE001 - a missed warning, never a broken page
        return set()


def view_key(base: str, seq: int) -> str:
    """The key of a button that acts on one view of a project (``base@seq``, ``seq`` the
    newest event the view shows).  With a fixed key a press made on the previous view --
    a quick second key press, sent before the browser showed the next row -- reached the
    callback of the newest run, whose ``expect_seq`` was already the new one, and
    labelled a row the annotator never saw (a walk-through: 4 of 4 double presses).  A
    press on an older view now names an older button, whose callback (Streamlit keeps
    it after the button is gone) carries the old ``expect_seq``: the store refuses it as
    stale and the page says so.  Every button that acts on one view of a project takes
    such a key: the row's class, Skip, Undo and Revisit buttons, the review answers and
    decisions, Queue for review and Extend budget (a double click extended twice)."""
    return f"{base}@{seq}"


LOST_PRESS = ("That press did not reach the page, so nothing was saved: the connection to the "
              "server was renewed (it restarted, or the network dropped), or the page had "
              "moved on before the press arrived. Check what it shows and press again.")


def url_kept(name: str) -> tuple[str | None, bool]:
    """A page's own value kept in the address (``?name=``: a reload or a sent link opens
    it) and in the session, because Streamlit empties the address on a page switch: the
    open labelling project, the open audit, the annotator's name.  Returns the value
    (None: none) and whether it came back from the session, not from the address (a
    visit to another page, and back).  `set_url_kept` changes or forgets it."""
    kept = st.session_state.setdefault("_url_kept", {})
    raw = st.query_params.get(name)
    if raw is not None:
        kept[name] = raw
        return raw, False
    if name in kept:
        st.query_params[name] = kept[name]
        return kept[name], True
    return None, False


def set_url_kept(name: str, value: str | None) -> None:
    """Keep ``value`` under ``name`` in the address and the session (`url_kept`); None
    forgets it in both."""
    kept = st.session_state.setdefault("_url_kept", {})
    if value is None:
        kept.pop(name, None)
        st.query_params.pop(name, None)
    else:
        kept[name] = str(value)
        if st.query_params.get(name) != str(value):  # write only a change
            st.query_params[name] = str(value)


def _rounded(x: float, decimals: int, side: str):
    """``x`` rounded down (``side`` "lower") or up ("upper") to ``decimals`` as a Decimal,
    from the shortest decimal naming the float (0.02, not 0.0200000000000000004), so no
    binary product rounds an end inwards; zero is never "-0"."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    v = Decimal(repr(float(x))).quantize(
        Decimal(1).scaleb(-decimals), rounding=ROUND_FLOOR if side == "lower" else ROUND_CEILING)
    return v.copy_abs() if v.is_zero() else v


def _decimals(x: float, side: str, marks) -> int:
    """4, or as many more (up to 8) as keep ``x`` rounded outwards (`_rounded`) on its
    side of every mark."""
    from decimal import Decimal

    exact = Decimal(repr(float(x)))
    points = [Decimal(repr(float(m))) for m in marks]
    for d in range(4, 9):
        v = _rounded(x, d, side)
        if all(not (exact > m >= v) if side == "lower" else not (exact < m <= v)
               for m in points):
            return d
    return 8


def outward_end(x: float, side: str, marks=(), sign: str = "") -> str:
    """One interval end as text, rounded outwards: a "Delta <= 0.02992" beside epsilon
    0.03, not "0.0300"."""
    d = _decimals(x, side, marks)
    return f"{_rounded(x, d, side):{sign}.{d}f}"


def outward_interval(lo: float, hi: float, sign: str = "+", marks=(0.0,)) -> str:
    """An interval rounded outwards, both ends to the decimals the harder one needs (a
    finer rounding of an end keeps it on its side): an upper end of 0.029998 beside a
    "safe" at epsilon 0.03 read +0.0300 rounded to nearest, as if it touched epsilon."""
    d = max(_decimals(lo, "lower", marks), _decimals(hi, "upper", marks))
    return f"[{_rounded(lo, d, 'lower'):{sign}.{d}f}, {_rounded(hi, d, 'upper'):{sign}.{d}f}]"


def keep_annotator(key: str) -> None:
    """Keep the name typed in the text input ``key`` (`url_kept` ``annotator``: the
    address, so a reload or a server restart keeps it, and the session, so a visit to
    another page does); an empty name is forgotten."""
    set_url_kept("annotator", st.session_state[key].strip() or None)


def annotator_input(key: str, container=None) -> str:
    """The sidebar's "Your name (annotator)" box, kept in the address and the session
    (`keep_annotator`); returns the name."""
    box = container if container is not None else st.sidebar
    name = box.text_input("Your name (annotator)", key=key,
                          value=url_kept("annotator")[0] or "",
                          on_change=keep_annotator, args=(key,))
    return name.strip()


def page_link(page: str, label: str, icon: str | None = None) -> None:
    """A link to another page of the dashboard (``pages/NAME.py``).  When the page runs
    on its own (outside app.py's navigation, e.g. in AppTest) there is nothing to link
    to, so nothing is drawn."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(page, label=label, icon=icon)
    except (StreamlitAPIException, KeyError):  # KeyError: streamlit 1.62's AppTest
        pass


def page_button(page: str, label: str, key: str, settings: dict, icon: str | None = None,
                container=None) -> None:
    """A button that opens another page with some of its settings chosen: ``settings``
    maps `sticky` names to values, e.g. the Certificate page's label source."""
    from streamlit.errors import StreamlitAPIException

    if (container or st).button(label, key=key, icon=icon):
        st.session_state.setdefault("_sticky", {}).update(settings)
        try:
            st.switch_page(page)
        except StreamlitAPIException:  # the page runs on its own (AppTest): stay
            pass


@st.cache_data(show_spinner=False, max_entries=256)
def _project_state(store_path: str, project_id: int, last_seq: int, _pool, key: str):
    from certlib.labelling.store import LabelStore

    s = LabelStore(store_path).progress(project_id, _pool).session
    return s.t, s.status


def project_state(store, project_id: int, pool, events=None) -> tuple[int, str] | None:
    """(labels read, status) of a labelling project on ``pool``, as its Label page would
    say them; None when it cannot be replayed.  A replay per project, kept per project
    and newest event (``events``: its log, when the caller has it), so the pages listing
    projects (Plan and certify, Label) do not replay them at every run."""
    try:
        ev = store.events(project_id) if events is None else events
        return _project_state(str(store.path), int(project_id), ev[-1].seq if ev else 0,
                              pool, pool_key(pool))
    except CertlibError:
        return None


def pool_key(pool) -> str:
    """Cache key of a pool: its label-free hash plus its labels."""
    import hashlib

    return certlib.pool_hash(pool) + hashlib.sha256(pool.labels.tobytes()).hexdigest()[:16]


@st.cache_data(show_spinner="Bounding the minimum certificate ...", max_entries=32)
def cached_certify(_pool, key: str, tolerance: float):
    return certlib.certify(_pool, tolerance=tolerance)  # work limit: same result everywhere


@st.cache_data(show_spinner=False, max_entries=64)
def cached_prelabel(_pool, key: str, tolerance: float):
    return certlib.prelabel_bound(_pool, tolerance=tolerance)


@st.cache_data(show_spinner="Replaying the policy ...", max_entries=64)
def cached_replay(_pool, key: str, policy: str, rule: str, tolerance: float, seed: int,
                  budget: int | None = None):
    return certlib.replay(_pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed,
                          budget=budget)


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


def skip_shortcut(class_keys) -> str | None:
    """``S`` unless a class took it (then the Skip button has no key)."""
    return "S" if "S" not in class_keys else None


def shortcut_kwargs(key) -> dict:
    """``{"shortcut": key}`` for `st.button` (Streamlit >= 1.52), nothing when no key is left."""
    return {} if key is None else {"shortcut": key}
