"""A labelling record re-chained after an edit, for the tests of the record and the
store: what anyone can do without the store (`certlib.labelling.record`)."""

from __future__ import annotations

import copy
import hashlib

from certlib.labelling.events import Event, canonical_json, event_hash


def rechained(rec: dict) -> dict:
    """The record with its hash chain recomputed after an edit, so that a check other
    than the chain is seen to catch the edit alone (and the store's chain tells it
    apart)."""
    rec = copy.deepcopy(rec)
    pinned = rec["chain"]["project"]
    prev = hashlib.sha256(canonical_json(pinned)).hexdigest()
    for e in rec["events"]:
        ev = Event(e["seq"], e["kind"], e["row_id"], e["label"], e["annotator"], e["at"],
                   e["undoes"], e["subject"])
        e["prev_hash"], e["hash"] = prev, event_hash(pinned["id"], ev, prev)
        prev = e["hash"]
    rec["chain"]["head"] = prev
    return rec
