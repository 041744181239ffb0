"""The result of checking an evidence record against a recomputation, shared by the
model-choice verifier (`certlib.record.verify_record`, SPEC section 12) and the audit
verifier (`certlib.audit.record.verify_record`, SPEC section 11)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Verification"]


@dataclass(frozen=True)
class Verification:
    """``mismatches`` lists every number or setting of the record that the recomputation
    does not reproduce, one readable line each; ``ok`` is True exactly when there is none.
    ``recomputed`` holds the verifier's own outcome (its keys depend on the record kind).

    >>> Verification(("selected: record says 'b', recomputed 'a'",)).ok
    False
    """

    mismatches: tuple = ()
    recomputed: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "mismatches", tuple(self.mismatches))

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def to_dict(self) -> dict:
        return {"ok": self.ok, "mismatches": list(self.mismatches)}
