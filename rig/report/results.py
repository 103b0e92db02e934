"""`results.json` — the machine-readable result of a gate (or quality) run, as a typed model.

Its JSON Schema is published as `docs/schemas/results.schema.json` (`python -m rig.schemas --write`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from rig.report.data import CaseResult, ReportData
from rig.results.quality import QualitySummary
from rig.stats import Summary


class TCodeResult(Summary):
    code: str
    source: str
    label: str | None
    unit: str


class GateResults(BaseModel):
    """The decision with its reasons, the manifest, every case with its items, T-codes and end reasons."""

    decision: Literal["pass", "fail", "undecided", "recorded"]
    reasons: list[str]
    manifest: dict[str, Any]
    cases: list[CaseResult]
    tcodes: list[TCodeResult]
    end_reasons: dict[str, int]
    quality: QualitySummary | None = None  # a quality run's per-metric summary


def gate_results(data: ReportData, quality: QualitySummary | None = None) -> GateResults:
    return GateResults(
        decision=data.decision.decision, reasons=data.decision.reasons, manifest=data.manifest,
        cases=[CaseResult.model_validate(c.model_dump(include=set(CaseResult.model_fields))) for c in data.cases],
        tcodes=[TCodeResult(code=r.code, source=r.source, label=r.label, unit=r.unit, **r.summary.model_dump())
                for r in data.tcodes],
        end_reasons=data.end_reasons, quality=quality)
