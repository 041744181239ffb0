"""Duplicate candidates: two candidates the objective cannot tell apart (paper 000
section 6.1, "exact duplicate candidates are merged").

Two candidates are **the same candidate** for an objective when they predict the same
class on every row and carry the same integer weights (`certlib.core.weights`).  Their
risks ``r_j(y) = sum_i w_ji 1{pred_ji != y_i}`` are then equal on every completion of
the labels, so the later one in tie priority can never win: the earlier one wins
every tie (SPEC section 1).  Conversely, equal risks on every completion force equal
predictions and weights (every weight is at least 1, so a row where they differ shows
on some labelling).

* For AUGRC, equal weights mean the same **weak order** of the rows: the same ranking
  with ties in the same places.  A tie block at sorted positions [s, e) weighs
  ``2n - s - e`` and a later block [s', e') has s < s' and e <= s' < e', so no two
  blocks share a weight; the weights give the blocks and their order back.  So the
  confidences themselves need not be equal (0.9/0.8/0.8 and 5/2/2 are the same
  candidate), but a single swapped pair of rows, or a tie broken, is a different one.
* For accuracy every weight is 1: equal predictions suffice.

The check is label-free, so a pool's duplicates are known before any label is read.
`merge_duplicates` drops the later members.  Under the shared rule the merged pool has
the same prelabel bound, minimum certificate and stopping test as the original: a
duplicate's pair terms are zero against the candidate it copies (it is out before the
first label) and equal to that candidate's against every other.  Policies that count
each copy (pair sums over every pair, votes, label models) can read rows in another
order, and the separate and centered rules (SPEC section 5) cannot dismiss a copy of
the winner before its risk is pinned down; paper 000 merges for all three rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ColumnError
from .pool import DerivedFrom, Pool

__all__ = ["DuplicateGroup", "Duplicates", "find_duplicates", "merge_duplicates"]

_OBJECTIVE_WORDS = {"augrc": "AUGRC", "accuracy": "accuracy"}


def _and(names: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@dataclass(frozen=True)
class DuplicateGroup:
    """Candidates that are the same candidate for the pool's objective.

    Parameters
    ----------
    indices : tuple of int
        Their candidate indices, ascending: the first is the one kept, the one that
        wins every tie.
    names : tuple of str
        Their names, in the same order.
    objective : str
        The objective under which they are the same (``"augrc"`` or ``"accuracy"``).
    """

    indices: tuple[int, ...]
    names: tuple[str, ...]
    objective: str

    @property
    def kept(self) -> str:
        """The name of the first member in tie priority, the only one that can win."""
        return self.names[0]

    @property
    def never_win(self) -> tuple[str, ...]:
        """The names of the later members: they can never win."""
        return self.names[1:]

    def message(self) -> str:
        """One sentence for people.

        Returns
        -------
        str
            E.g. ``"p0 and p1 are the same candidate for AUGRC: p1 can never win (p0
            comes first in tie priority)"``.
        """
        later = self.never_win
        return (f"{_and(self.names)} are the same candidate for "
                f"{_OBJECTIVE_WORDS.get(self.objective, self.objective)}: {_and(later)} "
                f"can never win ({self.kept} comes first in tie priority)")

    def to_dict(self) -> dict[str, Any]:
        """The group as JSON-ready values.

        Returns
        -------
        dict
            ``candidates``, ``kept``, ``never_win`` and ``message``.
        """
        return {"candidates": list(self.names), "kept": self.kept,
                "never_win": list(self.never_win), "message": self.message()}


@dataclass(frozen=True)
class Duplicates:
    """The duplicate candidates of a pool (`find_duplicates`).

    Parameters
    ----------
    groups : tuple of DuplicateGroup
        One per set of two or more candidates that are the same, ordered by their first
        member; empty when every candidate differs.
    objective : str
        The pool's objective.
    K : int
        The pool's number of candidates.
    """

    groups: tuple[DuplicateGroup, ...]
    objective: str
    K: int

    @property
    def found(self) -> bool:
        """Whether some candidates are duplicates."""
        return bool(self.groups)

    @property
    def never_win(self) -> tuple[str, ...]:
        """The names of every candidate that can never win (the later members), in
        candidate order."""
        return tuple(sorted((n for g in self.groups for n in g.never_win),
                            key=self._order().__getitem__))

    @property
    def kept_indices(self) -> tuple[int, ...]:
        """The indices of the candidates a merge keeps, ascending."""
        drop = {j for g in self.groups for j in g.indices[1:]}
        return tuple(j for j in range(self.K) if j not in drop)

    def _order(self) -> dict[str, int]:
        return {n: j for g in self.groups for j, n in zip(g.indices, g.names)}

    def message(self) -> str:
        """The groups' sentences, one per line; empty when there is none.

        Returns
        -------
        str
            `DuplicateGroup.message` of each group, joined by newlines.
        """
        return "\n".join(g.message() for g in self.groups)

    def to_dict(self) -> list[dict[str, Any]]:
        """The groups as JSON-ready values (the command line's ``duplicates`` key).

        Returns
        -------
        list of dict
            `DuplicateGroup.to_dict` of each group; empty when there is none.
        """
        return [g.to_dict() for g in self.groups]


def find_duplicates(pool: Pool) -> Duplicates:
    """The groups of candidates that are the same candidate for the pool's objective.

    Same predictions on every row and the same integer weights (for AUGRC: the same
    confidence order, ties in the same places; for accuracy: the predictions alone).
    Labels play no part.

    Parameters
    ----------
    pool : Pool
        The pool.

    Returns
    -------
    Duplicates
        The groups, each listing the kept candidate first (the earliest in tie
        priority).

    Examples
    --------
    >>> from certlib import Pool, find_duplicates
    >>> pool = Pool.from_arrays([[0, 1, 1], [0, 1, 1], [0, 1, 1]],
    ...                         [[0.9, 0.5, 0.5], [7, 2, 2], [0.9, 0.6, 0.5]],
    ...                         names=["p0", "p1", "p2"])
    >>> dup = find_duplicates(pool)
    >>> print(dup.message())
    p0 and p1 are the same candidate for AUGRC: p1 can never win (p0 comes first in tie priority)
    >>> dup.never_win, dup.kept_indices
    (('p1',), (0, 2))
    """
    buckets: dict[bytes, list[list[int]]] = {}
    members: list[list[int]] = []
    for j in range(pool.K):
        pred = np.ascontiguousarray(pool.preds[j])
        weight = np.ascontiguousarray(pool.weights[j])
        h = hashlib.blake2b(digest_size=16)
        h.update(pred.tobytes())
        h.update(weight.tobytes())
        bucket = buckets.setdefault(h.digest(), [])
        # the digest only proposes; equality is checked exactly
        same = next((g for g in bucket if np.array_equal(pool.preds[g[0]], pred)
                     and np.array_equal(pool.weights[g[0]], weight)), None)
        if same is None:
            same = [j]
            bucket.append(same)
            members.append(same)
        else:
            same.append(j)
    groups = tuple(DuplicateGroup(tuple(g), tuple(pool.names[j] for j in g), pool.objective)
                   for g in members if len(g) > 1)
    return Duplicates(groups, pool.objective, pool.K)


def merge_duplicates(pool: Pool) -> Pool:
    """The pool without the candidates that can never win (`find_duplicates`).

    The kept candidates stay in their order (the tie priority), with the rows, row ids,
    labels, class set, objective and display columns unchanged.  A pool whose first
    candidates are derived from ``prob_`` columns keeps that provenance
    (`certlib.core.pool.DerivedFrom`) for the derived candidates that still lead the
    pool; when a merge drops one of them before another, the survivors are hashed by
    their confidences instead.

    Parameters
    ----------
    pool : Pool
        The pool.

    Returns
    -------
    Pool
        A new pool with one candidate per group; ``pool`` itself when there is no
        duplicate.

    Raises
    ------
    ColumnError
        When every candidate is the same: one would be left, and a pool needs two.

    Examples
    --------
    >>> from certlib import Pool, merge_duplicates, certify
    >>> pool = Pool.from_arrays([[0, 1, 0], [0, 1, 0], [1, 1, 0]],
    ...                         [[3, 2, 1], [0.3, 0.2, 0.1], [3, 2, 1]],
    ...                         labels=[0, 1, 0], names=["a", "b", "c"])
    >>> merged = merge_duplicates(pool)
    >>> merged.names, merged.n, merged.labels.tolist()
    (('a', 'c'), 3, [0, 1, 0])
    >>> certify(merged).winner == certify(pool).winner == "a"
    True
    """
    dup = find_duplicates(pool)
    if not dup.found:
        return pool
    keep = list(dup.kept_indices)
    if len(keep) < 2:
        raise ColumnError(
            f"every candidate of the pool is the same candidate for "
            f"{_OBJECTIVE_WORDS.get(pool.objective, pool.objective)}: merged, only "
            f"{pool.names[0]!r} is left, and it wins with no label read; a pool needs at "
            "least two candidates to choose between")
    names = tuple(pool.names[j] for j in keep)
    derived = _derived_after(pool.derived, names)

    def rows(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        out = np.ascontiguousarray(a[keep])
        out.setflags(write=False)
        return out

    # the kept candidates' predictions hold every distinct prediction row of the pool,
    # so shared_prediction does not change
    return dataclasses.replace(pool, names=names, preds=rows(pool.preds),
                               confs=rows(pool.confs), weights=rows(pool.weights),
                               derived=derived)


def _derived_after(derived: DerivedFrom | None, names: tuple[str, ...]) -> DerivedFrom | None:
    """The provenance of the merged pool: the derived candidates that still lead it, in
    the rule's order (the hash stands for them only as a prefix of the rule's scores)."""
    if derived is None:
        return None
    lead = 0
    while lead < len(derived.candidates) and lead < len(names) \
            and names[lead] == derived.candidates[lead]:
        lead += 1
    kept_derived = [n for n in names if n in derived.candidates]
    if lead == 0 or len(kept_derived) != lead:
        return None
    return DerivedFrom(derived.probabilities, derived.columns, derived.candidates[:lead],
                       derived.rule)
