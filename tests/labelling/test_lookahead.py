"""Progress.lookahead: the row the project asks next after each possible answer, computed
before the answer (what the labelling panel draws at a key press), equals the row the
store's replay asks after that answer is really appended."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import certlib
from certlib.labelling.progress import SKIP
from certlib.labelling.store import LabelStore

ROOT = Path(__file__).resolve().parents[2]


def _after(store, pid, pool, answer, who="ana"):
    """A copy of the project's store with ``answer`` appended; the progress then."""
    prog = store.progress(pid, pool)
    rid = pool.row_ids[prog.next_row]
    if answer == SKIP:
        store.skip_row(pid, rid, who, pool=pool, expect_seq=prog.last_seq)
    else:
        store.append_label(pid, rid, answer, who, pool=pool, expect_seq=prog.last_seq)
    return store.progress(pid, pool)


@pytest.mark.parametrize("policy", ["adaptive-pair-sum", "static-range", "random"])
def test_lookahead_equals_the_replay_after_each_answer(tmp_path, policy):
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    rng = np.random.default_rng(5)
    main = LabelStore(tmp_path / "main.db")
    pid = main.open_project(pool, "demo", policy=policy, budget=40)
    for step in range(25):
        prog = main.progress(pid, pool)
        if prog.next_row is None:
            break
        ahead = {la.answer: la for la in prog.lookahead()}
        answers = list(pool.classes) + ([SKIP] if SKIP in ahead else [])
        assert set(ahead) == set(answers)
        for answer in answers:  # each on a copy of the store as it is now
            copy = tmp_path / f"copy_{step}_{answer}.db"
            copy.write_bytes((tmp_path / "main.db").read_bytes())
            after = _after(LabelStore(copy), pid, pool, answer)
            la = ahead[answer]
            assert la.next_row == after.next_row, (step, answer)
            assert la.status == after.session.status
            assert la.final == after.guarantee.final
        # walk on: mostly labels, sometimes a skip (then a skipped row is passed over)
        answer = SKIP if step % 7 == 3 else pool.classes[int(rng.integers(2))]
        _after(main, pid, pool, answer)


def test_lookahead_when_only_skipped_rows_are_left(tmp_path):
    pool = certlib.Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[3, 2, 1], [1, 2, 3]],
                                    names=["a", "b"], classes=[0, 1])
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "tiny", policy="static-range")
    for _ in range(pool.n):  # skip every row: the policy returns to the skipped ones
        prog = store.progress(pid, pool)
        if pool.row_ids[prog.next_row] in prog.skipped:
            break
        _after(store, pid, pool, SKIP)
    prog = store.progress(pid, pool)
    assert pool.row_ids[prog.next_row] in prog.skipped
    ahead = prog.lookahead()
    assert SKIP not in {la.answer for la in ahead}  # a skipped row is not skipped again
    for la in ahead:
        copy = tmp_path / f"c{la.answer}.db"
        copy.write_bytes((tmp_path / "s.db").read_bytes())
        assert la.next_row == _after(LabelStore(copy), pid, pool, la.answer).next_row


def test_lookahead_of_a_finished_session_is_empty(tmp_path):
    truth = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    pool = certlib.load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "demo", budget=3)
    for _ in range(3):
        prog = store.progress(pid, pool)
        r = prog.next_row
        ahead = prog.lookahead()
        store.append_label(pid, pool.row_ids[r], truth.classes[truth.labels[r]], "ana",
                           pool=pool, expect_seq=prog.last_seq)
    assert all(la.final for la in ahead if la.answer != SKIP)
    assert store.progress(pid, pool).lookahead() == ()


class _Names:
    """Display names as the Pool page keeps them: none declared."""

    @staticmethod
    def label(c):
        return str(c)


def test_the_panel_marks_a_next_row_that_cannot_be_skipped(tmp_path):
    """After Skip on the last row not yet skipped, the next row is a skipped one: the
    panel draws it with Skip off (with Skip on, each press said "still being saved",
    since a skipped row has no Skip lookahead)."""
    from ui.label_panel import panel_data

    pool = certlib.Pool.from_arrays([[0, 1, 0], [1, 1, 0]], [[3, 2, 1], [1, 2, 3]],
                                    names=["a", "b"], classes=[0, 1])
    store = LabelStore(tmp_path / "s.db")
    pid = store.open_project(pool, "tiny", policy="static-range")
    for _ in range(2):
        _after(store, pid, pool, SKIP)
    prog = store.progress(pid, pool)
    assert pool.row_ids[prog.next_row] not in prog.skipped  # the last row not skipped
    data = panel_data(prog, pool, "ana", _Names, tmp_path, ["0", "1"], "S", "U", "x", {})
    assert not data["row"]["no_skip"]
    after_skip = data["next"]["skip"]["row"]
    assert after_skip["no_skip"] and int(after_skip["key"]) in prog.skipped
    for c in ("c0", "c1"):  # a label leaves the others skipped: the next one is one of them
        nxt = data["next"][c]["row"]
        assert nxt is None or nxt["no_skip"] == (int(nxt["key"]) in prog.skipped)
    assert [a["value"] for a in data["answers"][:2]] == ["0", "1"]
