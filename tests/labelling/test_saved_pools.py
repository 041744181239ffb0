"""Uploaded pools saved under their content hash (certlib.labelling.saved_pools)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import certlib
from certlib.errors import CertlibError
from certlib.labelling.saved_pools import SavedPools, default_data_dir

GOOD = b"row_id,label,pred_a,conf_a,pred_b,conf_b\n1,0,0,.9,1,.8\n2,1,1,.7,1,.6\n3,,0,.5,0,.4\n"


def test_saved_pool_loads_again_from_a_new_instance(tmp_path):
    saved = SavedPools(tmp_path).add("my pool.csv", GOOD)
    again = SavedPools(tmp_path)  # a server restart
    pool = again.load(saved.digest)
    assert pool.names == ("a", "b") or list(pool.names) == ["a", "b"]
    assert pool.n == 3 and pool.n_labelled == 2
    assert [s.name for s in again.recent()] == ["my pool.csv"]
    # stored verbatim, under the hash of the uploaded bytes
    assert hashlib.sha256(again.get(saved.digest).path.read_bytes()).hexdigest() \
        == saved.digest == hashlib.sha256(GOOD).hexdigest()


def test_same_bytes_are_one_entry_and_paths_are_stripped(tmp_path):
    folder = SavedPools(tmp_path)
    a = folder.add("C:\\Users\\x\\first.csv", GOOD)
    b = folder.add("second.csv", GOOD)
    assert a.digest == b.digest
    assert [s.name for s in folder.recent()] == ["second.csv"]
    assert a.name == "first.csv"


@pytest.mark.parametrize("name,data,needle", [
    ("broken.csv", b"pred_a,conf_a,pred_b,conf_b\n0,nan,1,.8\n", "conf_a"),
    ("junk.csv", b"\x00\x01\x02 not a table", "junk.csv"),
    ("notes.txt", GOOD, "notes.txt"),
    ("one.csv", b"pred_a,conf_a\n0,.5\n", "only one candidate"),
])
def test_bad_file_names_the_users_file_and_saves_nothing(tmp_path, name, data, needle):
    folder = SavedPools(tmp_path / "data")
    with pytest.raises(CertlibError) as info:
        folder.add(name, data)
    assert needle in str(info.value)
    assert "upload" not in str(info.value).replace(name, "")
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())
    assert folder.recent() == []


def test_unknown_or_malformed_hash_is_one_clear_error(tmp_path):
    folder = SavedPools(tmp_path)
    folder.add("p.csv", GOOD)
    with pytest.raises(CertlibError, match="no saved pool"):
        folder.get("0" * 64)
    with pytest.raises(CertlibError, match="not the hash"):
        folder.get("../../etc/passwd")


def test_a_tampered_file_is_validated_again(tmp_path):
    folder = SavedPools(tmp_path)
    saved = folder.add("p.csv", GOOD)
    saved.path.write_bytes(b"pred_a,conf_a,pred_b,conf_b\n0,inf,1,.8\n")
    with pytest.raises(CertlibError, match="conf_a"):
        folder.load(saved.digest)


def test_default_folder_is_beside_the_label_store(tmp_path, monkeypatch):
    monkeypatch.delenv("CERTLIB_DATA", raising=False)
    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "labels.db"))
    assert default_data_dir() == tmp_path / "certlib_data"
    monkeypatch.setenv("CERTLIB_DATA", str(tmp_path / "elsewhere"))
    assert default_data_dir() == tmp_path / "elsewhere"


def test_saved_pool_equals_the_file_loaded_directly(tmp_path):
    src = tmp_path / "direct.csv"
    src.write_bytes(GOOD)
    saved = SavedPools(tmp_path / "d").add("direct.csv", GOOD)
    a, b = certlib.load_pool(src), SavedPools(tmp_path / "d").load(saved.digest)
    assert certlib.pool_hash(a) == certlib.pool_hash(b)
    assert np.array_equal(a.labels, b.labels)


def test_class_settings_round_trip_and_are_per_pool(tmp_path):
    from certlib.labelling.saved_pools import ClassSettings

    folder = SavedPools(tmp_path)
    assert folder.class_settings("sample:demo") == ClassSettings(None, {})
    folder.save_class_settings("sample:demo", declared=[0, 1],
                               names={0: " malignant ", "1": "benign"})
    again = SavedPools(tmp_path).class_settings("sample:demo")  # a restart
    assert again.declared == (0, 1)
    assert again.names == {0: "malignant", 1: "benign"}
    assert again.label(0) == "malignant" and again.label(1.0) == "benign"
    assert again.label(7) == "7"
    assert SavedPools(tmp_path).class_settings("sample:digits") == ClassSettings(None, {})
    # names only (inferred set), checked against the classes found
    folder.save_class_settings("upload:" + "a" * 64, declared=None, names={"cat": "Cat"},
                               found=["cat", "dog"])
    assert folder.class_settings("upload:" + "a" * 64).names == {"cat": "Cat"}
    assert folder.class_settings("upload:" + "a" * 64).declared is None
    # clearing both forgets the pool
    folder.save_class_settings("sample:demo", declared=None, names={})
    assert folder.class_settings("sample:demo") == ClassSettings(None, {})
    assert folder.recent() == []  # the settings file is not a pool
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.parametrize("declared,names,found,needle", [
    ([0, 1], {2: "x"}, None, "not in the class set"),
    (None, {"bird": "x"}, ["cat", "dog"], "not in the class set"),
    ([0, 1], {0: "  "}, None, "non-empty"),
    ([0, 1], {0: 5}, None, "non-empty"),
    ([0, 1], {0: "x" * 41}, None, "at most 40"),
    ([0, 0, 1], {}, None, "repeats"),
    ([0, "0"], {}, None, "repeats"),
    ([0], {}, None, "at least two"),
])
def test_bad_class_settings_are_refused_and_nothing_is_written(tmp_path, declared, names,
                                                                found, needle):
    folder = SavedPools(tmp_path)
    with pytest.raises(CertlibError, match=needle):
        folder.save_class_settings("sample:demo", declared=declared, names=names, found=found)
    assert not (tmp_path / "class_settings.json").exists()


def test_held_files_come_back_and_go(tmp_path):
    """Files waiting for their column mapping are kept on disk by their key (a reload of
    the page finds them), are never listed as saved pools, and are gone once released."""
    folder = SavedPools(tmp_path)
    files = [("a.csv", b"id,prediction,score\n1,0,0.9\n"), ("b.csv", b"id,x\n1,2\n")]
    key = folder.hold(files)
    assert key == SavedPools.digest_of(files)
    assert folder.held(key) == files
    assert folder.recent() == []
    folder.release(key)
    with pytest.raises(CertlibError, match="no longer kept"):
        folder.held(key)
    with pytest.raises(CertlibError, match="no longer kept"):
        folder.held("../../etc")
