"""The policy registry (certlib.policies): names, the protocol check at the edge, and
what the store keeps."""

from __future__ import annotations

import numpy as np
import pytest

from certlib import CertlibError, Pool, Session, policies, replay
from certlib.policies import Policy, get_policy, policy_names, register_policy
from certlib.policies.heuristics import StaticRange
from certlib.store import LabelStore


def small_pool():
    return Pool.from_arrays([[0, 1, 1, 0], [1, 1, 0, 0]], [[4, 3, 2, 1], [1, 2, 3, 4]],
                            labels=[0, 1, 1, 0])


class ReverseOrder(Policy):
    """A third-party policy: rows from last to first, known in advance."""

    name = "reverse"

    def static_order(self, ctx):
        return np.arange(ctx.pool.n)[::-1].copy()

    def start(self, ctx):
        return self.static_order(ctx)

    def choose(self, state, view):
        return next(int(i) for i in state if not view.is_read(int(i)))

    def update(self, state, view, row, label):
        return state


def test_builtins_in_listed_order():
    assert policy_names()[:8] == ("static-range", "static-pair-sum", "adaptive-range",
                                  "adaptive-pair-sum", "random", "vma", "model-selector",
                                  "expected-coverage")
    for name in policy_names():
        assert get_policy(name).name == name


def test_registered_policy_is_used_by_name(monkeypatch):
    monkeypatch.setitem(policies.POLICIES, "reverse", ReverseOrder)
    assert "reverse" in policy_names()
    pool = small_pool()
    fast, slow = replay(pool, "reverse"), replay(pool, "reverse", vectorised=False)
    assert fast == slow and fast.policy == "reverse"
    assert fast.order[0] == pool.row_ids[-1]


def test_register_policy_adds_a_name(monkeypatch):
    monkeypatch.setattr(policies, "POLICIES", dict(policies.POLICIES))
    register_policy("reverse", ReverseOrder)
    assert policy_names()[-1] == "reverse"


def test_objects_must_follow_the_protocol():
    """A policy object lacking part of the protocol is refused with the missing names,
    before any caller needs them."""

    class Bare:
        name = "bare"

        def start(self, ctx):
            return None

        def choose(self, state, view):
            return 0

        def update(self, state, view, row, label):
            return state

    with pytest.raises(CertlibError, match="lacks static_order, adaptive_order"):
        Session.start(small_pool(), policy=Bare())

    class Nameless(ReverseOrder):
        name = ""

    with pytest.raises(CertlibError, match="name"):
        replay(small_pool(), Nameless())
    assert replay(small_pool(), ReverseOrder()).policy == "reverse"


def test_registered_name_must_be_the_policy_name(monkeypatch):
    """The store keeps ``policy.name`` and resumes by it, so the two must agree."""
    monkeypatch.setitem(policies.POLICIES, "backwards", ReverseOrder)
    with pytest.raises(CertlibError, match="'backwards'.*named 'reverse'"):
        get_policy("backwards")


def test_store_keeps_only_registered_names(tmp_path, monkeypatch):
    pool = small_pool()
    store = LabelStore(tmp_path / "s.db")
    pid = store.create_project(pool, "p.csv", policy=StaticRange())
    assert store.project(pid).policy == "static-range"
    with pytest.raises(CertlibError, match="registered policy name"):
        store.create_project(pool, "p.csv", policy=ReverseOrder())
    monkeypatch.setitem(policies.POLICIES, "reverse", ReverseOrder)
    pid = store.create_project(pool, "p.csv", policy=ReverseOrder())
    assert store.project(pid).policy == "reverse"
