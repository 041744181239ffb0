"""Prelabel lower bound (SPEC section 6, paper Theorem 3).

Before any label is read, reading row i can raise L_jk by at most its potential
gain |b_jki| (upper minus lower end of its term).  For target k and rival j the
deficit is ``D_jk = max(0, need_jk - L_jk(no labels))``, and ``m_jk`` is the
smallest number of largest potential gains summing to at least D_jk.  No
policy certifies target k with fewer than ``max_j m_jk`` labels, for any
labels, so ``prelabel = min_k max_{j != k} m_jk`` labels are necessary, and a
budget B < prelabel is ruled out.  Cost: one sort per pair, O(K^2 n log n).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..core.bounds import deficits, thresholds
from ..core.pair_terms import initial_lower, pair_potential
from .covering_exact import count_reaching, descending_cumsum

__all__ = ["PrelabelResult", "prelabel_bound"]

INFINITE = None  # m_jk when even every row cannot close the deficit (count_reaching)


@dataclass(frozen=True)
class PrelabelResult:
    """Which budgets can never suffice, before any label is read."""

    n: int
    K: int
    candidates: tuple
    tolerance: Fraction
    prelabel_bound: int
    target: str  # a target achieving the bound (earliest on ties)
    per_target: tuple  # labels needed at least to certify each candidate (None = never)
    pair_labels: tuple  # m[j][k]: labels needed to close rival j's deficit against k
    deficits: tuple  # D[j][k]

    @property
    def prelabel_fraction(self) -> float:
        return self.prelabel_bound / self.n

    def ruled_out(self, budget: int) -> bool:
        """True when no policy can certify within ``budget`` labels, whatever the labels."""
        return budget < self.prelabel_bound

    def to_dict(self) -> dict:
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


def prelabel_bound(pool, tolerance=0.0) -> PrelabelResult:
    """Prelabel lower bound of the shared test, with optional AUGRC tolerance."""
    K = pool.K
    th = thresholds(K, pool.scale, "shared", tolerance)
    L0 = initial_lower(pool, "shared")
    D = deficits(th.need, L0)
    m = [[0] * K for _ in range(K)]
    for j in range(K):
        for k in range(j + 1, K):
            if D[j, k] == 0 and D[k, j] == 0:
                continue
            pot = pair_potential(pool, j, k)
            cum = descending_cumsum(pot[pot > 0])  # one sort serves both directions
            m[j][k] = count_reaching(cum, int(D[j, k]))
            m[k][j] = count_reaching(cum, int(D[k, j]))
    per_target = []
    for k in range(K):
        col = [m[j][k] for j in range(K) if j != k]
        per_target.append(INFINITE if any(v is INFINITE for v in col) else max(col))
    finite = [(v, k) for k, v in enumerate(per_target) if v is not INFINITE]
    # the full-pool winner is certifiable with every label, so some target is finite
    bound, target = min(finite)
    return PrelabelResult(
        n=pool.n, K=K, candidates=pool.names, tolerance=th.tolerance,
        prelabel_bound=int(bound), target=pool.names[target], per_target=tuple(per_target),
        pair_labels=tuple(tuple(r) for r in m), deficits=tuple(tuple(int(x) for x in r) for r in D),
    )
