"""The budget-tolerance map (paper 000, section 6, Figures 7 and 8).

For one pool, a grid of AUGRC tolerances and a grid of budgets (label counts),
every cell is one of

* ``"ruled_out"``: the budget is below the prelabel bound of that tolerance (SPEC
  section 6): no policy certifies with so few labels, whatever the labels;
* ``"certified"``: the policy's replay (exact stopping test) certifies within the
  budget;
* ``"unresolved"``: neither, including every cell that is not ruled out when the
  pool has unlabelled rows (the replay needs every label), except a budget of n or more
  with the exact (shared) rule: with every label read its bounds are the objectives
  themselves, so the test certifies whatever the labels are (a walk-through found the
  budget-n cell amber, "the labels decide", forecast 100%).  The separate and centered
  rules can end "all labels read" uncertified, so there the cell stays unresolved.
  Nor when the labels the pool already holds certify at that tolerance (they count as
  read, as in the forecast): every budget from their number on is certified, exactly
  (a walk-through found such cells amber with a forecast of 100%).

**One replay per tolerance.**  ``replay(pool, budget=B).certified`` equals
``replay(pool).labels_read <= B`` for every built-in policy: a policy's choice of
the next row never depends on the budget (it sees the labels read, the bounds and
its own state, never the budget), so the run with budget B is the prefix of length
B of the unbudgeted run, and the run stops at the first certifying prefix.  The
tests check this cell by cell against ``replay(pool, budget=B)``.

Several pools (a list or a folder of pool files): budgets are then fractions of
each pool's n, and `MultiBudgetMap` gives Figure 7's counts per cell and Figure 8's
smallest tolerance per budget and pool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..errors import CertlibError, ParameterError

__all__ = ["BudgetMap", "DEFAULT_FRACTIONS", "DEFAULT_TOLERANCES", "MultiBudgetMap",
           "budget_map", "budget_map_many", "default_budgets"]

DEFAULT_TOLERANCES = (0, 0.0005, 0.001, 0.002, 0.005, 0.01)
DEFAULT_FRACTIONS = tuple(Fraction(i, 10) for i in range(11))
CELLS = ("ruled_out", "certified", "unresolved")
POOL_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")


def default_budgets(n: int) -> tuple:
    """floor(b n) for b = 0, .1, ..., 1 (exactly, in integers), duplicates dropped."""
    return tuple(dict.fromkeys(n * i // 10 for i in range(11)))


def _tolerances(tolerances) -> tuple:
    from ..core.weights import exact_fraction

    try:
        vals = [exact_fraction(t) for t in tolerances]
    except TypeError as e:
        raise ParameterError(f"tolerances must be a list of numbers >= 0; got {tolerances!r}") \
            from e
    if not vals:
        raise ParameterError("tolerances must name at least one tolerance")
    for t in vals:
        if t < 0:
            raise ParameterError(f"tolerances must be >= 0; got {float(t)!r}")
    return tuple(sorted(set(vals)))


def _budgets(budgets, n: int) -> tuple:
    if budgets is None:
        return default_budgets(n)
    out = []
    for b in budgets:
        if isinstance(b, bool) or not isinstance(b, int) and not (
                hasattr(b, "__index__") and not isinstance(b, float)):
            raise ParameterError(f"budgets must be whole numbers of labels in 0..{n}; got {b!r}")
        b = int(b)
        if not 0 <= b <= n:
            raise ParameterError(f"budgets must be whole numbers of labels in 0..{n}; got {b}")
        out.append(b)
    if not out:
        raise ParameterError("budgets must name at least one budget")
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class BudgetMap:
    """Paper Figure 7 for one pool: which (tolerance, budget) cells are ruled out,
    certified by the policy, or unresolved (module docstring)."""

    n: int
    policy: str
    rule: str
    seed: int
    tolerances: tuple  # Fractions, ascending
    budgets: tuple  # label counts, ascending
    prelabel: tuple  # one prelabel bound per tolerance
    labels_read: tuple | None  # the policy's replay per tolerance (None: unlabelled rows)
    certified: tuple | None  # whether each replay certified (False only for loose rules)
    cells: tuple  # cells[t][b] in CELLS
    selected: tuple | None = None  # the candidate each replay selected
    known: int = 0  # labels the pool already holds (they count as read)
    certified_now: tuple | None = None  # per tolerance: the known labels already certify

    @property
    def labelled(self) -> bool:
        return self.labels_read is not None

    def cell(self, tolerance_index: int, budget: int) -> str:
        """The cell of any budget (not only the grid's)."""
        if budget < self.prelabel[tolerance_index]:
            return "ruled_out"
        if self.labels_read is None:
            return ("certified" if self.certain_at(budget)
                    or self.known_certifies(tolerance_index, budget) else "unresolved")
        if self.certified[tolerance_index] and self.labels_read[tolerance_index] <= budget:
            return "certified"
        return "unresolved"

    def certain_at(self, budget: int) -> bool:
        """Whether ``budget`` certifies whatever the labels are: every row read, with the
        exact (shared) rule (module docstring)."""
        return budget >= self.n and self.rule == "shared"

    def known_certifies(self, tolerance_index: int, budget: int) -> bool:
        """Whether the labels already in the pool certify at that tolerance (exact) and
        ``budget`` covers them."""
        return (self.certified_now is not None and bool(self.certified_now[tolerance_index])
                and budget >= self.known)

    def smallest_tolerance(self, budget: int) -> Fraction | None:
        """Figure 8: the smallest grid tolerance whose stopping count fits in ``budget``
        labels; None when none does, or the pool has unlabelled rows and the budget
        neither reads every row (`certain_at`) nor covers known labels that already
        certify (`known_certifies`)."""
        for i, t in enumerate(self.tolerances):
            if self.cell(i, budget) == "certified":
                return t
        return None

    def smallest_open_tolerance(self, budget: int) -> Fraction | None:
        """The smallest grid tolerance that ``budget`` does not rule out (None: all are)."""
        for i, t in enumerate(self.tolerances):
            if budget >= self.prelabel[i]:
                return t
        return None

    def counts(self) -> dict:
        """How many cells of each kind."""
        out = dict.fromkeys(CELLS, 0)
        for row in self.cells:
            for c in row:
                out[c] += 1
        return out

    def to_dict(self) -> dict:
        return {
            "n": self.n, "policy": self.policy, "rule": self.rule, "seed": self.seed,
            "tolerances": [float(t) for t in self.tolerances],
            "budgets": list(self.budgets),
            "prelabel": list(self.prelabel),
            "labels_read": None if self.labels_read is None else list(self.labels_read),
            "certified": None if self.certified is None else list(self.certified),
            "selected": None if self.selected is None else list(self.selected),
            "known": self.known,
            "certified_now": None if self.certified_now is None else list(self.certified_now),
            "cells": [list(r) for r in self.cells],
            "smallest_tolerance": {
                str(b): _float_or_none(self.smallest_tolerance(b)) for b in self.budgets},
        }


def _float_or_none(x):
    return None if x is None else float(x)


def budget_map(pool, tolerances=DEFAULT_TOLERANCES, budgets=None, policy="static-range",
               rule: str = "shared", seed: int = 0, *, progress: Callable | None = None):
    """The budget-tolerance map of ``pool`` (module docstring).

    pool: a `Pool`, or several pools (a list of pools or of pool files, or a folder of
        pool files): then the result is a `MultiBudgetMap` (see `budget_map_many`, whose
        budgets are fractions of n).
    budgets: label counts (default floor(b n), b = 0, .1, ..., 1).
    progress: optional callable(fraction done in [0, 1]).
    """
    from ..core.pool import Pool

    if not isinstance(pool, Pool):
        return budget_map_many(pool, tolerances, budgets, policy=policy, rule=rule, seed=seed,
                               progress=progress)
    from ..core.pair_terms import check_rule
    from ..policies import get_policy
    from ..certificates.prelabel import prelabel_bound
    from ..labelling.replay import replay

    check_rule(rule)
    pol_name = get_policy(policy).name
    tols = _tolerances(tolerances)
    bud = _budgets(budgets, pool.n)
    pre, runs = [], []
    for i, t in enumerate(tols):
        pre.append(prelabel_bound(pool, tolerance=t).prelabel_bound)
        if pool.fully_labelled:
            runs.append(replay(pool, policy=policy, rule=rule, tolerance=t, seed=seed))
        if progress is not None:
            progress((i + 1) / len(tols))
    labelled = pool.fully_labelled
    now = None
    if not labelled:  # do the labels already known certify? (exact, one bound for all)
        from ..core.bounds import batch_lower, certified_mask, thresholds
        from ..core.pool import UNREAD

        L = batch_lower(pool, np.flatnonzero(pool.labels != UNREAD), rule=rule)
        now = tuple(bool(certified_mask(L, thresholds(pool.K, pool.scale, rule, t)).any())
                    for t in tols)
    m = BudgetMap(
        n=pool.n, policy=pol_name, rule=rule, seed=int(seed), tolerances=tols, budgets=bud,
        prelabel=tuple(pre),
        labels_read=tuple(r.labels_read for r in runs) if labelled else None,
        certified=tuple(r.certified for r in runs) if labelled else None,
        cells=(), selected=tuple(r.selected for r in runs) if labelled else None,
        known=int(pool.n_labelled), certified_now=now,
    )
    cells = tuple(tuple(m.cell(i, b) for b in bud) for i in range(len(tols)))
    object.__setattr__(m, "cells", cells)
    return m


# ------------------------------------------------------------------ several pools
@dataclass(frozen=True)
class MultiBudgetMap:
    """Figures 7 and 8 over several pools (conditions)."""

    names: tuple  # one name per pool (file stem, or "pool 1", ...)
    tolerances: tuple
    fractions: tuple  # budgets as fractions of each pool's n
    maps: tuple  # one BudgetMap per pool, budgets floor(f n)

    def counts(self) -> tuple:
        """Figure 7: counts[t][b] = {"ruled_out": ., "certified": ., "unresolved": .}."""
        out = []
        for i in range(len(self.tolerances)):
            row = []
            for b in range(len(self.fractions)):
                c = dict.fromkeys(CELLS, 0)
                for m in self.maps:
                    c[m.cell(i, _frac_budget(self.fractions[b], m.n))] += 1
                row.append(c)
            out.append(tuple(row))
        return tuple(out)

    def smallest_tolerances(self) -> tuple:
        """Figure 8: [pool][budget fraction] the smallest certified grid tolerance
        (None: none within that budget, or unlabelled rows)."""
        return tuple(tuple(m.smallest_tolerance(_frac_budget(f, m.n)) for f in self.fractions)
                     for m in self.maps)

    def to_dict(self) -> dict:
        return {
            "pools": list(self.names),
            "tolerances": [float(t) for t in self.tolerances],
            "fractions": [float(f) for f in self.fractions],
            "counts": [list(r) for r in self.counts()],
            "smallest_tolerance": {
                name: [_float_or_none(t) for t in row]
                for name, row in zip(self.names, self.smallest_tolerances())},
            "maps": {name: m.to_dict() for name, m in zip(self.names, self.maps)},
        }


def _frac_budget(f, n: int) -> int:
    f = Fraction(f)
    return int(f.numerator * n // f.denominator)


def _load_named(path):
    """`load_pool`, with the file named in any error: among several pools the message
    must say which one is broken."""
    from ..io import load_pool

    try:
        return load_pool(path)
    except CertlibError as exc:
        name = Path(path).name
        if repr(name) in str(exc):  # most messages name the file already
            raise
        raise type(exc)(f"pool file {name!r}: {exc}") from None


def _pools_of(pools) -> tuple:
    """(names, pools) of a list of pools / files, or of a folder of pool files."""
    from ..core.pool import Pool

    if isinstance(pools, (str, Path)):
        folder = Path(pools)
        if not folder.is_dir():
            raise ParameterError(f"pools must be a folder of pool files or a list of pools; "
                                 f"{str(folder)!r} is not a folder")
        files = sorted(p for p in folder.iterdir() if p.suffix.lower() in POOL_SUFFIXES)
        if not files:
            raise ParameterError(f"the folder {str(folder)!r} holds no pool file "
                                 f"({', '.join(POOL_SUFFIXES)})")
        return tuple(p.stem for p in files), tuple(_load_named(p) for p in files)
    try:
        items = list(pools)
    except TypeError as e:
        raise ParameterError(f"pools must be a Pool, a list of pools or a folder; got "
                             f"{type(pools).__name__}") from e
    if not items:
        raise ParameterError("pools must hold at least one pool")
    names, out = [], []
    for i, p in enumerate(items):
        if isinstance(p, Pool):
            names.append(f"pool {i + 1}")
            out.append(p)
        elif isinstance(p, (str, Path)):
            names.append(Path(p).stem)
            out.append(_load_named(p))
        else:
            raise ParameterError(f"pools[{i}] must be a Pool or a pool file; got "
                                 f"{type(p).__name__}")
    return tuple(names), tuple(out)


def _fractions(fractions) -> tuple:
    if fractions is None:
        return DEFAULT_FRACTIONS
    out = []
    for f in fractions:
        try:
            fr = Fraction(f) if not isinstance(f, float) else Fraction(str(f))
        except (TypeError, ValueError) as e:
            raise ParameterError(f"budgets must be fractions of n in [0, 1]; got {f!r}") from e
        if not 0 <= fr <= 1:
            raise ParameterError(f"budgets must be fractions of n in [0, 1]; got {f!r}")
        out.append(fr)
    if not out:
        raise ParameterError("budgets must name at least one fraction")
    return tuple(sorted(set(out)))


def budget_map_many(pools, tolerances=DEFAULT_TOLERANCES, fractions=None,
                    policy="static-range", rule: str = "shared", seed: int = 0, *,
                    names=None, progress: Callable | None = None) -> MultiBudgetMap:
    """Figures 7 and 8 over several pools: ``pools`` is a list of pools or pool files, or
    a folder of pool files; budgets are ``fractions`` of each pool's n (default 0, .1,
    ..., 1)."""
    found_names, items = _pools_of(pools)
    if names is not None:
        found_names = tuple(str(x) for x in names)
        if len(found_names) != len(items):
            raise ParameterError(f"names must give one name per pool ({len(items)}); got "
                                 f"{len(found_names)}")
    fr = _fractions(fractions)
    maps = []
    for i, p in enumerate(items):
        bud = tuple(dict.fromkeys(_frac_budget(f, p.n) for f in fr))
        maps.append(budget_map(p, tolerances, sorted(bud), policy=policy, rule=rule, seed=seed))
        if progress is not None:
            progress((i + 1) / len(items))
    return MultiBudgetMap(found_names, maps[0].tolerances, fr, tuple(maps))
