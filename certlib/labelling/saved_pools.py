"""Uploaded pool files, kept on disk under their content hash.

A pool uploaded in the dashboard must outlive a reload, a server restart and a
second tab, or a labelling project on it could not resume.  `SavedPools` keeps
each accepted file in one folder (``$CERTLIB_DATA``, default ``certlib_data``
beside the label store) as ``<sha256 of the bytes><suffix>`` with a small JSON
note of the name it was uploaded under and when.

A file is validated (read into a `Pool`) *before* anything is written, so a bad
file leaves no trace; writes go to a temporary name and are renamed into place,
so a crash never leaves half a file under a hash.  The same bytes uploaded twice
are one entry (the newer upload time is kept).

    >>> import tempfile
    >>> folder = SavedPools(tempfile.mkdtemp())
    >>> saved = folder.add("mine.csv", b"pred_a,conf_a,pred_b,conf_b\\n0,.9,1,.8\\n1,.7,1,.6\\n")
    >>> saved.name, len(saved.digest)
    ('mine.csv', 64)
    >>> folder.load(saved.digest).K
    2
    >>> [s.digest for s in folder.recent()] == [saved.digest]
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..core._values import file_class_key
from ..errors import CertlibError, ParameterError, PoolFileError

ENV_VAR = "CERTLIB_DATA"
DEFAULT_FOLDER = "certlib_data"
SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
SETTINGS_FILE = "class_settings.json"
MAX_NAME_CHARS = 40


def default_data_dir() -> Path:
    """``$CERTLIB_DATA`` if set, else ``certlib_data`` beside the label store."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    from .store import default_store_path

    return default_store_path().resolve().parent / DEFAULT_FOLDER


@dataclass(frozen=True)
class SavedPool:
    """One saved upload: its content hash, the name it was uploaded under, where it
    lies and when it was (last) uploaded (UTC, ISO 8601)."""

    digest: str
    name: str
    path: Path
    uploaded: str


@dataclass(frozen=True)
class ClassSettings:
    """A pool's declared class set (None: inferred from the file) and display names
    ({class value: name}; class values as the file reader keys them, `file_class_key`)."""

    declared: tuple | None = None
    names: dict = field(default_factory=dict)

    def name(self, cls) -> str | None:
        """The display name of ``cls``; None when it has none."""
        return self.names.get(file_class_key(cls))

    def label(self, cls) -> str:
        """The display name of ``cls``, or the class itself as text."""
        return self.names.get(file_class_key(cls), str(cls))


def display_name(name: str) -> str:
    """The base name of an uploaded file (a browser may send a path)."""
    base = Path(str(name).replace("\\", "/")).name.strip()
    return base or "upload"


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SavedPools:
    """The folder of saved uploads (created on first write)."""

    def __init__(self, folder=None):
        self.folder = Path(folder) if folder is not None else default_data_dir()

    def add(self, name: str, data: bytes, **load_options) -> SavedPool:
        """Validate ``data`` as a pool file called ``name`` and save it.

        load_options go to `certlib.load_pool` (``classes``, ``max_bytes``, ...).
        Raises the loader's `CertlibError` (naming ``name``, the column and row)
        and writes nothing when the file is not a valid pool.
        """
        display = display_name(name)
        suffix = Path(display).suffix.lower()
        if suffix not in SUFFIXES:
            raise PoolFileError(
                f"pool file {display!r} has unsupported type {suffix or '(no extension)'!r}; "
                "expected .csv, .tsv, .parquet or .pq")
        self._validate(display, data, load_options)
        digest = hashlib.sha256(data).hexdigest()
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{digest}{suffix}"
        if not path.exists():
            _atomic_write(path, data)
        saved = SavedPool(digest, display, path,
                          datetime.now(timezone.utc).isoformat(timespec="seconds"))
        note = {"name": saved.name, "suffix": suffix, "uploaded": saved.uploaded}
        _atomic_write(self.folder / f"{digest}.json", json.dumps(note).encode())
        return saved

    @staticmethod
    def _validate(display: str, data: bytes, load_options: dict) -> None:
        from ..io import load_pool

        # the loader names the file in its messages: give it the user's name
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / display
            p.write_bytes(data)
            load_pool(p, **load_options)

    def get(self, digest: str) -> SavedPool:
        """The saved pool with this content hash; `PoolFileError` when there is none."""
        if not (isinstance(digest, str) and len(digest) == 64
                and all(c in "0123456789abcdef" for c in digest)):
            raise PoolFileError(f"{digest!r} is not the hash of a saved pool")
        note_path = self.folder / f"{digest}.json"
        try:
            note = json.loads(note_path.read_text())
            path = self.folder / f"{digest}{note['suffix']}"
        except (OSError, ValueError, KeyError):
            raise PoolFileError(
                f"no saved pool with hash {digest[:12]}... in {str(self.folder)!r}") from None
        if not path.is_file():
            raise PoolFileError(f"the saved pool {note.get('name')!r} is missing its file "
                                f"{path.name!r} in {str(self.folder)!r}")
        return SavedPool(digest, str(note.get("name", path.name)), path,
                         str(note.get("uploaded", "")))

    def load(self, digest: str, **load_options):
        """The `Pool` of a saved upload (validated again: the folder is not trusted)."""
        from ..io import load_pool

        saved = self.get(digest)
        return load_pool(saved.path, **load_options)

    def recent(self, limit: int = 20) -> list[SavedPool]:
        """Saved uploads, newest first."""
        if not self.folder.is_dir():
            return []
        out = []
        for note in self.folder.glob("*.json"):
            try:
                out.append(self.get(note.stem))
            except PoolFileError:
                continue  # a stray or broken note is not a pool
        out.sort(key=lambda s: (s.uploaded, s.digest), reverse=True)
        return out[:limit]

    # ------------------------------------------------------------ class settings
    def _settings_path(self) -> Path:
        return self.folder / SETTINGS_FILE

    def _all_settings(self) -> dict:
        try:
            data = json.loads(self._settings_path().read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def class_settings(self, ref: str) -> ClassSettings:
        """The class settings of the pool ``ref`` ("sample:demo", "upload:<sha256>");
        empty settings when none were saved (or the saved ones no longer validate)."""
        entry = self._all_settings().get(str(ref))
        if not isinstance(entry, dict):
            return ClassSettings()
        try:
            declared, names = _check_settings(entry.get("declared"),
                                              dict(entry.get("names") or {}), None)
        except (CertlibError, TypeError, ValueError):
            return ClassSettings()
        return ClassSettings(declared, names)

    def save_class_settings(self, ref: str, declared, names: dict,
                            found=None) -> ClassSettings:
        """Save the declared class set (None or empty: infer from the file) and display
        names of the pool ``ref``.  A name must be non-empty text of at most 40
        characters, for a class of the declared set (or of ``found``, the classes the
        file holds, when none is declared); `ParameterError` otherwise, nothing written."""
        if not isinstance(ref, str) or not ref:
            raise ParameterError(f"a pool reference is needed; got {ref!r}")
        declared, names = _check_settings(declared, names, found)
        data = self._all_settings()
        if declared is None and not names:
            data.pop(ref, None)
        else:
            data[ref] = {"declared": None if declared is None else list(declared),
                         "names": [[k, v] for k, v in names.items()]}
        self.folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(self._settings_path(), json.dumps(data, indent=1).encode())
        return ClassSettings(declared, names)


def _check_settings(declared, names, found) -> tuple:
    """(declared as a tuple of class keys or None, {class key: stripped name})."""
    if declared is not None:
        if isinstance(declared, (str, bytes)) or not hasattr(declared, "__iter__"):
            raise ParameterError(f"the declared classes must be a list; got {declared!r}")
        declared = tuple(file_class_key(c) for c in declared) or None
    if declared is not None:
        if len(declared) < 2:
            raise ParameterError(f"a declared class set needs at least two classes; "
                                 f"got {list(declared)}")
        if len(set(declared)) != len(declared):
            raise ParameterError(f"the declared class set repeats a class: {list(declared)}")
    allowed = declared if declared is not None else (
        None if found is None else tuple(file_class_key(c) for c in found))
    pairs = names.items() if isinstance(names, dict) else names
    out = {}
    for cls, name in pairs:
        key = file_class_key(cls)
        if not isinstance(name, str) or not name.strip():
            raise ParameterError(f"the display name of class {key!r} must be non-empty text")
        name = name.strip()
        if len(name) > MAX_NAME_CHARS:
            raise ParameterError(f"the display name of class {key!r} has {len(name)} "
                                 f"characters; at most {MAX_NAME_CHARS} are allowed")
        if allowed is not None and key not in allowed:
            raise ParameterError(f"a display name is given for class {key!r}, which is not "
                                 f"in the class set {list(allowed)}")
        out[key] = name
    return declared, out
