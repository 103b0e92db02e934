"""`results.json` — the machine-readable gate result."""

from __future__ import annotations

from typing import Any

from rig.report.data import ReportData


def results_json(data: ReportData) -> dict[str, Any]:
    return {
        "decision": data.decision.decision,
        "reasons": data.decision.reasons,
        "manifest": data.manifest,
        "cases": [{
            "record_id": c.record_id, "case_id": c.case_id, "module": c.module, "name": c.name,
            "verdict": c.verdict.value, "reason": c.reason, "repeats": [v.value for v in c.repeats],
            "items": [{"name": i.name, "verdict": i.verdict.value, "reason": i.reason, "required": i.required,
                       "evidence_ids": i.evidence_ids} for i in c.items],
            "metrics": c.metrics,
        } for c in data.cases],
        "tcodes": [{"code": r.code, "source": r.source, "label": r.label, "unit": r.unit,
                    **r.summary.model_dump()} for r in data.tcodes],
        "end_reasons": data.end_reasons,
        **data.extras,
    }
