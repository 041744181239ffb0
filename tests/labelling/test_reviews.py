"""Second-annotator review: review events in the store, disagreements,
corrections that replay the session, the evidence record's margin and reviews, and the
migration of a schema-3 store."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import certlib
from certlib.errors import CertlibError
from certlib.labelling.record import verify_record
from certlib.labelling.reviews import review_items, waiting_for
from certlib.labelling.session import Session
from certlib.labelling.store import (LabelStore, NothingToUndoError, StaleStateError,
                                     StoreError)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pools():
    return (certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv"),
            certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv"))


def _certify(store, pid, pool, truth, who="ana"):
    while True:
        p = store.progress(pid, pool)
        if p.session.done:
            return p
        r = p.next_row
        store.append_label(pid, pool.row_ids[r], truth.classes[int(truth.labels[r])], who,
                           pool=pool, expect_seq=p.last_seq)


def test_review_flow_disagreement_and_correction_replay(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    p = _certify(store, pid, pool, truth)
    m = p.session.label_error_margin()
    assert p.session.certified and m.flips == 1 and len(m.critical_ids) > 1
    rows = m.critical_ids[:3]
    queued = store.queue_review(pid, rows, "lead", pool=pool, expect_seq=p.last_seq)
    assert [e.kind for e in queued] == ["review_request"] * 3
    assert [e.row_id for e in queued] == list(rows)
    events = store.events(pid)
    assert [i.status for i in review_items(events)] == ["waiting"] * 3
    assert waiting_for(events, "ana") == () and len(waiting_for(events, "bob")) == 3
    with pytest.raises(StoreError, match="already waiting"):
        store.queue_review(pid, rows[:1], "lead", pool=pool)
    with pytest.raises(StoreError, match="second annotator"):
        store.append_review(pid, rows[0], 0, "ana", pool=pool)
    with pytest.raises(StoreError, match="not queued"):
        other = next(r for r in pool.ids_of(p.session.read_rows) if r not in rows)
        store.append_review(pid, other, 0, "bob", pool=pool)
    with pytest.raises(StaleStateError):
        store.append_review(pid, rows[0], 0, "bob", pool=pool, expect_seq=1)
    # bob agrees on the first row and disagrees on the second
    first = truth.classes[int(truth.labels[pool.position(rows[0])])]
    second = truth.classes[int(truth.labels[pool.position(rows[1])])]
    wrong = truth.classes[1 - truth.class_code(second)]
    store.append_review(pid, rows[0], first, "bob", pool=pool)
    store.append_review(pid, rows[1], wrong, "bob", pool=pool)
    before = store.progress(pid, pool)
    assert before.session.L.tolist() == p.session.L.tolist()  # reviews change no bound
    st = {i.row_id: i.status for i in review_items(before.events)}
    assert st == {rows[0]: "agrees", rows[1]: "disagrees", rows[2]: "waiting"}
    # the lead accepts bob's label: the session replays with it, in the same order
    with pytest.raises(StoreError, match="nothing to correct"):
        store.correct_label(pid, rows[1], second, "lead", pool=pool)
    with pytest.raises(StoreError, match="cannot adopt their own review"):
        store.correct_label(pid, rows[1], wrong, "bob", pool=pool)
    ev = store.correct_label(pid, rows[1], wrong, "lead", pool=pool)
    assert ev.kind == "correct" and ev.undoes is not None
    after = store.progress(pid, pool, since=before)
    hist = [(r, wrong if pool.row_ids[r] == rows[1] else y) for r, y in p.session.history]
    fresh = Session.from_history(pool, hist, policy="adaptive-pair-sum")
    assert after.session.history == fresh.history
    assert after.session.L.tolist() == fresh.L.tolist()
    # one wrong label on a critical row undoes the certificate (margin 1)
    assert not after.session.certified
    item = {i.row_id: i for i in review_items(after.events)}[rows[1]]
    assert (item.status, item.corrected, item.label, item.labelled_by) == ("agrees", True,
                                                                          wrong, "lead")
    rec = store.export_record(pid, pool)
    assert rec["label_error_margin"]["flips"] == 0  # not certified now
    assert [r["status"] for r in rec["reviews"]] == ["agrees", "agrees", "waiting"]
    assert verify_record(rec, pool).ok


def test_record_margin_and_reviews_are_verified(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    p = _certify(store, pid, pool, truth)
    m = p.session.label_error_margin()
    store.queue_review(pid, m.critical_ids[:2], "lead", pool=pool)
    rec = store.export_record(pid, pool)
    assert rec["label_error_margin"]["flips"] == 1
    assert rec["label_error_margin"]["critical"] == list(m.critical_ids)
    assert len(rec["reviews"]) == 2 and verify_record(rec, pool).ok
    bad = dict(rec, label_error_margin=dict(rec["label_error_margin"], flips=2))
    assert any("label-error margin" in x for x in verify_record(bad, pool).mismatches)
    bad = dict(rec, reviews=rec["reviews"][:1])
    assert any("reviews" in x for x in verify_record(bad, pool).mismatches)
    for version in (1, 2):  # a record must not hide either (version 1: with reviews)
        for key in ("label_error_margin", "reviews"):
            cut = {k: v for k, v in rec.items() if k != key}
            cut["version"] = version
            (m,) = verify_record(cut, pool).mismatches
            assert m.startswith(("label-error margin: record says None",
                                 "reviews: record says None"))


def test_review_refusals_name_the_row(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    unread = pool.row_ids[store.progress(pid, pool).next_row]
    with pytest.raises(StoreError, match=f"row_id {unread!r} has no label in force"):
        store.queue_review(pid, [unread], "lead", pool=pool)
    with pytest.raises(StoreError, match="at least one row"):
        store.queue_review(pid, [], "lead", pool=pool)
    with pytest.raises(StoreError, match="annotator"):
        store.correct_label(pid, unread, 0, " ", pool=pool)
    store.append_label(pid, unread, 1, "ana", pool=pool)
    store.queue_review(pid, [unread], "lead", pool=pool)
    with pytest.raises(CertlibError, match="class set"):
        store.append_review(pid, unread, 7, "bob", pool=pool)
    store.undo_last(pid, "ana")
    assert [i.status for i in review_items(store.events(pid))] == ["withdrawn"]


_OLD_COLUMNS = "project_id, seq, kind, row_id, label, annotator, at, undoes"


def _old_events_table(new_kinds: str) -> str:
    """The events table of a store of schema 5 or before: without ``new_kinds`` (SQL text
    of the CHECK), the subject and the hash chain."""
    import certlib.labelling.store as store_mod

    return re.sub(r"\n    (subject|prev_hash|hash) .*", "",
                  store_mod._EVENTS_TABLE.replace(new_kinds, ""))


def _as_old_version(path, new_kinds: str, version: int):
    """Turn a current store file into one of schema ``version``: its events table
    without ``new_kinds`` (SQL text of the CHECK), every event copied.  Returns an open
    connection to it."""
    import certlib.labelling.store as store_mod

    con = sqlite3.connect(path, isolation_level=None)
    con.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; "
                      "ALTER TABLE events RENAME TO e_old;"
                      + _old_events_table(new_kinds)
                      + f"INSERT INTO events SELECT {_OLD_COLUMNS} FROM e_old; DROP TABLE e_old; "
                      + store_mod._TRIGGERS + f"UPDATE schema_version SET version = {version};")
    return con


def _migrated(path, pid, new_kinds: str, version: int, refused: str):
    """Downgrade the store at ``path`` to schema ``version`` (`_as_old_version`), check
    that its table refuses the ``refused`` insert of a new kind, and reopen it: the
    current store migrates it with project ``pid``'s events unchanged."""
    import certlib.labelling.store as store_mod

    events = LabelStore(path).events(pid)
    assert new_kinds in store_mod._EVENTS_TABLE
    con = _as_old_version(path, new_kinds, version)
    with pytest.raises(sqlite3.IntegrityError):  # the old table refuses the new kind
        con.execute(refused)
    con.close()
    store = LabelStore(path)
    assert store.events(pid) == events
    return store


def test_schema3_store_is_migrated(tmp_path, pools):

    pool, truth = pools
    path = tmp_path / "v3.db"
    store = LabelStore(path)
    pid = store.open_project(pool, "demo.csv", budget=5)
    store.append_label(pid, pool.row_ids[store.progress(pid, pool).next_row], 0, "ana",
                       pool=pool)
    store.extend_budget(pid, 9, "ana")
    events = store.events(pid)
    store = _migrated(path, pid,
                      ",\n                                         'review_request', 'review', "
                      "'correct'", 3,  # a version-3 table refuses review events
                      "INSERT INTO events VALUES (1, 9, 'review', '1', '0', 'b', 't', NULL)")
    rid = events[0].row_id
    store.queue_review(pid, [rid], "lead", pool=pool)
    store.append_review(pid, rid, 1, "bob", pool=pool)
    assert review_items(store.events(pid))[0].status == "disagrees"
    con = sqlite3.connect(path)
    assert con.execute("SELECT version FROM schema_version").fetchall() == [(6,)]
    con.close()


def test_correct_keeps_reading_order_and_undo_still_pops_newest():
    from certlib.labelling.events import Event, labels_in_force

    log = [Event(1, "label", 7, 1, "ana", "t1"), Event(2, "label", 3, 0, "ana", "t2"),
           Event(3, "correct", 7, 0, "lead", "t3", undoes=1)]
    assert [(e.row_id, e.label) for e in labels_in_force(log)] == [(7, 0), (3, 0)]
    log.append(Event(4, "undo", 3, 0, "ana", "t4", undoes=2))
    assert [(e.row_id, e.label) for e in labels_in_force(log)] == [(7, 0)]
    assert np.array_equal([e.seq for e in labels_in_force(log)], [3])


def test_undo_is_the_annotators_own_and_names_ignore_case(tmp_path, pools):
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    r = pool.row_ids[store.progress(pid, pool).next_row]
    store.append_label(pid, r, 1, "ana", pool=pool)
    with pytest.raises(NothingToUndoError, match=r"no label of yours to undo") as err:
        store.undo_last(pid, "bob")
    assert "ana" not in str(err.value)  # nobody else's name
    with pytest.raises(StoreError, match="non-empty name"):
        store.undo_last(pid, " ")
    assert store.undo_last(pid, " ANA ").kind == "undo"


def test_a_round_reviews_the_label_it_was_queued_for(tmp_path, pools):
    """Undo and relabel ends the round; a correction adopts a review, and its reviewer is
    then an author of the label: a new round needs someone else."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    a, b = pool.row_ids[0], pool.row_ids[1]
    store.append_label(pid, a, 1, "ana", pool=pool)
    store.append_label(pid, b, 1, "ana", pool=pool)
    store.queue_review(pid, [a, b], "lead", pool=pool)
    store.append_review(pid, b, 0, "bob", pool=pool)
    assert {i.row_id: i.status for i in review_items(store.events(pid))}[b] == "disagrees"
    # ana takes b back and cy labels it again: bob's review was of the old label
    store.undo_last(pid, "ana")
    store.append_label(pid, b, 1, "cy", pool=pool)
    item = {i.row_id: i for i in review_items(store.events(pid))}[b]
    assert (item.status, item.label, item.labelled_by) == ("withdrawn", 1, "cy")
    with pytest.raises(StoreError, match="undone and given again; queue the row again"):
        store.append_review(pid, b, 0, "dee", pool=pool)
    # a: bob disagrees, the lead adopts it; re-queued, bob may not review his own label
    store.append_review(pid, a, 0, "bob", pool=pool)
    with pytest.raises(StoreError, match="cannot adopt their own review"):
        store.correct_label(pid, a, 0, " BOB", pool=pool)
    store.correct_label(pid, a, 0, "lead", pool=pool)
    store.queue_review(pid, [a, b], "lead", pool=pool)
    items = {i.row_id: i for i in review_items(store.events(pid))}
    assert items[a].authors == ("lead", "bob") and items[b].authors == ("cy",)
    assert [i.row_id for i in waiting_for(store.events(pid), "Bob")] == [b]
    assert [i.row_id for i in waiting_for(store.events(pid), "dee")] == [a, b]
    with pytest.raises(StoreError, match="second annotator"):
        store.append_review(pid, a, 0, "bob", pool=pool)
    store.append_review(pid, a, 0, "dee", pool=pool)
    assert {i.row_id: i.status for i in review_items(store.events(pid))} == {
        a: "agrees", b: "waiting"}


def test_keep_decides_a_disagreement_for_the_label_in_force(tmp_path, pools):
    """A disagreement can be decided either way: Correct adopts the review, Keep keeps the
    label (a ``keep`` event; no bound moves).  Whoever gave the label may not keep it
    (as a reviewer may not adopt their own review); the reviewer may, withdrawing the
    review.  A later review reopens the decision; the record verifies."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    p = _certify(store, pid, pool, truth)
    rows = p.session.label_error_margin().critical_ids[:2]
    store.queue_review(pid, rows, "lead", pool=pool)
    lab = {e.row_id: e.label for e in store.labels(pid)}
    for r in rows:
        store.append_review(pid, r, 1 - lab[r], "cy", pool=pool)
    with pytest.raises(StoreError, match="gave or backed the label of row_id .* someone else"):
        store.keep_label(pid, rows[0], "ANA ", pool=pool)  # the first annotator
    before = store.progress(pid, pool)
    ev = store.keep_label(pid, rows[0], "cy", pool=pool)  # the reviewer withdraws
    assert (ev.kind, ev.row_id, ev.label) == ("keep", rows[0], lab[rows[0]])
    store.keep_label(pid, rows[1], "lead", pool=pool)
    after = store.progress(pid, pool)
    assert np.array_equal(after.session.L, before.session.L)  # nothing moves
    assert [i.status for i in review_items(store.events(pid))] == ["kept", "kept"]
    with pytest.raises(StoreError, match="no review disagreement to decide"):
        store.keep_label(pid, rows[0], "lead", pool=pool)
    # a third annotator's review reopens it; Correct still works after a keep
    store.append_review(pid, rows[1], 1 - lab[rows[1]], "dee", pool=pool)
    assert review_items(store.events(pid))[1].status == "disagrees"
    store.correct_label(pid, rows[1], 1 - lab[rows[1]], "lead", pool=pool)
    assert review_items(store.events(pid))[1].status == "agrees"
    rec = store.export_record(pid, pool)
    assert [r["status"] for r in rec["reviews"]] == ["kept", "agrees"]
    assert verify_record(rec, pool).ok


def test_schema4_store_is_migrated(tmp_path, pools):

    pool, truth = pools
    path = tmp_path / "v4.db"
    store = LabelStore(path)
    pid = store.open_project(pool, "demo.csv")
    p = _certify(store, pid, pool, truth)
    rid = p.session.label_error_margin().critical_ids[0]
    store.queue_review(pid, [rid], "lead", pool=pool)
    label = {e.row_id: e.label for e in store.labels(pid)}[rid]
    store.append_review(pid, rid, 1 - label, "cy", pool=pool)
    store = _migrated(path, pid, ",\n                                         'keep'",
                      4,  # a version-4 table refuses keep events
                      "INSERT INTO events VALUES (1, 999, 'keep', '1', '0', 'b', 't', NULL)")
    store.keep_label(pid, rid, "lead", pool=pool)
    assert review_items(store.events(pid))[0].status == "kept"
    con = sqlite3.connect(path)
    assert con.execute("SELECT version FROM schema_version").fetchone()[0] == 6
    con.close()


def test_keep_after_a_correction_and_a_keep_that_a_correction_reopens(tmp_path, pools):
    """Who may keep follows the label in force, not the round's first label: after the
    lead corrects to cy's review, neither the lead nor cy may keep it, ana may.  A keep
    holds for the label event it decided: correcting away and back reopens it."""
    pool, truth = pools
    store = LabelStore(tmp_path / "l.db")
    pid = store.open_project(pool, "demo.csv")
    p = _certify(store, pid, pool, truth)
    a, b = p.session.label_error_margin().critical_ids[:2]
    lab = {e.row_id: e.label for e in store.labels(pid)}
    store.queue_review(pid, [a, b], "lead", pool=pool)
    # row a: ana labelled x; cy reviews y; the lead corrects to y; dee reviews x
    x = lab[a]
    store.append_review(pid, a, 1 - x, "cy", pool=pool)
    store.correct_label(pid, a, 1 - x, "lead", pool=pool)
    store.append_review(pid, a, x, "dee", pool=pool)
    item = review_items(store.events(pid))[0]
    assert item.status == "disagrees" and item.label == 1 - x
    for who in ("lead", " CY"):
        assert not item.may_keep(who)
        with pytest.raises(StoreError, match="gave or backed"):
            store.keep_label(pid, a, who, pool=pool)
    assert item.may_keep("ana") and item.may_keep("dee")
    store.keep_label(pid, a, "ana", pool=pool)
    assert review_items(store.events(pid))[0].status == "kept"
    # row b: kept, then corrected to the review and back: the keep does not come back
    y = lab[b]
    store.append_review(pid, b, 1 - y, "cy", pool=pool)
    store.keep_label(pid, b, "lead", pool=pool)
    assert review_items(store.events(pid))[1].status == "kept"
    store.correct_label(pid, b, 1 - y, "lead", pool=pool)
    assert review_items(store.events(pid))[1].status == "agrees"
    store.correct_label(pid, b, y, "ana", pool=pool)
    assert review_items(store.events(pid))[1].status == "disagrees"
    assert verify_record(store.export_record(pid, pool), pool).ok
