"""Several uploaded pool files, or zips of them, as one folder of pool files (the Budget
map page's *Several pools*).  No streamlit: the page hands over (name, bytes) pairs.

The tables name every pool by its file name without the suffix, so two pool files with
one such name (in two folders of a zip, or ``a.csv`` and ``a.parquet``) are refused with
one message naming both; a zip that holds no pool file is refused naming the upload,
never the server's temporary folder.  Other files in a zip (a README, hidden files) are
listed as skipped.  A zip is checked before anything is unpacked: at most `MAX_MEMBERS`
pool files and `MAX_TOTAL_BYTES` unpacked bytes in all (a small zip can unpack to
gigabytes), and each member is copied with a byte count, so a member whose header
understates its size cannot exceed the limit either.
"""

from __future__ import annotations

import io
import lzma
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from certlib.planning.budget_plan import POOL_SUFFIXES
from certlib.errors import CertlibError
from certlib.labelling.saved_pools import display_name

__all__ = ["MAX_MEMBERS", "MAX_TOTAL_BYTES", "UploadError", "Unpacked", "unpack_pool_uploads"]

#: at most this many bytes of pool files in all, unpacked (the single-upload limit)
MAX_TOTAL_BYTES = 200 * 1024 * 1024
#: at most this many pool files in all
MAX_MEMBERS = 500
#: file names longer than this are refused (most file systems allow 255 bytes)
MAX_NAME_BYTES = 200
_CHUNK = 1 << 20
# what a damaged member can raise while it is decompressed
_UNPACK_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError,
                  NotImplementedError, RuntimeError, ValueError)


class UploadError(CertlibError):
    """The uploads cannot be read as a set of pool files."""


@dataclass(frozen=True)
class Unpacked:
    files: tuple  # Paths of the pool files written, in upload order
    skipped: tuple  # names (zip member paths) that are not pool files
    origins: dict = None  # file from a zip -> where it came from ("'a/b.csv' in 'x.zip'")

    def origin_of(self, message: str) -> str | None:
        """Where the pool file a library message names (quoted) came from, when it came
        out of a zip (the message names only the file), else None."""
        for name, origin in (self.origins or {}).items():
            if repr(name) in message:
                return origin
        return None


def _is_pool(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in POOL_SUFFIXES


class _Writer:
    """Writes pool files into one folder, refusing clashes and anything over the limits."""

    def __init__(self, folder: Path):
        self.folder, self.where, self.files, self.total = folder, {}, [], 0
        self.origins = {}

    def claim(self, name: str, origin: str, from_zip: bool = False) -> Path:
        if len(name.encode()) > MAX_NAME_BYTES:
            raise UploadError(f"the file name of {origin} is longer than {MAX_NAME_BYTES} "
                              "bytes; rename it")
        key = PurePosixPath(name).stem.casefold()
        if key in self.where:
            raise UploadError(f"two pool files are named {PurePosixPath(name).stem!r} "
                              f"({self.where[key]} and {origin}); the tables name each pool "
                              "by its file name, so rename one of them")
        if len(self.files) >= MAX_MEMBERS:
            raise UploadError(f"the uploads hold more than {MAX_MEMBERS} pool files; upload "
                              "fewer at a time")
        self.where[key] = origin
        if from_zip:
            self.origins[name] = origin
        path = self.folder / name
        self.files.append(path)
        return path

    def count(self, n: int) -> None:
        self.total += n
        if self.total > MAX_TOTAL_BYTES:
            raise UploadError(f"the uploads hold more than {MAX_TOTAL_BYTES:,} bytes of pool "
                              "files (unpacked); upload fewer at a time")


def unpack_pool_uploads(uploads, folder) -> Unpacked:
    """Write every pool file of ``uploads`` ((name, bytes) pairs; a ``.zip`` is opened
    and its pool files taken from any folder in it) into ``folder`` under its own file
    name, and return them.  Raises `UploadError` naming the upload (and the member) on
    an unreadable or damaged zip, two pool files with one name, too many or too large
    files, or no pool file at all."""
    out = _Writer(Path(folder))
    skipped = []
    for up_name, data in uploads:
        base = display_name(up_name)
        if base.lower().endswith(".zip"):
            skipped += _unpack_zip(base, data, out)
        elif _is_pool(base):
            path = out.claim(base, f"the upload {base!r}")
            out.count(len(data))
            path.write_bytes(data)
        else:
            skipped.append(base)
    if not out.files:
        names = ", ".join(repr(display_name(n)) for n, _ in uploads)
        raise UploadError(f"the upload ({names}) holds no pool file; expected CSV or Parquet "
                          f"pool files ({', '.join(POOL_SUFFIXES)}), or a .zip of them")
    return Unpacked(tuple(out.files), tuple(skipped), dict(out.origins))


def _unpack_zip(base: str, data: bytes, out: _Writer) -> list:
    """The pool files of one zip into ``out``; returns the skipped member names."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError):
        raise UploadError(f"{base!r} is not a readable zip file; expected a .zip of CSV or "
                          "Parquet pool files") from None
    skipped, members = [], []
    with zf:
        for info in zf.infolist():
            member = info.filename.replace("\\", "/")
            name = PurePosixPath(member).name
            if info.is_dir() or not name:
                continue
            if name.startswith(".") or "__MACOSX/" in member or not _is_pool(name):
                skipped.append(f"{base}: {member}")
                continue
            members.append((info, member, name))
        # the headers first: refuse a zip that says it is too large before unpacking it
        if len(members) + len(out.files) > MAX_MEMBERS:
            raise UploadError(f"{base!r} holds {len(members):,} pool files; the limit is "
                              f"{MAX_MEMBERS} in all")
        declared = sum(info.file_size for info, _, _ in members)
        if out.total + declared > MAX_TOTAL_BYTES:
            raise UploadError(f"{base!r} unpacks to {declared:,} bytes of pool files; the "
                              f"limit is {MAX_TOTAL_BYTES:,} in all")
        for info, member, name in members:
            origin = f"{member!r} in {base!r}"
            path = out.claim(name, origin, from_zip=True)
            try:
                with zf.open(info) as src, open(path, "wb") as dst:
                    while chunk := src.read(_CHUNK):
                        out.count(len(chunk))
                        dst.write(chunk)
            except UploadError:
                raise
            except _UNPACK_ERRORS as exc:
                raise UploadError(f"{origin} cannot be unpacked ({type(exc).__name__}); "
                                  "the zip is damaged") from None
    return skipped
