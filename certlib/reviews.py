"""Second-annotator review of labelled rows (issue 14): which rows were queued for review,
what the reviewers said, and where they disagree with the label in force.  Pure: reads an
event log (`certlib.events`); `certlib.store` writes the events.

    items = review_items(store.events(pid))
    [i for i in items if i.status == "disagrees"]     # shown to the lead
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import labels_in_force

__all__ = ["ReviewItem", "review_items", "waiting_for"]


@dataclass(frozen=True)
class ReviewItem:
    """One row queued for review.  ``label`` is its label in force now (None when it was
    undone since), ``labelled_by`` who gave it; ``reviews`` the (seq, annotator, label) of
    every review since it was queued; ``corrected`` whether its label was corrected since."""

    row_id: object
    queued_seq: int
    queued_by: str
    label: object
    labelled_by: str | None
    reviews: tuple
    corrected: bool

    @property
    def status(self) -> str:
        """"waiting" (no review yet), "agrees" / "disagrees" (the newest review against the
        label in force), "withdrawn" (the label was undone)."""
        if self.label is None:
            return "withdrawn"
        if not self.reviews:
            return "waiting"
        return "agrees" if self.reviews[-1][2] == self.label else "disagrees"

    @property
    def review_label(self):
        """The newest reviewer's label, or None."""
        return self.reviews[-1][2] if self.reviews else None

    def to_dict(self) -> dict:
        return {"row_id": self.row_id, "queued_seq": self.queued_seq,
                "queued_by": self.queued_by, "label": self.label,
                "labelled_by": self.labelled_by,
                "reviews": [{"seq": s, "annotator": a, "label": v} for s, a, v in self.reviews],
                "corrected": self.corrected, "status": self.status}


def review_items(events) -> tuple:
    """Every row queued for review, in the order of its newest queueing (a row queued
    again starts a new review round).

    >>> from certlib.events import Event
    >>> log = [Event(1, "label", 7, 1, "ana", "t1"),
    ...        Event(2, "review_request", 7, 1, "lead", "t2"),
    ...        Event(3, "review", 7, 0, "bob", "t3")]
    >>> [(i.row_id, i.status) for i in review_items(log)]
    [(7, 'disagrees')]
    >>> log.append(Event(4, "correct", 7, 0, "lead", "t4", undoes=1))
    >>> [(i.status, i.label, i.corrected) for i in review_items(log)]
    [('agrees', 0, True)]
    """
    events = tuple(events)
    rounds: dict = {}
    for e in events:
        if e.kind == "review_request":
            rounds.pop(e.row_id, None)
            rounds[e.row_id] = {"seq": e.seq, "by": e.annotator, "reviews": [], "corrected": False}
        elif e.kind == "review" and e.row_id in rounds:
            rounds[e.row_id]["reviews"].append((e.seq, e.annotator, e.label))
        elif e.kind == "correct" and e.row_id in rounds:
            rounds[e.row_id]["corrected"] = True
    live = {e.row_id: e for e in labels_in_force(events)}
    out = []
    for rid, r in rounds.items():
        lab = live.get(rid)
        out.append(ReviewItem(rid, r["seq"], r["by"], None if lab is None else lab.label,
                              None if lab is None else lab.annotator, tuple(r["reviews"]),
                              r["corrected"]))
    return tuple(out)


def waiting_for(events, annotator: str) -> tuple:
    """Items still waiting for a review that ``annotator`` may give (not the one who gave
    the label: a review is a second annotator's label)."""
    who = str(annotator).strip()
    return tuple(i for i in review_items(events)
                 if i.status == "waiting" and i.labelled_by != who)
