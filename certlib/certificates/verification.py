"""The result of checking an evidence record against a recomputation, shared by the
model-choice verifier (`certlib.labelling.record.verify_record`, SPEC section 12) and the audit
verifier (`certlib.audit.record.verify_record`, SPEC section 11)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import PoolFileError

__all__ = ["AUDIT_KIND", "RECORD_FORMAT", "Verification", "refuse_other_kind", "unique_keys"]

RECORD_FORMAT = "certlib-labelling-record"  # a model-choice record's "format"
AUDIT_KIND = "certlib-audit"  # an audit record's "kind"


def refuse_other_kind(rec: object, *, name: str, want: str) -> None:
    """Refuse an evidence record of the other kind, naming the command that checks it.

    Parameters
    ----------
    rec : object
        The parsed record (anything but a dict passes).
    name : str
        The file's name, as the message shows it.
    want : {"labelling", "audit"}
        The kind the caller checks.

    Raises
    ------
    PoolFileError
        When ``rec`` is the other kind of evidence record than ``want``.
    """
    if not isinstance(rec, dict):
        return
    if want == "labelling" and rec.get("kind") == AUDIT_KIND:
        raise PoolFileError(f"record file {name} is an update audit's record; check it "
                            "with `certlib verify-audit RECORD STREAM`")
    if want == "audit" and rec.get("format") == RECORD_FORMAT:
        raise PoolFileError(f"record file {name} is a labelling project's evidence record, "
                            "not an update audit's; check it with `certlib verify-record "
                            "RECORD POOL` (or certlib.labelling.store.verify_record)")


@dataclass(frozen=True)
class Verification:
    """``mismatches`` lists every number or setting of the record that the recomputation
    does not reproduce, one readable line each; ``ok`` is True exactly when there is none.
    ``recomputed`` holds the verifier's own outcome (its keys depend on the record kind).
    ``notes`` says what a verified record leaves unproven (e.g. a record without a hash
    chain: who labelled and when is taken at its word); notes never fail it.

    >>> Verification(("selected: record says 'b', recomputed 'a'",)).ok
    False
    """

    mismatches: tuple[str, ...] = ()
    recomputed: dict[str, object] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "mismatches", tuple(self.mismatches))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def ok(self) -> bool:
        """True exactly when the recomputation reproduces every number and setting."""
        return not self.mismatches

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: ``ok``, the list of mismatches, and ``notes`` when there are
        any."""
        out: dict[str, object] = {"ok": self.ok, "mismatches": list(self.mismatches)}
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def unique_keys(pairs: Iterable[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` for `json.loads`: a JSON object that names a key twice is
    refused.  ``json.loads`` keeps the last value, so a record could show a reader one
    verdict early in the file and give the verifier another.

    Parameters
    ----------
    pairs : iterable of (str, object)
        The key-value pairs of one JSON object, in file order.

    Returns
    -------
    dict
        The object.

    Raises
    ------
    ValueError
        When a key appears twice.

    Examples
    --------
    >>> import json
    >>> json.loads('{"verdict": "safe", "verdict": "continue"}', object_pairs_hook=unique_keys)
    Traceback (most recent call last):
    ValueError: the key 'verdict' appears twice in one JSON object
    """
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one JSON object")
        out[key] = value
    return out
