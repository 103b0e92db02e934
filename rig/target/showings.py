"""Where the target first showed each capability during a gate: "absent" is decided per target, not per item.

A piece of evidence missing from one run is a missing capability only if the target never showed it: a target that
sent spans for other runs, or named pages on other records, and not here, failed to produce it here. Each first
showing is kept (with the case and the evidence that showed it) in the store's `showings` meta, so a resumed gate
still knows what the target showed before.

"Elsewhere" includes later: an item judged BLOCKED because the target had not yet shown a capability is kept as an
`Absence` (store meta `absences`); when the gate's cases have run, `rejudge` turns each one whose capability the
target showed afterwards into FAIL with that showing as evidence, and its case's verdict follows.
"""

from __future__ import annotations

from pydantic import BaseModel

from rig.evidence import EvidenceStore
from rig.verdict import Item, Verdict, aggregate


class Showing(BaseModel):
    """The first time the rig saw the target show a capability."""

    capability: str
    where: str  # what showed it: "run r-1's record: 4 hits with pages", "span 'run' of trace 4bf9…"
    case_id: int | None = None
    evidence_id: int | None = None


class Absence(BaseModel):
    """An item judged BLOCKED because the target had not shown `capability` anywhere in the gate yet."""

    rep: int
    case_id: int
    item: str
    capability: str
    what: str  # the evidence the target did not produce there


class Showings:
    """Each capability's first showing in this gate, kept in the store as it is seen, and the absences judged before
    one came."""

    def __init__(self, store: EvidenceStore | None = None) -> None:
        self._store = store
        kept = store.meta("showings", {}) if store is not None else {}
        self._first = {k: Showing.model_validate(v) for k, v in kept.items()}
        self._absences = [Absence.model_validate(a) for a in (store.meta("absences", []) if store is not None else [])]

    def missed(self, absence: Absence) -> None:
        """Keep an item judged BLOCKED for want of a showing, to be judged again when the gate's cases have run."""
        self._absences.append(absence)
        if self._store is not None:
            self._store.set_meta("absences", [a.model_dump() for a in self._absences])

    def saw(self, capability: str, where: str, *, case_id: int | None = None, evidence_id: int | None = None) -> None:
        """Note that the target showed `capability` (only its first showing is kept)."""
        if capability in self._first:
            return
        self._first[capability] = Showing(capability=capability, where=where, case_id=case_id, evidence_id=evidence_id)
        if self._store is not None:
            self._store.set_meta("showings", {k: v.model_dump() for k, v in self._first.items()})

    def first(self, capability: str) -> Showing | None:
        return self._first.get(capability)

    def absences(self) -> list[Absence]:
        return list(self._absences)


def rejudge(store: EvidenceStore, showings: Showings) -> dict[tuple[int, int], tuple[Verdict, str]]:
    """Turn each absence whose capability the target showed later in the gate into FAIL (the showing as evidence);
    returns the new verdict of each case that changed, by (rep, case id)."""
    changed: dict[tuple[int, int], tuple[Verdict, str]] = {}
    for absence in showings.absences():
        shown = showings.first(absence.capability)
        items = store.items(absence.rep, absence.case_id)
        item = next((i for i in items if i.name == absence.item and i.verdict == Verdict.BLOCKED), None)
        if shown is None or item is None:
            continue
        e = store.add_evidence(absence.rep, absence.case_id, "observation",
                               f"{absence.capability}: where the target showed it (later in this gate)", shown.model_dump())
        where = shown.where + (f", case {shown.case_id}" if shown.case_id is not None else "")
        store.replace_item(absence.rep, absence.case_id, Item(
            name=item.name, verdict=Verdict.FAIL, required=item.required,
            reason=f"{absence.what}, though the target showed {absence.capability} later in this gate ({where})",
            evidence_ids=[*item.evidence_ids, e, *([shown.evidence_id] if shown.evidence_id is not None else [])]))
        verdict, reason = aggregate(store.items(absence.rep, absence.case_id))
        store.end_case(absence.rep, absence.case_id, verdict, reason)
        changed[(absence.rep, absence.case_id)] = (verdict, reason)
    return changed
