"""The policy contract (STYLE rule 7) for every registered policy, and the immutable
labelling session (STYLE rule 6, SPEC section 8, paper 000 Figure 6)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from certlib import CertlibError, Pool, Session, certify, policy_names, prelabel_bound, replay
from certlib.errors import LabelError, ParameterError
from certlib.policies import get_policy

from conftest import KINDS, random_spec

POLICIES = policy_names()


def medium_pool(seed, n=30, K=3, kind="binary", labelled=False):
    spec = random_spec(np.random.default_rng(seed), kind, n=n, K=K)
    return spec, spec.pool(labels="full" if labelled else None)


def snapshot(pool):
    return [a.copy() for a in (pool.preds, pool.confs, pool.weights, pool.labels)]


def session_view(s):
    return (s.t, s.L.tolist(), s.read_rows, s.history, s.certified, s.selected,
            s.best_guess, s.excess, s.status, s.eliminated, s.unread_mask().tolist())


# ------------------------------------------------------------------ the contract
def test_every_spec_policy_is_registered():
    """SPEC section 8 lists seven policies; all are registered (more are allowed)."""
    assert {"static-range", "static-pair-sum", "adaptive-range", "adaptive-pair-sum",
            "random", "vma", "model-selector"} <= set(POLICIES)


@pytest.mark.parametrize("name", POLICIES)
def test_policy_contract(name):
    """choose returns an unread row (also after rows read outside the policy's order), is
    pure (same answer twice; the session and pool unchanged), deterministic for a seed,
    and raises once every row is read."""
    for kind in KINDS:
        spec, pool = medium_pool(5, n=12, K=3, kind=kind)
        before = snapshot(pool)
        pol = get_policy(name)
        s = Session.start(pool, policy=name, seed=3)
        state = pol.start(s.policy_context)
        rng = np.random.default_rng(0)
        chosen = []
        while s.t < pool.n:
            view = session_view(s)
            row = pol.choose(state, s)
            assert pol.choose(state, s) == row  # pure
            assert session_view(s) == view
            assert isinstance(row, int) and 0 <= row < pool.n and not s.is_read(row)
            chosen.append(row)
            if s.t % 4 == 3:  # read some other unread row: the policy must cope
                row = int(rng.choice(np.flatnonzero(s.unread_mask())))
            code = spec.labels[row]
            s2 = s.observe(row, spec.classes[code])
            state = pol.update(state, s2, row, code)
            assert session_view(s) == view  # the old state is untouched
            s = s2
        with pytest.raises(CertlibError, match="read"):
            pol.choose(state, s)
        assert all((a == b).all() for a, b in zip(before, snapshot(pool)))
        # deterministic for a seed: a fresh run repeats the same choices
        again = Session.start(pool, policy=name, seed=3)
        st2 = pol.start(again.policy_context)
        rng = np.random.default_rng(0)
        chosen2 = []
        while again.t < pool.n:
            row = pol.choose(st2, again)
            chosen2.append(row)
            if again.t % 4 == 3:
                row = int(rng.choice(np.flatnonzero(again.unread_mask())))
            again = again.observe(row, spec.classes[spec.labels[row]])
            st2 = pol.update(st2, again, row, spec.labels[row])
        assert chosen2 == chosen


@pytest.mark.parametrize("name", POLICIES)
def test_policy_session_next_row_deterministic(name):
    """Two sessions with the same seed read the same rows; next_row never repeats a row and
    is None once the session is done."""
    spec, pool = medium_pool(7, n=40, K=4, kind="categorical")

    def run(seed):
        s = Session.start(pool, policy=name, seed=seed)
        while not s.done:
            r = s.next_row()
            assert not s.is_read(r)
            s = s.observe(r, spec.classes[spec.labels[r]])
        assert s.next_row() is None
        return s.read_rows

    a = run(11)
    assert a == run(11)
    assert len(set(a)) == len(a)


@pytest.mark.parametrize("name", POLICIES)
def test_policy_replay_certifies_full_pool_winner(name):
    """Paper Figure 6 / SPEC section 8: any policy plugged into the exact test certifies the
    full-pool winner at tau = 0 without budget, and reads at least C(y) >= prelabel rows."""
    for seed in range(12):
        kind = KINDS[seed % 3]
        spec, pool = medium_pool(100 + seed, n=int(5 + 3 * seed), K=2 + seed % 3, kind=kind,
                                 labelled=True)
        r = replay(pool, policy=name, seed=seed)
        assert r.certified and r.selected == r.full_pool_winner == pool.names[pool.winner()]
        assert r.excess == 0 and r.labels_read == len(r.order) <= pool.n
        assert len(set(r.order)) == len(r.order)
        assert prelabel_bound(pool).prelabel_bound <= certify(pool).lower <= r.labels_read


@pytest.mark.parametrize("name", [p for p in POLICIES if p in ("static-range", "static-pair-sum",
                                                                 "random", "vma")])
def test_order_policies_do_not_depend_on_labels(name):
    """SPEC section 8: static, random and VMA orders are fixed before any label."""
    spec, pool = medium_pool(9, n=25, K=3, kind="binary")
    orders = []
    for flip in (0, 1):
        s = Session.start(pool, policy=name, seed=4)
        pol = get_policy(name)
        st = pol.start(s.policy_context)
        rows = []
        while s.t < pool.n:
            r = pol.choose(st, s)
            rows.append(r)
            s = s.observe(r, (spec.labels[r] + flip) % 2)
            st = pol.update(st, s, r, (spec.labels[r] + flip) % 2)
        orders.append(rows)
    assert orders[0] == orders[1]


@pytest.mark.parametrize("name", POLICIES)
def test_announced_orders_are_the_reading_order(name):
    """The optional capability of the protocol: a policy that announces its order
    (``static_order``, or ``adaptive_order`` for the candidates still in play) reads its
    unread rows in exactly that order, whatever the labels; replays rely on it."""
    spec, pool = medium_pool(12, n=30, K=4, kind="binary")
    pol = get_policy(name)
    s = Session.start(pool, policy=name, seed=4)
    static = pol.static_order(s.policy_context)
    state = pol.start(s.policy_context)
    kinds = {"static-range": "static", "static-pair-sum": "static", "random": "static",
             "vma": "static", "adaptive-range": "adaptive", "adaptive-pair-sum": "adaptive",
             "model-selector": None, "expected-coverage": None}
    announced, actives = set(), set()
    while s.t < pool.n:
        row = pol.choose(state, s)
        active = tuple(k for k in range(pool.K) if k not in s.eliminated)
        actives.add(active)
        adaptive = pol.adaptive_order(s.policy_context, active)
        if static is not None:
            announced.add("static")
            assert row == next(int(i) for i in static if not s.is_read(int(i)))
        elif adaptive is not None:
            announced.add("adaptive")
            assert row == next(int(i) for i in adaptive if not s.is_read(int(i)))
        s2 = s.observe(row, spec.classes[spec.labels[row]])
        state = pol.update(state, s2, row, spec.labels[row])
        s = s2
    assert len(actives) > 1  # candidates were eliminated along the way
    if name in kinds:
        assert announced == ({kinds[name]} if kinds[name] else set())


def test_static_orders_from_definitions():
    """SPEC section 8: static-range reads by decreasing max_j a_ji - min_j a_ji,
    static-pair-sum by decreasing sum_{j<k} |a_ji - a_ki| (a_ji = w_ji (1 - 2 pred_ji)),
    ties by lowest row position."""
    for seed in range(20):
        spec, pool = medium_pool(200 + seed, n=15, K=int(2 + seed % 3), kind="binary",
                                 labelled=True)
        a = pool.weights * (1 - 2 * pool.preds)
        rng_score = a.max(axis=0) - a.min(axis=0)
        pair = sum(np.abs(a[j] - a[k]) for j in range(pool.K) for k in range(j + 1, pool.K))
        for name, score in (("static-range", rng_score), ("static-pair-sum", pair)):
            expect = sorted(range(pool.n), key=lambda i: (-score[i], i))
            r = replay(pool, policy=name)
            assert list(r.order) == expect[: r.labels_read], (name, seed)


# ---------------------------------------------------------------------- Session
def test_session_is_immutable_and_branches():
    """STYLE rule 6: observe returns a new state; observing from an old state (branching)
    leaves the newer states intact; the bound arrays are read-only."""
    spec, pool = medium_pool(1, n=10, K=3)
    lab = lambda i: spec.classes[spec.labels[i]]  # noqa: E731
    s0 = Session.start(pool)
    v0 = session_view(s0)
    s1 = s0.observe(4, lab(4))
    s2 = s1.observe(7, lab(7))
    v1, v2 = session_view(s1), session_view(s2)
    b1 = s1.observe(2, lab(2))  # branch from s1 while s2 exists
    b0 = s0.observe(7, 1 - spec.labels[7])  # branch from the start
    assert session_view(s0) == v0 and session_view(s1) == v1 and session_view(s2) == v2
    assert s2.read_rows == (4, 7) and b1.read_rows == (4, 2) and b0.read_rows == (7,)
    assert not b1.is_read(7) and s2.is_read(7) and not s2.is_read(2)
    c2 = s2.observe(2, lab(2))  # continue the original line after branching
    assert c2.read_rows == (4, 7, 2) and b1.read_rows == (4, 2)
    assert c2.L.tolist() == Session.from_history(pool, c2.history).L.tolist()
    assert b1.L.tolist() == Session.from_history(pool, b1.history).L.tolist()
    with pytest.raises(ValueError):
        s2.L[0, 1] = 99
    with pytest.raises(dataclasses.FrozenInstanceError):
        s2.t = 0


@pytest.mark.parametrize("name", POLICIES)
def test_from_history_reproduces_state(name):
    """STYLE rule 6: replaying the stored (row, label) log reproduces the state, policy
    state included (the next row agrees)."""
    spec, pool = medium_pool(3, n=20, K=3, kind="shared")
    s = Session.start(pool, policy=name, seed=2, tolerance=0.001)
    for _ in range(8):
        if s.done:
            break
        r = s.next_row()
        s = s.observe(r, spec.classes[spec.labels[r]])
    t = Session.from_history(pool, s.history, policy=name, seed=2, tolerance=0.001)
    assert session_view(t) == session_view(s)
    assert t.next_row() == s.next_row()


def test_observe_errors_name_the_row_and_label():
    """STYLE rule 3 / SPEC section 2: bad observations raise CertlibError subclasses whose
    message names the row or label; the state is unchanged afterwards."""
    spec, pool = medium_pool(2, n=6, K=2)
    s = Session.start(pool).observe(3, 1)
    view = session_view(s)
    for bad in (-1, 6, 100):
        with pytest.raises(ParameterError, match=str(bad)):
            s.observe(bad, 0)
    for bad in (1.0, "2", True, None):
        with pytest.raises(CertlibError):
            s.observe(bad, 0)
    with pytest.raises(ParameterError, match="3.*already"):
        s.observe(3, 0)
    for bad in (2, -1, "cat", 0.5):
        with pytest.raises(LabelError, match=repr(bad) if not isinstance(bad, str) else bad):
            s.observe(1, bad)
    assert session_view(s) == view
    assert s.observe(1, 0).read_rows == (3, 1)
    assert issubclass(LabelError, CertlibError) and issubclass(CertlibError, ValueError)


def test_observe_accepts_class_values_not_codes():
    """SPEC section 10 API: labels are class values; string classes work by value."""
    pool = Pool.from_arrays([["cat", "dog", "cat"], ["dog", "dog", "cat"]],
                            [[3, 2, 1], [1, 2, 3]], classes=["cat", "dog"])
    s = Session.start(pool).observe(0, "dog").observe_id(2, "cat")
    assert s.history == ((0, "dog"), (2, "cat"))
    with pytest.raises(LabelError, match="bird"):
        s.observe(1, "bird")


def test_start_parameter_errors():
    """Bad policy, rule, tolerance or budget: CertlibError naming the parameter."""
    _, pool = medium_pool(4, n=5)
    with pytest.raises(CertlibError, match="policy"):
        Session.start(pool, policy="nope")
    with pytest.raises(CertlibError, match="rule"):
        Session.start(pool, rule="joint")
    for tol in (-0.1, float("nan"), "abc", float("inf")):
        with pytest.raises(CertlibError, match="tolerance"):
            Session.start(pool, tolerance=tol)
    for b in (-1, 1.5, True, "3"):
        with pytest.raises(CertlibError, match="budget"):
            Session.start(pool, budget=b)


@pytest.mark.parametrize("budget", [0, 1, 3, 7])
def test_budget_stops_with_excess(budget):
    """SPEC section 5: when a budget runs out the session stops with status "budget
    exhausted", the candidate with the smallest worst-case excess, and that excess."""
    found = 0
    for seed in range(30):
        spec, pool = medium_pool(300 + seed, n=24, K=3, labelled=True)
        s = Session.start(spec.pool(labels=None), budget=budget)
        while not s.done:
            r = s.next_row()
            s = s.observe(r, spec.classes[spec.labels[r]])
        res = replay(pool, budget=budget)
        assert res.labels_read == s.t <= budget
        if s.certified:
            continue
        found += 1
        assert s.status == "budget exhausted" and s.t == budget and s.next_row() is None
        assert s.selected is None and s.best_guess in pool.names
        assert isinstance(s.excess, Fraction) and s.excess > 0
        assert (res.certified, res.selected, res.excess) == (False, s.best_guess, s.excess)
        # the excess is a guarantee: the full-pool gap of best_guess is within it
        vals = pool.objective_values()
        assert vals[pool.names.index(s.best_guess)] - min(vals) <= s.excess
    assert found > 0


def test_status_values():
    """Session.status: running, certified, certified within tolerance."""
    spec, pool = medium_pool(8, n=30, K=2, labelled=False)
    s = Session.start(pool)
    assert s.status == "running" and not s.done
    while not s.done:
        r = s.next_row()
        s = s.observe(r, spec.classes[spec.labels[r]])
    assert s.status == "certified"
    s = Session.start(pool, tolerance=0.5)  # AUGRC <= 1/2: everything is within 1/2
    assert s.status == "certified within tolerance" and s.t == 0 and s.selected == "c0"


def test_from_pool_labels_is_the_state_after_the_known_labels():
    """Session.from_pool_labels: the exact bounds after every label the pool holds,
    equal to stepping those labels in any order; on a fully labelled pool it
    certifies the full-pool winner."""
    from pathlib import Path

    from certlib import load_pool

    full = load_pool(Path(__file__).resolve().parents[2] / "sample_data" / "demo_binary.csv")
    s = Session.from_pool_labels(full)
    assert s.t == full.n and s.certified
    assert s.selected == replay(full).full_pool_winner
    rng = np.random.default_rng(0)
    labels = [full.classes[c] for c in full.labels]
    keep = rng.random(full.n) < 0.4
    part = Pool.from_arrays(
        [[full.classes[c] for c in row] for row in full.preds], full.confs,
        labels=[lab if k else None for lab, k in zip(labels, keep)], names=list(full.names))
    a = Session.from_pool_labels(part)
    order = rng.permutation(np.flatnonzero(keep))
    b = Session.from_history(part, [(int(i), labels[i]) for i in order])
    assert a.t == b.t == int(keep.sum())
    assert np.array_equal(a.lower(), b.lower()) and np.array_equal(a.upper(), b.upper())


def test_vectorised_replay_matches_session_when_a_duplicate_is_eliminated_at_start():
    # c3 duplicates c2, so c3 is eliminated before any label (L[3,2] = 0 >= 0).
    # Weights (hand): c0 [5,2,2], c1 [4,4,1], c2 = c3 [1,3,5].
    # Pair potentials: p01 [1,6,3], p02 [6,5,3], p12 [5,1,6]; over the active {c0,c1,c2}
    # the pair-sum is [12,12,12] -> order 0,1,2 (lowest position on ties).
    # Session reads rows 0, 1 and is certified; vectorised replay kept c3 in the scores
    # ([23,18,21] -> order 0,2,1) and reads rows 0, 2, 1.
    preds = [[1, 1, 1], [1, 0, 0], [0, 0, 1], [0, 0, 1]]
    confs = [[1., 0., 0.], [2., 2., 0.], [0., 2., 3.], [0., 2., 3.]]
    p = Pool.from_arrays(preds, confs, labels=[1, 1, 1])
    slow = replay(p, policy="adaptive-pair-sum", vectorised=False)
    fast = replay(p, policy="adaptive-pair-sum")
    assert slow.order == (0, 1)
    assert fast.order == slow.order
    assert fast.labels_read == slow.labels_read == 2


def test_huge_tolerance_does_not_crash():
    p = Pool.from_arrays([[0, 1], [1, 1]], [[.9, .1], [.1, .9]], labels=[0, 1])
    r = replay(p, tolerance=1e30)
    assert r.certified and r.labels_read == 0
