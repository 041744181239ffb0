"""Discern: certified no-regression verdicts for a model update (SPEC section 11).

Pay labels only where incumbent and candidate disagree; verdicts hold at
every stopping time.  No streamlit, no global side effects on import.

Public API (SPEC section 10):

* :func:`prpl_eb` - the PrPl-EB confidence sequence (vectorised);
  :class:`PrplEBState` its streaming form.
* :func:`audit` - the two-tier audit in one vectorised call;
  :class:`AuditState` the same audit one item at a time (``observe``).
"""

from .core import AuditConfig, AuditResult, AuditState, Routed, SliceVerdict, TraceEntry, audit
from .cs import ConfidenceSequence, PrplEBState, prpl_eb
from .routing import DEFAULT_PI, Routing

__all__ = [
    "prpl_eb", "ConfidenceSequence", "PrplEBState",
    "audit", "AuditConfig", "AuditResult", "AuditState", "Routed", "SliceVerdict", "TraceEntry",
    "Routing", "DEFAULT_PI",
]
