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

Importing certlib has no side effects.
"""

from . import audit
from .certificate import certify
from .errors import CertlibError
from .io import load_pool
from .policies import policy_names, register_policy
from .pool import Pool, pool_hash
from .prelabel import prelabel_bound
from .replay import replay
from .session import Session

__all__ = ["CertlibError", "Pool", "Session", "audit", "certify", "load_pool", "policy_names",
           "pool_hash", "prelabel_bound", "register_policy", "replay"]
__version__ = "0.1.0"
