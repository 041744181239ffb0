"""Independent references from the definitions (STYLE rule 8, second kind), shared by
the brute-force tests: the AUGRC of a finite pool by the trapezoid integral averaged over
every order inside a confidence tie and by the mid-rank formula, and `Ref`, which
enumerates every completion of the unread labels.  Nothing here uses certlib's
formulas; `session_after` and `cases` only drive certlib from a spec."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from certlib import Session

from conftest import KINDS, random_spec

MAX_COMPLETIONS = 5000


def trapezoid_augrc(losses_in_order) -> Fraction:
    """Trapezoid AUGRC of one acceptance order: G(m/n) = (errors among the first m) / n,
    linearly interpolated between coverages m/n, m = 0..n (paper section 2, eq. (1))."""
    n = len(losses_in_order)
    g = [Fraction(0)]
    for loss in losses_in_order:
        g.append(g[-1] + Fraction(loss, n))
    return sum((g[m - 1] + g[m]) / 2 * Fraction(1, n) for m in range(1, n + 1))


def tie_averaged_augrc(conf, loss) -> Fraction:
    """Trapezoid AUGRC averaged over every acceptance order consistent with the
    confidences (descending; any order inside a tie)."""
    n = len(conf)
    total, count = Fraction(0), 0
    for perm in itertools.permutations(range(n)):
        if all(conf[perm[t]] >= conf[perm[t + 1]] for t in range(n - 1)):
            total += trapezoid_augrc([loss[i] for i in perm])
            count += 1
    return total / count


def midrank_weights(conf) -> list:
    """2 n^2 times the fd-shifts per-error weight (R_i - 1/2)/n^2, R_i the ascending
    mid-rank of the confidence: 2 R_i - 1, an integer."""
    out = []
    for c in conf:
        below = sum(1 for x in conf if x < c)
        tied = sum(1 for x in conf if x == c)
        twice_midrank = 2 * below + tied + 1  # 2 * (below + (tied + 1) / 2)
        out.append(twice_midrank - 1)
    return out


class Ref:
    """Reference quantities of one spec, from the definitions."""

    def __init__(self, spec, objective="augrc"):
        self.spec = spec
        self.K, self.n, self.C = spec.K, spec.n, len(spec.classes)
        self.P = np.array(spec.preds, dtype=np.int64)
        if objective == "augrc":
            self.W = np.array([midrank_weights(c) for c in spec.confs], dtype=np.int64)
            self.scale = 2 * self.n * self.n
        else:  # accuracy: number of errors, error rate = r / n (SPEC section 3)
            self.W = np.ones((self.K, self.n), dtype=np.int64)
            self.scale = self.n

    def completions(self, known: dict) -> np.ndarray:
        """(M, n) every labelling agreeing with ``known`` {row: label} (class codes)."""
        free = [i for i in range(self.n) if i not in known]
        grids = itertools.product(range(self.C), repeat=len(free))
        Y = np.empty((self.C ** len(free), self.n), dtype=np.int64)
        for i, v in known.items():
            Y[:, i] = v
        for m, vals in enumerate(grids):
            Y[m, free] = vals
        return Y

    def risks(self, Y: np.ndarray) -> np.ndarray:
        """(M, K) scaled risks 2 n^2 AUGRC_j = sum_i w_ji 1{pred_ji != y_i}."""
        loss = self.P[None, :, :] != Y[:, None, :]
        return (self.W[None, :, :] * loss).sum(axis=2)

    @staticmethod
    def winners(R: np.ndarray) -> np.ndarray:
        # smallest risk, earliest candidate on ties (SPEC section 1)
        return np.array([min(range(R.shape[1]), key=lambda j: (r[j], j)) for r in R])

    def pair_bounds(self, R):
        """L[j, k] = min over completions of r_j - r_k, H = max (shared labels)."""
        diff = R[:, :, None] - R[:, None, :]
        return diff.min(axis=0), diff.max(axis=0)

    def separate_lower(self, R):
        """L^sep[j, k] = min_y r_j - max_y r_k, labels chosen independently per candidate."""
        L = R.min(axis=0)[:, None] - R.max(axis=0)[None, :]
        np.fill_diagonal(L, 0)
        return L

    def centered_lower_doubled(self, Y, R):
        """2 x L^{sep,t}: subtract t_i b_i from every risk (b_i the queried bit: the label
        for binary pools, the error bit for one shared prediction), t_i the midpoint of
        the coefficients a_ji = (change of w_ji loss_ji when b_i goes 0 -> 1), then
        *separate*.  Doubled to stay integer."""
        spec = self.spec
        if spec.kind == "shared":
            bits = (self.P[0][None, :] != Y).astype(np.int64)  # error bit
            a = self.W.copy()
        else:  # binary: the label itself; loss at y=1 minus loss at y=0
            bits = Y
            a = self.W * ((self.P != 1).astype(np.int64) - (self.P != 0).astype(np.int64))
        two_t = a.min(axis=0) + a.max(axis=0)
        Rc = 2 * R - (bits * two_t[None, :]).sum(axis=1)[:, None]
        L = Rc.min(axis=0)[:, None] - Rc.max(axis=0)[None, :]
        np.fill_diagonal(L, 0)
        return L


def random_read(rng, ref, shrink=True):
    """A random subset of rows to read (as a list in a random order), enlarged until
    at most MAX_COMPLETIONS completions remain."""
    n = ref.n
    order = list(rng.permutation(n))
    m = int(rng.integers(0, n + 1))
    while shrink and ref.C ** (n - m) > MAX_COMPLETIONS:
        m += 1
    return [int(i) for i in order[:m]]


def session_after(spec, pool, rows, **kw):
    s = Session.start(pool, **kw)
    for i in rows:
        s = s.observe(i, spec.classes[spec.labels[i]])
    return s


def cases(kind, count, seed0):
    for s in range(count):
        rng = np.random.default_rng([seed0, KINDS.index(kind), s])
        yield rng, random_spec(rng, kind)
