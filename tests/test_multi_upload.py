"""Several uploaded pool files or zips as one folder (`ui.multi_upload`, the Budget map
page's *Several pools*): names kept, collisions and empty uploads refused with one
message that names the files, never the server's temporary folder."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

import certlib
from ui.multi_upload import UploadError, unpack_pool_uploads

ROOT = Path(__file__).resolve().parents[1]
PANEL = sorted((ROOT / "sample_data" / "panels").glob("*.csv"))[:3]


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_zip_and_files_unpack_to_their_names(tmp_path):
    a, b, c = (p.read_bytes() for p in PANEL)
    z = _zip({"x/one.csv": a, "y/two.csv": b, "README.txt": b"notes",
              "__MACOSX/x/._one.csv": b"junk", "x/": b""})
    out = unpack_pool_uploads([("pools.zip", z), ("three.csv", c)], tmp_path)
    assert [p.name for p in out.files] == ["one.csv", "two.csv", "three.csv"]
    assert out.skipped == ("pools.zip: README.txt", "pools.zip: __MACOSX/x/._one.csv")
    assert [p.read_bytes() for p in out.files] == [a, b, c]
    m = certlib.budget_map(tmp_path)
    assert m.names == ("one", "three", "two") and len(m.maps) == 3


@pytest.mark.parametrize("uploads, message", [
    ([("pools.zip", _zip({"x/pool.csv": b"a", "y/pool.csv": b"b"}))],
     r"two pool files are named 'pool.csv' \('x/pool.csv' in 'pools.zip' and 'y/pool.csv' "
     r"in 'pools.zip'\)"),
    ([("pools.zip", _zip({"x/pool.csv": b"a"})), ("POOL.csv", b"b")],
     r"two pool files are named 'POOL.csv' \('x/pool.csv' in 'pools.zip' and the upload "
     r"'POOL.csv'\)"),
    ([("docs.zip", _zip({"README.txt": b"notes"}))],
     r"the upload \('docs.zip'\) holds no pool file; expected CSV or Parquet"),
    ([("notes.txt", b"x")], r"the upload \('notes.txt'\) holds no pool file"),
    ([("broken.zip", b"PK not a zip")], r"'broken.zip' is not a readable zip file"),
])
def test_bad_uploads_get_one_message_naming_the_files(tmp_path, uploads, message):
    with pytest.raises(UploadError, match=message) as e:
        unpack_pool_uploads(uploads, tmp_path)
    assert str(tmp_path) not in str(e.value)
