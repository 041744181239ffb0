"""The label store's hash chain, who labelled (`Identity`), undoing one's own label on a
team's project, and the evidence record checked against its own chain and the store's.

Exact: hashes recomputed from the values, the bounds compared as integers; no mocks and
no wall-clock comparisons (times are only compared as the strings the store wrote)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from record_support import rechained
import certlib
from certlib import Session
from certlib.labelling.events import (EVENT_KINDS, FILE_ANNOTATOR, Event, Identity,
                                      canonical_json, check_chain, event_hash,
                                      labels_in_force, same_annotator)
from certlib.labelling.record import NOT_ATTESTED, verify_record
from certlib.labelling.store import (SCHEMA_VERSION, LabelStore, NothingToUndoError,
                                     StaleStateError)

ROOT = Path(__file__).resolve().parents[2]
SD = ROOT / "sample_data"
FIX = ROOT / "tests" / "fixtures"
ANA = Identity("ana@example.org", subject="sub-ana", issuer="https://id.example.org")
BOB = Identity("bob@example.org", subject="sub-bob", issuer="https://id.example.org")

# the label store's schema of version 5 (events without subject and chain), as the
# store wrote it before the chain
V5_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS projects (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    pool_hash      TEXT NOT NULL,
    pool_name      TEXT NOT NULL,
    n              INTEGER NOT NULL,
    candidates     TEXT NOT NULL,   -- JSON list, tie priority order
    classes        TEXT NOT NULL,   -- JSON list
    objective      TEXT NOT NULL,
    policy         TEXT NOT NULL,
    rule           TEXT NOT NULL,
    tolerance      TEXT NOT NULL,   -- exact fraction "p/q"
    seed           INTEGER NOT NULL,
    budget         INTEGER,         -- NULL = no budget
    prelabel_bound INTEGER NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('label', 'undo', 'skip', 'unskip', 'budget',
                                         'review_request', 'review', 'correct',
                                         'keep')),
    row_id     TEXT,                -- JSON scalar
    label      TEXT,                -- JSON scalar; of a budget event: the new budget
    annotator  TEXT NOT NULL,
    at         TEXT NOT NULL,
    undoes     INTEGER,
    PRIMARY KEY (project_id, seq)
);
CREATE INDEX IF NOT EXISTS projects_by_pool ON projects (pool_hash);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""
V5_PROJECT_COLUMNS = ("id, pool_hash, pool_name, n, candidates, classes, objective, policy, "
                      "rule, tolerance, seed, budget, prelabel_bound, created_at")
V5_EVENT_COLUMNS = "project_id, seq, kind, row_id, label, annotator, at, undoes"


@pytest.fixture(scope="module")
def pools():
    return certlib.load_pool(SD / "demo_unlabelled.csv"), certlib.load_pool(SD / "demo_binary.csv")


def _truth(truth, pos):
    return truth.classes[int(truth.labels[pos])]


def _label_next(store, pid, pool, truth, who):
    p = store.progress(pid, pool)
    r = p.next_row
    return store.append_label(pid, pool.row_ids[r], _truth(truth, r), who, pool=pool,
                              expect_seq=p.last_seq)


def _every_kind(store, pool, truth):
    """A project (started from 20 of the file's labels, with a budget) whose log holds
    every event kind, by two signed-in identities and plain names."""
    part = truth.with_labels(np.where(np.arange(truth.n) < 20, truth.labels, -1))
    pid = store.open_project(part, "demo.csv", budget=40, from_file=True)
    a = _label_next(store, pid, part, truth, ANA)
    b = _label_next(store, pid, part, truth, ANA)
    p = store.progress(pid, part)
    store.skip_row(pid, part.row_ids[p.next_row], BOB, pool=part)
    store.unskip_all(pid, BOB)
    store.extend_budget(pid, 60, "lead")
    store.queue_review(pid, [a.row_id], "lead", pool=part)
    store.append_review(pid, a.row_id, 1 - a.label, BOB, pool=part)
    store.keep_label(pid, a.row_id, "cy", pool=part)
    store.correct_label(pid, a.row_id, 1 - a.label, "lead", pool=part)
    _label_next(store, pid, part, truth, BOB)
    store.undo_last(pid, ANA)  # her newest label in force (b), not bob's later one
    assert store.events(pid)[-1].undoes == b.seq
    return pid, part


# ------------------------------------------------------------------ the chain
def test_the_chain_links_every_event_kind_and_pins_the_project(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid, part = _every_kind(store, pool, truth)
    events = store.events(pid)
    assert {e.kind for e in events} == set(EVENT_KINDS)
    project = store.project(pid)
    genesis = hashlib.sha256(canonical_json(project.chain_fields())).hexdigest()
    assert genesis == project.chain_hash == events[0].prev_hash
    for before, e in zip((None, *events), events):
        assert e.prev_hash == (genesis if before is None else before.hash)
        assert e.hash == event_hash(pid, e, e.prev_hash)
        assert len(e.hash) == 64 and int(e.hash, 16) >= 0
    assert store.chain_head(pid) == events[-1].hash
    check = store.verify_chain(pid)
    assert check.ok and check.events == len(events) and check.head == events[-1].hash
    # the serialisation is the documented one, field for field
    e = events[-1]
    text = json.dumps({"project": pid, "seq": e.seq, "kind": e.kind, "row_id": e.row_id,
                       "label": e.label, "annotator": e.annotator, "subject": e.subject,
                       "at": e.at, "undoes": e.undoes, "prev_hash": e.prev_hash},
                      sort_keys=True, separators=(",", ":"))
    assert e.hash == hashlib.sha256(text.encode()).hexdigest()
    # the subject is stored for a signed-in identity, none for a plain name
    subjects = {(e.annotator, e.subject) for e in events}
    assert {(FILE_ANNOTATOR, None), (ANA.name, "sub-ana"), (BOB.name, "sub-bob"),
            ("lead", None), ("cy", None)} == subjects
    assert e.to_dict()["hash"] == e.hash and "prev_hash" in e.to_dict()
    # a project without events: the head is the hash of its settings
    other = store.create_project(pool, "demo.csv", seed=3)
    assert store.chain_head(other) == store.project(other).chain_hash
    assert store.verify_chain(other).ok
    assert store.chain_head(other) != store.chain_head(pid)


def test_the_record_carries_the_chain_and_verifies_it(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid, part = _every_kind(store, pool, truth)
    rec = json.loads(json.dumps(store.export_record(pid, part)))
    assert rec["version"] == 3
    assert rec["chain"]["head"] == store.chain_head(pid)
    assert rec["chain"]["project"] == store.project(pid).chain_fields()
    events = store.events(pid)
    assert rec["events"] == [e.to_dict() for e in events]
    # each label in force names who gave it and when, as its event does
    by_seq = {e["seq"]: e for e in rec["events"]}
    for lab in rec["labels"]:
        assert (lab["annotator"], lab["at"]) == (by_seq[lab["seq"]]["annotator"],
                                                 by_seq[lab["seq"]]["at"])
    v = verify_record(rec, part)
    assert v.ok and v.notes == (), v
    v = verify_record(rec, part, store)
    assert v.ok and v.notes == (), v
    # the store went on: the record is still its chain up to its last event, noted
    _label_next(store, pid, part, truth, "lead")
    v = verify_record(rec, part, store)
    assert v.ok and v.notes == (f"the store holds 1 event(s) of project {pid} after the "
                                f"record's last (event {len(events)}): the record was "
                                "exported before them",)


@pytest.mark.parametrize("field,value", [("annotator", "mallory"),
                                         ("at", "2020-01-01T00:00:00.000Z"),
                                         ("label", "flip"), ("row_id", "other")])
def test_a_record_with_one_field_rewritten_fails_naming_the_event(tmp_path, pools, field,
                                                                  value):
    """Rewritten in the event and in the label list alike, as a forger would: the chain
    names the event, and the field whenever the value it was written with can be
    found again (not a time set to a new value)."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    for who in ("ana", "bob", "ana", "bob", "ana"):
        _label_next(store, pid, pool, truth, who)
    rec = json.loads(json.dumps(store.export_record(pid, pool)))
    ev, lab = rec["events"][2], rec["labels"][2]
    original = ev[field]
    if value == "flip":
        value = 1 - original
    elif value == "other":
        value = next(r for r in map(int, pool.row_ids) if r not in
                     {e["row_id"] for e in rec["events"]})
    ev[field] = lab[field] = value
    mismatches = verify_record(rec, pool).mismatches
    chain = [m for m in mismatches if m.startswith("hash chain")]
    assert chain and chain[0].startswith("hash chain: event 3 (label): its fields do not "
                                         "hash to its recorded hash"), mismatches
    if field != "at":
        assert (f"(event 3's {field} was changed: it was written as {original!r}, the "
                f"record says {value!r})") in chain[0], chain[0]
    else:
        assert "time (at)" in chain[0]
    # the hash of that event recomputed too, the next event's prev_hash still names it
    ev["hash"] = event_hash(pid, Event(ev["seq"], ev["kind"], ev["row_id"], ev["label"],
                                       ev["annotator"], ev["at"], ev["undoes"],
                                       ev["subject"]), ev["prev_hash"])
    chain = [m for m in verify_record(rec, pool).mismatches if m.startswith("hash chain")]
    assert chain[0].startswith("hash chain: event 4: its prev_hash is not the hash of "
                               "event 3"), chain
    if field != "at":
        assert f"event 3's {field} was changed" in chain[0]
    # every later hash recomputed: the record fits its own chain, the store refutes it
    full = rechained(rec)
    assert not [m for m in verify_record(full, pool).mismatches if m.startswith("hash")]
    against = verify_record(full, pool, store).mismatches
    assert any(m.startswith("store: event 3 differs from the store's: ") and
               f"{field}: record says {value!r}, the store {original!r}" in m and
               "(and 2 later event(s) differ)" in m for m in against), against


def test_rewriting_every_annotator_and_time_fails(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    for who in ("ana", "bob") * 4:
        _label_next(store, pid, pool, truth, who)
    rec = json.loads(json.dumps(store.export_record(pid, pool)))
    for e in rec["events"] + rec["labels"]:
        e["annotator"], e["at"] = "mallory", "2020-01-01T00:00:00.000Z"
    v = verify_record(rec, pool)
    assert not v.ok and v.mismatches[0].startswith("hash chain: event 1 (label)"), v
    assert verify_record(rechained(rec), pool).ok  # a chain anyone recomputes ...
    v = verify_record(rechained(rec), pool, store)  # ... is not the store's
    assert not v.ok and v.mismatches[0].startswith("store: event 1 differs"), v


def test_edits_of_the_chain_itself_are_mismatches(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    for who in ("ana", "bob", "ana"):
        _label_next(store, pid, pool, truth, who)
    rec = json.loads(json.dumps(store.export_record(pid, pool)))
    for edit, message in (
            (lambda r: r["chain"].update(head="0" * 64), "hash chain: its head is"),
            (lambda r: r["chain"]["project"].update(seed=5),
             "hash chain: the settings it pins say seed 5, the record 0"),
            (lambda r: r["chain"].pop("project"), "hash chain unreadable"),
            (lambda r: r["events"].pop(), "hash chain: its head is"),
            (lambda r: r["events"][0].update(prev_hash="1" * 64),
             "hash chain: event 1: its prev_hash is not the hash of the project's settings"),
            (lambda r: r.pop("chain"), "a version-3 record carries its hash chain")):
        forged = copy.deepcopy(rec)
        edit(forged)
        ms = verify_record(forged, pool).mismatches
        assert any(m.startswith(message) for m in ms), (message, ms)
    # against the store: another project, or a store without it
    other = copy.deepcopy(rec)
    other["chain"]["project"]["id"] = 99
    ms = verify_record(other, pool, store).mismatches
    assert any(m.startswith("store: project_id 99 is not in the label store") for m in ms), ms


def test_records_without_a_chain_verify_their_labels_and_say_what_is_not_attested(tmp_path):
    for name in ("digits_images", "demo_unlabelled"):
        record = json.loads((FIX / f"record_hash_format1_{name}.json").read_text())
        v = verify_record(record, certlib.load_pool(SD / f"{name}.csv"))
        assert v.ok and v.notes == (NOT_ATTESTED,), v
        assert v.to_dict()["notes"] == [NOT_ATTESTED]
    store = LabelStore(tmp_path / "l.db")
    v = verify_record(record, certlib.load_pool(SD / "demo_unlabelled.csv"), store)
    assert v.mismatches == ("the record carries no hash chain, so the store's chain cannot "
                            "vouch for its events",)


# ------------------------------------------------------------------ the file
def _broken_copy(path: Path, tmp_path: Path, sql: str, *args) -> LabelStore:
    """A copy of the store with its triggers dropped and one statement run."""
    bad = tmp_path / f"bad{len(list(tmp_path.iterdir()))}.db"
    shutil.copy(path, bad)
    con = sqlite3.connect(bad, isolation_level=None)
    con.execute("DROP TRIGGER events_no_update")
    con.execute("DROP TRIGGER events_no_delete")
    con.execute(sql, args)
    con.close()
    return LabelStore(bad)


def test_tampering_in_the_file_is_caught_at_the_event(tmp_path, pools):
    pool, truth = pools
    path = tmp_path / "l.db"
    store = LabelStore(path)
    pid, part = _every_kind(store, pool, truth)
    events = store.events(pid)
    head = store.chain_head(pid)
    for column, value in (("annotator", "mallory"), ("at", "2020-01-01T00:00:00.000Z"),
                          ("label", "0" if events[22].label == 1 else "1"),
                          ("row_id", "99999"), ("subject", "sub-mallory"), ("kind", "keep")):
        bad = _broken_copy(path, tmp_path,
                           f"UPDATE events SET {column} = ? WHERE project_id = ? AND seq = 23",
                           value, pid)
        check = bad.verify_chain(pid)
        assert (check.ok, check.broken_at) == (False, 23), (column, check)
        assert check.reason.startswith("event 23 (")
    # its hash recomputed too: the next event's prev_hash names it
    e = replace(events[22], annotator="mallory")
    bad = _broken_copy(path, tmp_path, "UPDATE events SET annotator = 'mallory', hash = ? "
                       "WHERE project_id = ? AND seq = 23", event_hash(pid, e, e.prev_hash),
                       pid)
    check = bad.verify_chain(pid)
    assert check.broken_at == 24 and "prev_hash is not the hash of event 23" in check.reason
    # an event removed from the middle: the numbering and the link show it
    bad = _broken_copy(path, tmp_path, "DELETE FROM events WHERE project_id = ? AND seq = 5",
                       pid)
    assert bad.verify_chain(pid).broken_at == 6
    # the project's settings changed: the first event no longer fits
    bad = _broken_copy(path, tmp_path, "UPDATE projects SET seed = 7 WHERE id = ?", pid)
    check = bad.verify_chain(pid)
    assert check.broken_at == 1 and "settings" in check.reason
    # the newest event removed: the rest of the chain fits, the head kept elsewhere not
    bad = _broken_copy(path, tmp_path, "DELETE FROM events WHERE project_id = ? AND seq = ?",
                       pid, len(events))
    assert bad.verify_chain(pid).ok and bad.chain_head(pid) != head
    assert store.verify_chain(pid).ok and store.chain_head(pid) == head


def test_triggers_still_refuse_updates(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    _label_next(store, pid, pool, truth, "ana")
    con = sqlite3.connect(tmp_path / "l.db")
    for sql in ("UPDATE events SET hash = 'x'", "DELETE FROM events"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(sql)
    con.close()


def _as_v5(path: Path, out: Path) -> list[tuple]:
    """A version-5 store at ``out`` (the old schema, written from its own DDL) holding
    the projects and events of the store at ``path``; returns its event rows."""
    con = sqlite3.connect(out, isolation_level=None)
    con.executescript(V5_SCHEMA)
    con.execute("INSERT INTO schema_version VALUES (5)")
    con.execute("ATTACH DATABASE ? AS cur", (str(path),))
    con.execute(f"INSERT INTO projects SELECT {V5_PROJECT_COLUMNS} FROM cur.projects")
    con.execute(f"INSERT INTO events SELECT {V5_EVENT_COLUMNS} FROM cur.events")
    rows = con.execute(f"SELECT {V5_EVENT_COLUMNS} FROM events ORDER BY project_id, seq"
                       ).fetchall()
    con.execute("DETACH DATABASE cur")
    con.close()
    return rows


def test_a_version_5_store_is_migrated_and_chained(tmp_path, pools):
    pool, truth = pools
    path = tmp_path / "l.db"
    store = LabelStore(path)
    pid, part = _every_kind(store, pool, truth)
    other = store.open_project(pool, "demo.csv", seed=2)
    _label_next(store, other, pool, truth, "ana")
    live = {p: store.events(p) for p in (pid, other)}
    old = tmp_path / "v5.db"
    rows = _as_v5(path, old)
    migrated = LabelStore(old)
    con = sqlite3.connect(old)
    assert con.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    # every event copied unchanged, in order
    assert con.execute(f"SELECT {V5_EVENT_COLUMNS} FROM events ORDER BY project_id, seq"
                       ).fetchall() == rows
    con.close()
    for p, events in live.items():
        assert migrated.verify_chain(p).ok
        # the chain over the copied events is the one the store computed as it went
        # (the subjects aside, which a version-5 store never held)
        got = migrated.events(p)
        assert [e.subject for e in got] == [None] * len(got)
        assert got == tuple(e for e in _chained(p, migrated.project(p).chain_hash,
                                                [replace(e, subject=None) for e in events]))
    # appends continue the chain; the triggers are back
    _label_next(migrated, other, pool, truth, BOB)
    assert migrated.verify_chain(other).ok
    con = sqlite3.connect(old)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE events SET annotator = 'x'")
    con.close()
    assert verify_record(migrated.export_record(pid, part), part, migrated).ok


def _chained(pid, genesis, events):
    prev = genesis
    for e in events:
        e = replace(e, prev_hash=prev, hash=event_hash(pid, e, prev))
        prev = e.hash
        yield e


def test_the_fixture_store_migrates_and_keeps_its_chain_when_its_pool_is_recognised(tmp_path):
    """The fixture's project 1 names its pool by the hash of an earlier build; the store
    rewrites that hash when it recognises the pool, and the chain keeps pinning the one
    it started on."""
    path = tmp_path / "store.db"
    shutil.copy(FIX / "store_hash_format1.db", path)
    store = LabelStore(path)
    digits = certlib.load_pool(SD / "digits_images.csv")
    old_hash = store.project(1).pool_hash
    assert store.verify_chain(1).ok and store.verify_chain(2).ok
    head = store.chain_head(1)
    assert [p.id for p in store.projects(digits)] == [1]  # rewritten to the current hash
    project = store.project(1)
    assert project.pool_hash == certlib.pool_hash(digits) != old_hash
    assert project.chain_pool_hash == old_hash
    assert project.chain_fields()["pool_hash"] == old_hash
    assert store.verify_chain(1).ok and store.chain_head(1) == head
    rec = json.loads(json.dumps(store.export_record(1, digits)))
    assert rec["pool"]["hash"] == certlib.pool_hash(digits)
    assert rec["chain"]["project"]["pool_hash"] == old_hash
    assert verify_record(rec, digits, store).ok


# ------------------------------------------------------------------ who undoes what
def test_an_annotator_undoes_their_own_label_on_a_team_project(tmp_path, pools):
    """A labels, B labels, A undoes: A's label is cancelled, B's stays, and the resumed
    session is a fresh session fed B's label."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    a = _label_next(store, pid, pool, truth, ANA)
    b = _label_next(store, pid, pool, truth, BOB)
    with pytest.raises(StaleStateError):  # a view drawn before B's label
        store.undo_last(pid, ANA, expect_seq=a.seq)
    u = store.undo_last(pid, ANA, expect_seq=b.seq)
    assert (u.kind, u.undoes, u.row_id, u.label, u.annotator, u.subject) == (
        "undo", a.seq, a.row_id, a.label, ANA.name, ANA.subject)
    assert [e.seq for e in labels_in_force(store.events(pid))] == [b.seq]
    p = store.resume(str(pid), pool)
    fresh = Session.start(pool, **p.project.session_kwargs(p.events)).observe(
        pool.position(b.row_id), b.label)
    assert p.session.t == 1 and p.session.read_rows == fresh.read_rows
    assert np.array_equal(p.session.L, fresh.L)
    assert p.session.next_row() == fresh.next_row() and p.session.status == fresh.status
    assert len(p.lower_path) == 2 and np.array_equal(p.lower_path[-1], fresh.lower())
    # the record verifies (the undo names the label it cancels, by its annotator)
    assert verify_record(store.export_record(pid, pool), pool, store).ok
    # nothing of hers left: refused without naming anyone else
    with pytest.raises(NothingToUndoError, match="no label of yours to undo") as err:
        store.undo_last(pid, ANA)
    assert "bob" not in str(err.value) and "ana" not in str(err.value)
    with pytest.raises(NothingToUndoError, match="no label of yours to undo") as err:
        store.undo_last(pid, "cy")
    assert "bob" not in str(err.value)
    # B undoes his: nothing in force
    store.undo_last(pid, BOB)
    assert store.labels(pid) == ()
    with pytest.raises(NothingToUndoError, match="has no label to undo"):
        store.undo_last(pid, BOB)


def test_an_identity_is_its_subject(tmp_path, pools):
    """Two signed-in identities are one person by their subject: the e-mail may change,
    and a second account with the same e-mail is someone else."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    _label_next(store, pid, pool, truth, ANA)
    impostor = Identity(ANA.name, subject="sub-other", issuer=ANA.issuer)
    assert not same_annotator(impostor, store.events(pid)[0].identity)
    with pytest.raises(NothingToUndoError):
        store.undo_last(pid, impostor)
    renamed = Identity("ana.new@example.org", subject=ANA.subject)
    assert store.undo_last(pid, renamed).undoes == 1
    # a plain name is compared by name (local mode), as before
    _label_next(store, pid, pool, truth, "Ana")
    assert store.undo_last(pid, " ana ").undoes == 3
    assert str(ANA) == ANA.name and Identity("x").subject is None


# ------------------------------------------------------------------ the command line
def _cli(*args):
    out = subprocess.run([sys.executable, "-m", "certlib", "verify-record", *map(str, args)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    return out.returncode, out.stdout, out.stderr


def test_verify_record_on_the_command_line(tmp_path, pools):
    pool, truth = pools
    db = tmp_path / "l.db"
    store = LabelStore(db)
    pid = store.open_project(pool, "demo.csv")
    for who in ("ana", "bob", "ana", "bob"):
        _label_next(store, pid, pool, truth, who)
    rec = store.export_record(pid, pool)
    good = tmp_path / "rec.json"
    good.write_text(json.dumps(rec))
    csv = SD / "demo_unlabelled.csv"
    code, out, _ = _cli(good, csv)
    assert code == 0 and out.startswith("verified: ") and "note:" not in out, out
    code, out, _ = _cli(good, csv, "--store", db)
    assert code == 0 and "its events and head are the store's" in out, out
    forged = copy.deepcopy(rec)
    forged["events"][1]["annotator"] = forged["labels"][1]["annotator"] = "mallory"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rechained(forged)))
    assert _cli(bad, csv)[0] == 0  # its own chain fits
    code, out, err = _cli(bad, csv, "--store", db)
    assert code == 1 and "store: event 2 differs from the store's: annotator: record says " \
        "'mallory', the store 'bob'" in out and "mismatch" in err, out
    bad.write_text(json.dumps(forged))
    code, out, _ = _cli(bad, csv)
    assert code == 1 and "event 2's annotator was changed: it was written as 'bob'" in out
    code, _, err = _cli(good, csv, "--store", tmp_path / "missing.db")
    assert code == 2 and "does not exist" in err and not (tmp_path / "missing.db").exists()
    (tmp_path / "not.db").write_text("not a database")
    assert _cli(good, csv, "--store", tmp_path / "not.db")[0] == 2
    old = FIX / "record_hash_format1_demo_unlabelled.json"
    code, out, _ = _cli(old, csv)
    assert code == 0 and f"note: {NOT_ATTESTED}" in out, out
    code, out, _ = _cli(old, csv, "--json")
    assert code == 0 and json.loads(out)["notes"] == [NOT_ATTESTED]
    assert _cli(old, csv, "--store", db)[0] == 1


# ------------------------------------------------------------------ property
STEPS = st.lists(st.tuples(st.sampled_from(["label", "undo", "skip"]), st.sampled_from([0, 1]),
                           st.integers(0, 1)), min_size=1, max_size=14)
FIELDS = {"kind": lambda v: "keep" if v != "keep" else "label",
          "row_id": lambda v: -1 if v != -1 else -2,
          "label": lambda v: 7 if v != 7 else 8,
          "annotator": lambda v: v + "x", "subject": lambda v: (v or "") + "x",
          "at": lambda v: v + "0", "undoes": lambda v: 99 if v is None else v + 1,
          "prev_hash": lambda v: "0" * 64 if v != "0" * 64 else "1" * 64}


@settings(max_examples=25, derandomize=True, deadline=None)
@given(steps=STEPS, data=st.data())
def test_any_single_field_edit_breaks_the_chain(tmp_path_factory, steps, data):
    """Random labels, undos and skips by two identities: the chain verifies, and any one
    field of any one event changed breaks it at that event."""
    pool = certlib.Pool.from_arrays([[0, 0, 1, 0, 1, 1], [0, 1, 0, 1, 1, 0]],
                                    [[6, 5, 4, 3, 2, 1], [5, 6, 3, 4, 1, 2]], names=["A", "B"])
    store = LabelStore(tmp_path_factory.mktemp("prop") / "l.db")
    pid = store.create_project(pool, "p.csv")
    who = (ANA, "bob")
    for kind, w, label in steps:
        p = store.progress(pid, pool)
        try:
            if kind == "label" and p.next_row is not None:
                store.append_label(pid, pool.row_ids[p.next_row], label, who[w], pool=pool)
            elif kind == "skip" and p.next_row is not None:
                store.skip_row(pid, pool.row_ids[p.next_row], who[w], pool=pool)
            elif kind == "undo":
                store.undo_last(pid, who[w])
        except NothingToUndoError:
            pass
        except certlib.CertlibError as exc:  # a skipped row skipped again
            assert "already skipped" in str(exc)
    events = store.events(pid)
    genesis = store.project(pid).chain_hash
    assert store.verify_chain(pid).ok and check_chain(pid, genesis, events).ok
    if not events:
        return
    i = data.draw(st.integers(0, len(events) - 1))
    name = data.draw(st.sampled_from(sorted(FIELDS)))
    edited = list(events)
    edited[i] = replace(events[i], **{name: FIELDS[name](getattr(events[i], name))})
    check = check_chain(pid, genesis, edited)
    assert (check.ok, check.broken_at) == (False, events[i].seq), (name, check)
    # the project's id and settings are in the chain too
    assert not check_chain(pid + 1, genesis, events).ok
    assert check_chain(pid, "f" * 64, events).broken_at == 1
