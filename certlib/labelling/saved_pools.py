"""Uploaded pool files, kept on disk under their content hash.

A pool uploaded in the dashboard must outlive a reload, a server restart and a
second tab, or a labelling project on it could not resume.  `SavedPools` keeps
each accepted file in one folder (``$CERTLIB_DATA``, default ``certlib_data``
beside the label store) as ``<sha256 of the bytes><suffix>`` with a small JSON
note of the name it was uploaded under and when.

A file is validated (read into a `Pool`) *before* anything is written, so a bad
file leaves no trace; writes go to a temporary name and are renamed into place,
so a crash never leaves half a file under a hash.  The same bytes uploaded twice
are one entry (the newer upload time is kept), read with the column map saved with them
(`SavedPools.column_map`) unless another is given.  The pool read to validate an upload
comes back with it (`SavedPool.pool`), so the dashboard does not read the file again.

    >>> import tempfile
    >>> folder = SavedPools(tempfile.mkdtemp())
    >>> saved = folder.add("mine.csv", b"pred_a,conf_a,pred_b,conf_b\\n0,.9,1,.8\\n1,.7,1,.6\\n")
    >>> saved.name, len(saved.digest)
    ('mine.csv', 64)
    >>> folder.load(saved.digest).K
    2
    >>> saved.pool.n
    2
    >>> [s.digest for s in folder.recent()] == [saved.digest]
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core._values import file_class_key
from ..errors import CertlibError, ColumnError, ParameterError, PoolFileError

if TYPE_CHECKING:
    from ..columns import ColumnMap, MappedPool
    from ..core.pool import Pool
    from ..io import Progress

ENV_VAR = "CERTLIB_DATA"
DEFAULT_FOLDER = "certlib_data"
SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
SETTINGS_FILE = "class_settings.json"
MAX_NAME_CHARS = 40


def default_data_dir() -> Path:
    """The folder of saved uploads: ``$CERTLIB_DATA`` if set, else ``certlib_data``
    beside the label store (`certlib.labelling.store.default_store_path`).

    Returns
    -------
    Path
        The folder (not created here).
    """
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    from .store import default_store_path

    return default_store_path().resolve().parent / DEFAULT_FOLDER


@dataclass(frozen=True)
class SavedPool:
    """One saved upload.

    Attributes
    ----------
    digest : str
        SHA-256 hex digest of the file's bytes: its key in the folder and in the
        dashboard's address (``?pool=upload:<digest>``).
    name : str
        The base name it was (last) uploaded under.
    path : Path
        Where the saved file lies (``<digest><suffix>`` in the folder).
    uploaded : str
        When it was (last) uploaded, UTC, ISO 8601 to the second.
    pool : Pool or None
        The pool read from the bytes to validate them, when this came from
        `SavedPools.add` (read with the ``load_options`` given there); None from
        `SavedPools.get`.  Not part of equality.
    column_map : ColumnMap or None
        The column map that read it (`certlib.columns`), from `SavedPools.add`; None
        for a file that follows the file convention, and from `SavedPools.get`.
    warnings : tuple of str
        What the reading left out that a person should know (a label-like column
        unused, `certlib.columns.MappedPool.warnings`), from `SavedPools.add`.
    """

    digest: str
    name: str
    path: Path
    uploaded: str
    pool: Pool | None = field(default=None, compare=False, repr=False)
    column_map: ColumnMap | None = field(default=None, compare=False, repr=False)
    warnings: tuple[str, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class ClassSettings:
    """A pool's declared class set and the display names of its classes.

    Attributes
    ----------
    declared : tuple of int or str, or None
        The declared class set, as the file reader keys classes (`file_class_key`);
        None: the classes are inferred from the file.
    names : dict
        {class key: display name}; a class without an entry is shown as itself.
    """

    declared: tuple[int | str, ...] | None = None
    names: dict[int | str, str] = field(default_factory=dict)

    def name(self, cls: object) -> str | None:
        """The display name of a class.

        Parameters
        ----------
        cls : object
            A class value as a pool or a file holds it (``1``, ``"1"`` and ``1.0`` are
            the same class).

        Returns
        -------
        str or None
            Its display name; None when it has none.
        """
        return self.names.get(file_class_key(cls))

    def label(self, cls: object) -> str:
        """The display name of a class, or the class itself as text.

        Parameters
        ----------
        cls : object
            A class value as a pool or a file holds it.

        Returns
        -------
        str
            Its display name, else ``str(cls)``.
        """
        return self.names.get(file_class_key(cls), str(cls))


def display_name(name: str) -> str:
    """The base name of an uploaded file (a browser may send a path).

    Parameters
    ----------
    name : str
        The name the browser sent, possibly with a Windows or POSIX path.

    Returns
    -------
    str
        Its last part, stripped; ``"upload"`` when nothing is left.
    """
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


def _read(files: Sequence[tuple[str, bytes]], column_map: ColumnMap | None,
          options: Mapping[str, Any], progress: Progress | None,
          max_bytes: int = 2 * 1024**3) -> MappedPool:
    from ..columns import read_sources

    unknown = set(options) - {"classes", "objective"}
    if unknown:
        raise ParameterError(f"unknown options {sorted(unknown)}")
    return read_sources(files, column_map=column_map, classes=options.get("classes"),
                        objective=options.get("objective", "augrc"), progress=progress,
                        max_bytes=max_bytes)


def _files_digest(parts: Sequence[tuple[str, str]]) -> str:
    """The key of an upload of several files: a hash of their names and hashes in
    order (one file's key is its own hash)."""
    h = hashlib.sha256(b"certlib files\0")
    for display, d in parts:
        h.update(display.encode() + b"\0" + d.encode() + b"\0")
    return h.hexdigest()


class SavedPools:
    """The folder of saved uploads (created on first write).

    Parameters
    ----------
    folder : str or Path, optional
        The folder; default `default_data_dir`.
    """

    folder: Path

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_data_dir()

    def add(self, name: str, data: bytes, *, column_map: ColumnMap | None = None,
            progress: Progress | None = None, **load_options: Any) -> SavedPool:
        """Validate ``data`` as a pool file called ``name`` and save it.

        Parameters
        ----------
        name : str
            The name it was uploaded under (its suffix says the format: .csv, .tsv,
            .parquet, .pq, or .zip for a zip of files one per model).
        data : bytes
            The file's content.
        column_map : ColumnMap, optional
            Which column is which (`certlib.columns`), saved with the file under its
            content hash: a later `load` reads it with the same map, and so does a later
            `add` of the same bytes without a map.  Default: the map saved with these
            bytes, else the file convention (its labels in ``label`` or a column named
            like ``y_true``), else `guess_map`'s for columns of other names.
        progress : callable, optional
            Called with what is being done (reading, checking columns, building the
            pool, ``"saving <name>"``) and the fraction done, non-decreasing, ending with
            1.0 (`certlib.io.Progress`).
        **load_options
            ``classes`` (the declared class set), ``objective`` and ``max_bytes``.

        Returns
        -------
        SavedPool
            The saved entry, with the pool read to validate it (`SavedPool.pool`).

        Raises
        ------
        PoolFileError
            The suffix is not a pool file's, or the file is too large.
        CertlibError
            The reader's error (naming ``name``, the column and row) when the file is
            not a valid pool; nothing is written then.
        """
        return self.add_files([(name, data)], column_map=column_map, progress=progress,
                              **load_options)

    def add_files(self, files: Sequence[tuple[str, bytes]], *,
                  column_map: ColumnMap | None = None, progress: Progress | None = None,
                  **load_options: Any) -> SavedPool:
        """Validate files (one per model, joined on their id column) as one pool and
        save them as one entry.

        Parameters
        ----------
        files : sequence of (name, content)
            The files in candidate order (the tie priority); a zip is opened.
        column_map : ColumnMap, optional
            The map of the (joined) table; default the map saved with the same files,
            else `certlib.columns.read_sources`'s.
        progress : callable, optional
            As in `add`.
        **load_options
            ``classes``, ``objective`` and ``max_bytes`` (of each file).

        Returns
        -------
        SavedPool
            The entry: its digest is the file's for one file, else a hash of the files'
            names and hashes in order.

        Raises
        ------
        CertlibError
            As `add`, naming the file; nothing is written then.
        """
        if not files:
            raise ParameterError("no file given")
        max_bytes = int(load_options.pop("max_bytes", 2 * 1024**3))
        parts = []
        for name, data in files:
            display = display_name(name)
            suffix = Path(display).suffix.lower()
            if suffix not in SUFFIXES + (".zip",):
                raise PoolFileError(
                    f"pool file {display!r} has unsupported type "
                    f"{suffix or '(no extension)'!r}; expected .csv, .tsv, .parquet, .pq "
                    "or a .zip of them")
            if len(data) > max_bytes:
                raise PoolFileError(f"pool file {display!r} is {len(data)} bytes; the limit "
                                    f"is {max_bytes}")
            parts.append((display, data, suffix, hashlib.sha256(data).hexdigest()))
        digest = self.digest_of(files)
        path = self.folder / (f"{digest}{parts[0][2]}" if len(parts) == 1 else f"{digest}.json")
        saved_map = self._saved_map(digest) if column_map is None else None
        from ..io import _Reporter

        report = _Reporter(progress)
        sources = [(d, b) for d, b, _, _ in parts]
        try:
            got = _read(sources, column_map or saved_map, load_options,
                        report.part(0.0, 0.95), max_bytes)
        except ColumnError:
            if saved_map is None:
                raise
            # the map saved with the same bytes names columns these names do not give
            # (a zip uploaded again under another name): read them as new
            got = _read(sources, None, load_options, report.part(0.0, 0.95), max_bytes)
        name = " + ".join(p[0] for p in parts)
        report(f"saving {name}", 0.95)
        self.folder.mkdir(parents=True, exist_ok=True)
        for _, data, suffix, d in parts:
            part_path = self.folder / f"{d}{suffix}"
            if not part_path.exists():
                _atomic_write(part_path, data)
        uploaded = datetime.now(timezone.utc).isoformat(timespec="seconds")
        note: dict[str, Any] = {"name": name, "uploaded": uploaded,
                                "suffix": parts[0][2] if len(parts) == 1 else ".json"}
        if len(parts) > 1 or parts[0][2] == ".zip":
            note["parts"] = [[display, d, suffix] for display, _, suffix, d in parts]
        if got.column_map is not None:
            note["column_map"] = got.column_map.to_json()
        _atomic_write(self.folder / f"{digest}.json", json.dumps(note).encode())
        report(f"saved {name}", 1.0)
        return SavedPool(digest, name, path, uploaded, got.pool, got.column_map, got.warnings)

    def _saved_map(self, digest: str) -> ColumnMap | None:
        """The map saved with an upload of this digest; None when there is none (or
        its note is unreadable: the upload is then read as new)."""
        if not (self.folder / f"{digest}.json").is_file():
            return None
        try:
            return self.column_map(digest)
        except CertlibError:
            return None

    def _note(self, digest: str) -> dict[str, Any]:
        if not (isinstance(digest, str) and len(digest) == 64
                and all(c in "0123456789abcdef" for c in digest)):
            raise PoolFileError(f"{digest!r} is not the hash of a saved pool")
        try:
            note = json.loads((self.folder / f"{digest}.json").read_text())
            if not isinstance(note, dict) or "suffix" not in note:
                raise ValueError
            return note
        except (OSError, ValueError):
            raise PoolFileError(
                f"no saved pool with hash {digest[:12]}... in {str(self.folder)!r}") from None

    def column_map(self, digest: str) -> ColumnMap | None:
        """The column map saved with an upload (None: the file convention).

        Parameters
        ----------
        digest : str
            The upload's digest.

        Returns
        -------
        ColumnMap or None
            The map, without its warnings (`SavedPool.column_map` of `add` and `load`
            has them).

        Raises
        ------
        PoolFileError
            No saved upload has ``digest``.
        """
        from ..columns import ColumnMap

        text = self._note(digest).get("column_map")
        return None if text is None else ColumnMap.from_json(str(text))

    def read(self, digest: str, *, progress: Progress | None = None,
             **load_options: Any) -> MappedPool:
        """The pool of a saved upload with the map it was saved with, read and validated
        again (the folder is not trusted).

        Parameters
        ----------
        digest : str
            The upload's digest.
        progress : callable, optional
            Called with what is being done and the fraction done, non-decreasing,
            ending with 1.0 (`certlib.io.Progress`).
        **load_options
            ``classes``, ``objective`` and ``max_bytes``.

        Returns
        -------
        MappedPool
            The pool, its map (with warnings) and the files read.

        Raises
        ------
        PoolFileError
            No saved upload has ``digest``, or a file of it is missing.
        CertlibError
            The reader's error when the files are not a valid pool (with these options).
        """
        max_bytes = int(load_options.pop("max_bytes", 2 * 1024**3))
        files = self.files(digest, max_bytes=max_bytes)
        return _read(files, self.column_map(digest), load_options, progress, max_bytes)

    def files(self, digest: str, *, max_bytes: int = 2 * 1024**3) -> list[tuple[str, bytes]]:
        """The files of a saved upload as they were uploaded, in order (to read them
        again with another map).

        Parameters
        ----------
        digest : str
            The upload's digest.
        max_bytes : int, default 2 GiB
            A file larger than this is refused.

        Returns
        -------
        list of (name, content)
            One entry per uploaded file (a zip as the zip).

        Raises
        ------
        PoolFileError
            No saved upload has ``digest``, or a file of it is missing or too large.
        """
        saved = self.get(digest)
        note = self._note(digest)
        parts = note.get("parts") or [[saved.name, digest, note["suffix"]]]
        files = []
        for display, d, suffix in parts:
            path = self.folder / f"{d}{suffix}"
            if not path.is_file():
                raise PoolFileError(f"the saved pool {saved.name!r} is missing its file "
                                    f"{display!r} ({path.name}) in {str(self.folder)!r}")
            if path.stat().st_size > max_bytes:
                raise PoolFileError(f"pool file {display!r} is {path.stat().st_size} bytes; "
                                    f"the limit is {max_bytes}")
            files.append((str(display), path.read_bytes()))
        return files

    @staticmethod
    def digest_of(files: Sequence[tuple[str, bytes]]) -> str:
        """The key `add_files` saves these files under: one file's SHA-256, or for
        several a hash of their names and hashes in order.

        Parameters
        ----------
        files : sequence of (name, content)
            The files, in upload order.

        Returns
        -------
        str
            64 hex digits; `get` finds an upload of the same files by it.

        Examples
        --------
        >>> import hashlib
        >>> SavedPools.digest_of([("a.csv", b"x")]) == hashlib.sha256(b"x").hexdigest()
        True
        """
        if not files:
            raise ParameterError("no file given")
        hashes = [(display_name(n), hashlib.sha256(d).hexdigest()) for n, d in files]
        return hashes[0][1] if len(hashes) == 1 else _files_digest(hashes)

    def get(self, digest: str) -> SavedPool:
        """The saved upload with this content hash (without its pool: nothing is read).

        Parameters
        ----------
        digest : str
            SHA-256 hex digest of the file's bytes (64 lowercase hex digits).

        Returns
        -------
        SavedPool
            The entry; its ``pool`` is None.

        Raises
        ------
        PoolFileError
            ``digest`` is no hash, or no saved upload has it, or its file is missing.
        """
        note = self._note(digest)
        path = self.folder / f"{digest}{note['suffix']}"
        if not path.is_file():
            raise PoolFileError(f"the saved pool {note.get('name')!r} is missing its file "
                                f"{path.name!r} in {str(self.folder)!r}")
        return SavedPool(digest, str(note.get("name", path.name)), path,
                         str(note.get("uploaded", "")))

    def load(self, digest: str, **load_options: Any) -> Pool:
        """The `Pool` of a saved upload, read and validated again (the folder is not
        trusted).

        Parameters
        ----------
        digest : str
            SHA-256 hex digest of the file's bytes.
        **load_options
            ``classes``, ``objective`` and ``max_bytes`` (`read`).

        Returns
        -------
        Pool
            The pool the file holds, read with its saved column map.

        Raises
        ------
        PoolFileError
            No saved upload has ``digest`` (`get`).
        CertlibError
            The loader's error when the file is not a valid pool (with these options).
        """
        return self.read(digest, **load_options).pool

    def hold(self, files: Sequence[tuple[str, bytes]]) -> str:
        """Keep files that wait for their column mapping (not validated, not listed), so
        a reload of the page finds them again; files held for over a day are dropped.

        Parameters
        ----------
        files : sequence of (name, content)
            The uploaded files, in order.

        Returns
        -------
        str
            Their key (`digest_of`), for `held` and `release`.
        """
        import shutil
        import time

        key = self.digest_of(files)
        root = self.folder / "pending"
        if root.is_dir():
            for old in root.iterdir():
                if old.is_dir() and time.time() - old.stat().st_mtime > 86400:
                    shutil.rmtree(old, ignore_errors=True)
        where = root / key
        where.mkdir(parents=True, exist_ok=True)
        for i, (_, data) in enumerate(files):
            _atomic_write(where / f"{i}.bin", data)
        _atomic_write(where / "names.json", json.dumps([n for n, _ in files]).encode())
        return key

    def held(self, key: str) -> list[tuple[str, bytes]]:
        """The files `hold` kept under ``key``.

        Parameters
        ----------
        key : str
            What `hold` returned.

        Returns
        -------
        list of (name, content)
            The files, in order.

        Raises
        ------
        PoolFileError
            Nothing is held under ``key`` (released, or dropped after a day).
        """
        where = self.folder / "pending" / str(key)
        try:
            if not (len(key) == 64 and all(c in "0123456789abcdef" for c in key)):
                raise ValueError
            names = json.loads((where / "names.json").read_text())
            files = [(str(n), (where / f"{i}.bin").read_bytes()) for i, n in enumerate(names)]
        except (OSError, ValueError, TypeError):
            raise PoolFileError("the upload that waited for its column mapping is no longer "
                                "kept; upload the files again") from None
        if self.digest_of(files) != key:
            raise PoolFileError("the upload that waited for its column mapping is damaged; "
                                "upload the files again")
        return files

    def release(self, key: str) -> None:
        """Forget the files `hold` kept under ``key`` (nothing when there are none).

        Parameters
        ----------
        key : str
            What `hold` returned.
        """
        import shutil

        if len(key) == 64 and all(c in "0123456789abcdef" for c in key):
            shutil.rmtree(self.folder / "pending" / key, ignore_errors=True)

    def recent(self, limit: int = 20) -> list[SavedPool]:
        """Saved uploads, newest first (a stray or broken note is skipped).

        Parameters
        ----------
        limit : int, default 20
            At most this many.

        Returns
        -------
        list of SavedPool
            Newest upload first (ties by digest); their ``pool`` is None.
        """
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

    def _all_settings(self) -> dict[str, Any]:
        try:
            data = json.loads(self._settings_path().read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def class_settings(self, ref: str) -> ClassSettings:
        """The class settings saved for a pool.

        Parameters
        ----------
        ref : str
            The dashboard's reference of the pool (``"sample:demo"``,
            ``"upload:<sha256>"``).

        Returns
        -------
        ClassSettings
            The saved settings; empty ones when none were saved, or the saved ones no
            longer validate.
        """
        entry = self._all_settings().get(str(ref))
        if not isinstance(entry, dict):
            return ClassSettings()
        try:
            declared, names = _check_settings(entry.get("declared"),
                                              dict(entry.get("names") or {}), None)
        except (CertlibError, TypeError, ValueError):
            return ClassSettings()
        return ClassSettings(declared, names)

    def save_class_settings(self, ref: str, *, declared: Iterable[object] | None,
                            names: Mapping[object, object] | Iterable[tuple[object, object]],
                            found: Sequence[object] | None = None) -> ClassSettings:
        """Save the declared class set and the display names of a pool's classes.

        Settings with no declared set and no name are removed.

        Parameters
        ----------
        ref : str
            The dashboard's reference of the pool (``"sample:demo"``,
            ``"upload:<sha256>"``).
        declared : iterable or None
            The declared class set (at least two distinct classes); None or empty:
            the classes are inferred from the file.
        names : mapping or iterable of pairs
            {class: display name}; a name is non-empty text of at most 40 characters
            (stripped), for a class of the declared set, or of ``found`` when none is
            declared.
        found : sequence, optional
            The classes the file holds, checked against when nothing is declared.

        Returns
        -------
        ClassSettings
            The settings as saved (class keys as the file reader keys them).

        Raises
        ------
        ParameterError
            ``ref`` is empty, the declared set is no list or has fewer than two or
            repeated classes, or a name is empty, too long or for another class;
            nothing is written then.
        """
        if not isinstance(ref, str) or not ref:
            raise ParameterError(f"a pool reference is needed; got {ref!r}")
        keys, shown = _check_settings(declared, names, found)
        data = self._all_settings()
        if keys is None and not shown:
            data.pop(ref, None)
        else:
            data[ref] = {"declared": None if keys is None else list(keys),
                         "names": [[k, v] for k, v in shown.items()]}
        self.folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(self._settings_path(), json.dumps(data, indent=1).encode())
        return ClassSettings(keys, shown)


def _check_settings(
        declared_in: object, names: Mapping[object, object] | Iterable[tuple[object, object]],
        found: Iterable[object] | None,
) -> tuple[tuple[int | str, ...] | None, dict[int | str, str]]:
    """(declared as a tuple of class keys or None, {class key: stripped name})."""
    declared: tuple[int | str, ...] | None = None
    if declared_in is not None:
        if isinstance(declared_in, (str, bytes)) or not isinstance(declared_in, Iterable):
            raise ParameterError(f"the declared classes must be a list; got {declared_in!r}")
        declared = tuple(file_class_key(c) for c in declared_in) or None
    if declared is not None:
        if len(declared) < 2:
            raise ParameterError(f"a declared class set needs at least two classes; "
                                 f"got {list(declared)}")
        if len(set(declared)) != len(declared):
            raise ParameterError(f"the declared class set repeats a class: {list(declared)}")
    allowed = declared if declared is not None else (
        None if found is None else tuple(file_class_key(c) for c in found))
    pairs = names.items() if isinstance(names, Mapping) else names
    out: dict[int | str, str] = {}
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
