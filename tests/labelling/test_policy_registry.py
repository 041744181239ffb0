"""The policy registry (certlib.policies): names, the protocol check at the edge, what
the store keeps, and policies installed by other packages (entry points)."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import numpy as np
import pytest

from certlib import CertlibError, Pool, Session, policies, replay
from certlib.policies import Policy, get_policy, policy_names, register_policy
from certlib.policies.heuristics import StaticRange
from certlib.labelling.store import LabelStore


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
    fast, slow = replay(pool, policy="reverse"), replay(pool, policy="reverse", vectorised=False)
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
        replay(small_pool(), policy=Nameless())
    assert replay(small_pool(), policy=ReverseOrder()).policy == "reverse"


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


# ------------------------------------------------- policies installed by other packages
PLUGIN = '''
# a third-party module: its policy is the one defined in this test file
from test_policy_registry import ReverseOrder as Reverse


def make_reverse():
    return Reverse()


def explode():
    raise RuntimeError("no licence file")


def not_a_policy():
    return object()


NOT_CALLABLE = 3
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Pretend packages installed ``entries`` (name -> value) in the entry-point group;
    returns a function that installs them and counts the discoveries."""
    (tmp_path / "certlib_test_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = []

    def install(entries):
        def fake_entry_points(*, group):
            calls.append(group)
            return [EntryPoint(name, value, group) for name, value in entries]

        monkeypatch.setattr(policies, "entry_points", fake_entry_points)
        monkeypatch.setattr(policies, "_entry_points", None)
        return calls

    return install


def test_entry_point_policy_is_discovered_lazily(installed):
    calls = installed([("reverse", "certlib_test_plugin:Reverse")])
    assert get_policy("static-range").name == "static-range"
    assert calls == []  # a registered name needs no discovery
    assert policy_names()[-1] == "reverse"
    assert calls == ["certlib.policies"]
    pol = get_policy("reverse")
    assert pol.name == "reverse"
    pool = small_pool()
    assert replay(pool, policy="reverse") == replay(pool, policy="reverse", vectorised=False)
    policy_names()
    assert calls == ["certlib.policies"]  # discovered once


def test_unknown_name_triggers_discovery(installed):
    calls = installed([("reverse", "certlib_test_plugin:make_reverse")])
    assert Session.start(small_pool(), policy="reverse").next_row() == 3
    assert calls == ["certlib.policies"]
    with pytest.raises(CertlibError, match="one of static-range.*reverse; got 'nope'"):
        get_policy("nope")


@pytest.mark.parametrize("name, value, message", [
    ("gone", "certlib_no_such_module:Policy", "ModuleNotFoundError"),
    ("typo", "certlib_test_plugin:Revers", "AttributeError"),
    ("explodes", "certlib_test_plugin:explode", "RuntimeError: no licence file"),
    ("number", "certlib_test_plugin:NOT_CALLABLE", "TypeError"),
    ("plain", "certlib_test_plugin:not_a_policy", "lacks name, start"),
    ("renamed", "certlib_test_plugin:Reverse", "named 'reverse'"),
])
def test_broken_entry_point_is_named(installed, name, value, message):
    """A broken entry point fails when its policy is asked for, with a CertlibError naming
    the entry point and the cause; the other policies are unaffected."""
    installed([(name, value), ("reverse", "certlib_test_plugin:Reverse")])
    assert name in policy_names()
    with pytest.raises(CertlibError) as err:
        get_policy(name)
    text = str(err.value)
    assert f"{name} = {value}" in text and "certlib.policies" in text and message in text
    assert get_policy("reverse").name == "reverse"
    assert replay(small_pool(), policy="adaptive-pair-sum").certified


def test_entry_points_cannot_replace_registered_names(installed):
    installed([("static-range", "certlib_test_plugin:Reverse"),
               ("reverse", "certlib_test_plugin:Reverse"),
               ("reverse", "certlib_test_plugin:make_reverse")])
    names = policy_names()
    assert names.count("static-range") == 1 and names.count("reverse") == 1
    assert isinstance(get_policy("static-range"), StaticRange)
    with pytest.raises(CertlibError, match="several installed packages"):
        get_policy("reverse")
