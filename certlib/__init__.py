"""certlib: exact certificates and budgets for selective model choice (paper 000),
and certified no-regression verdicts for model updates (paper 002).

    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> certlib.prelabel_bound(pool).prelabel_bound
    2
    >>> certlib.replay(pool).labels_read
    4

Importing certlib has no side effects, and loads nothing but itself: every public
name is imported on first use (PEP 562), so ``import certlib.labelling.session`` or the CLI's
start-up does not pay for polars (file reading) or the audit.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names a type checker sees; at run time they load on first use
    from . import audit as audit
    from .certificates.certificate import certify as certify
    from .certificates.certificate import certify_partial as certify_partial
    from .certificates.prelabel import prelabel_bound as prelabel_bound
    from .core.duplicates import find_duplicates as find_duplicates
    from .core.duplicates import merge_duplicates as merge_duplicates
    from .core.pool import Pool as Pool
    from .core.pool import pool_hash as pool_hash
    from .errors import CertlibError as CertlibError
    from .build import pool_from_estimators as pool_from_estimators
    from .build import pool_from_frame as pool_from_frame
    from .build import pool_from_predictions as pool_from_predictions
    from .columns import ColumnMap as ColumnMap
    from .io import load_pool as load_pool
    from .labelling.label_errors import full_pool_fragility as full_pool_fragility
    from .labelling.label_errors import label_error_margin as label_error_margin
    from .labelling.replay import replay as replay
    from .labelling.session import Session as Session
    from .planning.accuracy_plan import accuracy_labels as accuracy_labels
    from .planning.budget_answer import what_budget_buys as what_budget_buys
    from .planning.budget_plan import budget_map as budget_map
    from .planning.label_forecast import forecast as forecast
    from .policies import policy_names as policy_names
    from .policies import register_policy as register_policy

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "CertlibError": "errors",
    "Pool": "core.pool",
    "Session": "labelling.session",
    "certify": "certificates.certificate",
    "certify_partial": "certificates.certificate",
    "full_pool_fragility": "labelling.label_errors",
    "label_error_margin": "labelling.label_errors",
    "load_pool": "io",
    "pool_from_frame": "build",
    "pool_from_predictions": "build",
    "pool_from_estimators": "build",
    "ColumnMap": "columns",
    "pool_hash": "core.pool",
    "find_duplicates": "core.duplicates",
    "merge_duplicates": "core.duplicates",
    "policy_names": "policies",
    "register_policy": "policies",
    "prelabel_bound": "certificates.prelabel",
    "replay": "labelling.replay",
    "budget_map": "planning.budget_plan",
    "accuracy_labels": "planning.accuracy_plan",
    "forecast": "planning.label_forecast",
    "what_budget_buys": "planning.budget_answer",
}
_SUBMODULES: set[str] = {"audit"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES])
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:  # each name has its own type (see TYPE_CHECKING above)
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    if name in _EXPORTS:
        value = getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
