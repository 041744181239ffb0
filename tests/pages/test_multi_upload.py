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

ROOT = Path(__file__).resolve().parents[2]
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


def _corrupt_zip() -> bytes:
    """A zip whose one member's deflated data is damaged (the header is intact)."""
    raw = bytearray(_zip_deflated({"p.csv": b"row_id,pred_a,conf_a\n" * 400}))
    start = raw.index(b"p.csv") + len(b"p.csv")  # the local header's name, then the data
    for i in range(start + 4, start + 40):
        raw[i] ^= 0xFF
    return bytes(raw)


def _zip_deflated(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize("uploads, message", [
    ([("pools.zip", _zip({"x/pool.csv": b"a", "y/pool.csv": b"b"}))],
     r"two pool files are named 'pool' \('x/pool.csv' in 'pools.zip' and 'y/pool.csv' "
     r"in 'pools.zip'\)"),
    # the tables name pools by the file name without its suffix
    ([("a.csv", b"a"), ("a.parquet", b"b")],
     r"two pool files are named 'a' \(the upload 'a.csv' and the upload 'a.parquet'\)"),
    ([("pools.zip", _zip({"x/pool.csv": b"a"})), ("POOL.csv", b"b")],
     r"two pool files are named 'POOL' \('x/pool.csv' in 'pools.zip' and the upload "
     r"'POOL.csv'\)"),
    ([("docs.zip", _zip({"README.txt": b"notes"}))],
     r"the upload \('docs.zip'\) holds no pool file; expected CSV or Parquet"),
    ([("notes.txt", b"x")], r"the upload \('notes.txt'\) holds no pool file"),
    ([("broken.zip", b"PK not a zip")], r"'broken.zip' is not a readable zip file"),
    ([("bad.zip", _corrupt_zip())], r"'p.csv' in 'bad.zip' cannot be unpacked \(\w+\); "
                                    r"the zip is damaged"),
    ([("long.zip", _zip({"d/" + "x" * 230 + ".csv": b"a"}))], r"longer than 200 bytes"),
])
def test_bad_uploads_get_one_message_naming_the_files(tmp_path, uploads, message):
    with pytest.raises(UploadError, match=message) as e:
        unpack_pool_uploads(uploads, tmp_path)
    assert str(tmp_path) not in str(e.value)


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path, monkeypatch):
    """A zip's headers are checked first: its declared size and its member count."""
    import ui.multi_upload as mu

    big = _zip_deflated({"a.csv": b"0" * 3_000_000, "b.csv": b"0" * 3_000_000})
    assert len(big) < 30_000  # a small upload that unpacks to 6 MB
    monkeypatch.setattr(mu, "MAX_TOTAL_BYTES", 5_000_000)
    with pytest.raises(UploadError, match=r"'big.zip' unpacks to 6,000,000 bytes of pool "
                                          r"files; the limit is 5,000,000 in all"):
        unpack_pool_uploads([("big.zip", big)], tmp_path)
    assert not list(tmp_path.iterdir())  # nothing was written
    monkeypatch.setattr(mu, "MAX_MEMBERS", 3)
    many = _zip({f"p{i}.csv": b"a" for i in range(4)})
    with pytest.raises(UploadError, match=r"'many.zip' holds 4 pool files; the limit is 3"):
        unpack_pool_uploads([("many.zip", many)], tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_member_that_understates_its_size_is_stopped_while_copied(tmp_path, monkeypatch):
    """zipfile reads no more than the stated size and then finds the damage; the byte
    count would stop it at the limit otherwise.  Either way, little is written."""
    import ui.multi_upload as mu

    raw = bytearray(_zip_deflated({"a.csv": b"0" * 2_000_000}))
    # lie in the central directory: uncompressed size 10 bytes
    cd = raw.rindex(b"PK\x01\x02")
    raw[cd + 24:cd + 28] = (10).to_bytes(4, "little")
    monkeypatch.setattr(mu, "MAX_TOTAL_BYTES", 1_000_000)
    with pytest.raises(UploadError, match="more than 1,000,000 bytes of pool files|"
                                          "'a.csv' in 'liar.zip' cannot be unpacked"):
        unpack_pool_uploads([("liar.zip", bytes(raw))], tmp_path)
    assert sum(f.stat().st_size for f in tmp_path.iterdir()) <= 1_000_000


def test_a_bad_pool_file_from_a_zip_is_traced_to_its_zip(tmp_path):
    """The library's message names only the file; the page adds the zip it came from."""
    a = PANEL[0].read_bytes()
    bad = b"row_id,pred_a,conf_a,pred_b,conf_b\n0,1,0.9,0,0.8\n1,0,high,1,0.7\n"
    out = unpack_pool_uploads([("mixed.zip", _zip({"p/good.csv": a, "p/bad.csv": bad})),
                               ("loose.csv", a)], tmp_path)
    with pytest.raises(certlib.errors.CertlibError) as info:
        certlib.budget_map(tmp_path)
    assert "'bad.csv'" in str(info.value)
    assert out.origin_of(str(info.value)) == "'p/bad.csv' in 'mixed.zip'"
    assert out.origin_of("pool file 'loose.csv' is broken") is None  # not from a zip
    # a plain upload whose name holds " in " is not taken for a zip member
    (tmp_path / "p").mkdir()
    plain = unpack_pool_uploads([("results in 2024.csv", a)], tmp_path / "p")
    assert plain.origin_of("pool file 'results in 2024.csv' is broken") is None
