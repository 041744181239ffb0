"""certlib: exact certificates and budgets for selective model choice (paper 000),
and certified no-regression verdicts for model updates (paper 002).

Importing certlib has no side effects.
"""

from .errors import CertlibError
from .pool import Pool

__all__ = ["CertlibError", "Pool"]
__version__ = "0.1.0"
