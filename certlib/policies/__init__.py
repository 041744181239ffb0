"""Acquisition policies (SPEC section 8): which unread row to read next.

Modules: `base` (the `Policy` protocol, `PolicyContext` and the order
machinery), `heuristics` (the paper's static/adaptive range and pair-sum
orders, random), `baselines` (VMA, Model Selector), `coverage`
(``expected-coverage``) and its `label_model`.  This module is the registry:
sessions, replays, the store and the command line find a policy by its name.

Names are looked up in this order: the built-in policies and those added with
`register_policy` (`POLICIES`), then the policies other packages install under
the entry-point group ``certlib.policies``, e.g. in their ``pyproject.toml``::

    [project.entry-points."certlib.policies"]
    my-policy = "my_package.policies:MyPolicy"

An entry point's object is a factory called without arguments (usually the
policy class) that returns a `Policy` named like the entry point.  Entry
points are discovered on the first call of `policy_names` or the first lookup
of a name that is not registered, never at import; an entry point's object is
imported only when its policy is asked for, so a broken one raises a
`CertlibError` naming it then and does not disturb the other policies.  An
entry point cannot replace a registered name.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import cast

from ..errors import ParameterError
from .base import Policy, PolicyContext, order_by_score, pair_scores
from .baselines import VMA, ModelSelector
from .coverage import ExpectedCoverage
from .heuristics import AdaptivePairSum, AdaptiveRange, RandomOrder, StaticPairSum, StaticRange

__all__ = ["ENTRY_POINT_GROUP", "POLICIES", "Policy", "PolicyContext", "get_policy",
           "order_by_score", "pair_scores", "policy_names", "register_policy"]

ENTRY_POINT_GROUP = "certlib.policies"

# The built-in policies, in the order they are listed: the paper's (SPEC section 8),
# then expected-coverage.
POLICIES: dict[str, Callable[[], Policy]] = {
    "static-range": StaticRange,
    "static-pair-sum": StaticPairSum,
    "adaptive-range": AdaptiveRange,
    "adaptive-pair-sum": AdaptivePairSum,
    "random": RandomOrder,
    "vma": VMA,
    "model-selector": ModelSelector,
    "expected-coverage": ExpectedCoverage,
}

_MEMBERS = ("name", "start", "choose", "update", "static_order", "adaptive_order")

# entry points of the group by name, found on first use (see the module docstring)
_entry_points: dict[str, list[EntryPoint]] | None = None


def register_policy(name: str, factory: Callable[[], Policy]) -> None:
    """Make a policy available by name to sessions, replays and the command line.

    A registered name takes precedence over an installed entry point of the same name;
    registering a name again replaces its factory.  The policy is built and checked
    against the protocol when it is first asked for (`get_policy`).

    Parameters
    ----------
    name : str
        The name sessions, replays, the store and ``--policy`` use.
    factory : callable
        Called without arguments, returns a `Policy` whose ``name`` is ``name``
        (usually the policy class itself).

    Examples
    --------
    >>> import numpy as np
    >>> import certlib
    >>> from certlib.policies import POLICIES
    >>> from certlib.policies.base import OrderPolicy
    >>> class InFileOrder(OrderPolicy):
    ...     name = "in-file-order"
    ...     def make_order(self, ctx, active):
    ...         return np.arange(ctx.pool.n)
    >>> certlib.register_policy("in-file-order", InFileOrder)
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> certlib.replay(pool, policy="in-file-order").labels_read  # rows 0, 1, 2 certify B
    3
    >>> del POLICIES["in-file-order"]  # leave the registry as it was
    """
    POLICIES[name] = factory


def policy_names() -> tuple[str, ...]:
    """The names a policy can be asked for: registered names first, then those of
    installed entry points (group ``certlib.policies``) that are not registered.

    Returns
    -------
    tuple of str
        In listing order; the built-in policies come first.

    Examples
    --------
    >>> import certlib
    >>> certlib.policy_names()[:3]
    ('static-range', 'static-pair-sum', 'adaptive-range')
    >>> "expected-coverage" in certlib.policy_names()
    True
    """
    return tuple(POLICIES) + tuple(n for n in _installed() if n not in POLICIES)


def get_policy(policy: str | Policy) -> Policy:
    """The policy registered or installed as ``policy`` (a name), or ``policy`` itself
    once checked to follow the `Policy` protocol.

    Parameters
    ----------
    policy : str or Policy
        A name from `policy_names`, or a policy object.

    Returns
    -------
    Policy
        A fresh policy object for a name (the factory is called each time).

    Raises
    ------
    ParameterError
        An unknown name, an entry point that cannot be loaded or is provided twice,
        or an object that does not follow the protocol or carries another name.
    """
    if not isinstance(policy, str):
        return _checked(policy, f"policy {policy!r}")
    if policy in POLICIES:
        return _checked(POLICIES[policy](), f"the factory of policy {policy!r}", policy)
    if policy in _installed():
        return _from_entry_point(policy, _installed()[policy])
    raise ParameterError(f"policy must be one of {', '.join(policy_names())}; got {policy!r}")


def _installed() -> dict[str, list[EntryPoint]]:
    global _entry_points
    if _entry_points is None:
        found: dict[str, list[EntryPoint]] = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, []).append(ep)
        _entry_points = found
    return _entry_points


def _from_entry_point(name: str, eps: list[EntryPoint]) -> Policy:
    where = " and ".join(f"{ep.name} = {ep.value}" for ep in eps)
    what = f"policy {name!r} (entry point {where} in group {ENTRY_POINT_GROUP!r})"
    if len(eps) > 1:
        raise ParameterError(f"{what}: several installed packages provide this name; "
                             "uninstall all but one")
    try:
        factory = eps[0].load()
        pol = factory()
    except Exception as e:  # third-party code: any failure is reported with its origin
        raise ParameterError(f"{what} could not be loaded: {type(e).__name__}: {e}") from e
    return _checked(pol, what, name)


def _checked(pol: object, what: str, name: str | None = None) -> Policy:
    """Every caller relies on the whole protocol, so it is checked once, here; a policy
    found by ``name`` must carry that name (the store resumes a project by it)."""
    missing = [m for m in _MEMBERS if not hasattr(pol, m)]
    if missing:
        raise ParameterError(
            f"{what} does not follow the policy protocol: it lacks {', '.join(missing)} "
            "(subclass certlib.policies.Policy for the optional methods)")
    checked = cast(Policy, pol)  # every member of the protocol is present
    if not isinstance(checked.name, str) or not checked.name:
        raise ParameterError(f"{what} must have a non-empty string name; got {checked.name!r}")
    if name is not None and checked.name != name:
        raise ParameterError(f"{what} returned a policy named {checked.name!r}; a policy's "
                             "name must be the name it is registered under")
    return checked
