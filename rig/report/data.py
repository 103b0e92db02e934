"""Everything a report shows, read back from the evidence store (never from memory of the run)."""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, Field

from rig.coverage import CheckedItem, CoverageMatrix, Exercise, build_matrix
from rig.evidence import CaseRow, EvidenceRow, EvidenceStore
from rig.measure.aggregate import TCodeRow, headlines, run_ends, tcode_rows
from rig.measure.events import Measure
from rig.policy import CaseVerdict, Decision
from rig.report.traces import TraceTree, case_traces
from rig.results.gate import CaseResult
from rig.runmanifest import RunManifest
from rig.verdict import Verdict, final_verdict

__all__ = ["CaseReport", "ReportData", "RunRow", "TCodeRow", "build_report_data", "store_verdicts"]


class CaseReport(CaseResult):
    """A case as the report shows it: also its evidence and how long it took."""

    evidence: list[EvidenceRow] = Field(default_factory=list)
    duration_s: float | None = None


class RunRow(BaseModel):
    """A run the store recorded, with its trace and how many spans arrived for it."""

    run_id: str
    case_id: int | None
    trace_id: str | None
    state: str | None
    end_reason: str | None
    spans: int


class ReportData(BaseModel):
    manifest: RunManifest
    decision: Decision
    cases: list[CaseReport]
    tcodes: list[TCodeRow]
    end_reasons: dict[str, int]
    runs: list[RunRow]
    traces: list[TraceTree] = Field(default_factory=list)
    coverage: CoverageMatrix | None = None  # the gate's operations × actor × state (rig.coverage)


def _by_case(store: EvidenceStore) -> dict[int, list[CaseRow]]:
    by_case: dict[int, list[CaseRow]] = defaultdict(list)
    for row in store.cases():
        by_case[row.case_id].append(row)
    return dict(sorted(by_case.items()))


def store_verdicts(store: EvidenceStore) -> tuple[list[CaseVerdict], set[int]]:
    """Each case's one verdict over its repetitions (what the gate decides on), and the cases that flipped."""
    out: list[CaseVerdict] = []
    flipped: set[int] = set()
    for case_id, reps in _by_case(store).items():
        verdict, flip = final_verdict([r.verdict or Verdict.NOT_RUN for r in reps])
        if flip:
            flipped.add(case_id)
        out.append(CaseVerdict(case_id=case_id, verdict=verdict, reason=flip or (reps[-1].reason or "")))
    return out, flipped


def build_report_data(store: EvidenceStore, decision: Decision, manifest: RunManifest,
                      evidence_per_case: int = 400) -> ReportData:
    """The report's content for a decision already taken (`rig.policy.decide_gate`)."""
    by_case = _by_case(store)
    measures = store.measures()
    per_case_measures: dict[int, list[Measure]] = defaultdict(list)
    for m in measures:
        if m.case_id is not None:
            per_case_measures[m.case_id].append(m)
    cases = []
    for case_id, reps in by_case.items():
        last = reps[-1]
        repeats = [r.verdict or Verdict.NOT_RUN for r in reps]
        verdict, flip = final_verdict(repeats)
        duration = ((last.ended_ms or 0) - (last.started_ms or 0)) / 1000 if last.ended_ms else None
        cases.append(CaseReport(
            record_id=last.record_id, case_id=case_id, module=last.module, name=last.name, verdict=verdict,
            reason=flip or (last.reason or ""), repeats=repeats, items=store.items(last.rep, case_id),
            evidence=[e for e in store.evidence(last.rep, case_id) if e.kind not in ("http", "coverage")
                      ][:evidence_per_case],
            metrics=headlines(per_case_measures.get(case_id, [])), duration_s=duration))
    end_reasons = run_ends(measures)
    traces = case_traces(store)
    counts = {t.trace_id: t.span_count for t in traces}

    def span_count(trace_id: str | None) -> int:
        """From the case traces already read; a run in a trace of its own (a target that ignored traceparent)."""
        if not trace_id:
            return 0
        return counts[trace_id] if trace_id in counts else len(store.spans(trace_id))

    runs = [RunRow(run_id=r.run_id, case_id=r.case_id, trace_id=r.trace_id, state=r.state, end_reason=r.end_reason,
                   spans=span_count(r.trace_id)) for r in store.runs()]
    checked = [CheckedItem(case_id=c.case_id, name=i.name, verdict=i.verdict.value) for c in cases for i in c.items]
    return ReportData(manifest=manifest, decision=decision, cases=cases, tcodes=tcode_rows(measures),
                      end_reasons=dict(end_reasons), runs=runs, traces=traces, coverage=coverage_of(store, checked))


def coverage_of(store: EvidenceStore, items: list[CheckedItem] | None = None) -> CoverageMatrix | None:
    """The coverage matrix of the cases' recorded operation calls and of the items that held their answers to a
    principle (None: a run that recorded no call)."""
    rows = store.evidence(kind="coverage")
    if not rows:
        return None
    return build_matrix([Exercise.model_validate(x) for e in rows for x in (e.data if isinstance(e.data, list) else [])],
                        items)
