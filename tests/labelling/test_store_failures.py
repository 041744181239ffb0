"""Store failures are one message and lose nothing: a full disk (a file-size limit), a
file or folder that cannot be written, a lock held past the busy timeout.

Each failure is produced for real, in a child process where it needs one (a fresh
interpreter: forking pytest, whose polars thread pool is running, can deadlock the
child): the file-size limit is ``RLIMIT_FSIZE`` (Python ignores SIGXFSZ, so a write past
it fails with EFBIG); permissions are tested as another user (root writes a 0444 file,
so as root the child drops to ``nobody`` once it has imported everything); the lock is a
second connection holding ``BEGIN IMMEDIATE`` with a short ``CERTLIB_STORE_TIMEOUT``.
Every test checks the error class, that the message names the file, and that every
label saved before reads back the same.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from certlib.audit.store import AuditStore
from certlib.core.pool import Pool
from certlib.errors import (CertlibError, StoreAccessError, StoreFullError, StoreLockedError,
                            StoreReadOnlyError)
from certlib.labelling.record import labels_csv
from certlib.labelling.store import LabelStore, StoreError

try:
    import resource
except ImportError:  # pragma: no cover - not Unix
    resource = None

NOBODY = 65534
SAVED = "Nothing of this action was saved"
N = 300
ROOT = Path(__file__).resolve().parents[2]


def small_pool() -> Pool:
    """300 rows, two models, classes 0 and 1."""
    preds = [[i % 2 for i in range(N)], [(i // 2) % 2 for i in range(N)]]
    confs = [[(i * 7919) % 101 / 100 for i in range(N)], [(i * 104729) % 97 / 96
                                                          for i in range(N)]]
    return Pool.from_arrays(preds, confs, classes=[0, 1], names=["A", "B"])


def in_child(task: str, *args, fsize: int | None = None, as_other_user: bool = False):
    """Run ``TASKS[task](*args)`` in a fresh interpreter (with the file-size limit
    ``fsize``; as ``nobody`` when ``as_other_user`` and this is root) and return what it
    returned, through JSON; an exception in the child fails the test with its output."""
    if resource is None:
        pytest.skip("needs the resource module (Unix)")
    order = {"task": task, "args": [str(a) if isinstance(a, Path) else a for a in args],
             "fsize": fsize, "nobody": as_other_user and os.geteuid() == 0}
    done = subprocess.run([sys.executable, __file__], input=json.dumps(order), cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def caught(fn) -> tuple[str, str]:
    """(class name, message) of the CertlibError ``fn()`` raises; a raw sqlite3 error (or
    none) fails."""
    try:
        fn()
    except CertlibError as exc:
        return type(exc).__name__, str(exc)
    except sqlite3.Error as exc:  # pragma: no cover - the bug under test
        raise AssertionError(f"raw sqlite3 error: {exc!r}") from exc
    raise AssertionError(f"{fn} raised nothing")


def events_of(store: LabelStore, pid: int) -> list[dict]:
    return [e.to_dict() for e in store.events(pid)]


@pytest.fixture
def shared_dir():
    """A folder another user can enter (pytest's tmp_path is root's alone); its mode and
    its files' are restored before it is removed."""
    d = Path(tempfile.mkdtemp(prefix="certlib-store-"))
    d.chmod(0o777)
    yield d
    for p in [d, *d.iterdir()]:
        p.chmod(0o777)
    shutil.rmtree(d, ignore_errors=True)


def labelled_store(path: Path, k: int = 12):
    """A label store with one project of ``k`` labels and an audit project with one batch
    and one label: (label store, project id, audit project id, pool)."""
    pool = small_pool()
    store = LabelStore(path)
    pid = store.create_project(pool, "demo", policy="random")
    for i in range(k):
        store.append_label(pid, pool.row_ids[i], i % 2, "ana", pool=pool)
    audit = AuditStore(path)
    aid = audit.create(epsilon=0.2, name="update", who="ana")
    audit.append_batch(aid, {"item_id": list(range(40)), "pred_incumbent": [0] * 40,
                             "pred_candidate": [i % 2 for i in range(40)]}, who="ana")
    return store, pid, aid, pool


def audit_state(path: Path, aid: int) -> dict:
    a = AuditStore(path, read_only=True)
    return {"batches": [b.to_dict() for b in a.batches(aid)],
            "events": [e.to_dict() for e in a.events(aid)], "stream": a.stream_csv(aid)}


# ------------------------------------------------------------------ a full disk
def test_a_full_disk_is_one_message_and_loses_no_label(tmp_path):
    """Labels until the file-size limit is reached: the failing label raises
    StoreFullError naming the file, and every label saved before it (in this process and
    in the limited one) reads back."""
    path = tmp_path / "labels.db"
    store, pid, aid, pool = labelled_store(path)
    before = events_of(store, pid)
    audit_before = audit_state(path, aid)
    limit = max(f.stat().st_size for f in tmp_path.iterdir()) + 16 * 1024
    got = in_child("fill", path, pid, len(before), fsize=max(limit, 40 * 1024))
    assert got["error"] == "StoreFullError", got
    assert str(path) in got["message"] and SAVED in got["message"]
    assert "Free some disk space" in got["message"]
    after = events_of(LabelStore(path), pid)
    assert after[:len(before)] == before  # nothing saved before is lost or changed
    assert [e["row_id"] for e in after[len(before):]] == [pool.row_ids[i]
                                                          for i in got["saved"]]
    assert pool.row_ids[got["at"]] not in {e["row_id"] for e in after}  # nothing half-saved
    assert audit_state(path, aid) == audit_before


def test_a_full_disk_refuses_an_audit_batch_and_a_new_store(tmp_path):
    """The audit store's writes, and creating a new store's tables (``executescript``),
    fail the same way, naming the file."""
    path = tmp_path / "labels.db"
    store, pid, aid, pool = labelled_store(path)
    before, audit_before = events_of(store, pid), audit_state(path, aid)
    big = {"item_id": [f"x{j}" for j in range(5000)], "pred_incumbent": [0] * 5000,
           "pred_candidate": [1] * 5000, "note": ["n" * 200] * 5000}
    limit = max(f.stat().st_size for f in tmp_path.iterdir()) + 64 * 1024
    batch = in_child("append_batch", path, aid, big, fsize=limit)
    new = tmp_path / "new.db"
    created = in_child("open_store", new, fsize=4096)
    for (name, message), file in ((batch, path), (created, new)):
        assert name == "StoreFullError", message
        assert str(file) in message and SAVED in message
    assert events_of(LabelStore(path), pid) == before
    assert audit_state(path, aid) == audit_before


# ------------------------------------------------------------------ read-only stores
def read_everything(path: Path, pid: int, aid: int, read_only: bool = False) -> dict:
    """What a reader gets from a store (opened ``read_only`` on request, or because it
    cannot be written), and what each write raises."""
    path, pool = Path(path), small_pool()
    s, a = LabelStore(path, read_only=read_only), AuditStore(path, read_only=read_only)
    prog = s.resume(pid, pool)
    out = {"read_only": [s.read_only, a.read_only], "events": events_of(s, pid),
           "projects": [p.id for p in s.projects(pool)], "labels_read": prog.session.t,
           "record": s.export_record(pid, pool), "csv": labels_csv(prog),
           "audit": audit_state(path, aid), "audit_status": a.status(aid).items,
           "audit_record": sorted(a.record(aid))}
    row = pool.row_ids[prog.next_row]
    writes = {
        "append_label": lambda: s.append_label(pid, row, 1, "bob", pool=pool),
        "undo_last": lambda: s.undo_last(pid, "ana"),
        "skip_row": lambda: s.skip_row(pid, row, "bob", pool=pool),
        "extend_budget": lambda: s.extend_budget(pid, 50, "bob"),
        "create_project": lambda: s.create_project(pool, "again", policy="random"),
        "audit_create": lambda: a.create(epsilon=0.1, who="bob"),
        "audit_batch": lambda: a.append_batch(aid, {"item_id": [999], "pred_incumbent": [0],
                                                    "pred_candidate": [1]}, who="bob"),
    }
    out["writes"] = {k: caught(f) for k, f in writes.items()}
    return out


def check_read_only(got: dict, path: Path, before: dict) -> None:
    assert got["read_only"] == [True, True]
    for key in ("events", "projects", "labels_read", "record", "csv", "audit"):
        assert _unstamped(got[key]) == _unstamped(before[key]), key
    for what, (name, message) in got["writes"].items():
        assert name == "StoreReadOnlyError", (what, name, message)
        assert str(path) in message and SAVED in message and "cannot be written" in message


def _before(path, pid, aid, pool) -> dict:
    s = LabelStore(path)
    prog = s.resume(pid, pool)
    return {"events": events_of(s, pid), "projects": [p.id for p in s.projects(pool)],
            "labels_read": prog.session.t, "record": s.export_record(pid, pool),
            "csv": labels_csv(prog), "audit": audit_state(path, aid)}


def _unstamped(value):
    """A record without the time it was exported at (two exports differ only there)."""
    return {k: v for k, v in value.items() if k != "exported_at"} if isinstance(value, dict) \
        else value


def _roundtrip(d):
    return json.loads(json.dumps(d, default=str))


@pytest.mark.parametrize("file_mode,folder_mode", [(0o444, 0o777), (0o666, 0o555),
                                                   (0o444, 0o555)],
                         ids=["file-0444", "folder-0555", "both"])
def test_a_store_that_cannot_be_written_opens_read_only(shared_dir, file_mode, folder_mode):
    """A 0444 file, a folder that cannot be written (SQLite cannot create the -shm file a
    WAL reader needs: the store is read as immutable), or both: the stores open, every
    read works and gives what it gave before, every write raises StoreReadOnlyError
    naming the file, and the file is unchanged after."""
    path = shared_dir / "labels.db"
    store, pid, aid, pool = labelled_store(path)
    before = _roundtrip(_before(path, pid, aid, pool))
    path.chmod(file_mode)
    shared_dir.chmod(folder_mode)
    got = in_child("read_everything", path, pid, aid, as_other_user=True)
    check_read_only(got, path, before)
    shared_dir.chmod(0o777)
    path.chmod(0o666)
    check_read_only(dict(_roundtrip(_before(path, pid, aid, pool)), read_only=[True, True],
                         writes={}), path, before)
    # writable again: the next label is saved
    LabelStore(path).append_label(pid, pool.row_ids[100], 0, "ana", pool=pool)


def test_read_only_on_request(tmp_path):
    """``read_only=True`` opens a writable store read-only: reads as before, writes
    refused with the same message."""
    path = tmp_path / "labels.db"
    store, pid, aid, pool = labelled_store(path)
    before = _roundtrip(_before(path, pid, aid, pool))
    check_read_only(_roundtrip(read_everything(path, pid, aid, read_only=True)), path, before)
    check_read_only(dict(_roundtrip(_before(path, pid, aid, pool)), read_only=[True, True],
                         writes={}), path, before)


def test_a_store_made_read_only_while_open_refuses_the_next_write(shared_dir):
    """A store opened writable whose file is then made 0444 (by its owner, the child):
    the next label raises StoreReadOnlyError (SQLite's refusal, translated), and nothing
    is lost."""
    path = shared_dir / "labels.db"
    store, pid, aid, pool = labelled_store(path)
    before = events_of(store, pid)
    if os.geteuid() == 0:  # the child, as nobody, owns the store: it may chmod it
        for f in [shared_dir, *shared_dir.iterdir()]:
            os.chown(f, NOBODY, NOBODY)
    saved, (name, message) = in_child("label_then_chmod", path, pid, as_other_user=True)
    assert name == "StoreReadOnlyError" and str(path) in message and SAVED in message
    after = events_of(LabelStore(path, read_only=True), pid)
    assert after[:len(before)] == before and [e["row_id"] for e in after[len(before):]] == [
        saved]


def test_an_older_schema_or_no_tables_in_a_read_only_file_says_so(shared_dir):
    """A read-only file of an older schema version cannot be migrated, one without the
    store's tables cannot get them, and a new file cannot be created in a read-only
    folder: each says so, naming the file."""
    tmp_path = shared_dir
    path = tmp_path / "labels.db"
    labelled_store(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE schema_version SET version = 1")
    con.commit()
    con.close()
    with pytest.raises(StoreReadOnlyError, match="version 1, which this certlib brings up"):
        LabelStore(path, read_only=True)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (x)").connection.close()
    with pytest.raises(StoreReadOnlyError, match=f"{empty}.*holds no label store"):
        LabelStore(empty, read_only=True)
    with pytest.raises(StoreReadOnlyError, match="holds no audit store"):
        AuditStore(empty, read_only=True)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        got = in_child("open_store", folder / "new.db", as_other_user=True)
    finally:
        folder.chmod(0o755)
    assert got[0] == "StoreReadOnlyError" and "cannot be created" in got[1]


def test_a_read_only_medium(tmp_path):
    """A store on a file system mounted read-only (where root cannot write either)
    opens read-only.  Needs a tmpfs mount (root in a container that allows it)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        path = mnt / "labels.db"
        store, pid, aid, pool = labelled_store(path)
        before = _roundtrip(_before(path, pid, aid, pool))
        assert subprocess.run(["mount", "-o", "remount,ro", str(mnt)]).returncode == 0
        got = _roundtrip(read_everything(path, pid, aid))
        check_read_only(got, path, before)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


# ------------------------------------------------------------------ a lock held too long
def test_a_lock_held_past_the_timeout_is_one_message(tmp_path, monkeypatch):
    """Another connection holds the write lock: a label and an audit batch wait the busy
    timeout, then raise StoreLockedError naming the file; reads still work (WAL), and
    once the lock is released the label is saved, nothing before it lost."""
    path = tmp_path / "labels.db"
    store, pid, aid, pool = labelled_store(path)
    before, audit_before = events_of(store, pid), audit_state(path, aid)
    audit = AuditStore(path)
    monkeypatch.setenv("CERTLIB_STORE_TIMEOUT", "0.2")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        t0 = time.monotonic()
        for fn in (lambda: store.append_label(pid, pool.row_ids[40], 1, "ana", pool=pool),
                   lambda: audit.label(aid, audit.status(aid).queue[0].item_id
                                       if audit.status(aid).queue else 1, 1, who="ana"),
                   lambda: LabelStore(path)):
            name, message = caught(fn)
            assert name == "StoreLockedError", message
            assert str(path) in message and SAVED in message and "0.2 s" in message
        assert time.monotonic() - t0 < 10
        assert events_of(store, pid) == before  # reads are not blocked by the writer
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.append_label(pid, pool.row_ids[40], 1, "ana", pool=pool)
    assert events_of(store, pid)[:-1] == before
    assert audit_state(path, aid) == audit_before


def test_a_bad_timeout_setting_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_STORE_TIMEOUT", "soon")
    with pytest.raises(CertlibError, match="CERTLIB_STORE_TIMEOUT='soon'"):
        LabelStore(tmp_path / "labels.db")


# ------------------------------------------------------------------ the classes
def test_the_classes_and_old_callers():
    """Every store failure is a StoreAccessError and a CertlibError (what the pages and
    the command line catch); the store's refusals stay StoreError."""
    for cls in (StoreFullError, StoreReadOnlyError, StoreLockedError):
        assert issubclass(cls, StoreAccessError) and issubclass(cls, CertlibError)
    assert issubclass(StoreError, CertlibError)


# ------------------------------------------------------------------ the children's tasks
def task_fill(path, pid, start):
    """Label row after row until the store refuses: the rows saved, the refusal."""
    s, pool, saved = LabelStore(path), small_pool(), []
    for i in range(start, N):
        try:
            s.append_label(pid, pool.row_ids[i], 1, "ana", pool=pool)
        except CertlibError as exc:
            return {"saved": saved, "error": type(exc).__name__, "message": str(exc),
                    "at": i}
        saved.append(i)
    return {"saved": saved, "error": None}


def task_append_batch(path, aid, batch):
    return caught(lambda: AuditStore(path).append_batch(aid, batch, who="pipeline"))


def task_open_store(path):
    return caught(lambda: LabelStore(path))


def task_label_then_chmod(path, pid):
    """Open writable, label a row, make the file 0444, label another."""
    s, pool = LabelStore(path), small_pool()
    assert not s.read_only
    s.append_label(pid, pool.row_ids[50], 1, "ana", pool=pool)
    Path(path).chmod(0o444)
    return int(pool.row_ids[50]), caught(lambda: s.append_label(pid, pool.row_ids[51], 1, "ana",
                                                           pool=pool))


TASKS = {"fill": task_fill, "append_batch": task_append_batch, "open_store": task_open_store,
         "label_then_chmod": task_label_then_chmod, "read_everything": read_everything}


if __name__ == "__main__":  # a child of `in_child`
    how = json.loads(sys.stdin.read())
    with tempfile.TemporaryDirectory() as warm:  # every lazy import done before the
        # limits apply (nobody cannot read root's Python installation)
        _, w_pid, w_aid, _ = labelled_store(Path(warm) / "warm.db", k=2)
        read_everything(Path(warm) / "warm.db", w_pid, w_aid, read_only=True)
    if how["nobody"]:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    if how["fsize"] is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (how["fsize"], how["fsize"]))
    print(json.dumps(TASKS[how["task"]](*how["args"]), default=str))


# ------------------------------------------------------------------ the Label page
def test_label_page_on_a_read_only_store_reads_and_refuses_labels(tmp_path, monkeypatch):
    """The Label page on a store that opens read-only: the note says labelling is off,
    the project, its bounds and its downloads are shown, and a key press is refused in
    the panel with the store's message (nothing saved)."""
    st_testing = pytest.importorskip("streamlit.testing.v1")
    from page_support import panel_press, panel_result, view_button

    path = tmp_path / "labels.db"
    monkeypatch.setenv("CERTLIB_STORE", str(path))
    at = st_testing.AppTest.from_file(str(ROOT / "views" / "label.py"), default_timeout=60)
    at.run()
    at.text_input(key="annotator").set_value("ana")
    view_button(at, "start").click().run()
    for _ in range(3):
        panel_press(at, "c1")
    assert not at.exception, at.exception
    (project,) = LabelStore(path).projects()
    before = events_of(LabelStore(path), project.id)
    assert len(before) == 3

    opened = LabelStore.__init__

    def read_only_init(self, path=None, *, read_only=False):  # as if the file were 0444
        opened(self, path, read_only=True)

    monkeypatch.setattr(LabelStore, "__init__", read_only_init)
    at.run()
    assert not at.exception, at.exception
    assert any("Read-only: labelling is off" in i.value for i in at.info)
    assert len(at.get("download_button")) == 2  # the record and the labels, while running
    assert at.get("plotly_chart")  # the bounds
    press = panel_press(at, "c1")
    assert not at.exception, at.exception
    result = panel_result(at, press)
    assert result is not None and not result["ok"] and "cannot be written" in result["text"]
    assert events_of(LabelStore(path), project.id) == before
