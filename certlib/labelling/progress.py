"""What a labelling session's state means to the person labelling (SPEC sections 5, 8
and 12): the guarantee of its answer, and a project's progress replayed from its event
log, with the bounds path the labelling page draws.

    p = Progress.replay(project, events, pool)    # pure: no file, no clock
    p.guarantee.text(), p.session.next_row(), p.rival_bounds()
    p.hindsight()     # after the run: how many of the labels read would have sufficed
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..certificates.certificate import PartialCertificate, certify_partial
from ..certificates.covering import DEFAULT_TIME_LIMIT, DEFAULT_WORK_LIMIT
from ..core._values import ClassValue
from ..core.pool import Pool
from ..errors import ParameterError
from .events import FILE_ANNOTATOR, Event, Project, labels_in_force, skipped_rows
from .session import Session

if TYPE_CHECKING:
    from .reviews import ReviewItem

__all__ = ["SKIP", "Guarantee", "Hindsight", "Lookahead", "Progress", "guarantee",
           "labels_read_text", "versus_minimum_text"]

#: the answer "pass over this row for now" among a `Lookahead`'s answers
SKIP = "skip"


@dataclass(frozen=True)
class Guarantee:
    """What the bounds guarantee for the selected candidate now (SPEC section 5).

    Attributes
    ----------
    kind : str
        "exact", "within tolerance", "budget exhausted", "running", "all labels read" or
        "fragile" (certified, but a stopping rule surviving e wrong labels cannot be
        met).
    selected : str
        The certified candidate, or the best guess.
    excess : Fraction
        Worst-case objective gap of ``selected`` to the best, over every completion.
    tolerance : Fraction
        The stopping test's tau.
    """

    kind: str  # "exact", "within tolerance", "budget exhausted", "running", "all labels read",
    # "fragile" (certified, but a stopping rule surviving e wrong labels cannot be met)
    selected: str
    excess: Fraction  # worst-case objective gap of `selected` to the best, any completion
    tolerance: Fraction

    @property
    def final(self) -> bool:
        """The run has stopped (any kind but "running")."""
        return self.kind != "running"

    def text(self, name: Callable[[str], str] = str) -> str:
        """One sentence for a person.

        Parameters
        ----------
        name : callable, default str
            Formats the candidate's name (a page passes an escaper, since names come from
            the user's file).

        Returns
        -------
        str
            What is guaranteed, with the worst-case gap.
        """
        sel = name(self.selected)
        gap = f"{float(self.excess):.4g}" if self.excess else "0"
        if self.kind == "exact":
            return (f"{sel} is the best candidate for every completion of the "
                    "unread labels")
        if self.kind == "within tolerance":
            return (f"{sel} is within tau = {float(self.tolerance):g} of the best "
                    f"for every completion (worst-case gap {gap})")
        if self.kind == "fragile":
            return (f"{sel} is certified, but no continuation can make the certificate "
                    "survive the number of wrong labels asked for (the full-pool choice "
                    "itself is that fragile)")
        if self.kind == "running":
            return f"best guess so far {sel}, worst-case gap {gap} (not certified yet)"
        return (f"{sel} has the smallest worst-case gap to the best candidate: its AUGRC "
                f"is at most {gap} above the best one's, whatever the unread labels are "
                f"({100 * float(self.excess):.3g} percentage points)")


def guarantee(session: Session) -> Guarantee:
    """The guarantee of a session's answer (SPEC section 5).

    Parameters
    ----------
    session : Session
        A labelling state.

    Returns
    -------
    Guarantee
        Its kind, the selected candidate and the worst-case excess.
    """
    if session.certified and (not session.label_errors or session.robust):
        kind = "exact" if session.th.tolerance == 0 else "within tolerance"
    elif session.status == "certified but fragile":  # only with label_errors
        kind = "fragile"
    elif session.budget_exhausted:
        kind = "budget exhausted"
    elif session.done:
        kind = "all labels read"
    else:
        kind = "running"
    return Guarantee(kind, session.best_guess, session.excess, session.th.tolerance)


def labels_read_text(t: int, from_file: int = 0) -> str:
    """How hindsight sentences begin: "You read t labels", or with labels taken from the
    pool file "The project read t labels (f of them from the pool file)".

    Parameters
    ----------
    t : int
        Labels read.
    from_file : int, default 0
        How many of them the project took from the pool file.

    Returns
    -------
    str
        The opening words.
    """
    word = "label" if t == 1 else "labels"
    if from_file:
        return f"The project read {t:,} {word} ({from_file:,} of them from the pool file)"
    return f"You read {t:,} {word}"


def sufficed_text(part: PartialCertificate) -> str:
    """How many of the rows read would have sufficed, in words.

    "U of them would have sufficed in hindsight (exact)", or with the enclosure when
    the bounds do not meet.  The Label and Certificate pages say it alike.

    Parameters
    ----------
    part : PartialCertificate
        A hindsight result whose rows certify (``upper`` set).

    Returns
    -------
    str
        The clause.
    """
    if part.exact:
        return f"{part.upper:,} of them would have sufficed in hindsight (exact)"
    return (f"{part.upper:,} of them would have sufficed in hindsight and no fewer than "
            f"{part.lower:,} could have (enclosure [{part.lower:,}, {part.upper:,}])")


def versus_minimum_text(part: PartialCertificate) -> str:
    """Why a run's hindsight and the minimum certificate of the fully labelled pool
    differ, in words, with the run's numbers.

    The hindsight searches the subsets of the rows the run read, under its labels; the
    minimum certificate (`certlib.certify`) may use any row of the pool, under the
    file's labels.  So the minimum can be below the hindsight's upper end (a smaller set
    may use rows the run never read), and it is never below its lower end when the two
    agree on the labels read (that end holds whatever the unread labels are).

    Parameters
    ----------
    part : PartialCertificate
        A hindsight result (`certify_partial`).

    Returns
    -------
    str
        One sentence.

    Examples
    --------
    >>> import certlib
    >>> from certlib.certificates.certificate import certify_partial
    >>> pool = certlib.Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]],
    ...                                 [[4, 3, 2, 1], [3, 4, 1, 2]],
    ...                                 labels=[1, 0, 1, 1], classes=[0, 1])
    >>> print(versus_minimum_text(certify_partial(pool, [0, 1, 2, 3])))  # doctest: +ELLIPSIS
    The minimum certificate of the fully labelled pool (Plan and certify, Certificate) ...
    """
    if part.upper is None:
        return (f"The minimum certificate of the fully labelled pool (Plan and certify, "
                f"Certificate) may use any row: it is never below {part.lower:,} when its "
                "labels agree with the ones read here (that bound holds whatever the unread "
                "labels are).")
    head = (f"The minimum certificate of the fully labelled pool (Plan and certify, "
            f"Certificate) may use any row, not only the {part.labels_read:,} read here")
    agree = "when its labels agree with the ones read here"
    if part.lower == part.upper:
        return (f"{head}; it is {part.upper:,} too {agree}: no certificate has fewer whatever "
                "the unread labels are, and these rows suffice.")
    return (f"{head}, so it can be smaller than {part.upper:,}; {agree} it is at least "
            f"{part.lower:,} (no certificate has fewer, whatever the unread labels are).")


@dataclass(frozen=True)
class Hindsight:
    """After a run: the smallest subset of the rows read that would have sufficed
    (SPEC section 7, last paragraph), from the annotator's labels.

    ``partial`` is `certify_partial` on the pool labelled with the labels in force,
    over the rows read: ``lower <= C <= upper`` where C is the size of the smallest
    sufficient subset (``upper`` None when the rows read certify nothing, e.g. a spent
    budget: then no subset of them suffices and ``lower`` bounds any certificate)."""

    labels_read: int
    prelabel_bound: int
    partial: PartialCertificate
    from_file: int = 0  # of the labels read, those the project took from the pool file

    @property
    def witness(self) -> tuple[ClassValue, ...]:
        """Row ids of a sufficient subset of size ``partial.upper`` (empty if none)."""
        return self.partial.witness

    def text(self) -> str:
        """One sentence for a person.

        Returns
        -------
        str
            Labels read, how many of them would have sufficed and the prelabel bound
            (numbers only, nothing from a file).
        """
        h, t = self.partial, self.labels_read
        read = labels_read_text(t, self.from_file)
        if h.upper is None:
            return (f"{read}; they do not certify a candidate, so no subset of "
                    f"them suffices; any certificate needs at least {h.lower:,} labels; the "
                    f"prelabel bound was {self.prelabel_bound:,}")
        return f"{read}; {sufficed_text(h)}; the prelabel bound was {self.prelabel_bound:,}"


@dataclass(frozen=True)
class Lookahead:
    """What the project shows after one answer to its next row, computed before the answer
    is given (a `Session` is a pure transition): the row the policy would ask next (a
    position, None when the session would be done) and the status then.  A labelling
    page sends these with the row, so a key press draws the next row at once."""

    answer: ClassValue  # a class value of the pool, or SKIP
    next_row: int | None
    status: str
    final: bool  # the session would be done (certified, budget exhausted, every row read)


@dataclass(frozen=True)
class Progress:
    """A project replayed: its settings, the log, the session and the bounds path.

    Attributes
    ----------
    project : Project
        The project's fixed settings.
    events : tuple of Event
        Its log, in sequence order.
    session : Session
        The labelling state the labels in force give.
    lower_path : tuple of ndarray
        ``lower_path[t]``: the K x K lower bounds of r_j - r_k (scaled risks) after t
        labels.
    """

    project: Project
    events: tuple[Event, ...]
    session: Session
    # lower_path[t] = K x K lower bounds of r_j - r_k after t labels
    lower_path: tuple[npt.NDArray[np.int64] | npt.NDArray[np.float64], ...]

    @classmethod
    def replay(cls, project: Project, events: Iterable[Event], pool: Pool, *,
               since: Progress | None = None) -> Progress:
        """Replay the labels in force through a fresh `Session`.

        Pure transitions (STYLE rule 6), under the budget in force: the start budget
        overridden by the last ``budget`` event
        (`certlib.labelling.events.budget_in_force`), so a session whose budget was
        exhausted runs on after an extension.

        Parameters
        ----------
        project : Project
            The project's settings.
        events : iterable of Event
            Its log, in sequence order.
        pool : Pool
            The project's pool (the caller vouches for it).
        since : Progress or None, default None
            An earlier Progress of the same project: extended label by label when the
            log only grew by labels (or skips, reviews) since then (a page's next
            click), instead of replaying from the start; the result is the same state
            either way.

        Returns
        -------
        Progress
            The project now.

        Raises
        ------
        ParameterError
            The project's settings cannot start a session.
        LabelError
            A label event names a row or class the pool does not have.
        """
        events = tuple(events)
        old = since.events if since is not None and since.project == project else None
        if old is not None and events[:len(old)] == old and all(
                e.kind not in ("undo", "budget", "correct") for e in events[len(old):]):
            assert since is not None  # `old` comes from it
            s, path, new = since.session, list(since.lower_path), list(events[len(old):])
        else:
            s = Session.start(pool, **project.session_kwargs(events))
            path, new = [s.lower()], labels_in_force(events)
        for e in (e for e in new if e.kind in ("label", "correct")):
            s = s.observe(pool.position(e.row_id), e.label)
            path.append(s.lower())
        return cls(project, events, s, tuple(path))

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee of the session's answer (`guarantee`)."""
        return guarantee(self.session)

    @property
    def budget(self) -> int | None:
        """The budget in force: the start budget or the last extension (None = none)."""
        return self.session.budget

    @cached_property
    def labels(self) -> tuple[Event, ...]:
        """The label events in force, in reading order."""
        return tuple(labels_in_force(self.events))

    @cached_property
    def file_rows(self) -> frozenset[ClassValue | None]:
        """Row ids whose label in force the project took from the pool file."""
        return frozenset(e.row_id for e in self.labels if e.annotator == FILE_ANNOTATOR)

    @cached_property
    def reviews(self) -> tuple[ReviewItem, ...]:
        """The rows queued for review (`certlib.labelling.reviews.review_items`), computed once: a
        page reads them several times per run."""
        from .reviews import review_items

        return review_items(self.events)

    @property
    def last_seq(self) -> int:
        """Sequence number of the newest event (0 for an empty log): a view drawn from this
        progress passes it as ``expect_seq`` so the store refuses a click on a stale view."""
        return self.events[-1].seq if self.events else 0

    @property
    def skipped(self) -> tuple[ClassValue | None, ...]:
        """Row ids skipped and not yet back (`certlib.labelling.events.skipped_rows`)."""
        return skipped_rows(self.events)

    @cached_property
    def next_row(self) -> int | None:
        """Row position the policy reads next, passing over skipped rows while other
        rows are left, or None when the session is done."""
        pos = self.session.pool.position
        return self.session.next_row(skip=[pos(r) for r in self.skipped])

    def lookahead(self) -> tuple[Lookahead, ...]:
        """One `Lookahead` per answer to `next_row`: each class in the pool's order, then
        SKIP (None when only skipped rows are left: a skipped row cannot be skipped again);
        empty when the session is done.  The next row after a label passes over the rows
        still skipped, as `next_row` does; after SKIP, over this row too.

        Returns
        -------
        tuple of Lookahead
            What the page shows after each possible answer.
        """
        r = self.next_row
        if r is None:
            return ()
        s = self.session
        pos = s.pool.position
        skipped = [pos(x) for x in self.skipped]
        out: list[Lookahead] = []
        for c in s.pool.classes:
            after = s.observe(r, c)
            nxt = after.next_row(skip=[x for x in skipped if x != r])
            out.append(Lookahead(c, nxt, after.status, guarantee(after).final))
        if r not in skipped:
            nxt = s.next_row(skip=skipped + [r])
            out.append(Lookahead(SKIP, nxt, s.status, False))
        return tuple(out)

    @property
    def labels_left_at_least(self) -> int:
        """More labels any policy needs before it can certify (from the prelabel bound)."""
        return max(0, self.project.prelabel_bound - self.session.t)

    def hindsight(self, *, work_limit: int = DEFAULT_WORK_LIMIT,
                  time_limit: float = DEFAULT_TIME_LIMIT) -> Hindsight:
        """The hindsight enclosure of the smallest sufficient subset of the rows read.

        Under the labels in force: the annotators' and those the project took from the
        pool file when it started (not the file's labels of rows it has not read).  Only
        for the shared rule (the rule of `certify_partial`).

        Parameters
        ----------
        work_limit : int, default DEFAULT_WORK_LIMIT
            Search nodes the sub-certificate search may visit (`certify_partial`).
        time_limit : float, default DEFAULT_TIME_LIMIT
            Its wall-clock safety net, in seconds.

        Returns
        -------
        Hindsight
            The labels read, the prelabel bound and the enclosure.

        Raises
        ------
        ParameterError
            The project's rule is not "shared".
        """
        s = self.session
        if s.rule != "shared":
            raise ParameterError(f"hindsight needs rule 'shared'; project {self.project.id} "
                                 f"uses rule {s.rule!r}")
        labelled = s.pool.with_labels(s.label_codes)  # the labels in force only
        part = certify_partial(labelled, read_rows=s.read_rows,
                               tolerance=self.project.tolerance, work_limit=work_limit,
                               time_limit=time_limit)
        return Hindsight(s.t, self.project.prelabel_bound, part, len(self.file_rows))

    def rival_bounds(self, k: int | None = None
                     ) -> dict[str, tuple[list[float], list[float]]]:
        """The bounds path of each rival against one candidate, for plots.

        Parameters
        ----------
        k : int or None, default None
            The candidate's index (default: the best guess).

        Returns
        -------
        dict
            {rival name: (lower list, upper list)} of the objective difference
            obj_j - obj_k after 0, 1, ..., t labels, as floats.
        """
        s = self.session
        if k is None:
            k = s.pool.names.index(s.best_guess)
        scale = s.pool.scale
        out: dict[str, tuple[list[float], list[float]]] = {}
        for j, name in enumerate(s.pool.names):
            if j == k:
                continue
            lo = [float(L[j, k]) / scale for L in self.lower_path]
            hi = [-float(L[k, j]) / scale for L in self.lower_path]
            out[name] = (lo, hi)
        return out
