"""Second-annotator review of labelled rows: which rows were queued for review,
what the reviewers said, and where they disagree with the label in force.  Pure: reads an
event log (`certlib.labelling.events`); `certlib.labelling.store` writes the events.

    items = review_items(store.events(pid))
    [i for i in items if i.status == "disagrees"]     # shown to the lead
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from .events import Event, same_annotator, step_labels

if TYPE_CHECKING:  # annotations only
    from ..core._values import ClassValue

__all__ = ["ReviewItem", "open_for", "review_item", "review_items", "waiting_for"]


@dataclass(frozen=True)
class ReviewItem:
    """One row queued for review.  ``label`` is its label in force now (None when it was
    undone since), ``labelled_by`` who gave it; ``reviews`` the (seq, annotator, label) of
    every review since it was queued; ``corrected`` whether its label was corrected since;
    ``replaced`` whether the label under review was undone and the row labelled again (the
    round then reviews a label that is no longer in force); ``authors`` who gave or
    adopted the label under review (the first annotator, and after a correction the
    reviewer whose label it adopted): none of them may review it.

    Attributes
    ----------
    row_id : int, float, str or None
        The row queued.
    queued_seq : int
        The ``seq`` of its newest ``review_request`` event.
    queued_by : str
        Who queued it.
    label : int, float, str or None
        Its label in force now (None when it was undone since).
    labelled_by : str or None
        Who gave that label.
    reviews : tuple of (int, str, label)
        (seq, annotator, label) of every review since it was queued.
    corrected : bool
        Its label was corrected since it was queued.
    replaced : bool
        The label under review was undone and the row labelled again.
    authors : tuple of str
        Who gave or adopted the label under review.
    kept : bool
        A ``keep`` event decided the newest review's disagreement for the label.
    """

    row_id: ClassValue | None
    queued_seq: int
    queued_by: str
    label: ClassValue | None
    labelled_by: str | None
    reviews: tuple[tuple[int, str, ClassValue | None], ...]
    corrected: bool
    replaced: bool = False
    authors: tuple[str, ...] = ()
    kept: bool = False  # a keep event decided the newest review's disagreement for the label

    @property
    def status(self) -> str:
        """"waiting" (no review yet), "agrees" / "disagrees" (the newest review against the
        label in force), "kept" (it disagrees, and a ``keep`` event decided for the label
        in force), "withdrawn" (the label under review was undone, or replaced by a new
        label after an undo)."""
        if self.label is None or self.replaced:
            return "withdrawn"
        if not self.reviews:
            return "waiting"
        if self.reviews[-1][2] == self.label:
            return "agrees"
        return "kept" if self.kept else "disagrees"

    @property
    def review_label(self) -> ClassValue | None:
        """The newest reviewer's label, or None."""
        return self.reviews[-1][2] if self.reviews else None

    def may_keep(self, annotator: object) -> bool:
        """Whether ``annotator`` may decide a disagreement for the label in force.

        Not whoever gave it (or made the correction that put it in force), nor a
        reviewer of this round who answered that same label (an author of it after a
        correction); the reviewer who disagreed may, withdrawing the review.

        Parameters
        ----------
        annotator : object
            An annotator name (`same_annotator` compares names).

        Returns
        -------
        bool
            They may append the ``keep`` event.
        """
        if not str(annotator).strip() or self.label is None:
            return False
        if same_annotator(annotator, self.labelled_by or ""):
            return False
        return not any(same_annotator(annotator, a) and v == self.label
                       for _, a, v in self.reviews)

    def may_review(self, annotator: object) -> bool:
        """Whether ``annotator`` is a second annotator for this row.

        Parameters
        ----------
        annotator : object
            An annotator name.

        Returns
        -------
        bool
            A non-empty name that is none of the `authors`.
        """
        return bool(str(annotator).strip()) and not any(
            same_annotator(annotator, a) for a in self.authors)

    def to_dict(self) -> dict[str, object]:
        """The item as JSON-ready values.

        Returns
        -------
        dict
            As the evidence record's ``reviews`` list holds it, with its `status`.
        """
        return {"row_id": self.row_id, "queued_seq": self.queued_seq,
                "queued_by": self.queued_by, "label": self.label,
                "labelled_by": self.labelled_by,
                "reviews": [{"seq": s, "annotator": a, "label": v} for s, a, v in self.reviews],
                "corrected": self.corrected, "status": self.status}


class _Round(TypedDict, total=False):
    """One review round of a row while the log is read (`review_items`)."""

    seq: int
    by: str
    reviews: list[tuple[int, str, ClassValue | None]]
    corrected: bool
    target: Event | None
    authors: tuple[str, ...]
    kept: int | None


def review_items(events: Iterable[Event]) -> tuple[ReviewItem, ...]:
    """Every row queued for review, in the order of its newest queueing.

    A row queued again starts a new review round.  A round reviews the label in force
    when it was queued: a correction after it is still compared with the review, but a
    label undone and given again ends the round ("withdrawn").

    Parameters
    ----------
    events : iterable of Event
        A project's log, in sequence order.

    Returns
    -------
    tuple of ReviewItem
        One item per row queued.

    Examples
    --------

    >>> from certlib.labelling.events import Event
    >>> log = [Event(1, "label", 7, 1, "ana", "t1"),
    ...        Event(2, "review_request", 7, 1, "lead", "t2"),
    ...        Event(3, "review", 7, 0, "bob", "t3")]
    >>> [(i.row_id, i.status) for i in review_items(log)]
    [(7, 'disagrees')]
    >>> log.append(Event(4, "correct", 7, 0, "lead", "t4", undoes=1))
    >>> [(i.status, i.label, i.corrected, i.authors) for i in review_items(log)]
    [('agrees', 0, True, ('ana',))]
    >>> log += [Event(5, "undo", 7, 0, "lead", "t5", undoes=4),
    ...         Event(6, "label", 7, 1, "cy", "t6")]
    >>> [(i.status, i.label, i.labelled_by) for i in review_items(log)]
    [('withdrawn', 1, 'cy')]
    """
    events = tuple(events)
    rounds: dict[ClassValue | None, _Round] = {}
    stack: list[Event] = []  # labels in force, as `labels_in_force` keeps them
    live: dict[ClassValue | None, Event] = {}  # row id -> its label event in force
    # row id -> reviewers whose label a correction adopted
    adopted: dict[ClassValue | None, tuple[str, ...]] = {}
    for e in events:
        stack, gone = step_labels(stack, e)
        if e.kind == "label":
            live[e.row_id] = e
            adopted.pop(e.row_id, None)
        elif gone is not None:  # an undo
            live.pop(gone.row_id, None)
            adopted.pop(gone.row_id, None)
        elif e.kind == "correct":
            live[e.row_id] = e
            r = rounds.get(e.row_id)
            adopted[e.row_id] = tuple(a for _, a, v in (r["reviews"] if r else ())
                                      if v == e.label)
            if r is not None:
                r["corrected"] = True
        elif e.kind == "review_request":
            target = live.get(e.row_id)
            authors = () if target is None else \
                (target.annotator,) + adopted.get(e.row_id, ())
            rounds.pop(e.row_id, None)
            rounds[e.row_id] = {"seq": e.seq, "by": e.annotator, "reviews": [],
                                "corrected": False, "target": target, "authors": authors}
        elif e.kind == "review" and e.row_id in rounds:
            rounds[e.row_id]["reviews"].append((e.seq, e.annotator, e.label))
            rounds[e.row_id]["kept"] = None  # a new review reopens a decision
        elif e.kind == "keep" and e.row_id in rounds and e.row_id in live:
            # the decision is for that label event: a correction or an undo after it
            # (a new event in force) reopens the disagreement
            rounds[e.row_id]["kept"] = live[e.row_id].seq
    out = []
    for rid, r in rounds.items():
        lab = live.get(rid)
        # the round's label, or a correction of it made during the round
        ours = lab is not None and (lab is r["target"] or (lab.kind == "correct"
                                                          and lab.seq > r["seq"]))
        out.append(ReviewItem(rid, r["seq"], r["by"], None if lab is None else lab.label,
                              None if lab is None else lab.annotator, tuple(r["reviews"]),
                              r["corrected"], lab is not None and not ours,
                              tuple(dict.fromkeys(r["authors"])),
                              lab is not None and r.get("kept") == lab.seq))
    return tuple(out)


def review_item(events: Iterable[Event], row_id: object) -> ReviewItem | None:
    """The review state of one row.

    Parameters
    ----------
    events : iterable of Event
        A project's log.
    row_id : object
        A row id.

    Returns
    -------
    ReviewItem or None
        Its item of `review_items`, or None when it was never queued.
    """
    return next((i for i in review_items(events) if i.row_id == row_id), None)


def waiting_for(events: Iterable[Event], annotator: str) -> tuple[ReviewItem, ...]:
    """Items still waiting for a review that ``annotator`` may give.

    Not one who gave or adopted the label under review: a review is a second
    annotator's label.

    Parameters
    ----------
    events : iterable of Event
        A project's log.
    annotator : str
        The would-be reviewer.

    Returns
    -------
    tuple of ReviewItem
        The items with status "waiting" they may review.
    """
    return open_for(review_items(events), annotator)


def open_for(items: Iterable[ReviewItem], annotator: str) -> tuple[ReviewItem, ...]:
    """`waiting_for` on items already computed (`review_items`).

    Parameters
    ----------
    items : iterable of ReviewItem
        Items of `review_items`.
    annotator : str
        The would-be reviewer.

    Returns
    -------
    tuple of ReviewItem
        The items with status "waiting" they may review.
    """
    return tuple(i for i in items if i.status == "waiting" and i.may_review(annotator))
