"""Roles, assignments and the hand-out of rows to several annotators of one project
(certlib.labelling.team): a real SQLite file, a clock the test moves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib import Pool, load_pool
from certlib.errors import ParameterError
from certlib.labelling.session import Session
from certlib.labelling.store import DuplicateLabelError, LabelStore
from certlib.labelling.team import (HOLD_SECONDS, Roles, TeamStore, hand_out,
                                    lookahead_for)

DEMO = "sample_data/demo_unlabelled.csv"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def demo(tmp_path):
    pool = load_pool(DEMO)
    store = LabelStore(tmp_path / "labels.db")
    clock = Clock()
    return pool, store, TeamStore(store.path, clock=clock), clock


def test_roles_from_mapping_and_refusals():
    roles = Roles.from_mapping({"leads": ["Lea@Example.org"],
                                "annotators": ["ana@example.org", "lea@example.org"]})
    assert roles.role_of("lea@example.org") == "lead"  # a lead listed twice is a lead
    assert roles.role_of("ANA@example.org ") == "annotator"
    assert roles.role_of("bob@example.org") is None
    assert roles.role_of("") is None
    with pytest.raises(ParameterError, match="'annotator'"):
        Roles.from_mapping({"annotator": ["a@b.org"]})
    with pytest.raises(ParameterError, match="list of e-mail"):
        Roles.from_mapping({"leads": "a@b.org"})
    with pytest.raises(ParameterError, match="'ana'"):
        Roles.from_mapping({"annotators": ["ana"]})


def test_assignments_replace_and_survive_reopening(demo):
    pool, store, team, _ = demo
    team.assign(1, ["ana@example.org", "Bob@example.org"], by="lea@example.org")
    team.assign(2, ["ana@example.org"], by="lea@example.org")
    assert team.assigned(1) == ("ana@example.org", "bob@example.org")
    team.assign(1, ["bob@example.org"], by="lea@example.org")
    again = TeamStore(store.path)
    assert again.assigned(1) == ("bob@example.org",)
    assert again.projects_of("ana@example.org") == (2,)
    assert again.projects_of("bob@example.org") == (1,)
    LabelStore(store.path)  # the label store opens beside the team tables


def test_holds_run_out_unless_renewed(demo):
    _, _, team, clock = demo
    assert team.hold(1, "ana", "r1", ahead=["r2"])
    clock.now += HOLD_SECONDS - 1
    assert team.held_by_others(1, "bob") == {"r1", "r2"}
    assert team.hold(1, "ana", "r1", ahead=["r3"])  # renewed; r2 no longer ahead
    clock.now += HOLD_SECONDS - 1
    assert team.held_by_others(1, "bob") == {"r1", "r3"}
    assert team.current(1, "ana") == "r1"
    clock.now += 2
    assert team.held_by_others(1, "bob") == frozenset()
    assert team.current(1, "ana") is None
    assert team.hold(1, "bob", "r1")  # free again
    team.release(None, "bob")
    assert team.holders(1) == {}


def test_hand_out_never_gives_a_row_another_holds(demo):
    pool, store, team, _ = demo
    pid = store.open_project(pool, "demo", policy="adaptive-pair-sum")
    prog = store.resume(pid, pool)
    a = hand_out(prog, team.held_by_others(pid, "ana"))
    look = lookahead_for(prog, a, team.held_by_others(pid, "ana"))
    assert team.hold(pid, "ana", pool.row_ids[a],
                     [pool.row_ids[la.next_row] for la in look if la.next_row is not None])
    b = hand_out(prog, team.held_by_others(pid, "bob"))
    held = team.held_by_others(pid, "bob")
    assert b is not None and pool.row_ids[b] not in held
    assert pool.row_ids[a] in held
    # ana's row stays hers, whatever the policy would ask now
    assert hand_out(prog, team.held_by_others(pid, "ana"), team.current(pid, "ana")) == a


def test_two_annotators_interleaved_save_every_answer(demo):
    """Two annotators answering in turn, each on the row handed to them: every answer is
    saved (no duplicate label, no refusal) and the session is the one their labels give."""
    pool, store, team, _ = demo
    truth = load_pool("sample_data/demo_binary.csv")
    pid = store.open_project(pool, "demo", policy="adaptive-pair-sum", tolerance=0)
    people = ["ana@example.org", "bob@example.org"]
    on_screen: dict[str, int | None] = {}
    saved = 0
    for step in range(60):
        prog = store.resume(pid, pool)
        if prog.session.done:
            break
        for who in people:  # both draw their page, then one answers
            held = team.held_by_others(pid, who)
            r = hand_out(prog, held, team.current(pid, who))
            on_screen[who] = r
            if r is not None:
                ahead = [la.next_row for la in lookahead_for(prog, r, held)]
                assert team.hold(pid, who, pool.row_ids[r],
                                 [pool.row_ids[x] for x in ahead if x is not None])
        assert on_screen[people[0]] != on_screen[people[1]] or on_screen[people[0]] is None
        who = people[step % 2]
        r = on_screen[who]
        if r is None:
            continue
        try:
            store.append_label(pid, pool.row_ids[r], truth.classes[truth.labels[r]], who,
                               pool=pool)
        except DuplicateLabelError:  # pragma: no cover - the failure this test catches
            pytest.fail(f"row {pool.row_ids[r]} handed to two annotators")
        saved += 1
    prog = store.resume(pid, pool)
    assert saved == prog.session.t > 0
    fresh = Session.start(pool, policy="adaptive-pair-sum", tolerance=0)
    for e in prog.labels:
        fresh = fresh.observe(pool.position(e.row_id), e.label)
    assert np.array_equal(fresh.lower(), prog.session.lower())
    assert {e.annotator for e in prog.labels} == set(people)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_hand_out_properties(data):
    """On small random pools: the row handed out is unread and held by nobody else, it is
    the current row when that is unread and free, and None only when the session is done
    or every unread row is held by another (brute force over the rows)."""
    n = data.draw(st.integers(3, 9))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    pool = Pool.from_arrays(rng.integers(0, 2, size=(2, n)), rng.random((2, n)),
                            names=["a", "b"], classes=[0, 1])
    s = Session.start(pool, policy="adaptive-pair-sum", tolerance=0)
    for r in data.draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True)):
        if s.done:
            break
        s = s.observe(r, int(rng.integers(0, 2)))

    class P:  # the parts of Progress hand_out reads
        session = s
        skipped = ()
    held = data.draw(st.sets(st.integers(0, n - 1)))
    current = data.draw(st.one_of(st.none(), st.integers(0, n - 1)))
    got = hand_out(P, held, current)  # type: ignore[arg-type]
    unread = {r for r in range(n) if not s.is_read(r)}
    if got is None:
        assert s.done or unread <= held
    else:
        assert got in unread and got not in held
        if current is not None and current in unread and current not in held:
            assert got == current


def test_the_budget_is_kept_by_the_store_and_the_hand_out(demo):
    """Annotators of a team, each on a row of their own, cannot read past the budget: the
    store refuses the label beyond it in its write transaction, and no row is handed out
    once the session is done."""
    from certlib.labelling.store import BudgetUsedError

    pool, store, team, _ = demo
    pid = store.open_project(pool, "demo", budget=2)
    prog = store.resume(pid, pool)
    a = hand_out(prog, [])
    b = hand_out(prog, [pool.row_ids[a]])
    c = hand_out(prog, [pool.row_ids[a], pool.row_ids[b]])
    for r in (a, b):
        store.append_label(pid, pool.row_ids[r], pool.classes[0], "ana", pool=pool)
    with pytest.raises(BudgetUsedError, match="budget of 2 labels is used up"):
        store.append_label(pid, pool.row_ids[c], pool.classes[0], "bob", pool=pool)
    prog = store.resume(pid, pool)
    assert prog.session.done and prog.session.t == 2
    assert hand_out(prog, [], current=pool.row_ids[c]) is None


def test_a_read_only_store_reads_the_team_and_holds_nothing(demo):
    from certlib.errors import StoreReadOnlyError

    pool, store, team, _ = demo
    team.assign(1, ["ana@example.org"], by="lea@example.org", pool_ref="sample:demo")
    ro = TeamStore(store.path, read_only=True)
    assert ro.read_only and not team.read_only
    assert ro.assigned(1) == ("ana@example.org",) and ro.pool_ref(1) == "sample:demo"
    assert ro.held_by_others(1, "ana") == frozenset()
    with pytest.raises(StoreReadOnlyError):
        ro.hold(1, "ana", 3)
