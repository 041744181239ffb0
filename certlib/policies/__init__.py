"""Acquisition policies (SPEC section 8): which unread row to read next.

Modules: `base` (the `Policy` protocol, `PolicyContext` and the order
machinery), `heuristics` (the paper's static/adaptive range and pair-sum
orders, random), `baselines` (VMA, Model Selector), `coverage`
(``expected-coverage``) and its `label_model`.  This module is the registry:
sessions, replays, the store and the command line find a policy by its name.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ParameterError
from .base import Policy, PolicyContext, order_by_score, pair_scores
from .baselines import VMA, ModelSelector
from .coverage import ExpectedCoverage
from .heuristics import AdaptivePairSum, AdaptiveRange, RandomOrder, StaticPairSum, StaticRange

__all__ = ["POLICIES", "Policy", "PolicyContext", "get_policy", "order_by_score", "pair_scores",
           "policy_names", "register_policy"]

# The built-in policies, in the order they are listed (SPEC section 8, then issue 4).
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


def register_policy(name: str, factory: Callable[[], Policy]) -> None:
    """Make a policy available by name to sessions, replays and the command line.
    ``factory()`` must return a `Policy` whose ``name`` is ``name``."""
    POLICIES[name] = factory


def policy_names() -> tuple:
    return tuple(POLICIES)


def get_policy(policy) -> Policy:
    """The policy registered as ``policy`` (a name), or ``policy`` itself once checked
    to follow the `Policy` protocol."""
    if not isinstance(policy, str):
        return _checked(policy, f"policy {policy!r}")
    try:
        factory = POLICIES[policy]
    except KeyError:
        raise ParameterError(
            f"policy must be one of {', '.join(POLICIES)}; got {policy!r}"
        ) from None
    pol = _checked(factory(), f"the factory of policy {policy!r}")
    if pol.name != policy:
        raise ParameterError(f"the factory of policy {policy!r} returned a policy named "
                             f"{pol.name!r}; a policy's name must be its registered name")
    return pol


def _checked(pol, what: str) -> Policy:
    """Every caller relies on the whole protocol, so it is checked once, here."""
    missing = [m for m in _MEMBERS if not hasattr(pol, m)]
    if missing:
        raise ParameterError(
            f"{what} does not follow the policy protocol: it lacks {', '.join(missing)} "
            "(subclass certlib.policies.Policy for the optional methods)")
    if not isinstance(pol.name, str) or not pol.name:
        raise ParameterError(f"{what} must have a non-empty string name; got {pol.name!r}")
    return pol
