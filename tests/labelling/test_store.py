"""The append-only labelling store (certlib.labelling.store, SPEC section 12).

Resuming a project must give the same state as replaying its history and as
stepping a fresh Session label by label (STYLE rule 6); the evidence record
must verify against the pool and fail on any tampering.
"""

from __future__ import annotations

import copy
import json
import re
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from record_support import rechained
import certlib
from certlib import Pool, Session
from certlib.certificates.certificate import certify_partial
from certlib.errors import CertlibError, PoolFileError
from certlib.labelling.record import make_record, read_record
from certlib.labelling.store import (DuplicateLabelError, LabelStore, NothingSkippedError,
                           NothingToUndoError, PoolMismatchError, StaleStateError,
                           StoreError, UnknownProjectError, default_store_path, verify_record)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pools():
    unlabelled = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    return unlabelled, truth


def _truth(truth, pos):
    return truth.classes[int(truth.labels[pos])]


def _label_n(store, pid, pool, truth, n, who="ana"):
    """Label n rows in the policy's order with the hidden truth; returns the session."""
    for _ in range(n):
        p = store.progress(pid, pool)
        if p.session.done:
            break
        r = p.next_row  # the policy passes over skipped rows
        store.append_label(pid, pool.row_ids[r], _truth(truth, r), who, pool=pool,
                           expect_seq=p.last_seq)
    return store.session(pid, pool)


def _same_state(a: Session, b: Session):
    assert a.history == b.history
    assert np.array_equal(a.lower(), b.lower())
    assert (a.status, a.best_guess, a.excess, a.next_row()) == (
        b.status, b.best_guess, b.excess, b.next_row())


def test_create_and_list_projects(tmp_path, pools):
    pool, _ = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.create_project(pool, "demo.csv", policy="adaptive-pair-sum", tolerance=0.0,
                               budget=60, seed=0, rule="shared")
    p = store.project(pid)
    assert p.pool_hash == certlib.pool_hash(pool)
    assert p.candidates == pool.names and p.budget == 60 and p.policy == "adaptive-pair-sum"
    assert p.prelabel_bound == certlib.prelabel_bound(pool).prelabel_bound
    assert [q.id for q in store.projects()] == [pid]
    assert store.find_project(pool, budget=60) == pid
    assert store.find_project(pool, budget=None) is None
    assert store.open_project(pool, "demo.csv", budget=60) == pid
    assert store.open_project(pool, "demo.csv", tolerance=0.001) != pid
    with pytest.raises(UnknownProjectError, match="project_id 99"):
        store.events(99)
    with pytest.raises(CertlibError, match="policy"):
        store.create_project(pool, "demo.csv", policy="no-such-policy")


def test_schema_wal_and_foreign_keys(tmp_path, pools):
    LabelStore(tmp_path / "l.db")
    con = sqlite3.connect(tmp_path / "l.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT version FROM schema_version").fetchall() == [(6,)]
    con.execute("PRAGMA foreign_keys=ON")
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO events VALUES (7, 1, 'label', '1', '0', 'x', 't', NULL, NULL, "
                    "'h', 'h')")
    con.close()


def test_events_are_append_only_in_the_file(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    _label_n(store, pid, pool, truth, 2)
    con = sqlite3.connect(tmp_path / "l.db")
    for sql in ("DELETE FROM events", "UPDATE events SET label = '1'"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(sql)
    con.close()


def test_append_refuses_duplicates_bad_labels_and_stale_views(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    rid = pool.row_ids[0]
    e = store.append_label(pid, rid, 1, "ana", pool=pool)
    assert (e.seq, e.kind, e.row_id, e.label, e.annotator) == (1, "label", rid, 1, "ana")
    assert e.at.endswith("Z")
    with pytest.raises(DuplicateLabelError, match=f"row_id {rid!r} already has label 1"):
        store.append_label(pid, rid, 0, "bob", pool=pool)
    with pytest.raises(CertlibError, match="class set"):
        store.append_label(pid, pool.row_ids[1], 7, "ana", pool=pool)
    # the same row named another way ("1" for 1) is still the same row
    with pytest.raises(DuplicateLabelError):
        store.append_label(pid, str(rid), 0, "bob", pool=pool)
    with pytest.raises(CertlibError, match="row_id"):
        store.append_label(pid, "no-such-row", 0, "ana", pool=pool)
    with pytest.raises(CertlibError, match="annotator"):
        store.append_label(pid, pool.row_ids[1], 0, "  ", pool=pool)
    with pytest.raises(StaleStateError, match="expected last event 0, the store has 1"):
        store.append_label(pid, pool.row_ids[1], 0, "ana", pool=pool, expect_seq=0)
    assert len(store.events(pid)) == 1  # nothing refused was written


def test_undo_appends_and_allows_relabelling(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    with pytest.raises(NothingToUndoError):
        store.undo_last(pid, "ana")
    s2 = _label_n(store, pid, pool, truth, 2)
    first, second = s2.history
    u = store.undo_last(pid, "ana")
    assert (u.kind, u.undoes, u.seq) == ("undo", 2, 3)
    assert [e.kind for e in store.events(pid)] == ["label", "label", "undo"]
    s = store.session(pid, pool)
    assert s.history == (first,)
    # the undone row can be labelled again (here with the other class): a new event
    row = pool.row_ids[second[0]]
    store.append_label(pid, row, 1 - second[1], "bob", pool=pool)
    s = store.session(pid, pool)
    assert s.history == (first, (second[0], 1 - second[1]))
    assert len(store.events(pid)) == 4  # history kept
    assert [e.seq for e in store.labels(pid)] == [1, 4]


def test_resume_equals_replay_equals_fresh_stepping(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv", policy="adaptive-pair-sum", budget=40)
    resumed = _label_n(store, pid, pool, truth, 30)
    replayed = Session.from_history(pool, resumed.history, policy="adaptive-pair-sum", budget=40)
    fresh = Session.start(pool, policy="adaptive-pair-sum", budget=40)
    for _ in range(30):
        r = fresh.next_row()
        fresh = fresh.observe(r, _truth(truth, r))
    _same_state(resumed, replayed)
    _same_state(resumed, fresh)
    # the bounds path of the page: one K x K matrix per prefix, equal to batch bounds
    prog = store.progress(pid, pool)
    assert len(prog.lower_path) == 31
    from certlib.core.bounds import batch_lower
    rows = [r for r, _ in resumed.history]
    codes = [pool.class_code(v) for _, v in resumed.history]
    for t in (0, 7, 30):
        assert np.array_equal(prog.lower_path[t], batch_lower(pool, rows[:t], labels=codes[:t]))



def test_resume_after_labels_and_an_undo_equals_a_fresh_replay(tmp_path, pools):
    pool, truth = pools
    path = tmp_path / "l.db"
    store = LabelStore(path)
    pid = store.open_project(pool, "demo.csv", policy="adaptive-pair-sum", budget=40)
    _label_n(store, pid, pool, truth, 6)
    store.undo_last(pid, "ana")
    _label_n(store, pid, pool, truth, 2, who="bob")
    live = store.labels(pid)
    fresh = Session.from_history(pool, [(pool.position(e.row_id), e.label) for e in live],
                                 policy="adaptive-pair-sum", budget=40)
    resumed = store.resume(pid, pool)
    from_url = LabelStore(path).resume(f" {pid} ", pool)  # a new process, the id as URL text
    for p in (resumed, from_url):
        _same_state(p.session, fresh)
        assert p.session.t == 7 and p.labels == live and p.last_seq == 9
        assert p.project == store.project(pid) and p.events == store.events(pid)
    # the bounds path restarts at the undo: one matrix per label in force, as batch bounds
    from certlib.core.bounds import batch_lower
    assert len(resumed.lower_path) == 8
    rows = [r for r, _ in fresh.history]
    codes = [pool.class_code(v) for _, v in fresh.history]
    for t in range(8):
        assert np.array_equal(resumed.lower_path[t], batch_lower(pool, rows[:t], labels=codes[:t]))
    assert resumed.next_row == fresh.next_row()
    assert resumed.labels_left_at_least == resumed.project.prelabel_bound - 7
    assert store.export_record(pid, pool)["labels"] == make_record(resumed)["labels"]


def test_resume_refuses_unknown_ids_and_other_pools(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    _label_n(store, pid, pool, truth, 2)
    for bad in (pid + 1, str(pid + 1), "abc", "", "-1", "1.0", None, True):
        with pytest.raises(UnknownProjectError, match="project_id") as exc:
            store.resume(bad, pool)
        assert str(tmp_path / "l.db") in str(exc.value)
    other = certlib.load_pool(ROOT / "sample_data" / "teaching_k4.csv")
    with pytest.raises(PoolMismatchError, match=f"project {pid} .'demo.csv'.") as exc:
        store.resume(pid, other)
    assert certlib.pool_hash(pool) in str(exc.value) and certlib.pool_hash(other) in str(exc.value)
    assert len(store.events(pid)) == 2  # reading never writes

def test_incremental_progress_equals_full_replay(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    _label_n(store, pid, pool, truth, 3)
    prev = store.progress(pid, pool)
    _label_n(store, pid, pool, truth, 2)
    inc, full = store.progress(pid, pool, since=prev), store.progress(pid, pool)
    _same_state(inc.session, full.session)
    assert all(np.array_equal(a, b) for a, b in zip(inc.lower_path, full.lower_path))
    assert len(inc.lower_path) == 6
    store.undo_last(pid, "ana")  # an undo forces a full replay
    after = store.progress(pid, pool, since=inc)
    assert after.session.t == 4 and len(after.lower_path) == 5
    other = store.open_project(pool, "demo.csv", budget=9)  # another project: ignored
    assert store.progress(other, pool, since=inc).session.t == 0


def test_pool_hash_mismatch_names_both_hashes(tmp_path, pools):
    pool, _ = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    other = certlib.load_pool(ROOT / "sample_data" / "teaching_k4.csv")
    with pytest.raises(PoolMismatchError) as exc:
        store.session(pid, other)
    msg = str(exc.value)
    assert certlib.pool_hash(pool) in msg and certlib.pool_hash(other) in msg
    with pytest.raises(PoolMismatchError):
        store.append_label(pid, other.row_ids[0], 0, "ana", pool=other)


def test_certify_export_and_verify(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    s = _label_n(store, pid, pool, truth, pool.n)
    rep = certlib.replay(truth, policy="adaptive-pair-sum")
    assert s.certified and s.t == rep.labels_read and s.selected == rep.selected
    rec = store.export_record(pid, pool)
    import json

    rec = json.loads(json.dumps(rec))  # JSON round trip, as downloaded
    assert rec["pool"]["hash"] == certlib.pool_hash(pool)
    assert rec["guarantee"]["kind"] == "exact" and rec["selected"] == rep.selected
    assert rec["labels_read"] == len(rec["labels"]) == rep.labels_read
    assert rec["prelabel_bound"] == 47 and rec["candidates"] == list(pool.names)
    assert all(lab["annotator"] == "ana" and lab["at"] for lab in rec["labels"])
    v = verify_record(rec, pool)
    assert v.ok, v.mismatches
    assert verify_record(rec, truth).ok  # labels agree with the hidden truth

    # a flipped label changes the bounds (and contradicts the truth file)
    bad = copy.deepcopy(rec)
    bad["labels"][3]["label"] = 1 - bad["labels"][3]["label"]
    bad["events"][3]["label"] = bad["labels"][3]["label"]
    v = verify_record(bad, truth)
    assert not v.ok
    assert any("lower bounds" in m for m in v.mismatches)
    assert any("pool file" in m for m in v.mismatches)
    # a label edited in the list but not in the log
    bad2 = copy.deepcopy(rec)
    bad2["labels"][0]["label"] = 1 - bad2["labels"][0]["label"]
    assert any("event log" in m for m in verify_record(bad2, pool).mismatches)
    # a forged verdict
    bad3 = copy.deepcopy(rec)
    bad3["selected"] = "tree"
    assert verify_record(bad3, pool).mismatches == (
        "selected: record says 'tree', recomputed 'logreg'",)
    # every claim a reader takes at its word is recomputed: the sentence, the size, the units
    for path, value, what in ((("guarantee", "text"), "logreg is best with certainty",
                               "guarantee text"),
                              (("guarantee", "worst_case_excess_float"), -1.0,
                               "worst-case excess (float)"),
                              (("pool", "n"), 9999, "pool size n"), (("pool", "K"), 3,
                                                                      "number of candidates K"),
                              (("bounds", "scale"), 7, "scale"),
                              (("bounds", "bound_unit"), 7, "bound unit")):
        forged = copy.deepcopy(rec)
        *head, last = path
        (forged[head[0]] if head else forged)[last] = value
        (m,) = verify_record(forged, pool).mismatches
        assert m.startswith(f"{what}: record says {value!r}, recomputed "), m
    assert verify_record(dict(rec, version=4), pool).mismatches == (
        "version: record says 4; this certlib verifies versions 1, 2, 3",)
    # a version-1 record (earlier builds) worded its sentence otherwise and may predate
    # the margin and the reviews; its sentence must still name the selected candidate
    v1 = {k: v for k, v in copy.deepcopy(rec).items()
          if k not in ("label_error_margin", "reviews")}
    v1["version"] = 1
    v1["guarantee"]["text"] = f"{rec['selected']} is best for every completion"
    assert verify_record(v1, pool).ok
    v1["guarantee"]["text"] = "tree is best for every completion"
    (m,) = verify_record(v1, pool).mismatches
    assert "does not name the selected candidate 'logreg'" in m
    # an event of a kind no project writes
    odd = copy.deepcopy(rec)
    odd["events"].append(dict(odd["events"][-1], seq=len(odd["events"]) + 1, kind="approve"))
    assert any("event kind(s) 'approve'" in m for m in verify_record(odd, pool).mismatches)
    # a label and its undo deleted from the log: the numbering shows the gap
    cut = copy.deepcopy(rec)
    cut["events"] = [e for e in cut["events"] if e["seq"] != 3]
    assert any("not 1, 2, ..., m" in m for m in verify_record(cut, pool).mismatches)
    # parts of the wrong JSON type are mismatches, never exceptions
    for key, value in (("candidates", {n: n for n in pool.names}), ("guarantee", "exact"),
                       ("labels", None), ("pool", [])):
        assert not verify_record(dict(copy.deepcopy(rec), **{key: value}), pool).ok, key
    # a key named twice shows the reader one value and the verifier another
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(rec).replace('"selected":', '"selected": "tree", "selected":', 1))
    with pytest.raises(certlib.CertlibError, match="the key 'selected' appears twice"):
        read_record(path)
    # another pool
    other = certlib.load_pool(ROOT / "sample_data" / "teaching_k4.csv")
    assert any("pool hash" in m for m in verify_record(rec, other).mismatches)



def test_record_file_round_trip_and_one_verification_type(tmp_path, pools):
    import json

    import certlib.audit.record
    import certlib.labelling.record
    import certlib.labelling.store
    from certlib.certificates.verification import Verification

    # the import docs/annotator.md shows
    assert certlib.labelling.store.verify_record is certlib.labelling.record.verify_record
    assert certlib.audit.record.Verification is Verification
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    s = _label_n(store, pid, pool, truth, 5)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(store.export_record(pid, pool), indent=2))
    v = verify_record(read_record(path), pool)
    assert isinstance(v, Verification) and v.ok and v.mismatches == ()
    assert v.recomputed == {"labels_read": 5, "status": "running", "selected": s.best_guess}
    assert v.to_dict() == {"ok": True, "mismatches": []}
    with pytest.raises(PoolFileError, match="does not exist"):
        read_record(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(PoolFileError, match="not valid JSON"):
        read_record(tmp_path / "bad.json")
    (tmp_path / "audit.json").write_text('{"kind": "certlib-audit"}')
    with pytest.raises(PoolFileError, match="update audit's record; check it with "
                       "`certlib verify-audit"):
        read_record(tmp_path / "audit.json")
    (tmp_path / "other.json").write_text('{"kind": "x"}')
    with pytest.raises(PoolFileError, match="not a certlib labelling record"):
        read_record(tmp_path / "other.json")
    assert not verify_record({"format": "x"}, pool).ok


def test_cli_verify_record(tmp_path, pools, capsys):
    """`certlib verify-record RECORD POOL`: the Label page's evidence record checked from
    the command line (`verify-audit` names this command for such a file).  Exit 0
    verified, 1 on a mismatch, 2 on bad input;
    the class set defaults to the record's (a declared set the file does not show)."""
    import json

    from certlib.audit.record import parse_record
    from certlib.cli import main

    pool, truth = pools
    declared = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv",
                                 classes=["0", "1", "2"])
    for p in (pool, declared):
        store = LabelStore(tmp_path / f"l{p.n_classes}.db")
        pid = store.open_project(p, "demo.csv")
        _label_n(store, pid, p, truth, 12)
        rec = store.export_record(pid, p)
        path = tmp_path / f"record{p.n_classes}.json"
        path.write_text(json.dumps(rec))
        src = str(ROOT / "sample_data" / "demo_unlabelled.csv")
        assert main(["verify-record", str(path), src, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["ok"] and out["recomputed"]["labels_read"] == 12
        bad = json.loads(json.dumps(rec))
        bad["selected"] = next(n for n in p.names if n != rec["selected"])
        path.write_text(json.dumps(bad))
        assert main(["verify-record", str(path), src]) == 1
        cap = capsys.readouterr()
        assert "MISMATCH" in cap.out and "selected: record says" in cap.out
        assert "1 mismatch(es)" in cap.err
    # a declared class holding a comma (which --classes cannot spell) verifies too
    comma = tmp_path / "comma.csv"
    comma.write_text("row_id,label,pred_a,conf_a,pred_b,conf_b\n"
                     + "".join(f"{i},,{'x,y' if i % 2 else 'z'},0.{i + 1},z,0.{9 - i}\n"
                               .replace(",x,y,", ',"x,y",') for i in range(6)))
    cp = certlib.load_pool(comma, classes=["x,y", "z", "w"])
    store = LabelStore(tmp_path / "comma.db")
    cid = store.open_project(cp, "comma.csv")
    store.append_label(cid, cp.row_ids[store.progress(cid, cp).next_row], "z", "ana", pool=cp)
    cpath = tmp_path / "comma.json"
    cpath.write_text(json.dumps(store.export_record(cid, cp)))
    assert main(["verify-record", str(cpath), str(comma)]) == 0, capsys.readouterr()
    capsys.readouterr()
    # with the wrong class set named, the pool is another one: its hash says so
    path.write_text(json.dumps(rec))
    assert main(["verify-record", str(path), src, "--classes", "0,1"]) == 1
    assert "pool hash" in capsys.readouterr().out
    # another pool file that cannot take the record's class set: a mismatch (exit 1) that
    # says where the class set came from, not bad input blamed on a `--classes` nobody typed
    assert main(["verify-record", str(path), str(ROOT / "sample_data" / "digits_probs.csv")]) == 1
    assert "does not take the record's class set" in capsys.readouterr().out
    bad = json.loads(json.dumps(rec))
    bad["classes"] = [None, 1]
    path.write_text(json.dumps(bad))
    assert main(["verify-record", str(path), src]) == 1
    capsys.readouterr()
    path.write_text(json.dumps(rec))
    # the other kind of record, either way round: exit 2, naming the right command
    assert main(["verify-audit", str(path), str(ROOT / "sample_data" / "audit_stream.csv")]) == 2
    assert "check it with `certlib verify-record RECORD POOL`" in capsys.readouterr().err
    with pytest.raises(PoolFileError, match="labelling project's evidence record"):
        parse_record(json.dumps(rec))
    (tmp_path / "audit.json").write_text('{"kind": "certlib-audit"}')
    assert main(["verify-record", str(tmp_path / "audit.json"), src]) == 2
    assert "certlib verify-audit" in capsys.readouterr().err
    assert main(["verify-record", str(tmp_path / "none.json"), src]) == 2

def test_budget_exhausted_record(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv", budget=10)
    s = _label_n(store, pid, pool, truth, 50)
    assert s.t == 10 and s.status == "budget exhausted"
    rec = store.export_record(pid, pool)
    assert rec["guarantee"]["kind"] == "budget exhausted"
    assert rec["guarantee"]["worst_case_excess"] == (
        f"{s.excess.numerator}/{s.excess.denominator}")
    assert verify_record(rec, pool).ok


def test_persistence_across_reopen(tmp_path, pools):
    pool, truth = pools
    path = tmp_path / "l.db"
    store = LabelStore(path)
    pid = store.open_project(pool, "demo.csv")
    before = _label_n(store, pid, pool, truth, 5)
    del store
    again = LabelStore(path)
    assert again.find_project(pool) == pid
    _same_state(again.session(pid, pool), before)


def test_default_path_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CERTLIB_STORE", str(tmp_path / "env.db"))
    assert default_store_path() == tmp_path / "env.db"
    assert LabelStore().path == tmp_path / "env.db"
    monkeypatch.delenv("CERTLIB_STORE")
    assert default_store_path() == Path("certlib_labels.db")


def test_concurrent_appends_lose_nothing(tmp_path, pools):
    pool, _ = pools
    path = tmp_path / "l.db"
    pid = LabelStore(path).open_project(pool, "demo.csv")
    rows = list(pool.row_ids[:60])
    errors = []

    def worker(mine, who):
        store = LabelStore(path)  # its own connections
        try:
            for r in mine:
                store.append_label(pid, r, 0, who, pool=pool)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(rows[i::2], f"a{i}")) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ev = LabelStore(path).events(pid)
    assert [e.seq for e in ev] == list(range(1, 61))
    assert sorted(e.row_id for e in ev) == sorted(rows)


def test_racing_presses_on_one_view_save_exactly_one(tmp_path, pools):
    """Two presses made on the same view (same ``expect_seq``), e.g. a double key press
    whose two reruns overlap, or two annotators on one row: whatever the interleaving,
    exactly one label is saved and the other is refused as stale, never both."""
    pool, _ = pools
    path = tmp_path / "race.db"
    pid = LabelStore(path).open_project(pool, "demo.csv")
    for rnd in range(15):
        seq = LabelStore(path).progress(pid, pool).last_seq
        row = pool.row_ids[rnd]
        start = threading.Barrier(2)
        outcome = []

        def press(who, label, row=row, seq=seq, start=start, outcome=outcome):
            store = LabelStore(path)
            start.wait()
            try:
                store.append_label(pid, row, label, who, pool=pool, expect_seq=seq)
                outcome.append("saved")
            except (StaleStateError, DuplicateLabelError):
                outcome.append("refused")

        threads = [threading.Thread(target=press, args=(w, lab))
                   for w, lab in (("ana", 0), ("bob", 1))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcome) == ["refused", "saved"]
        ev = LabelStore(path).events(pid)
        assert len(ev) == rnd + 1 and ev[-1].row_id == row


def test_corrupt_file_gives_clear_error(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CertlibError, match="cannot open the label store"):
        LabelStore(bad)


def test_store_refuses_second_label_for_same_row_spelled_differently(tmp_path):
    from certlib.labelling.store import LabelStore
    p = Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[.9, .8, .7], [.7, .8, .9]])
    st = LabelStore(tmp_path / "s.db")
    pid = st.create_project(p, "x")
    with pytest.raises(TypeError):
        st.append_label(pid, "1", 1, "a")  # the pool is required: it says which row an id names
    st.append_label(pid, "1", 1, "a", pool=p)
    from certlib.labelling.store import DuplicateLabelError
    with pytest.raises(DuplicateLabelError):
        st.append_label(pid, 1, 0, "a", pool=p)   # same row, id spelled as int
    st.progress(pid, p)                            # must still replay


# ------------------------------------------------------------------ hindsight
@pytest.mark.parametrize("budget", [None, 20])
def test_hindsight_is_certify_partial_on_the_rows_read(tmp_path, pools, budget):
    """Progress.hindsight uses the annotator's labels: on the unlabelled pool labelled
    with the hidden truth it equals certify_partial on the truth pool over the same rows
    (certify_partial counts unread rows with their potential gain, whatever their label)."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.create_project(pool, "demo.csv", budget=budget)
    s = _label_n(store, pid, pool, truth, pool.n)
    prog = store.progress(pid, pool)
    assert prog.guarantee.final
    h = prog.hindsight()
    ref = certify_partial(truth, read_rows=s.read_rows)
    assert h.partial == ref
    assert h.labels_read == s.t == len(s.read_rows)
    assert h.prelabel_bound == prog.project.prelabel_bound
    if budget is None:  # certified: a verified subset of the rows read, inside the enclosure
        assert h.partial.certified and h.partial.lower <= h.partial.upper <= s.t
        assert h.partial.lower >= 1
        assert len(h.witness) == h.partial.upper
        assert set(h.witness) <= {pool.row_ids[r] for r in s.read_rows}
        assert f"You read {s.t:,} labels; " in h.text()
    else:
        # nothing read certifies: the lower bound holds for any certificate, read or not
        assert s.status == "budget exhausted" and h.partial.upper is None and h.witness == ()
        assert "do not certify" in h.text()


# ------------------------------------------------------------------ labels as CSV
def test_labels_csv_is_safe_against_formula_injection(tmp_path):
    """OWASP CSV injection: text cells starting with = + - @ tab CR get a leading ';
    numbers (row id -1, a label -1) stay numbers."""
    import csv
    import io

    from certlib.labelling.record import labels_csv

    text = Pool.from_arrays([["=cat", "-dog", "=cat", "-dog"], ["-dog", "-dog", "=cat", "=cat"]],
                            [[4, 3, 2, 1], [3, 4, 1, 2]], names=["A", "B"],
                            row_ids=[-1, 2, 3, 4])
    nums = Pool.from_arrays([[-1, 1, 1, -1], [1, 1, -1, -1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            names=["A", "B"], row_ids=[-1, 2, 3, 4])
    store = LabelStore(tmp_path / "l.db")
    evil = '=HYPERLINK("http://x")'
    rows = {}
    for name, pool, labels in (("text", text, ["=cat", "-dog"]), ("nums", nums, [-1, 1])):
        pid = store.create_project(pool, name, policy="random", budget=4)
        store.append_label(pid, -1, labels[0], evil, pool=pool)
        store.append_label(pid, 3, labels[1], "@ana", pool=pool)
        store.append_label(pid, 4, labels[0], "ana", pool=pool)
        store.undo_last(pid, "ana")  # only the labels in force, in reading order
        rows[name] = list(csv.reader(io.StringIO(labels_csv(store.progress(pid, pool)))))
    for got in rows.values():
        assert got[0] == ["row_id", "label", "annotator", "time"]
        assert [r[0] for r in got[1:]] == ["-1", "3"]  # numbers: no prefix
        assert [r[2] for r in got[1:]] == ["'" + evil, "'@ana"]
        assert all(r[3].endswith("Z") for r in got[1:])
    assert [r[1] for r in rows["text"][1:]] == ["'=cat", "'-dog"]
    assert [r[1] for r in rows["nums"][1:]] == ["-1", "1"]


# ------------------------------------------------------------------ skips
def test_skip_is_an_event_that_moves_the_policy_on_and_changes_no_bound(tmp_path, pools):
    pool, truth = pools
    path = tmp_path / "l.db"
    store = LabelStore(path)
    pid = store.create_project(pool, "demo.csv")
    _label_n(store, pid, pool, truth, 5)
    before = store.progress(pid, pool)
    first = before.next_row
    ev = store.skip_row(pid, pool.row_ids[first], "ana", pool=pool, expect_seq=before.last_seq)
    assert (ev.kind, ev.row_id, ev.label) == ("skip", pool.row_ids[first], None)
    after = LabelStore(path).progress(pid, pool)  # stored: survives a new store object
    assert [e.kind for e in after.events][-1] == "skip"
    assert after.skipped == (pool.row_ids[first],)
    assert after.next_row != first and after.next_row is not None
    assert not after.session.is_read(after.next_row)
    _same_state(after.session, before.session)  # the bounds and the session do not move
    # extending an earlier view by a skip gives the same state as a full replay
    assert store.progress(pid, pool, since=before).next_row == after.next_row
    with pytest.raises(CertlibError, match="already skipped"):
        store.skip_row(pid, pool.row_ids[first], "ana", pool=pool)
    with pytest.raises(DuplicateLabelError):
        store.skip_row(pid, store.labels(pid)[0].row_id, "ana", pool=pool)
    # labelling goes on past the skipped row; the record verifies with the skip in its log
    s = _label_n(store, pid, pool, truth, pool.n)
    assert s.certified and not s.is_read(first)
    rec = store.export_record(pid, pool)
    assert "skip" in [e["kind"] for e in rec["events"]]
    assert verify_record(rec, pool).ok
    # the labels are what a fresh session reads in the same order (skips leave no trace)
    _same_state(s, Session.from_history(pool, s.history, policy="adaptive-pair-sum"))


def test_unskip_brings_skipped_rows_back(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.create_project(pool, "demo.csv")
    with pytest.raises(NothingSkippedError):
        store.unskip_all(pid, "ana")
    first = store.progress(pid, pool).next_row
    store.skip_row(pid, pool.row_ids[first], "ana", pool=pool)
    second = store.progress(pid, pool).next_row
    store.skip_row(pid, pool.row_ids[second], "ana", pool=pool)
    assert store.progress(pid, pool).skipped == (pool.row_ids[first], pool.row_ids[second])
    store.unskip_all(pid, "ana")
    p = store.progress(pid, pool)
    assert p.skipped == () and p.next_row == first
    assert [e.kind for e in p.events] == ["skip", "skip", "unskip"]


def test_skipped_rows_return_when_nothing_else_is_left():
    pool = Pool.from_arrays([[0, 0, 1, 0], [0, 1, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            names=["A", "B"])
    s = Session.start(pool, policy="static-range")
    order = [s.next_row()]
    while len(order) < pool.n:
        order.append(s.next_row(skip=order))
    assert sorted(order) == list(range(pool.n))  # each skip moves on to a new row
    assert s.next_row(skip=order) == order[0]  # all skipped: the policy's own choice


_OLD_COLUMNS = "project_id, seq, kind, row_id, label, annotator, at, undoes"


def _old_events_table(new_kinds: str) -> str:
    """The events table of a store of schema 5 or before: without ``new_kinds`` (SQL text
    of the CHECK), the subject and the hash chain."""
    import certlib.labelling.store as store_mod

    return re.sub(r"\n    (subject|prev_hash|hash) .*", "",
                  store_mod._EVENTS_TABLE.replace(new_kinds, ""))


# the kinds a store of each old schema version admits (SQL text of its CHECK)
_OLD_KINDS = {1: ", 'skip', 'unskip', 'budget'", 2: ", 'budget'"}


@pytest.mark.parametrize("version", [1, 2])
def test_old_store_is_migrated_with_its_events(tmp_path, pools, version):
    import certlib.labelling.store as store_mod

    pool, truth = pools
    new_kinds = _OLD_KINDS[version]
    path = tmp_path / "old.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.executescript(store_mod._SCHEMA.replace(store_mod._EVENTS_TABLE,
                                                _old_events_table(new_kinds)))
    con.execute(f"INSERT INTO schema_version VALUES ({version})")
    con.close()
    with pytest.raises(sqlite3.IntegrityError):  # the old table refuses a budget event
        con = sqlite3.connect(path)
        con.execute("INSERT INTO events VALUES (1, 1, 'budget', NULL, '9', 'a', 't', NULL)")
    con.close()
    # fill it in old form: write events through a store, then mark the file as old
    store = LabelStore(path)  # migrates the (empty) old file
    pid = store.create_project(pool, "demo.csv", budget=5)
    _label_n(store, pid, pool, truth, 3)
    if version == 2:
        store.skip_row(pid, pool.row_ids[store.progress(pid, pool).next_row], "ana", pool=pool)
    events = store.events(pid)
    con = sqlite3.connect(path, isolation_level=None)
    con.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; "
                      "ALTER TABLE events RENAME TO e2;"
                      + _old_events_table(new_kinds)
                      + f"INSERT INTO events SELECT {_OLD_COLUMNS} FROM e2; DROP TABLE e2; "
                      + store_mod._TRIGGERS + f"UPDATE schema_version SET version = {version};")
    con.close()
    store = LabelStore(path)
    assert store.events(pid) == events
    store.skip_row(pid, pool.row_ids[store.progress(pid, pool).next_row], "ana", pool=pool)
    store.extend_budget(pid, 8, "ana")
    assert store.progress(pid, pool).budget == 8
    con = sqlite3.connect(path)
    assert con.execute("SELECT version FROM schema_version").fetchall() == [(6,)]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        con.execute("DELETE FROM events")
    con.close()


def test_extended_budget_is_an_event_that_survives_resume(tmp_path, pools):
    pool, truth = pools
    path = tmp_path / "l.db"
    store = LabelStore(path)
    pid = store.open_project(pool, "demo.csv", budget=10)
    s = _label_n(store, pid, pool, truth, 50)
    assert s.status == "budget exhausted" and store.progress(pid, pool).next_row is None
    last = store.progress(pid, pool).last_seq
    ev = store.extend_budget(pid, 20, " bob ", expect_seq=last)
    assert (ev.kind, ev.row_id, ev.label, ev.annotator, ev.seq) == ("budget", None, 20, "bob",
                                                                    last + 1)
    assert ev.at.endswith("Z")
    again = LabelStore(path)  # a reopened store replays the extension
    assert again.events(pid)[-1] == ev
    p = again.progress(pid, pool)
    assert p.budget == 20 and p.project.budget == 10  # the start setting stays as it was
    assert p.session.status == "running" and p.labels == store.labels(pid)
    assert again.find_project(pool, budget=10) == pid  # found by its start settings
    s = _label_n(again, pid, pool, truth, 50)
    assert s.t == 20 and s.status == "budget exhausted"
    again.extend_budget(pid, None, "ana")  # remove the budget
    assert again.progress(pid, pool).budget is None
    _same_state(again.session(pid, pool),
                Session.from_history(pool, again.session(pid, pool).history,
                                     policy="adaptive-pair-sum"))


def test_exhausted_session_continues_and_certifies_like_an_unlimited_replay(tmp_path, pools):
    pool, truth = pools
    rep = certlib.replay(truth, policy="adaptive-pair-sum")
    assert rep.certified and rep.labels_read > 60  # so the budget of 60 runs out first
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv", budget=60)
    _label_n(store, pid, pool, truth, pool.n)
    before = store.progress(pid, pool)
    assert before.session.status == "budget exhausted"
    # the incremental replay (a page's next run) picks up the extension too
    store.extend_budget(pid, 200, "ana", expect_seq=before.last_seq)
    after = store.progress(pid, pool, since=before)
    assert after.budget == 200 and after.guarantee.kind == "running"
    _same_state(after.session, store.progress(pid, pool).session)
    s = _label_n(store, pid, pool, truth, pool.n)
    assert s.certified and s.best_guess == rep.selected
    assert [e.row_id for e in store.labels(pid)] == list(rep.order)
    rec = store.export_record(pid, pool)
    assert rec["budget"] == 60 and rec["budget_in_force"] == 200
    assert [e["kind"] for e in rec["events"]].count("budget") == 1
    assert rec["guarantee"]["kind"] == "exact" and rec["labels_read"] == rep.labels_read
    v = verify_record(copy.deepcopy(rec), truth)
    assert v.ok, v.mismatches
    assert v.recomputed["status"] == "certified"
    # without its budget event the labels past 60 cannot be replayed to this verdict
    cut = copy.deepcopy(rec)
    cut["events"] = [e for e in cut["events"] if e["kind"] != "budget"]
    bad = verify_record(cut, truth)
    assert not bad.ok and any("budget in force" in m for m in bad.mismatches)


def test_extend_budget_refusals_name_the_value(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv", budget=10)
    _label_n(store, pid, pool, truth, 4)
    with pytest.raises(StoreError, match="new_budget 9 does not extend the budget in force "
                                         r"\(10 labels\)"):
        store.extend_budget(pid, 9, "ana")
    with pytest.raises(StoreError, match="new_budget 10 does not extend"):
        store.extend_budget(pid, 10, "ana")
    with pytest.raises(StoreError, match="new_budget 3 is below the 4 labels already in force"):
        store.extend_budget(pid, 3, "ana")
    for bad in (12.5, "20", True):
        with pytest.raises(StoreError, match=f"new_budget must be a whole number of labels or "
                                             f"None \\(no budget\\); got {bad!r}"):
            store.extend_budget(pid, bad, "ana")
    with pytest.raises(StoreError, match="annotator must be a non-empty name"):
        store.extend_budget(pid, 20, "  ")
    with pytest.raises(UnknownProjectError, match="project_id 99"):
        store.extend_budget(99, 20, "ana")
    with pytest.raises(StaleStateError, match="changed since this view"):
        store.extend_budget(pid, 20, "ana", expect_seq=1)
    store.extend_budget(pid, np.int64(20), "ana")  # a number input's integer type is fine
    store.extend_budget(pid, None, "ana")
    with pytest.raises(StoreError, match="has no budget, so new_budget 30 cannot extend it"):
        store.extend_budget(pid, 30, "ana")
    assert [e.kind for e in store.events(pid)][-2:] == ["budget", "budget"]
    assert [e.label for e in store.events(pid)][-2:] == [20, None]
    assert verify_record(store.export_record(pid, pool), pool).ok


def test_hindsight_within_a_tolerance_and_only_for_the_shared_rule(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.create_project(pool, "demo.csv", tolerance=0.01)
    s = _label_n(store, pid, pool, truth, pool.n)
    h = store.progress(pid, pool).hindsight()
    assert h.partial == certify_partial(truth, read_rows=s.read_rows, tolerance=0.01)
    assert h.partial.certified and h.partial.lower <= h.partial.upper <= s.t
    other = store.create_project(pool, "demo.csv", rule="separate", budget=3)
    _label_n(store, other, pool, truth, 3)
    with pytest.raises(CertlibError, match="rule 'shared'"):
        store.progress(other, pool).hindsight()


@pytest.mark.parametrize("seed, policy", [(0, "adaptive-pair-sum"), (1, "expected-coverage"),
                                          (2, "static-range")])
def test_a_project_from_the_files_labels_is_the_state_of_the_labels_known(tmp_path, pools,
                                                                           seed, policy):
    """``from_file``: the file's labels are the project's first events (annotator
    FILE_ANNOTATOR, row order), and the replay is `Session.from_pool_labels`: the state
    the planning pages call "labels known count as read"."""
    from certlib.labelling.store import FILE_ANNOTATOR

    _, truth = pools
    codes = truth.labels.copy()
    codes[np.random.default_rng(seed).random(truth.n) < 0.6] = -1
    pool = truth.with_labels(codes)
    known = np.flatnonzero(codes >= 0)
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "partly", policy=policy, from_file=True)
    events = store.events(pid)
    assert [(e.kind, e.row_id, e.label, e.annotator) for e in events] == [
        ("label", pool.row_ids[i], pool.classes[codes[i]], FILE_ANNOTATOR) for i in known]
    _same_state(store.session(pid, pool), Session.from_pool_labels(pool, policy=policy))
    # an annotator goes on from there, and only unlabelled rows are asked for
    _label_n(store, pid, pool, truth, 5)
    assert all(codes[pool.position(e.row_id)] < 0 for e in store.labels(pid)[known.size:])
    assert verify_record(store.export_record(pid, pool), pool).ok
    # the same choice resumes it; starting from nothing is another project
    assert store.open_project(pool, "partly", policy=policy, from_file=True) == pid
    other = store.open_project(pool, "partly", policy=policy)
    assert other != pid and store.events(other) == ()
    assert store.open_project(pool, "partly", policy=policy) == other
    # on a pool without labels the choice changes nothing
    blank = truth.with_labels(np.full(truth.n, -1))
    assert store.open_project(blank, "blank", policy=policy, from_file=True) == \
        store.open_project(blank, "blank", policy=policy)


def _first_labelled(truth, k):
    """The pool with only its first ``k`` labels (a partly labelled file) and its codes."""
    codes = truth.labels.copy()
    codes[k:] = -1
    return truth.with_labels(codes), codes


def test_labels_from_the_file_cannot_be_undone_nor_given_by_a_person(tmp_path, pools):
    _, truth = pools
    pool, codes = _first_labelled(truth, 40)
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "partly", from_file=True)
    with pytest.raises(NothingToUndoError, match="comes from the pool file"):
        store.undo_last(pid, "ana")
    for name in (" (Pool File) ", "(pool  file)", "(pooI file)", "(p\u043eol file)",
                 "(pool\u00a0file)", "pool_file"):  # the name, or one that reads as it
        with pytest.raises(StoreError, match="names the labels a project takes from the pool"):
            store.append_label(pid, pool.row_ids[50], 0, name, pool=pool)
    assert len(store.events(pid)) == 40
    with pytest.raises(StoreError, match="does not exceed the 40 labels"):
        store.open_project(pool, "partly", budget=40, from_file=True)
    assert len(store.projects()) == 1  # nothing was written
    pid2 = store.open_project(pool, "partly", budget=41, from_file=True)
    s = store.session(pid2, pool)
    assert s.t == 40 and not s.budget_exhausted


def test_a_file_whose_labels_changed_starts_a_new_project_from_them(tmp_path, pools):
    """The pool hash leaves labels out: the match on the file's labels keeps a project
    that started from 60 of them from being resumed as if it held the file's 100, or
    labels that changed (the policy would ask for labelled rows again)."""
    _, truth = pools
    keep = truth.labels.copy()

    def file_with(k, flip=()):
        codes = keep.copy()
        codes[k:] = -1
        codes[list(flip)] = 1 - codes[list(flip)]
        return truth.with_labels(codes)

    store = LabelStore(tmp_path / "s.db")
    p60 = store.open_project(file_with(60), "p", from_file=True)
    p100 = store.open_project(file_with(100), "p", from_file=True)
    flipped = store.open_project(file_with(60, flip=[3]), "p", from_file=True)
    assert len({p60, p100, flipped}) == 3
    assert store.session(p100, file_with(100)).t == 100
    assert store.open_project(file_with(60), "p", from_file=True) == p60
    for pid, pool in ((p60, file_with(60)), (p100, file_with(100))):
        assert verify_record(store.export_record(pid, pool), pool).ok


def test_labels_from_the_file_are_not_reviewed(tmp_path, pools):
    """The record is checked against the file, so a file label is corrected in the file:
    a review (and so a correction, which an undo could then take back) is refused."""
    _, truth = pools
    pool, codes = _first_labelled(truth, 40)
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "partly", from_file=True)
    rid = pool.row_ids[3]
    for call in (lambda: store.queue_review(pid, [rid], "lead", pool=pool),
                 lambda: store.correct_label(pid, rid, 1 - int(codes[3]), "lead", pool=pool),
                 lambda: store.keep_label(pid, rid, "lead", pool=pool)):
        with pytest.raises(StoreError, match="comes from the pool file"):
            call()
    assert len(store.events(pid)) == 40
    _label_n(store, pid, pool, truth, 1)  # an annotator's label is reviewed as before
    own = store.labels(pid)[-1].row_id
    store.queue_review(pid, [own], "lead", pool=pool)
    assert verify_record(store.export_record(pid, pool), pool).ok


def test_a_record_cannot_pass_labels_off_as_the_files(tmp_path, pools):
    """Labels credited to the pool file must open the log and be labels the file holds:
    relabelling an annotator's events "(pool file)" is a mismatch, as is checking a
    seeded record against a copy of the pool without those labels."""
    from certlib.labelling.store import FILE_ANNOTATOR

    unlabelled, truth = pools
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(unlabelled, "demo")
    _label_n(store, pid, unlabelled, truth, 6)
    rec = store.export_record(pid, unlabelled)
    forged = copy.deepcopy(rec)
    for e in forged["events"][1::2]:
        e["annotator"] = FILE_ANNOTATOR
    for lab in forged["labels"][1::2]:
        lab["annotator"] = FILE_ANNOTATOR
    for pool in (unlabelled, truth):
        check = verify_record(forged, pool)
        assert not check.ok and any("must be the label events that open the log" in m
                                    for m in check.mismatches), check
    # a look-alike name is not "(pool file)" for the seed check, but a reader takes it so
    look = copy.deepcopy(rec)
    for e in look["events"] + look["labels"]:
        e["annotator"] = "(pooI file)"
    (m,) = verify_record(rechained(look), truth).mismatches
    assert m == ("annotator name(s) '(pooI file)' read as '(pool file)', the pool file's "
                 "labels, without being it")
    partly, _ = _first_labelled(truth, 40)
    seeded = store.open_project(partly, "partly", from_file=True)
    rec = store.export_record(seeded, partly)
    assert verify_record(rec, partly).ok and verify_record(rec, truth).ok
    check = verify_record(rec, unlabelled)  # same hash, no labels
    assert not check.ok and sum("has no label in the pool file" in m
                                for m in check.mismatches) == 40


@pytest.mark.parametrize("from_file", [False, True])
def test_two_tabs_starting_the_same_project_get_one(tmp_path, pools, from_file):
    """open_project searches and creates in one write transaction: sessions starting the
    same project at the same moment all get its id, not one project each."""
    _, truth = pools
    pool, _ = _first_labelled(truth, 60)
    path = tmp_path / "s.db"
    LabelStore(path).projects()  # the file and its schema exist before the race
    barrier, got, errors = threading.Barrier(4), [], []

    def start():
        store = LabelStore(path)
        try:
            barrier.wait()
            got.append(store.open_project(pool, "p", from_file=from_file))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(got)) == 1
    store = LabelStore(path)
    assert len(store.projects()) == 1
    assert len(store.events(got[0])) == (60 if from_file else 0)


def test_an_undo_must_name_the_label_it_cancels_and_be_by_its_annotator(tmp_path, pools):
    """A log whose undo names another row (or is by a colleague, which the store refuses)
    misleads its reader; both verified before."""
    pool, truth = pools
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "demo")
    _label_n(store, pid, pool, truth, 4)
    store.undo_last(pid, "ana")
    _label_n(store, pid, pool, truth, 2)
    rec = json.loads(json.dumps(store.export_record(pid, pool)))
    assert verify_record(rec, pool).ok
    undo = next(i for i, e in enumerate(rec["events"]) if e["kind"] == "undo")
    other = rec["events"][0]
    for change, message in (({"row_id": other["row_id"]}, "names row_id"),
                            ({"undoes": other["seq"]}, "names row_id"),
                            ({"annotator": "bob"}, "only they can undo it")):
        forged = copy.deepcopy(rec)
        forged["events"][undo].update(change)
        # re-chained, as anyone can without the store: the undo rule catches it by itself
        ms = verify_record(rechained(forged), pool).mismatches
        assert any(m.startswith(f"undo event {undo + 1} ") and message in m for m in ms), ms
    old = dict(copy.deepcopy(rec), version=1)  # earlier builds: the annotator rule aside
    old["events"][undo]["annotator"] = "bob"
    assert verify_record(rechained(old), pool).ok
