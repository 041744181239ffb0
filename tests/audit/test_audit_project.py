"""The persistent audit project: batches, routing at arrival, label events,
the queue, equivalence with `certlib.audit.audit`, durability, concurrency, refusals."""

from __future__ import annotations

import json
import math
import sqlite3
import threading

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from certlib.audit import audit
from certlib.audit.core import AuditConfig
from certlib.audit.ledger import PromotionLedger
from certlib.audit.store import AuditStore, DuplicateBatchError
from certlib.audit.store import routing_flags as _routing_flags
from certlib.audit.record import verify_record
from certlib.audit.routing import uniforms
from certlib.audit.synthetic import synthetic_stream
from certlib.audit.window import audit_windowed
from certlib.errors import CertlibError, ColumnError, InvalidValueError, LabelError, PoolFileError
from certlib.labelling.store import (DuplicateLabelError, LabelStore, NothingToUndoError,
                                     StaleStateError, StoreError, UnknownProjectError)

RESULT_KEYS = ("verdict", "tier", "stopping_time", "labels_used", "rho_interval",
               "delta_interval", "slices", "items_seen", "needs_label", "tier1_start")


def frame(f, g, y=None, ids=None, judge=None, slices=None, extra=None):
    d = {"item_id": list(range(len(f))) if ids is None else ids,
         "pred_incumbent": list(f), "pred_candidate": list(g)}
    if y is not None:
        d["label"] = list(y)
    if judge is not None:
        d["judge"] = list(judge)
    if slices is not None:
        d["region"] = list(slices)
    if extra is not None:
        d.update(extra)
    return pl.DataFrame(d, strict=False)


def same_result(a, b):
    da, db = a.to_dict(), b.to_dict()
    for k in RESULT_KEYS:
        assert da[k] == db[k], (k, da[k], db[k])
    assert [(e.t, e.pi, e.label) for e in a.trace] == [(e.t, e.pi, e.label) for e in b.trace]


def labels_of(store, pid, n):
    """Labels in force as the project holds them (NaN = none), via its stream."""
    return store.stream(pid)[2]


# ------------------------------------------------------------ equivalence
@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), rho=st.sampled_from([0.15, 0.3, 0.5]),
       true_delta=st.sampled_from([0.0, 0.1]), cuts=st.lists(st.integers(1, 1199), max_size=5),
       mode=st.sampled_from(["plain", "slices", "judge", "window"]),
       per_step=st.integers(1, 12))
def test_project_equals_batch_audit_for_random_batch_splits(tmp_path_factory, seed, rho,
                                                            true_delta, cuts, mode, per_step):
    """Items appended in random batches, routed items labelled in random order (with
    undos and relabels), as annotators would: after every step the project's verdict,
    intervals and trace equal `audit` on the same items and labels in force, and the
    audit's next needed row heads the queue; once the queue is empty the result equals
    `audit` on the fully labelled stream (the queue asked for every label it needs)."""
    n = 1200
    f, g, y = synthetic_stream(n, rho, min(true_delta, rho), seed=seed)
    rng = np.random.default_rng(seed)
    judge = rng.random(n) if mode == "judge" else None
    slices = rng.choice(["a", "b"], n) if mode == "slices" else None
    window = 500 if mode == "window" else None
    store = AuditStore(tmp_path_factory.mktemp("eq") / "s.db")
    pid = store.create(epsilon=0.1, seed=seed % 7, judge_column="judge" if judge is not None
                       else None, slice_column="region" if slices is not None else None,
                       window=window)
    bounds = sorted(set(cuts)) + [n]
    lo = 0
    for hi in bounds:
        store.append_batch(pid, frame(f[lo:hi], g[lo:hi], ids=list(range(lo, hi)),
                                      judge=None if judge is None else judge[lo:hi],
                                      slices=None if slices is None else slices[lo:hi]))
        lo = hi
        while True:
            s = store.status(pid)
            ff, gg, yy, jj, ss, _ = store.stream(pid)
            ref = audit(ff, gg, yy, epsilon=0.1, seed=seed % 7, judge=jj, slices=ss)
            same_result(s.result, ref)
            audit_needs = [q.pos for q in s.queue if set(q.needed_by) - {
                x for x in q.needed_by if x.startswith("window")}]
            if s.result.verdict == "continue":
                assert s.result.needs_label == (audit_needs[0] if audit_needs else None)
            elif audit_needs:  # a verdict, and slice audits still waiting for a label
                assert s.result.needs_label is None and s.result.items_seen == audit_needs[0]
            if not s.queue:
                break
            pick = rng.choice(len(s.queue), min(per_step, len(s.queue)), replace=False)
            for j in pick:
                q = s.queue[int(j)]
                store.label(pid, q.item_id, int(y[q.pos]), "ana")
            if rng.random() < 0.2:  # an undo puts the item back in the queue
                ev = store.undo(pid, "ana")
                after = store.status(pid)
                if after.result.verdict == "continue":  # still needed: back in the queue
                    assert ev.item_id in {q.item_id for q in after.queue}
    final = store.status(pid)
    same_result(final.result, audit(f, g, y, epsilon=0.1, seed=seed % 7, judge=judge,
                                    slices=slices))
    if window is not None:
        full = audit_windowed(f, g, y, window=window, epsilon=0.1, seed=seed % 7)
        assert final.windows.to_dict() == full.to_dict()
    # routing was decided at arrival: the stored flags are those of the whole stream
    cfg = final.project.config
    a = f != g
    pi = cfg.routing.probabilities(judge, n)
    flags = _routing_flags(cfg, a, pi, uniforms(cfg.seed, 0, n), slices=slices is not None,
                           window=window)
    assert final.routed == int(flags.sum())
    trace_items = {e.t - 1 for e in final.result.trace}
    assert all(flags[i] for i in trace_items)


def test_routing_flags_of_a_prefix_never_change():
    f, g, _ = synthetic_stream(3000, 0.3, 0.0, seed=4)
    cfg = AuditConfig.make(epsilon=0.05)
    a = f != g
    pi = cfg.routing.probabilities(None, 3000)
    u = uniforms(0, 0, 3000)
    whole = _routing_flags(cfg, a, pi, u, slices=False, window=700)
    for cut in (1, 250, 1000, 2999):
        assert np.array_equal(_routing_flags(cfg, a[:cut], pi[:cut], u[:cut], slices=False,
                                             window=700), whole[:cut])
    assert whole.any() and not whole[~a].any()


def test_labelled_batch_replays_like_the_batch_audit(tmp_path):
    f, g, y = synthetic_stream(6000, 0.3, 0.0, seed=11)
    store = AuditStore(tmp_path / "s.db")
    pid = store.create(epsilon=0.05)
    store.append_batch(pid, frame(f[:2500], g[:2500], y[:2500]))
    store.append_batch(pid, frame(f[2500:], g[2500:], y[2500:], ids=list(range(2500, 6000))))
    s = store.status(pid)
    ref = audit(f, g, y, epsilon=0.05)
    same_result(s.result, ref)
    assert ref.verdict == "safe" and ref.labels_used > 0 and not s.queue
    t = ref.trace[0].t - 1
    with pytest.raises(DuplicateLabelError, match="came with label"):
        store.label(pid, t, 1 - int(y[t]), "ana")


# ------------------------------------------------------------ durability
def test_reopened_store_holds_batches_labels_and_undos(tmp_path):
    path = tmp_path / "s.db"
    f, g, y = synthetic_stream(2000, 0.4, 0.0, seed=3)
    a = AuditStore(path)
    pid = a.create(epsilon=0.1, name="nightly")
    a.append_batch(pid, frame(f, g), who="pipe")
    q = a.status(pid).queue
    assert len(q) >= 3
    for item in q[:3]:
        a.label(pid, item.item_id, int(y[item.pos]), "ana")
    a.undo(pid, "ana")
    before = a.status(pid)
    b = AuditStore(path)  # a new handle: what a restarted server opens
    after = b.status(pid)
    assert [e.to_dict() for e in after.events] == [e.to_dict() for e in before.events]
    assert [x.kind for x in after.events] == ["label"] * 3 + ["undo"]
    assert after.labels_in_force == 2 and after.queue[0].item_id == q[2].item_id
    assert after.batches == before.batches and after.batches[0].added_by == "pipe"
    same_result(after.result, before.result)
    # the label store opens the same file and its own tables are untouched
    ls = LabelStore(path)
    assert ls.projects() == ()


def test_tables_are_append_only(tmp_path):
    path = tmp_path / "s.db"
    store = AuditStore(path)
    pid = store.create(epsilon=0.1)
    store.append_batch(pid, frame([0, 1, 0], [1, 1, 0]))
    con = sqlite3.connect(path)
    for sql in ("UPDATE audit_items SET label = '1'", "DELETE FROM audit_batches",
                "UPDATE audit_projects SET epsilon = 1", "DELETE FROM audit_items"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(sql)
    con.close()


def test_store_schema_version_of_another_certlib_is_refused(tmp_path):
    path = tmp_path / "s.db"
    AuditStore(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE audit_schema_version SET version = 99")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="audit schema version 99"):
        AuditStore(path)


# ------------------------------------------------------------ concurrency
def test_two_annotators_never_label_an_item_twice(tmp_path):
    path = tmp_path / "s.db"
    f, g, y = synthetic_stream(3000, 0.4, 0.0, seed=5)
    AuditStore(path).append_batch(AuditStore(path).create(epsilon=0.05), frame(f, g))
    queue = [q.item_id for q in AuditStore(path).status(1).queue[:30]]
    assert len(queue) == 30
    refused = {"ana": 0, "bo": 0}

    def annotate(who):
        mine = AuditStore(path)  # each annotator has its own handle on the file
        for item in queue:
            try:
                mine.label(1, item, int(y[int(item)]), who)
            except DuplicateLabelError:
                refused[who] += 1

    threads = [threading.Thread(target=annotate, args=(w,)) for w in refused]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = AuditStore(path).events(1)
    assert sorted(e.item_id for e in events) == sorted(queue)  # each item labelled once
    assert refused["ana"] + refused["bo"] == 30


def test_stale_view_is_refused(tmp_path):
    f, g, y = synthetic_stream(3000, 0.4, 0.0, seed=5)
    a = AuditStore(tmp_path / "s.db")
    pid = a.create(epsilon=0.05)
    a.append_batch(pid, frame(f, g))
    s = a.status(pid)
    a.label(pid, s.queue[0].item_id, 0, "ana", expect_seq=s.last_seq)
    with pytest.raises(StaleStateError, match="nothing was saved"):
        a.undo(pid, "bo", expect_seq=s.last_seq)
    with pytest.raises(DuplicateLabelError, match="already has label 0"):
        a.label(pid, s.queue[0].item_id, 1, "bo")


def test_only_the_annotator_of_a_label_undoes_it(tmp_path):
    f, g, y = synthetic_stream(3000, 0.4, 0.0, seed=5)
    a = AuditStore(tmp_path / "s.db")
    pid = a.create(epsilon=0.05)
    a.append_batch(pid, frame(f, g))
    first, second = (q.item_id for q in a.status(pid).queue[:2])
    a.label(pid, first, 0, "ana")
    a.label(pid, second, 1, "bo")
    with pytest.raises(StoreError, match=f"newest label in force \\(item_id {second}\\) "
                       "was given by 'bo'; only they can undo it"):
        a.undo(pid, "ana")
    with pytest.raises(StoreError, match=f"the label of item_id {first} was given by 'ana'"):
        a.undo(pid, "bo", first)
    with pytest.raises(StoreError, match="annotator must be a non-empty name"):
        a.undo(pid)
    assert [e.kind for e in a.events(pid)] == ["label", "label"]  # nothing appended
    assert a.undo(pid, " ANA ", first).undoes == 1  # names match without spaces and case
    assert a.undo(pid, "bo").item_id == second


# ------------------------------------------------------------ refusals
@pytest.fixture
def project(tmp_path):
    store = AuditStore(tmp_path / "s.db")
    pid = store.create(epsilon=0.05, judge_column="judge", slice_column="region")
    return store, pid


def good(n=6, start=0):
    return frame([0, 1] * (n // 2), [1, 1] * (n // 2), ids=list(range(start, start + n)),
                 judge=[0.5] * n, slices=["a", "b"] * (n // 2))


B = good(start=100)


@pytest.mark.parametrize("bad, error, message", [
    (B.drop("pred_candidate"), ColumnError, r"lacks the column `pred_candidate`"),
    (B.drop("item_id"), ColumnError, r"lacks the column `item_id` \(or `row_id`\)"),
    (B.drop("judge"), ColumnError, r"lacks the column `judge`, the judge column"),
    (B.with_columns(pl.Series("judge", [0.5, 0.5, 0.5, 1.5, 0.5, 0.5])), InvalidValueError,
     r"column `judge`, data row 4 \(item_id 103\) is 1.5; expected a judge"),
    # one text cell makes the judge column text: name that cell, not the first row
    (B.with_columns(pl.Series("judge", ["0.5", "0.5", "0.5", "abc", "0.5", "0.5"])),
     InvalidValueError, r"column `judge`, data row 4 \(item_id 103\) is 'abc'; expected a"),
    (B.with_columns(pl.Series("pred_incumbent", [0, 1, None, 1, 0, 1])),
     InvalidValueError, r"column `pred_incumbent`, data row 3 .* is empty; every item needs both"),
    # 0.5 among whole-number classes is a typo, not a new class
    (B.with_columns(pl.Series("label", [None, 1.0, None, 0.5, None, 0.0])), LabelError,
     r"column `label`, data row 4 .* is 0.5; every prediction is a whole number"),
    (B.with_columns(pl.Series("label", [None, None, None, None, "x", None])), LabelError,
     r"column `label`, data row 5 .* is 'x'; expected a number"),
    # a file's label column is text as soon as one cell is not a number: name that cell
    (B.with_columns(pl.Series("label", ["1", "0", None, "cat", "1", "0"])), LabelError,
     r"column `label`, data row 4 \(item_id 103\) is 'cat'; expected a number"),
    (B.with_columns(pl.Series("item_id", [100, 101, 102, 101, 104, 105])), InvalidValueError,
     r"column `item_id`, data row 4 repeats the id '101' of data row 2"),
    (B.with_columns(pl.Series("region", ["a", "b", "a", None, "a", "b"])),
     InvalidValueError, r"column `region`, data row 4 .* is empty; every item needs a slice"),
    (B.head(0), InvalidValueError, r"has no rows"),
])
def test_malformed_batch_refused_whole_naming_column_and_row(project, bad, error, message):
    store, pid = project
    store.append_batch(pid, good())
    with pytest.raises(error, match=message):
        store.append_batch(pid, bad)
    assert store.status(pid).items == 6 and len(store.batches(pid)) == 1
    store.append_batch(pid, B)  # nothing of the refused batch was kept


def test_numbers_written_as_text_in_a_label_column_are_numbers(project, tmp_path):
    store, pid = project
    other = store.create(epsilon=0.05, judge_column="judge", slice_column="region")
    f, g = tmp_path / "text.csv", tmp_path / "num.csv"
    good().with_columns(pl.Series("label", ["1", "0", None, " 1 ", "0", "1.0"])).write_csv(f)
    good().with_columns(pl.Series("label", [1, 0, None, 1, 0, 1])).write_csv(g)
    store.append_batch(pid, f)
    store.append_batch(other, g)
    text, num = store.status(pid), store.status(other)
    assert text.labels_in_force == num.labels_in_force == 5
    assert text.result.to_dict() == num.result.to_dict()


def test_text_batch_after_numeric_batch_is_refused(project):
    store, pid = project
    store.append_batch(pid, good())
    text = good(start=10).with_columns(pl.Series("pred_incumbent", ["a"] * 6))
    with pytest.raises(InvalidValueError, match="earlier batches hold numbers, so every"):
        store.append_batch(pid, text)


def test_repeated_batch_refused_by_item_id(tmp_path, project):
    store, pid = project
    path = tmp_path / "b.csv"
    good().write_csv(path)
    first = store.append_batch(pid, path)
    with pytest.raises(DuplicateBatchError, match=r"item_id 0 \(data row 1\) is already in audit "
                       r"project 1 \(batch 1, item 1\); this batch is batch 1 again"):
        store.append_batch(pid, path)
    overlap = good(start=4)  # ids 4..9: a different batch that repeats two items
    with pytest.raises(DuplicateBatchError, match="item_id 4 .* 2 of its ids are already"):
        store.append_batch(pid, overlap)
    assert store.batches(pid) == (first,) and len(first.sha256) == 64


def test_unreadable_and_unknown(tmp_path, project):
    store, pid = project
    (tmp_path / "b.txt").write_text("x")
    with pytest.raises(CertlibError, match=r"expected a \.csv or \.parquet file"):
        store.append_batch(pid, tmp_path / "b.txt")
    with pytest.raises(CertlibError, match="does not exist"):
        store.append_batch(pid, tmp_path / "none.csv")
    with pytest.raises(UnknownProjectError, match="audit project 7 is not in the store"):
        store.status(7)
    with pytest.raises(UnknownProjectError, match="not a whole number"):
        store.status("x")


def test_labels_refused_off_the_queue(tmp_path):
    f, g, y = synthetic_stream(3000, 0.4, 0.0, seed=8)
    store = AuditStore(tmp_path / "s.db")
    pid = store.create(epsilon=0.05)
    store.append_batch(pid, frame(f, g))
    agree = int(np.flatnonzero(f == g)[0])
    with pytest.raises(LabelError, match="was not routed to labelling"):
        store.label(pid, agree, 1, "ana")
    q = store.status(pid).queue[0]
    with pytest.raises(LabelError, match="expected a number"):
        store.label(pid, q.item_id, "cat", "ana")
    with pytest.raises(StoreError, match="annotator must be a non-empty name"):
        store.label(pid, q.item_id, 1, " ")
    with pytest.raises(StoreError, match="item_id nope is not in audit project"):
        store.label(pid, "nope", 1, "ana")
    with pytest.raises(NothingToUndoError):
        store.undo(pid, "ana")
    store.label(pid, q.item_id, "1", "ana")  # a number written as text is that number
    assert store.events(pid)[-1].label == 1


def test_text_classes_and_extra_columns_export_and_verify(tmp_path):
    rng = np.random.default_rng(0)
    n = 3000
    y = rng.choice(["cat", "dog"], n)
    f = y.copy()
    g = y.copy()
    flip = rng.random(n) < 0.3
    g[flip] = np.where(y[flip] == "cat", "dog", "cat")
    both = flip & (rng.random(n) < 0.5)  # both wrong: no disagreement
    f[both] = g[both]
    store = AuditStore(tmp_path / "s.db")
    pid = store.create(epsilon=0.1)
    store.append_batch(pid, frame(f, g, ids=[f"id{i}" for i in range(n)],
                                  extra={"text": [f"row {i}" for i in range(n)]}))
    for _ in range(5):
        q = store.status(pid).queue[0]
        assert q.extra == {"text": f"row {q.pos}"}
        store.label(pid, q.item_id, str(y[q.pos]), "ana")
    rec = store.export(pid, tmp_path / "r.json", tmp_path / "s.csv")
    back = pl.read_csv(tmp_path / "s.csv")
    ver = verify_record(rec, np.array(back["pred_incumbent"].to_list(), dtype=object),
                        np.array(back["pred_candidate"].to_list(), dtype=object),
                        back["label"].to_list())
    assert ver.ok, ver.mismatches
    assert rec["labels_used"] == 5 and rec["verdict"] == "continue"
    assert [e["kind"] for e in rec["audit_project"]["events"]] == ["label"] * 5


# ------------------------------------------------------------ ledger
def test_chain_runs_at_delta_k_and_the_ledger_lists_every_audit(tmp_path):
    store = AuditStore(tmp_path / "s.db")
    f, g, y = synthetic_stream(4000, 0.01, 0.0, seed=2)
    pids = [store.create(epsilon=0.05, delta=0.05, chain="ranker") for _ in range(3)]
    for k, pid in enumerate(pids, 1):
        assert math.isclose(store.project(pid).config.delta, 0.05 * 6 / (math.pi ** 2 * k * k))
        assert store.project(pid).chain_k == k
    store.append_batch(pids[0], frame(f, g, y))
    led = store.ledger("ranker")
    assert isinstance(led, PromotionLedger) and len(led.entries) == 3
    assert [e["verdict"] for e in led.entries] == ["safe", "continue", "continue"]
    assert math.isclose(led.spent, sum(0.05 * 6 / (math.pi ** 2 * k * k) for k in (1, 2, 3)))
    assert store.status(pids[1]).ledger.to_dict() == led.to_dict()
    with pytest.raises(CertlibError, match="chain 'ranker' has lifetime delta 0.05"):
        store.create(epsilon=0.05, delta=0.1, chain="ranker")


def test_record_is_the_batch_audit_record_with_the_project_log(tmp_path):
    f, g, y = synthetic_stream(3000, 0.4, 0.0, seed=9)
    store = AuditStore(tmp_path / "s.db")
    pid = store.create(epsilon=0.05, slice_column="region")
    sl = np.where(np.arange(3000) % 3 == 0, "x", "y")
    store.append_batch(pid, frame(f, g, slices=sl))
    for q in store.status(pid).queue[:40]:
        store.label(pid, q.item_id, int(y[q.pos]), "ana")
    rec = store.record(pid)
    ff, gg, yy, _, ss, _ = store.stream(pid)
    assert verify_record(rec, ff, gg, yy, judge=None, slices=ss).ok
    tampered = json.loads(json.dumps(rec))
    tampered["trace"][0][2] = 1 - tampered["trace"][0][2]
    assert not verify_record(tampered, ff, gg, None, judge=None, slices=ss).ok
    for key, value in (("config", {**rec["config"], "epsilon": 0.01}),
                       ("slice_column", "other")):  # the project's copy of the settings
        tampered = json.loads(json.dumps(rec))
        tampered["audit_project"][key] = value
        v = verify_record(tampered, ff, gg, yy, judge=None, slices=ss)
        (m,) = v.mismatches
        assert m.startswith(f"`audit_project.{key}`: record says ") and "0.01" in m or \
            m == f"`audit_project.{key}`: record says 'other', but the record's `{key}` is " \
                 f"{rec[key]!r}"


@pytest.mark.parametrize("text, message", [
    ("item_id,pred_incumbent,pred_candidate\n1,0,1\n2,0\n3,1,1\n",
     r"batch file 'b.csv' cannot be parsed: line 3 has 2 fields but the header has 3"),
    ("item_id,pred_incumbent,pred_candidate\n1,0,1\n2,0,1,1,0\n",
     r"batch file 'b.csv' cannot be parsed: line 3 has 5 fields but the header has 3"),
    ("", r"batch file 'b.csv' has no header row"),
])
def test_ragged_or_empty_batch_file_is_refused_naming_the_line(project, tmp_path, text, message):
    """A short row is not padded with nulls and stored without a word, and a long row or
    an empty file does not give polars' own message: one clear message per file."""
    store, pid = project
    other = store.create(epsilon=0.05)
    p = tmp_path / "b.csv"
    p.write_text(text)
    with pytest.raises(PoolFileError, match=message):
        store.append_batch(other, p)
    assert store.status(other).items == 0


def test_fractional_label_refused_by_label_too_unless_a_prediction_is_fractional(tmp_path):
    """The per-label path refuses 0.5 among whole-number classes as the batch check does
    (storing it would make the project fail to open); a project whose
    predictions include 0.5 takes it; a project stored before the check still opens."""
    n = 300
    f, g = [0] * n, [i % 2 for i in range(n)]  # half the items disagree: Tier 1 runs
    store = AuditStore(tmp_path / "s.db")
    pid = store.create(epsilon=0.05, pi=1.0)
    store.append_batch(pid, frame(f, g))
    item = store.status(pid).queue[0].item_id
    with pytest.raises(LabelError, match=rf"label 0.5 for item_id {item}: every prediction"):
        store.label(pid, item, 0.5, "me")
    with pytest.raises(LabelError, match=rf"label '0.5' for item_id {item}: every prediction"):
        store.label(pid, item, "0.5", "me")
    store.label(pid, item, "1.0", "me")  # a whole number written as text is fine
    assert store.status(pid).labels_in_force == 1
    # an earlier batch with a fractional prediction makes 0.5 a possible class
    other = store.create(epsilon=0.05, pi=1.0)
    store.append_batch(other, frame([0.5] + f[1:], g))
    store.append_batch(other, frame([0, 1], [1, 1], y=[None, 0.5], ids=[n, n + 1]))
    item = store.status(other).queue[0].item_id
    store.label(other, item, 0.5, "me")
    assert store.status(other).labels_in_force == 2
    # a label stored before the check (appended with the check switched off, as the
    # code before it did) does not lock the project: it still opens
    import certlib.audit.batch as project_module

    old = store.create(epsilon=0.05, pi=1.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(project_module, "stray_fraction", lambda *a: None)
        store.append_batch(old, frame(f, g, y=[0.5] + [None] * (n - 1)))
    assert store.status(old).items == n


def test_a_label_no_model_predicts_is_reported(project):
    """A batch label of 7 among 0/1 predictions is kept (a class may be missing from the
    predictions) but reported, with its count and first item."""
    store, pid = project
    store.append_batch(pid, good())
    assert store.status(pid).unpredicted == ()
    store.append_batch(pid, B.with_columns(pl.Series("label", [None, 7, None, 7, 1, None])))
    s = store.status(pid)
    assert s.unpredicted == ((7, 2, "101"),)
    assert s.to_dict()["unpredicted_labels"] == [{"label": 7, "items": 2,
                                                  "first_item_id": "101"}]


def test_the_project_block_of_a_record_is_checked(tmp_path):
    """Batches tile the stream, events run 1..m, a chain's delta is its delta_k, and the
    block repeats the record's settings; each edit below verified before."""
    f, g, y = synthetic_stream(3000, 0.4, 0.0, seed=9)
    store = AuditStore(tmp_path / "s.db")
    store.create(epsilon=0.05, chain="ranker")
    pid = store.create(epsilon=0.05, chain="ranker")  # audit 2 of the chain
    store.append_batch(pid, frame(f[:1000], g[:1000], ids=list(range(1000))))
    store.append_batch(pid, frame(f[1000:], g[1000:], ids=list(range(1000, 3000))))
    for q in store.status(pid).queue[:6]:
        store.label(pid, q.item_id, int(y[q.pos]), "ana")
    rec = store.record(pid)
    ff, gg, yy, _, _, _ = store.stream(pid)
    assert verify_record(rec, ff, gg, yy).ok
    edits = {
        "batch items": lambda p: p["batches"][0].update(items=900),
        "an event removed": lambda p: p["events"].pop(2),
        "chain_k": lambda p: p.update(chain_k=1),
        "lifetime_delta": lambda p: p.update(lifetime_delta=0.5),
        "config removed": lambda p: p.pop("config"),
    }
    for what, edit in edits.items():
        forged = json.loads(json.dumps(rec))
        edit(forged["audit_project"])
        assert not verify_record(forged, ff, gg, yy).ok, what
    forged = json.loads(json.dumps(rec))
    forged["audit_project"] = []
    assert verify_record(forged, ff, gg, yy).mismatches == (
        "`audit_project` is not a JSON object",)


def test_one_text_cell_in_a_number_column_is_named_at_its_row(project, tmp_path):
    """A file's column is text as soon as one cell is: "abc" at data row 4 of
    pred_incumbent was blamed on pred_candidate's data row 1 (a valid 0)."""
    store, pid = project
    path = tmp_path / "typo.csv"
    good().with_columns(pl.Series("pred_incumbent", ["1", "0", "1", "abc", "0", "1"])) \
        .write_csv(path)
    with pytest.raises(InvalidValueError) as err:
        store.append_batch(pid, path)
    message = str(err.value)
    assert "`pred_incumbent`" in message and "data row 4" in message and "'abc'" in message
    assert "`pred_candidate` holds numbers" in message and "data row 1" not in message
    assert store.status(pid).items == 0
