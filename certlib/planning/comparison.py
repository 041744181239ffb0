"""What different routes to a certificate cost on one fully labelled pool.

Three yardsticks of the same choice, all in labels (paper 000, sections 4 and 6):

* the **prelabel bound** (`certlib.certificates.prelabel`): necessary before any label is read;
* the **minimum certificate** (`certlib.certify`): sufficient in hindsight, the
  fewest rows whose labels certify the choice;
* each **policy's replay** (`certlib.replay`): what a policy reads without knowing
  the labels, with the exact stopping test.

`policy_comparison` replays every policy (random ones over several seeds) next to
the two references; `per_rival` splits the certificate by rival: the fewest labels
that beat one rival alone, against the joint minimum that beats all at once.
Integers throughout; a median of an even number of seeds is a `Fraction`.

The tolerance is read once, at the entry of each function, as an exact `Fraction`
(`certlib.core.weights.exact_fraction`), and that value is what the prelabel bound,
the certificate and every replay receive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..certificates.certificate import Certificate, certify
from ..certificates.covering_exact import fewest_largest
from ..certificates.prelabel import prelabel_bound
from ..core.pair_terms import check_rule, target_terms
from ..core.pool import Pool
from ..core.weights import exact_fraction
from ..errors import ParameterError
from ..labelling.replay import replay
from ..policies import policy_names

__all__ = ["PolicyComparison", "PolicyRow", "RivalCost", "per_rival", "policy_comparison"]


# ------------------------------------------------------------------ policies
@dataclass(frozen=True)
class PolicyRow:
    """One policy's replays: one seed when its reading order did not depend on the seed,
    else one entry per seed (``randomised``).

    Attributes
    ----------
    policy : str
        The policy's registered name.
    randomised : bool
        Whether two seeds gave different reading orders.
    seeds : tuple of int
        The seeds replayed (one for a deterministic policy).
    labels_read : tuple of int
        Labels read per seed.
    certified : tuple of bool
        Whether each replay certified.
    selected : tuple of str
        The candidate each replay selected.
    """

    policy: str
    randomised: bool
    seeds: tuple[int, ...]
    labels_read: tuple[int, ...]
    certified: tuple[bool, ...]
    selected: tuple[str, ...]

    @property
    def min(self) -> int:
        """The fewest labels read over the seeds."""
        return min(self.labels_read)

    @property
    def max(self) -> int:
        """The most labels read over the seeds."""
        return max(self.labels_read)

    @property
    def median(self) -> Fraction:
        """The exact median labels read over the seeds (a half-integer for an even count)."""
        v = sorted(self.labels_read)
        m = len(v) // 2
        return Fraction(v[m]) if len(v) % 2 else Fraction(v[m - 1] + v[m], 2)

    @property
    def all_certified(self) -> bool:
        """Whether the replay certified with every seed."""
        return all(self.certified)


@dataclass(frozen=True)
class PolicyComparison:
    """Every policy's labels read on one labelled pool, beside the prelabel bound
    (necessary) and the minimum-certificate enclosure (sufficient in hindsight).

    The references are those of the shared rule (the tightest test); ``rule`` is the
    stopping rule the policies were replayed with.

    Attributes
    ----------
    n : int
        Rows in the pool.
    rule : str
        The stopping rule of the replays.
    tolerance : Fraction
        The objective tolerance tau of every number in the comparison.
    seeds : tuple of int
        The seeds asked for.
    rows : tuple of PolicyRow
        One row per policy, in the order of `policy_names` (or of ``policies``).
    prelabel_bound : int
        The prelabel bound (paper 000 section 6): no policy certifies with fewer labels.
    certificate : Certificate
        The enclosure of the minimum certificate C(y) (paper 000 section 4).
    """

    n: int
    rule: str
    tolerance: Fraction
    seeds: tuple[int, ...]
    rows: tuple[PolicyRow, ...]
    prelabel_bound: int
    certificate: Certificate

    def row(self, policy: str) -> PolicyRow:
        """The row of one policy.

        Parameters
        ----------
        policy : str
            A policy name as shown in ``rows`` (its registered name).

        Returns
        -------
        PolicyRow
            That policy's replays.

        Raises
        ------
        ParameterError
            When no row belongs to ``policy``.
        """
        for r in self.rows:
            if r.policy == policy:
                return r
        raise ParameterError(f"policy must be one of {[r.policy for r in self.rows]}; "
                             f"got {policy!r}")

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per policy (JSON-ready; the median as a float)."""
        return [{"policy": r.policy, "randomised": r.randomised, "seeds": list(r.seeds),
                 "labels_min": r.min, "labels_median": float(r.median), "labels_max": r.max,
                 "certified": r.all_certified, "selected": sorted(set(r.selected))}
                for r in self.rows]


def policy_comparison(pool: Pool, *, tolerance: float | Fraction = 0.0, rule: str = "shared",
                      seeds: Sequence[int] = (0, 1, 2, 3, 4),
                      policies: Sequence[str] | None = None,
                      certificate: Certificate | None = None) -> PolicyComparison:
    """Replay every policy on a fully labelled pool, beside the prelabel bound and C(y).

    Whether a policy is random is read from what it does, not from its type: it is
    replayed with the first two seeds, and if both replays read the same rows in the
    same order it is taken as deterministic and shown once (with ``seeds[0]``);
    otherwise it is replayed with every seed.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    tolerance : float or Fraction, default 0.0
        The objective tolerance tau >= 0 (0: the exact choice).
    rule : str, default "shared"
        The stopping rule of the replays ("shared", "separate" or "centered").
    seeds : sequence of int, default (0, 1, 2, 3, 4)
        Seeds of the random policies; at least one.
    policies : sequence of str, optional
        The policies to replay (default: every registered one, `policy_names()`).
    certificate : Certificate, optional
        A `certify` result for this pool and tolerance, to reuse (else it is computed).

    Returns
    -------
    PolicyComparison
        One `PolicyRow` per policy, the prelabel bound and the certificate.

    Raises
    ------
    ParameterError
        On a bad tolerance, rule or policy name, no seed, or a ``certificate`` computed
        with another tolerance.
    LabelError
        When a row has no label.

    Examples
    --------
    >>> import certlib
    >>> from certlib.planning.comparison import policy_comparison
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> cmp = policy_comparison(pool, policies=["static-range"], seeds=(0, 1))
    >>> cmp.prelabel_bound, cmp.certificate.lower, cmp.row("static-range").labels_read
    (2, 3, (4,))
    """
    check_rule(rule)
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ParameterError("seeds must hold at least one seed")
    tau = exact_fraction(tolerance)
    names = tuple(policy_names() if policies is None else policies)
    pre = prelabel_bound(pool, tolerance=tau)
    cert = certify(pool, tolerance=tau) if certificate is None else certificate
    if cert.tolerance != tau:
        raise ParameterError(f"certificate was computed with tolerance {cert.tolerance}, "
                             f"not {tau}")
    rows = []
    for name in names:
        reps = [replay(pool, policy=name, rule=rule, tolerance=tau, seed=seeds[0])]
        if len(seeds) > 1:
            reps.append(replay(pool, policy=name, rule=rule, tolerance=tau, seed=seeds[1]))
        randomised = len(reps) > 1 and reps[0].order != reps[1].order
        if randomised:
            reps += [replay(pool, policy=name, rule=rule, tolerance=tau, seed=s)
                     for s in seeds[2:]]
        else:
            reps = reps[:1]
        used = seeds[:len(reps)]
        rows.append(PolicyRow(
            policy=reps[0].policy, randomised=randomised, seeds=used,
            labels_read=tuple(r.labels_read for r in reps),
            certified=tuple(r.certified for r in reps), selected=tuple(r.selected for r in reps)))
    return PolicyComparison(n=pool.n, rule=rule, tolerance=tau, seeds=seeds,
                            rows=tuple(rows), prelabel_bound=pre.prelabel_bound,
                            certificate=cert)


# ------------------------------------------------------------------ per rival
@dataclass(frozen=True)
class RivalCost:
    """The labels needed to certify ``target`` against one ``rival``.

    Attributes
    ----------
    rival, target : str
        Candidate names.
    deficit : int
        D_j, what the rows read must add to the rival's bound, in the pool's integer
        units (paper 000 eq. (7)).
    gain_total : int
        The sum of every row's gain against this rival, in the same units.
    alone : int
        The fewest rows whose labels beat this rival alone, in hindsight (exact:
        largest gains first).
    prelabel : int or None
        The fewest that could do it whatever the labels (the prelabel pair count m_jk, a
        necessary number; None when no set of rows can).
    joint_lower, joint_upper : int
        The enclosure of the minimum certificate against every rival at once, the same
        for every rival.
    joint_exact : bool
        Whether that enclosure is exact (``joint_lower == joint_upper``, proved).
    """

    rival: str
    target: str
    deficit: int
    gain_total: int
    alone: int
    prelabel: int | None
    joint_lower: int
    joint_upper: int
    joint_exact: bool


def per_rival(pool: Pool, *, tolerance: float | Fraction = 0.0,
              certificate: Certificate | None = None) -> tuple[RivalCost, ...]:
    """For the certified candidate k and each rival j, the fewest labels that beat j alone.

    Against one rival the certificate is a covering problem with a single constraint
    ``sum_{i in S} g_ji >= D_j``, solved exactly by taking the largest gains first (paper
    000 section 4.1, "Two candidates"; `certlib.certificates.covering_exact.fewest_largest`).
    The joint minimum C(y) (`certify`) must meet every rival's constraint with *one* set, so

        max_j alone_j  <=  C(y)  <=  sum_j alone_j.

    Both sides are right at once: the joint set must beat every rival, hence it is at
    least the largest single number, and often more, because the rows that beat one
    rival cheaply may do little against another (the paper's CIFAR-100/VGG example
    needs 3,949 and 3,109 labels against its rivals separately but 6,689-6,690 to beat
    both at once); yet one row can serve several rivals, so the joint set is usually
    smaller than the separate sets put together, and never larger than their union.
    A per-rival number is therefore not a share of the joint one, and the numbers need
    not add up to it.

    Parameters
    ----------
    pool : Pool
        A fully labelled pool.
    tolerance : float or Fraction, default 0.0
        The objective tolerance tau >= 0.
    certificate : Certificate, optional
        A `certify` result for this pool and tolerance, to reuse (else it is computed).

    Returns
    -------
    tuple of RivalCost
        One per rival in candidate order (the target left out).

    Raises
    ------
    ParameterError
        On a bad tolerance, or a ``certificate`` that does not belong to this pool.
    LabelError
        When a row has no label.

    Examples
    --------
    >>> import certlib
    >>> from certlib.planning.comparison import per_rival
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> [(c.rival, c.target, c.alone, c.joint_lower) for c in per_rival(pool)]
    [('A', 'B', 3, 3)]
    """
    tau = exact_fraction(tolerance)
    cert = certify(pool, tolerance=tau) if certificate is None else certificate
    k = cert.selected_index
    # the certificate's own gains and deficits for target k (same calls as `certify`)
    _, gains = target_terms(pool, k, np.arange(pool.n), pool.labels)
    pre = prelabel_bound(pool, tolerance=cert.tolerance)
    out = []
    for j in range(pool.K):
        if j == k:
            continue
        d = int(cert.deficits[j])
        alone = fewest_largest(gains[j], d)
        if alone is None:  # cannot happen: the full pool certifies k
            raise ParameterError(f"certificate does not belong to this pool: rival "
                                 f"{pool.names[j]!r} cannot be beaten with every label")
        out.append(RivalCost(
            rival=pool.names[j], target=cert.selected, deficit=d,
            gain_total=int(gains[j].sum(dtype=np.int64)), alone=int(alone),
            prelabel=pre.pair_labels[j][k], joint_lower=cert.lower, joint_upper=cert.upper,
            joint_exact=cert.exact))
    return tuple(out)
