"""`results.json` written from the report's data (its model: `rig.results.gate.GateResults`)."""

from __future__ import annotations

from rig.report.data import ReportData
from rig.results.gate import CaseResult, GateResults, TCodeResult
from rig.results.quality import QualitySummary


def gate_results(data: ReportData, quality: QualitySummary | None = None) -> GateResults:
    """The report's data as results.json holds it."""
    return GateResults(
        decision=data.decision.decision, reasons=data.decision.reasons, manifest=data.manifest,
        cases=[CaseResult.model_validate(c.model_dump(include=set(CaseResult.model_fields))) for c in data.cases],
        tcodes=[TCodeResult(code=r.code, source=r.source, label=r.label, unit=r.unit, **r.summary.model_dump())
                for r in data.tcodes],
        end_reasons=data.end_reasons, quality=quality)
