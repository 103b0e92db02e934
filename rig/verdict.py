"""The six verdicts and the eval set's aggregation rule.

PASS only when every required item has passing evidence; FAIL as soon as any required item is shown
failing; an unknown (U) never cancels a shown failure; BLOCKED when a precondition is missing; NOT_RUN
when it was not executed; N/A when it was confirmed not to apply. Verdicts are never averaged.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    U = "U"
    BLOCKED = "BLOCKED"
    NOT_RUN = "NOT_RUN"
    NA = "N/A"

    @classmethod
    def of(cls, ok: bool | None) -> Verdict:
        """PASS for True, FAIL for False, U when the evidence could not decide (None)."""
        return cls.U if ok is None else cls.PASS if ok else cls.FAIL


class Item(BaseModel):
    """A sub-item of a case with its own verdict, the reason, and the evidence it rests on."""

    name: str
    verdict: Verdict
    reason: str = ""
    evidence_ids: list[int] = Field(default_factory=list)
    required: bool = True


def aggregate(items: list[Item]) -> tuple[Verdict, str]:
    """A case's verdict from its items, with the reason that decided it."""
    required = [i for i in items if i.required]
    if not required:
        return Verdict.U, "no required item was recorded"
    failed = [i for i in required if i.verdict == Verdict.FAIL]
    if failed:
        return Verdict.FAIL, "; ".join(f"{i.name}: {i.reason}" for i in failed)
    for verdict in (Verdict.BLOCKED, Verdict.U, Verdict.NOT_RUN):
        hit = [i for i in required if i.verdict == verdict]
        if hit:
            return verdict, "; ".join(f"{i.name}: {i.reason}" for i in hit)
    if all(i.verdict == Verdict.NA for i in required):
        return Verdict.NA, "; ".join(i.reason for i in required)
    return Verdict.PASS, "every required item has passing evidence"


def final_verdict(repeats: list[Verdict]) -> tuple[Verdict, str | None]:
    """One verdict over repetitions; a flip is reported, and a shown failure is never cancelled."""
    distinct = set(repeats)
    if len(distinct) == 1:
        return repeats[0], None
    if Verdict.FAIL in distinct:
        return Verdict.FAIL, f"verdict flipped across repetitions: {[v.value for v in repeats]}"
    return Verdict.U, f"verdict flipped across repetitions: {[v.value for v in repeats]}"
