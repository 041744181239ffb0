"""Discern: certified no-regression verdicts for a model update (SPEC section 11).

Pay labels only where incumbent and candidate disagree; verdicts hold at
every stopping time.  No streamlit, no global side effects on import.

Public API (SPEC section 10):

* :func:`prpl_eb` - the PrPl-EB confidence sequence (vectorised);
  :class:`PrplEBState` its streaming form.
* :func:`audit` - the two-tier audit in one vectorised call;
  :class:`AuditState` the same audit one item at a time (``observe``).
* :func:`synthetic_stream` - a simulated stream with a known disagreement rate and
  regression (:class:`SyntheticStream`), to try an audit before paying for labels.
* :func:`compare_baselines` - Discern against uniform, PPI-style and active-testing
  labelling on one stream and one confidence sequence (paper section 6.4), as a
  :class:`BaselineComparison` of :class:`BaselineRow`.

Modules, one concept each:

* `certlib.audit.cs` - the PrPl-EB confidence sequence;
* `certlib.audit.betting` - the betting (hedged capital) confidence sequence;
* `certlib.audit.routing` - routing probabilities pi_t and the seeded draws U_t;
* `certlib.audit.core` - the audit engine (`run_stream`), its settings and result;
* `certlib.audit.window`, `certlib.audit.ledger`, `certlib.audit.baselines` - the
  windowed audit, the promotion ledger and the baselines of paper section 6;
* `certlib.audit.record` - the evidence record and its verifier;
* `certlib.audit.batch` - the one reader and checker of stream and batch files;
* `certlib.audit.store` - audit projects in the SQLite label store (`AuditStore`),
  routing each item to labelling when it arrives;
* `certlib.audit.status` - a project's verdict and queue, recomputed from the store;
* `certlib.audit.cli`, `certlib.audit.project_cli` - ``certlib audit``,
  ``certlib verify-audit`` and ``certlib audit-project``;
* `certlib.audit.synthetic` - simulated streams, for trying an audit, tests and
  benchmarks.
"""

from .baselines import BaselineComparison, BaselineRow, compare_baselines
from .betting import BettingState, betting_cs
from .core import AuditConfig, AuditResult, AuditState, Routed, SliceVerdict, TraceEntry, audit
from .cs import ConfidenceSequence, PrplEBState, prpl_eb
from .routing import DEFAULT_PI, Routing
from .synthetic import SyntheticStream, synthetic_stream

__all__ = [
    "prpl_eb", "ConfidenceSequence", "PrplEBState",
    "betting_cs", "BettingState",
    "audit", "AuditConfig", "AuditResult", "AuditState", "Routed", "SliceVerdict", "TraceEntry",
    "Routing", "DEFAULT_PI",
    "synthetic_stream", "SyntheticStream",
    "compare_baselines", "BaselineComparison", "BaselineRow",
]
