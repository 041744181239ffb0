"""Prelabel lower bound (SPEC section 6, paper Theorem 3).

Before any label is read, reading row i can raise L_jk by at most its potential
gain |b_jki| (upper minus lower end of its term).  For target k and rival j the
deficit is ``D_jk = max(0, need_jk - L_jk(no labels))``, and ``m_jk`` is the
smallest number of largest potential gains summing to at least D_jk.  No
policy certifies target k with fewer than ``max_j m_jk`` labels, for any
labels, so ``prelabel = min_k max_{j != k} m_jk`` labels are necessary, and a
budget B < prelabel is ruled out.  Cost: one sort per pair, O(K^2 n log n), the
potentials of one pair computed as `pair_potential` does, in int32.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..core.bounds import deficits, thresholds
import numpy as np

from ..core.pair_terms import _INT32_SAFE, initial_lower
from ..core.pool import Pool
from .covering_exact import count_reaching

__all__ = ["PrelabelResult", "prelabel_bound"]

INFINITE = None  # m_jk when even every row cannot close the deficit (count_reaching)


@dataclass(frozen=True)
class PrelabelResult:
    """Which budgets can never suffice, before any label is read (paper Theorem 3).

    ``prelabel_bound`` labels are necessary for any policy and any labels; ``target``
    is a candidate achieving it (earliest on ties); ``per_target[k]`` the labels needed
    at least to certify candidate k (None: never, whatever the labels);
    ``pair_labels[j][k]`` (m_jk) the labels needed to close rival j's deficit against
    k, and ``deficits[j][k]`` (D_jk) that deficit in scaled-risk units.
    """

    n: int
    K: int
    candidates: tuple[str, ...]
    tolerance: Fraction
    prelabel_bound: int
    target: str  # a target achieving the bound (earliest on ties)
    per_target: tuple[int | None, ...]  # labels needed at least to certify each candidate
    pair_labels: tuple[tuple[int | None, ...], ...]  # m[j][k]
    deficits: tuple[tuple[int, ...], ...]  # D[j][k]

    @property
    def prelabel_fraction(self) -> float:
        """``prelabel_bound / n``: the share of the pool that must be read at least."""
        return self.prelabel_bound / self.n

    def ruled_out(self, budget: int) -> bool:
        """True when no policy can certify within ``budget`` labels, whatever the labels.

        Parameters
        ----------
        budget : int
            A number of labels.

        Returns
        -------
        bool
            ``budget < prelabel_bound``.
        """
        return budget < self.prelabel_bound

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: sizes, tolerance, the bound, its fraction and target, and the
        labels needed per target by candidate name."""
        return {
            "n": self.n,
            "K": self.K,
            "candidates": list(self.candidates),
            "tolerance": float(self.tolerance),
            "prelabel_bound": self.prelabel_bound,
            "prelabel_fraction": self.prelabel_fraction,
            "target": self.target,
            "per_target": dict(zip(self.candidates, self.per_target)),
        }


def prelabel_bound(pool: Pool, *, tolerance: float | Fraction = 0.0) -> PrelabelResult:
    """Prelabel lower bound of the shared test (SPEC section 6, paper Theorem 3).

    Uses no label: from the predictions and confidences alone it finds how many labels
    any policy must read, for any labels, before the stopping test can certify a
    candidate, so that a budget below it can be ruled out before labelling starts.

    Parameters
    ----------
    pool : Pool
        The pool; its labels, if any, are not used.
    tolerance : float or Fraction
        tau >= 0 on the objective's scale (e.g. AUGRC); certifying within tau needs
        fewer labels.

    Returns
    -------
    PrelabelResult
        The bound, a target achieving it, and the per-pair counts behind it.

    Raises
    ------
    ParameterError
        A negative or non-numeric tolerance.

    Examples
    --------
    >>> from certlib import Pool, prelabel_bound
    >>> pool = Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                         names=["A", "B"])
    >>> r = prelabel_bound(pool)
    >>> r.prelabel_bound, r.per_target, r.ruled_out(1)
    (2, (2, 2), True)
    """
    K = pool.K
    th = thresholds(K, pool.scale, rule="shared", tolerance=tolerance)
    L0 = initial_lower(pool, "shared")
    D = deficits(th.need, L0)
    m: list[list[int | None]] = [[0] * K for _ in range(K)]
    # weights are below 2n, so a potential (|w_j - w_k| or w_j + w_k) fits in int32
    # below n = 2**28, and int32 sorts in about half the time of int64 (the K^2 / 2
    # sorts are this bound's whole cost)
    W = pool.weights.astype(np.int32) if pool.n < _INT32_SAFE else pool.weights
    P = pool.preds
    for j in range(K):
        for k in range(j + 1, K):
            if D[j, k] == 0 and D[k, j] == 0:
                continue
            pot = np.where(P[j] == P[k], np.abs(W[j] - W[k]), W[j] + W[k])
            pot.sort()
            # one sort serves both directions; the zeros, last, change no count
            cum = np.cumsum(pot[::-1], dtype=np.int64)
            m[j][k] = count_reaching(cum, int(D[j, k]))
            m[k][j] = count_reaching(cum, int(D[k, j]))
    per_target: list[int | None] = []
    for k in range(K):
        col = [m[j][k] for j in range(K) if j != k]
        finite_col = [v for v in col if v is not None]
        per_target.append(INFINITE if len(finite_col) < len(col) else max(finite_col))
    finite = [(v, k) for k, v in enumerate(per_target) if v is not None]
    # the full-pool winner is certifiable with every label, so some target is finite
    bound, target = min(finite)
    return PrelabelResult(
        n=pool.n, K=K, candidates=pool.names, tolerance=th.tolerance,
        prelabel_bound=int(bound), target=pool.names[target], per_target=tuple(per_target),
        pair_labels=tuple(tuple(r) for r in m), deficits=tuple(tuple(int(x) for x in r) for r in D),
    )
