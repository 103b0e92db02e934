"""Where the target first showed each capability during a gate: "absent" is decided per target, not per item.

A piece of evidence missing from one run is a missing capability only if the target never showed it: a target that
sent spans for other runs, or named pages on other records, and not here, failed to produce it here. Each first
showing is kept (with the case and the evidence that showed it) in the store's `showings` meta, so a resumed gate
still knows what the target showed before.
"""

from __future__ import annotations

from pydantic import BaseModel

from rig.evidence import EvidenceStore


class Showing(BaseModel):
    """The first time the rig saw the target show a capability."""

    capability: str
    where: str  # what showed it: "run r-1's record: 4 hits with pages", "span 'run' of trace 4bf9…"
    case_id: int | None = None
    evidence_id: int | None = None


class Showings:
    """Each capability's first showing in this gate, kept in the store as it is seen."""

    def __init__(self, store: EvidenceStore | None = None) -> None:
        self._store = store
        kept = store.meta("showings", {}) if store is not None else {}
        self._first = {k: Showing.model_validate(v) for k, v in kept.items()}

    def saw(self, capability: str, where: str, *, case_id: int | None = None, evidence_id: int | None = None) -> None:
        """Note that the target showed `capability` (only its first showing is kept)."""
        if capability in self._first:
            return
        self._first[capability] = Showing(capability=capability, where=where, case_id=case_id, evidence_id=evidence_id)
        if self._store is not None:
            self._store.set_meta("showings", {k: v.model_dump() for k, v in self._first.items()})

    def first(self, capability: str) -> Showing | None:
        return self._first.get(capability)
