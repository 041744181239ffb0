"""Acquisition policies (SPEC section 8): which unread row to read next.

Modules: `base` (the protocol, `PolicyContext` and the order machinery),
`heuristics` (the paper's static/adaptive range and pair-sum orders, random),
`baselines` (VMA, Model Selector), `coverage` (``expected-coverage``) and its
`label_model`.  This module is the registry: a policy is found by its name.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ParameterError
from .base import Policy, PolicyContext, pair_scores, static_order
from .baselines import VMA, ModelSelector
from .coverage import ExpectedCoverage
from .heuristics import AdaptivePairSum, AdaptiveRange, RandomOrder, StaticPairSum, StaticRange

__all__ = ["POLICIES", "Policy", "PolicyContext", "get_policy", "pair_scores", "policy_names",
           "register_policy", "static_order"]

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


def register_policy(name: str, factory: Callable[[], Policy]) -> None:
    """Make a policy available by name to sessions, replays and the command line."""
    POLICIES[name] = factory


def policy_names() -> tuple:
    return tuple(POLICIES)


def get_policy(policy) -> Policy:
    if not isinstance(policy, str):
        return policy
    try:
        return POLICIES[policy]()
    except KeyError:
        raise ParameterError(
            f"policy must be one of {', '.join(POLICIES)}; got {policy!r}"
        ) from None
