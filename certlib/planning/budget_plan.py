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
  themselves, so the test certifies whatever the labels are; the cell is certain,
  not a matter of what the labels turn out to be.  The separate and centered
  rules can end "all labels read" uncertified, so there the cell stays unresolved.
  Nor when the labels the pool already holds certify at that tolerance (they count as
  read, as in the forecast): every budget from their number on is certified, exactly,
  since no label still to come can undo a certificate.  Nor, for the accuracy
  objective with the shared rule and a range or pair-sum policy, a budget of at least
  the known labels plus the unread disagreement rows: those policies read nothing else,
  and the disagreement rows settle accuracy whatever the labels (paper 000 section 6.2;
  `certlib.planning.accuracy_plan`), so such a cell is certain too (``certain_from``).

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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeAlias, cast, overload

import numpy as np

from ..errors import CertlibError, ParameterError

if TYPE_CHECKING:
    from ..core.pool import Pool

Number: TypeAlias = int | float | Fraction
# several pools: a folder of pool files, or a list of pools and pool files
Pools: TypeAlias = "str | Path | Iterable[Pool | str | Path]"

__all__ = ["BudgetMap", "DEFAULT_ACCURACY_TOLERANCES", "DEFAULT_FRACTIONS", "DEFAULT_TOLERANCES",
           "MultiBudgetMap", "budget_map", "budget_map_many", "default_budgets"]

DEFAULT_TOLERANCES: tuple[Number, ...] = (0, 0.0005, 0.001, 0.002, 0.005, 0.01)
# the error rate's tolerance counts rows, floor(n tau) (SPEC section 5): below 1/n it is the
# exact choice, so on a pool of a few hundred rows the AUGRC grid would repeat tolerance 0
DEFAULT_ACCURACY_TOLERANCES: tuple[Number, ...] = (0, 0.005, 0.01, 0.02, 0.05)
DEFAULT_FRACTIONS: tuple[Fraction, ...] = tuple(Fraction(i, 10) for i in range(11))
CELLS: tuple[str, ...] = ("ruled_out", "certified", "unresolved")
POOL_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".parquet", ".pq")


def default_budgets(n: int) -> tuple[int, ...]:
    """The default budget grid: floor(b n) for b = 0, .1, ..., 1, duplicates dropped.

    Parameters
    ----------
    n : int
        Rows in the pool.

    Returns
    -------
    tuple of int
        Label counts, ascending, computed exactly in integers.

    Examples
    --------
    >>> default_budgets(5)
    (0, 1, 2, 3, 4, 5)
    """
    return tuple(dict.fromkeys(n * i // 10 for i in range(11)))


def _tolerances(tolerances: Iterable[Number]) -> tuple[Fraction, ...]:
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


def _budgets(budgets: Iterable[object] | None, n: int) -> tuple[int, ...]:
    if budgets is None:
        return default_budgets(n)
    out = []
    for value in budgets:
        if isinstance(value, bool) or not isinstance(value, int) and not (
                hasattr(value, "__index__") and not isinstance(value, float)):
            raise ParameterError(f"budgets must be whole numbers of labels in 0..{n}; "
                                 f"got {value!r}")
        b = int(cast(SupportsIndex, value))  # an integer type, checked just above
        if not 0 <= b <= n:
            raise ParameterError(f"budgets must be whole numbers of labels in 0..{n}; got {b}")
        out.append(b)
    if not out:
        raise ParameterError("budgets must name at least one budget")
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class BudgetMap:
    """Paper Figure 7 for one pool: which (tolerance, budget) cells are ruled out,
    certified by the policy, or unresolved (module docstring).

    Attributes
    ----------
    n : int
        Rows in the pool.
    policy, rule : str
        The policy replayed and its stopping rule.
    seed : int
        The seed of the replays.
    tolerances : tuple of Fraction
        The tolerance grid, ascending.
    budgets : tuple of int
        The budget grid in labels, ascending.
    prelabel : tuple of int
        One prelabel bound per tolerance (paper 000 section 6).
    labels_read : tuple of int or None
        The policy's replay per tolerance; None when the pool has unlabelled rows.
    certified : tuple of bool or None
        Whether each replay certified (False only for the loose rules).
    cells : tuple of tuple of str
        ``cells[t][b]``, one of ``"ruled_out"``, ``"certified"``, ``"unresolved"``.
    selected : tuple of str or None
        The candidate each replay selected.
    known : int
        Labels the pool already holds (they count as read).
    certified_now : tuple of bool or None
        Per tolerance, whether the known labels already certify (unlabelled pools only).
    certain_from : int or None
        The budget from which the replay certifies whatever the unread labels are, with
        the shared rule (`certain_at`); None means n.  Below n only for accuracy with a
        range or pair-sum policy: the known labels plus the unread disagreement rows.
    """

    n: int
    policy: str
    rule: str
    seed: int
    tolerances: tuple[Fraction, ...]
    budgets: tuple[int, ...]
    prelabel: tuple[int, ...]
    labels_read: tuple[int, ...] | None
    certified: tuple[bool, ...] | None
    cells: tuple[tuple[str, ...], ...]
    selected: tuple[str, ...] | None = None
    known: int = 0
    certified_now: tuple[bool, ...] | None = None
    certain_from: int | None = None

    @property
    def labelled(self) -> bool:
        """Whether the pool was fully labelled, so that every replay ran."""
        return self.labels_read is not None

    def cell(self, tolerance_index: int, budget: int) -> str:
        """The cell of any budget (not only the grid's).

        Parameters
        ----------
        tolerance_index : int
            Position in ``tolerances``.
        budget : int
            A label count.

        Returns
        -------
        str
            ``"ruled_out"``, ``"certified"`` or ``"unresolved"`` (module docstring).
        """
        if budget < self.prelabel[tolerance_index]:
            return "ruled_out"
        if self.labels_read is None:
            return ("certified" if self.certain_at(budget)
                    or self.known_certifies(tolerance_index, budget) else "unresolved")
        assert self.certified is not None  # set together with labels_read
        if self.certified[tolerance_index] and self.labels_read[tolerance_index] <= budget:
            return "certified"
        return "unresolved"

    def certain_at(self, budget: int) -> bool:
        """Whether ``budget`` certifies whatever the labels are: every row read, or for
        accuracy every disagreement row, with the exact (shared) rule (module docstring).

        Parameters
        ----------
        budget : int
            A label count.

        Returns
        -------
        bool
            True when ``budget >= certain_from`` (n unless set) and the rule is the
            shared one.
        """
        start = self.n if self.certain_from is None else self.certain_from
        return budget >= start and self.rule == "shared"

    def known_certifies(self, tolerance_index: int, budget: int) -> bool:
        """Whether the labels already in the pool certify at that tolerance (exact) and
        ``budget`` covers them.

        Parameters
        ----------
        tolerance_index : int
            Position in ``tolerances``.
        budget : int
            A label count.

        Returns
        -------
        bool
            True when the known labels certify and ``budget >= known``.
        """
        return (self.certified_now is not None and bool(self.certified_now[tolerance_index])
                and budget >= self.known)

    def smallest_tolerance(self, budget: int) -> Fraction | None:
        """Figure 8: the smallest grid tolerance whose stopping count fits in ``budget``
        labels; None when none does, or the pool has unlabelled rows and the budget
        neither certifies whatever the labels (`certain_at`: every row read, or for
        accuracy every disagreement row) nor covers known labels that already certify
        (`known_certifies`).

        Parameters
        ----------
        budget : int
            A label count.

        Returns
        -------
        Fraction or None
            The smallest certified grid tolerance.
        """
        for i, t in enumerate(self.tolerances):
            if self.cell(i, budget) == "certified":
                return t
        return None

    def smallest_open_tolerance(self, budget: int) -> Fraction | None:
        """The smallest grid tolerance that ``budget`` does not rule out.

        Parameters
        ----------
        budget : int
            A label count.

        Returns
        -------
        Fraction or None
            The smallest tolerance whose prelabel bound ``budget`` reaches; None when
            every tolerance of the grid rules it out.
        """
        for i, t in enumerate(self.tolerances):
            if budget >= self.prelabel[i]:
                return t
        return None

    def counts(self) -> dict[str, int]:
        """How many cells of each kind."""
        out = dict.fromkeys(CELLS, 0)
        for row in self.cells:
            for c in row:
                out[c] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The map as a JSON-ready dict (tolerances as floats)."""
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
            "certain_from": self.certain_from,
            "cells": [list(r) for r in self.cells],
            "smallest_tolerance": {
                str(b): _float_or_none(self.smallest_tolerance(b)) for b in self.budgets},
        }


def _float_or_none(x: Fraction | None) -> float | None:
    return None if x is None else float(x)


@overload
def budget_map(pool: Pool, tolerances: Iterable[Number] = ..., *,
               budgets: Iterable[Number | str] | None = ..., policy: str = ..., rule: str = ...,
               seed: int = ..., progress: Callable[[float], object] | None = ...
               ) -> BudgetMap: ...
@overload
def budget_map(pool: Pools, tolerances: Iterable[Number] = ..., *,
               budgets: Iterable[Number | str] | None = ..., policy: str = ..., rule: str = ...,
               seed: int = ..., progress: Callable[[float], object] | None = ...
               ) -> MultiBudgetMap: ...
def budget_map(pool: Pool | Pools, tolerances: Iterable[Number] = DEFAULT_TOLERANCES, *,
               budgets: Iterable[Number | str] | None = None, policy: str = "static-range",
               rule: str = "shared", seed: int = 0,
               progress: Callable[[float], object] | None = None
               ) -> BudgetMap | MultiBudgetMap:
    """The budget-tolerance map of a pool (paper 000 section 6, Figures 7 and 8).

    Each (tolerance, budget) cell is ruled out by the prelabel bound, certified by the
    policy's replay, or unresolved (module docstring).

    Parameters
    ----------
    pool : Pool, or several pools
        A `Pool`; or a list of pools or of pool files, or a folder of pool files: the
        result is then a `MultiBudgetMap` (see `budget_map_many`, whose budgets are
        fractions of n).
    tolerances : iterable of numbers, default DEFAULT_TOLERANCES
        Objective (AUGRC) tolerances tau >= 0; sorted and deduplicated.
    budgets : iterable of int, optional
        Label counts in 0..n (default floor(b n), b = 0, .1, ..., 1); for several pools,
        fractions of each pool's n in [0, 1].
    policy : str, default "static-range"
        The policy replayed.
    rule : str, default "shared"
        The stopping rule ("shared", "separate" or "centered").
    seed : int, default 0
        The seed of a random policy.
    progress : callable, optional
        Called with the fraction done in [0, 1] after each tolerance (each pool).

    Returns
    -------
    BudgetMap or MultiBudgetMap
        The map of one pool, or of several.

    Raises
    ------
    ParameterError
        On a bad tolerance, budget, policy or rule, or a folder without pool files.
    PoolFileError, ColumnError, InvalidValueError
        When a pool file (several pools) cannot be read.

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> m = certlib.budget_map(pool, (0,), budgets=(1, 2, 4))
    >>> m.prelabel, m.labels_read, m.cells
    ((2,), (4,), (('ruled_out', 'unresolved', 'certified'),))
    """
    from ..core.pool import Pool

    if not isinstance(pool, Pool):
        return budget_map_many(pool, tolerances, fractions=budgets, policy=policy, rule=rule,
                               seed=seed, progress=progress)
    pol_name = _check_settings(policy, rule)
    return _budget_map_one(pool, _tolerances(tolerances), budgets, policy=policy,
                           policy_name=pol_name, rule=rule, seed=seed, progress=progress)


def _check_settings(policy: str, rule: str) -> str:
    """Check the rule and the policy once, at the entry; return the policy's name."""
    from ..core.pair_terms import check_rule
    from ..policies import get_policy

    check_rule(rule)
    name: str = get_policy(policy).name
    return name


def _budget_map_one(pool: Pool, tols: tuple[Fraction, ...], budgets: Iterable[object] | None,
                    *,
                    policy: str, policy_name: str, rule: str, seed: int,
                    progress: Callable[[float], object] | None) -> BudgetMap:
    """`budget_map` of one pool, its settings checked and its tolerances already read as
    exact Fractions by the caller (so several pools validate them once)."""
    from ..certificates.prelabel import prelabel_bound
    from ..labelling.replay import replay

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
    certain_from = None
    if not labelled:  # do the labels already known certify? (exact, one bound for all)
        from ..core.bounds import batch_lower, certified_mask, thresholds
        from ..core.pool import UNREAD
        from .accuracy_plan import DISAGREEMENT_FIRST, disagreement_mask

        known = pool.labels != UNREAD
        L = batch_lower(pool, np.flatnonzero(known), rule=rule)
        now = tuple(
            bool(certified_mask(L, thresholds(pool.K, pool.scale, rule=rule, tolerance=t)).any())
            for t in tols)
        if pool.objective == "accuracy" and rule == "shared" and policy_name in \
                DISAGREEMENT_FIRST:  # they read only disagreement rows (paper 000 section 6.2)
            certain_from = int(known.sum()) + int((disagreement_mask(pool) & ~known).sum())
    m = BudgetMap(
        n=pool.n, policy=policy_name, rule=rule, seed=int(seed), tolerances=tols, budgets=bud,
        prelabel=tuple(pre),
        labels_read=tuple(r.labels_read for r in runs) if labelled else None,
        certified=tuple(r.certified for r in runs) if labelled else None,
        cells=(), selected=tuple(r.selected for r in runs) if labelled else None,
        known=int(pool.n_labelled), certified_now=now, certain_from=certain_from,
    )
    cells = tuple(tuple(m.cell(i, b) for b in bud) for i in range(len(tols)))
    object.__setattr__(m, "cells", cells)
    return m


# ------------------------------------------------------------------ several pools
@dataclass(frozen=True)
class MultiBudgetMap:
    """Figures 7 and 8 over several pools (conditions).

    Attributes
    ----------
    names : tuple of str
        One name per pool (file stem, or "pool 1", ...).
    tolerances : tuple of Fraction
        The tolerance grid, ascending, shared by every map.
    fractions : tuple of Fraction
        Budgets as fractions of each pool's n.
    maps : tuple of BudgetMap
        One map per pool, its budgets floor(f n).
    """

    names: tuple[str, ...]
    tolerances: tuple[Fraction, ...]
    fractions: tuple[Fraction, ...]
    maps: tuple[BudgetMap, ...]

    def counts(self) -> tuple[tuple[dict[str, int], ...], ...]:
        """Figure 7: ``counts[t][b]`` is ``{"ruled_out": ., "certified": ., "unresolved": .}``."""
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

    def smallest_tolerances(self) -> tuple[tuple[Fraction | None, ...], ...]:
        """Figure 8: ``smallest[pool][budget fraction]``, the smallest certified grid
        tolerance (None: none within that budget, or unlabelled rows)."""
        return tuple(tuple(m.smallest_tolerance(_frac_budget(f, m.n)) for f in self.fractions)
                     for m in self.maps)

    def to_dict(self) -> dict[str, Any]:
        """The maps as a JSON-ready dict (tolerances and fractions as floats)."""
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


def _frac_budget(f: Fraction, n: int) -> int:
    f = Fraction(f)
    return int(f.numerator * n // f.denominator)


def _load_named(path: str | Path) -> Pool:
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


def _pools_of(pools: Pools) -> tuple[tuple[str, ...], tuple[Pool, ...]]:
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
    names: list[str] = []
    out: list[Pool] = []
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


def _fractions(fractions: Iterable[Number | str] | None) -> tuple[Fraction, ...]:
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


def budget_map_many(pools: Pools, tolerances: Iterable[Number] = DEFAULT_TOLERANCES, *,
                    fractions: Iterable[Number | str] | None = None,
                    policy: str = "static-range", rule: str = "shared", seed: int = 0,
                    names: Sequence[str] | None = None,
                    progress: Callable[[float], object] | None = None) -> MultiBudgetMap:
    """Figures 7 and 8 over several pools (paper 000 section 6).

    Parameters
    ----------
    pools : folder, or list of pools and pool files
        A folder of pool files (.csv, .tsv, .parquet, .pq; read in name order), or a list
        of `Pool` objects and pool file paths.
    tolerances : iterable of numbers, default DEFAULT_TOLERANCES
        Objective tolerances tau >= 0, read once for every pool.
    fractions : iterable of numbers, optional
        Budgets as fractions of each pool's n, in [0, 1] (default 0, .1, ..., 1).
    policy : str, default "static-range"
        The policy replayed.
    rule : str, default "shared"
        The stopping rule.
    seed : int, default 0
        The seed of a random policy.
    names : sequence of str, optional
        One display name per pool (default: file stems, or "pool 1", ...).
    progress : callable, optional
        Called with the fraction of pools done in [0, 1].

    Returns
    -------
    MultiBudgetMap
        One `BudgetMap` per pool and the counts of Figure 7.

    Raises
    ------
    ParameterError
        On bad settings, an empty folder or list, or ``names`` of the wrong length.
    PoolFileError, ColumnError, InvalidValueError
        When a pool file cannot be read (the message names the file).

    Examples
    --------
    >>> import certlib
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 0, 0], names=["A", "B"])
    >>> mm = budget_map_many([pool, pool], (0,), fractions=(0, 1))
    >>> mm.names, mm.counts()[0][1]
    (('pool 1', 'pool 2'), {'ruled_out': 0, 'certified': 2, 'unresolved': 0})
    """
    found_names, items = _pools_of(pools)
    if names is not None:
        found_names = tuple(str(x) for x in names)
        if len(found_names) != len(items):
            raise ParameterError(f"names must give one name per pool ({len(items)}); got "
                                 f"{len(found_names)}")
    fr = _fractions(fractions)
    pol_name = _check_settings(policy, rule)
    tols = _tolerances(tolerances)
    maps = []
    for i, p in enumerate(items):
        bud = tuple(dict.fromkeys(_frac_budget(f, p.n) for f in fr))
        maps.append(_budget_map_one(p, tols, sorted(bud), policy=policy, policy_name=pol_name,
                                    rule=rule, seed=seed, progress=None))
        if progress is not None:
            progress((i + 1) / len(items))
    return MultiBudgetMap(found_names, maps[0].tolerances, fr, tuple(maps))
