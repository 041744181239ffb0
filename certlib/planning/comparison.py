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
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..certificates.certificate import Certificate, certify
from ..certificates.covering_exact import fewest_largest
from ..errors import ParameterError
from ..core.pair_terms import check_rule, target_terms
from ..policies import policy_names
from ..certificates.prelabel import prelabel_bound
from ..labelling.replay import replay

__all__ = ["PolicyComparison", "PolicyRow", "RivalCost", "per_rival", "policy_comparison"]


# ------------------------------------------------------------------ policies
@dataclass(frozen=True)
class PolicyRow:
    """One policy's replays: one seed when its reading order did not depend on the seed,
    else one entry per seed (``randomised``)."""

    policy: str
    randomised: bool
    seeds: tuple  # the seeds replayed (one for a deterministic policy)
    labels_read: tuple  # per seed, ints
    certified: tuple  # per seed, bools
    selected: tuple  # per seed, candidate names

    @property
    def min(self) -> int:
        return min(self.labels_read)

    @property
    def max(self) -> int:
        return max(self.labels_read)

    @property
    def median(self) -> Fraction:
        """The exact median labels read over the seeds (a half-integer for an even count)."""
        v = sorted(self.labels_read)
        m = len(v) // 2
        return Fraction(v[m]) if len(v) % 2 else Fraction(v[m - 1] + v[m], 2)

    @property
    def all_certified(self) -> bool:
        return all(self.certified)


@dataclass(frozen=True)
class PolicyComparison:
    """Every policy's labels read on one labelled pool, beside the prelabel bound
    (necessary) and the minimum-certificate enclosure (sufficient in hindsight).

    The references are those of the shared rule (the tightest test); ``rule`` is the
    stopping rule the policies were replayed with."""

    n: int
    rule: str
    tolerance: Fraction
    seeds: tuple
    rows: tuple  # PolicyRow, in the order of `policy_names`
    prelabel_bound: int
    certificate: Certificate

    def row(self, policy: str) -> PolicyRow:
        for r in self.rows:
            if r.policy == policy:
                return r
        raise ParameterError(f"policy must be one of {[r.policy for r in self.rows]}; "
                             f"got {policy!r}")

    def to_records(self) -> list:
        """One dict per policy (JSON-ready; the median as a float)."""
        return [{"policy": r.policy, "randomised": r.randomised, "seeds": list(r.seeds),
                 "labels_min": r.min, "labels_median": float(r.median), "labels_max": r.max,
                 "certified": r.all_certified, "selected": sorted(set(r.selected))}
                for r in self.rows]


def policy_comparison(pool, tolerance=0.0, rule: str = "shared", seeds=(0, 1, 2, 3, 4),
                      policies=None, *, certificate: Certificate | None = None
                      ) -> PolicyComparison:
    """Replay every policy (default: `policy_names()`) on a fully labelled pool.

    Whether a policy is random is read from what it does, not from its type: it is
    replayed with the first two seeds, and if both replays read the same rows in the
    same order it is taken as deterministic and shown once (with ``seeds[0]``);
    otherwise it is replayed with every seed.  ``certificate``: a `certify` result for
    this pool and tolerance, to reuse (else it is computed).
    """
    check_rule(rule)
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ParameterError("seeds must hold at least one seed")
    names = tuple(policy_names() if policies is None else policies)
    pre = prelabel_bound(pool, tolerance=tolerance)
    cert = certify(pool, tolerance=tolerance) if certificate is None else certificate
    if cert.tolerance != pre.tolerance:
        raise ParameterError(f"certificate was computed with tolerance {cert.tolerance}, "
                             f"not {pre.tolerance}")
    rows = []
    for name in names:
        reps = [replay(pool, policy=name, rule=rule, tolerance=tolerance, seed=seeds[0])]
        if len(seeds) > 1:
            reps.append(replay(pool, policy=name, rule=rule, tolerance=tolerance, seed=seeds[1]))
        randomised = len(reps) > 1 and reps[0].order != reps[1].order
        if randomised:
            reps += [replay(pool, policy=name, rule=rule, tolerance=tolerance, seed=s)
                     for s in seeds[2:]]
        else:
            reps = reps[:1]
        used = seeds[:len(reps)]
        rows.append(PolicyRow(
            policy=reps[0].policy, randomised=randomised, seeds=used,
            labels_read=tuple(r.labels_read for r in reps),
            certified=tuple(r.certified for r in reps), selected=tuple(r.selected for r in reps)))
    return PolicyComparison(n=pool.n, rule=rule, tolerance=pre.tolerance, seeds=seeds,
                            rows=tuple(rows), prelabel_bound=pre.prelabel_bound,
                            certificate=cert)


# ------------------------------------------------------------------ per rival
@dataclass(frozen=True)
class RivalCost:
    """The labels needed to certify ``target`` against one ``rival``.

    ``alone``: the fewest rows whose labels beat this rival alone, in hindsight (exact:
    largest gains first).  ``prelabel``: the fewest that could do it whatever the labels
    (the prelabel pair count m_jk, a necessary number).  ``joint_lower``/``joint_upper``:
    the enclosure of the minimum certificate against every rival at once, the same for
    every rival; ``deficit``/``gain_total`` in the pool's integer units."""

    rival: str
    target: str
    deficit: int
    gain_total: int
    alone: int
    prelabel: int | None
    joint_lower: int
    joint_upper: int
    joint_exact: bool


def per_rival(pool, tolerance=0.0, *, certificate: Certificate | None = None) -> tuple:
    """For the certified candidate k and each rival j, the fewest labels that beat j alone.

    Against one rival the certificate is a covering problem with a single constraint
    ``sum_{i in S} g_ji >= D_j``, solved exactly by taking the largest gains first (paper
    000 section 4.1, "Two candidates"; `certlib.certificates.covering_exact.fewest_largest`).  The
    joint minimum C(y) (`certify`) must meet every rival's constraint with *one* set, so

        max_j alone_j  <=  C(y)  <=  sum_j alone_j.

    Both sides are right at once: the joint set must beat every rival, hence it is at
    least the largest single number, and often more, because the rows that beat one
    rival cheaply may do little against another (the paper's CIFAR-100/VGG example
    needs 3,949 and 3,109 labels against its rivals separately but 6,689-6,690 to beat
    both at once); yet one row can serve several rivals, so the joint set is usually
    smaller than the separate sets put together, and never larger than their union.
    A per-rival number is therefore not a share of the joint one, and the numbers need
    not add up to it.

    ``certificate``: a `certify` result for this pool and tolerance, to reuse.
    Returns one `RivalCost` per rival in candidate order (the target left out).
    """
    cert = certify(pool, tolerance=tolerance) if certificate is None else certificate
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
