"""What a labelling session's state means to the person labelling (SPEC sections 5, 8
and 12): the guarantee of its answer, and a project's progress replayed from its event
log, with the bounds path the labelling page draws.

    p = Progress.replay(project, events, pool)    # pure: no file, no clock
    p.guarantee.text(), p.session.next_row(), p.rival_bounds()
    p.hindsight()     # after the run: how many of the labels read would have sufficed
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from ..certificates.certificate import PartialCertificate, certify_partial
from ..errors import ParameterError
from .events import FILE_ANNOTATOR, Project, labels_in_force, skipped_rows
from .session import Session

__all__ = ["SKIP", "Guarantee", "Hindsight", "Lookahead", "Progress", "guarantee",
           "labels_read_text"]

#: the answer "pass over this row for now" among a `Lookahead`'s answers
SKIP = "skip"


@dataclass(frozen=True)
class Guarantee:
    """What the bounds guarantee for the selected candidate now."""

    kind: str  # "exact", "within tolerance", "budget exhausted", "running", "all labels read",
    # "fragile" (certified, but a stopping rule surviving e wrong labels cannot be met)
    selected: str
    excess: Fraction  # worst-case objective gap of `selected` to the best, any completion
    tolerance: Fraction

    @property
    def final(self) -> bool:
        return self.kind != "running"

    def text(self, name=str) -> str:
        """One sentence for a person; ``name`` formats the candidate's name (a page
        passes an escaper, since names come from the user's file)."""
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
    """The guarantee of a session's answer (SPEC section 5)."""
    if session.certified and (not session.label_errors or session.robust):
        kind = "exact" if session.th.tolerance == 0 else "within tolerance"
    elif session.status == "certified but fragile":  # issue 14, only with label_errors
        kind = "fragile"
    elif session.budget_exhausted:
        kind = "budget exhausted"
    elif session.done:
        kind = "all labels read"
    else:
        kind = "running"
    return Guarantee(kind, session.best_guess, session.excess, session.th.tolerance)


def labels_read_text(t: int, from_file: int = 0) -> str:
    """"You read t labels", or with labels taken from the pool file "The project read t
    labels (f of them from the pool file)": how hindsight sentences begin."""
    word = "label" if t == 1 else "labels"
    if from_file:
        return f"The project read {t:,} {word} ({from_file:,} of them from the pool file)"
    return f"You read {t:,} {word}"


def sufficed_text(part) -> str:
    """How many of the rows read would have sufficed, for a `PartialCertificate` that
    certifies: "U of them would have sufficed in hindsight (exact)", or with the
    enclosure when the bounds do not meet.  The Label and Certificate pages say it alike."""
    if part.exact:
        return f"{part.upper:,} of them would have sufficed in hindsight (exact)"
    return (f"{part.upper:,} of them would have sufficed in hindsight and no fewer than "
            f"{part.lower:,} could have (enclosure [{part.lower:,}, {part.upper:,}])")


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
    def witness(self) -> tuple:
        """Row ids of a sufficient subset of size ``partial.upper`` (empty if none)."""
        return self.partial.witness

    def text(self) -> str:
        """One sentence for a person (numbers only, nothing from a file)."""
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

    answer: object  # a class value of the pool, or SKIP
    next_row: int | None
    status: str
    final: bool  # the session would be done (certified, budget exhausted, every row read)


@dataclass(frozen=True)
class Progress:
    """A project replayed: its settings, the log, the session and the bounds path."""

    project: Project
    events: tuple
    session: Session
    lower_path: tuple  # lower_path[t] = K x K lower bounds of r_j - r_k after t labels

    @classmethod
    def replay(cls, project: Project, events, pool, since: Progress | None = None) -> Progress:
        """Replay the labels in force through a fresh Session (pure transitions, STYLE
        rule 6), under the budget in force: the start budget overridden by the last
        ``budget`` event (`certlib.labelling.events.budget_in_force`), so a session whose budget
        was exhausted runs on after an extension.  The caller vouches that ``pool`` is
        the project's pool.

        ``since``, an earlier Progress of the same project, is extended label by label
        when the log only grew by labels (or skips, reviews) since then (a page's next click),
        instead of replaying from the start; the result is the same state either way."""
        events = tuple(events)
        old = since.events if since is not None and since.project == project else None
        if old is not None and events[:len(old)] == old and all(
                e.kind not in ("undo", "budget", "correct") for e in events[len(old):]):
            s, path, new = since.session, list(since.lower_path), events[len(old):]
        else:
            s = Session.start(pool, **project.session_kwargs(events))
            path, new = [s.lower()], labels_in_force(events)
        for e in (e for e in new if e.kind in ("label", "correct")):
            s = s.observe(pool.position(e.row_id), e.label)
            path.append(s.lower())
        return cls(project, events, s, tuple(path))

    @property
    def guarantee(self) -> Guarantee:
        return guarantee(self.session)

    @property
    def budget(self) -> int | None:
        """The budget in force: the start budget or the last extension (None = none)."""
        return self.session.budget

    @cached_property
    def labels(self) -> tuple:
        """The label events in force, in reading order."""
        return tuple(labels_in_force(self.events))

    @cached_property
    def file_rows(self) -> frozenset:
        """Row ids whose label in force the project took from the pool file."""
        return frozenset(e.row_id for e in self.labels if e.annotator == FILE_ANNOTATOR)

    @cached_property
    def reviews(self) -> tuple:
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
    def skipped(self) -> tuple:
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
        still skipped, as `next_row` does; after SKIP, over this row too."""
        r = self.next_row
        if r is None:
            return ()
        s = self.session
        pos = s.pool.position
        skipped = [pos(x) for x in self.skipped]
        out = []
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

    def hindsight(self, **limits) -> Hindsight:
        """The hindsight enclosure of the smallest sufficient subset of the rows read,
        under the labels in force: the annotators' and those the project took from the
        pool file when it started (not the file's labels of rows it has not read).  ``limits``:
        ``work_limit`` / ``time_limit`` of `certify_partial`.  Only for the shared rule
        (the rule of `certify_partial`)."""
        s = self.session
        if s.rule != "shared":
            raise ParameterError(f"hindsight needs rule 'shared'; project {self.project.id} "
                                 f"uses rule {s.rule!r}")
        labelled = s.pool.with_labels(s.label_codes)  # the labels in force only
        part = certify_partial(labelled, read_rows=s.read_rows,
                               tolerance=self.project.tolerance, **limits)
        return Hindsight(s.t, self.project.prelabel_bound, part, len(self.file_rows))

    def rival_bounds(self, k: int | None = None) -> dict:
        """For candidate k (default the best guess): {rival name: (lower list, upper list)} of
        the objective difference obj_j - obj_k after 0, 1, ..., t labels (floats, for plots)."""
        s = self.session
        if k is None:
            k = s.pool.names.index(s.best_guess)
        scale = s.pool.scale
        out = {}
        for j, name in enumerate(s.pool.names):
            if j == k:
                continue
            lo = [float(L[j, k]) / scale for L in self.lower_path]
            hi = [-float(L[k, j]) / scale for L in self.lower_path]
            out[name] = (lo, hi)
        return out
