"""`certlib.teaching.bound_traces.replay_trace` (the replay page): its last step is
`certlib.replay`, and every step's bounds are the batch state of that prefix
(`Session.from_history`), on small random pools and on the demo pool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from certlib import Session, load_pool, policy_names, replay
from certlib.teaching.bound_traces import replay_trace, teaching_figure
from certlib.errors import LabelError

from conftest import KINDS, random_spec

ROOT = Path(__file__).resolve().parents[2]


def _check(pool, policy, rule, tolerance, seed, budget=None):
    tr = replay_trace(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed, budget=budget)
    r = replay(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed, budget=budget)
    assert (tr.order, tr.T, tr.selected, tr.certified) == (r.order, r.labels_read, r.selected,
                                                            r.certified)
    assert tr.excess[-1] == r.excess and tr.tolerance == r.tolerance
    assert len(tr.bounds) == len(tr.best_guess) == len(tr.status) == tr.T + 1
    history = [(row, pool.classes[pool.labels[row]]) for row in tr.rows]
    kw = dict(policy=policy, rule=rule, tolerance=tolerance, seed=seed, budget=budget)
    for t in range(tr.T + 1):
        s = Session.from_history(pool, history[:t], **kw)
        assert tr.bounds[t].dtype == np.int64 and np.array_equal(tr.bounds[t], s.L)
        assert np.array_equal(tr.lower(t), s.lower()) and np.array_equal(tr.upper(t), s.upper())
        assert (tr.best_guess[t], tr.status[t], tr.excess[t]) == (s.best_guess, s.status,
                                                                  s.excess)
        assert tr.certified_at(t) == s.certified
        assert not s.done or t == tr.T  # the replay stops at the first final state
    return tr


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("policy", policy_names())
def test_every_prefix_is_the_session_of_that_prefix(kind, policy):
    rng = np.random.default_rng(9)
    for _ in range(4):
        spec = random_spec(rng, kind, n=int(rng.integers(2, 9)))
        pool = spec.pool()
        rules = ["shared", "separate"] + (["centered"] if pool.is_binary or
                                          pool.shared_prediction else [])
        for rule in rules:
            _check(pool, policy, rule, 0, int(rng.integers(0, 3)))
        _check(pool, policy, "shared", 0.05, 1, budget=3)


def test_demo_pool_every_step():
    pool = load_pool(ROOT / "sample_data" / "demo_binary.csv")
    tr = _check(pool, "adaptive-pair-sum", "shared", 0, 0)
    assert tr.certified and tr.status[0] == "running"


def test_rival_bounds_are_the_float_paths_of_the_exact_bounds():
    pool = load_pool(ROOT / "sample_data" / "demo_binary.csv")
    tr = replay_trace(pool, policy="static-range")
    k = pool.winner()
    paths = tr.rival_bounds(k, 5)
    assert list(paths) == [c for j, c in enumerate(pool.names) if j != k]
    for name, (lo, hi) in paths.items():
        j = pool.names.index(name)
        assert len(lo) == len(hi) == 6
        assert lo == [float(tr.lower(t)[j, k]) / pool.scale for t in range(6)]
        assert hi == [float(tr.upper(t)[j, k]) / pool.scale for t in range(6)]
        assert all(a <= b for a, b in zip(lo, hi))
    assert len(next(iter(tr.rival_bounds(k).values()))[0]) == tr.T + 1


def test_unlabelled_pool_is_refused_with_the_row():
    pool = load_pool(ROOT / "sample_data" / "demo_unlabelled.csv")
    with pytest.raises(LabelError, match="fully labelled pool; row"):
        replay_trace(pool)


@pytest.mark.parametrize("policy", policy_names())
def test_teaching_figure_shared_path_stops_where_replay_stops(policy):
    """Figure 10's shared curve stops where `replay` (and the Replay page) stops, for
    static and adaptive policies alike; the order is a permutation of every row, and for a
    static policy every rule's stop is that rule's replay."""
    rng = np.random.default_rng(31)
    pools = [load_pool(ROOT / "sample_data" / "teaching_k4.csv")]
    pools += [random_spec(rng, kind, n=int(rng.integers(2, 9))).pool()
              for kind in KINDS for _ in range(3)]
    for pool in pools:
        f = teaching_figure(pool, policy=policy, with_certificate=False)
        assert sorted(f.order) == list(range(pool.n))
        r = replay(pool, policy=policy, rule="shared")
        assert f.paths["shared"].stop == r.labels_read
        assert list(f.order[:r.labels_read]) == [pool.position(x) for x in r.order]
        if not f.adaptive:
            for rule, path in f.paths.items():
                r = replay(pool, policy=policy, rule=rule)
                assert path.stop == (r.labels_read if r.certified else None), rule
