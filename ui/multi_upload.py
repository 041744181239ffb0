"""Several uploaded pool files, or zips of them, as one folder of pool files (the Budget
map page's *Several pools*).  No streamlit: the page hands over (name, bytes) pairs.

Every pool keeps its file name (the tables name pools by it), so two files with the same
name, in two folders of a zip or in a zip and an upload, are refused with one message
naming both; a zip that holds no pool file is refused naming the upload, never the
server's temporary folder.  Other files in a zip (a README, hidden files) are listed as
skipped.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from certlib.budget_plan import POOL_SUFFIXES
from certlib.errors import CertlibError

__all__ = ["Unpacked", "unpack_pool_uploads"]

#: refused beyond this many bytes of pool files in all (unpacked), like a zip bomb
MAX_TOTAL_BYTES = 2 * 1024 ** 3


class UploadError(CertlibError):
    """The uploads cannot be read as a set of pool files."""


@dataclass(frozen=True)
class Unpacked:
    files: tuple  # Paths of the pool files written, in upload order
    skipped: tuple  # names (zip member paths) that are not pool files


def _is_pool(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in POOL_SUFFIXES


def unpack_pool_uploads(uploads, folder) -> Unpacked:
    """Write every pool file of ``uploads`` ((name, bytes) pairs; a ``.zip`` is opened
    and its pool files taken from any folder in it) into ``folder`` under its own file
    name, and return them.  Raises `UploadError` naming the upload (and the member) on
    an unreadable zip, two pool files with one name, or no pool file at all."""
    folder = Path(folder)
    where: dict = {}  # file name -> where it came from
    files, skipped = [], []
    total = 0

    def put(name: str, origin: str, data: bytes) -> None:
        nonlocal total
        key = name.lower()
        if key in where:
            raise UploadError(f"two pool files are named {name!r} ({where[key]} and "
                              f"{origin}); the tables name each pool by its file name, so "
                              "rename one of them")
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise UploadError(f"the uploads hold more than {MAX_TOTAL_BYTES:,} bytes of pool "
                              "files; upload fewer at a time")
        where[key] = origin
        path = folder / name
        path.write_bytes(data)
        files.append(path)

    for up_name, data in uploads:
        base = PurePosixPath(str(up_name).replace("\\", "/")).name
        if base.lower().endswith(".zip"):
            try:
                zf = zipfile.ZipFile(io.BytesIO(data))
            except zipfile.BadZipFile:
                raise UploadError(f"{base!r} is not a readable zip file; expected a .zip of "
                                  "CSV or Parquet pool files") from None
            with zf:
                for info in zf.infolist():
                    member = info.filename.replace("\\", "/")
                    name = PurePosixPath(member).name
                    if info.is_dir() or not name:
                        continue
                    if name.startswith(".") or "__MACOSX/" in member or not _is_pool(name):
                        skipped.append(f"{base}: {member}")
                        continue
                    if info.file_size > MAX_TOTAL_BYTES:
                        raise UploadError(f"{member!r} in {base!r} unpacks to "
                                          f"{info.file_size:,} bytes; the limit is "
                                          f"{MAX_TOTAL_BYTES:,}")
                    try:
                        content = zf.read(info)
                    except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as e:
                        raise UploadError(f"{member!r} in {base!r} cannot be unpacked "
                                          f"({type(e).__name__})") from None
                    put(name, f"{member!r} in {base!r}", content)
        elif _is_pool(base):
            put(base, f"the upload {base!r}", data)
        else:
            skipped.append(base)
    if not files:
        names = ", ".join(repr(PurePosixPath(str(n)).name) for n, _ in uploads)
        raise UploadError(f"the upload ({names}) holds no pool file; expected CSV or Parquet "
                          f"pool files ({', '.join(POOL_SUFFIXES)}), or a .zip of them")
    return Unpacked(tuple(files), tuple(skipped))
