"""Everything a report shows, read back from the evidence store (never from memory of the run)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from rig.evidence import EvidenceStore, Measure
from rig.policy import CaseVerdict, Decision
from rig.report.traces import TraceTree, case_traces
from rig.stats import Summary, summarize
from rig.verdict import Item, Verdict

TIME_CODES = ("T1", "T2", "T3", "T4", "T5", "T6", "T7", "T9", "send_lag")


class CaseReport(BaseModel):
    record_id: str
    case_id: int
    module: str
    name: str
    verdict: Verdict
    reason: str
    repeats: list[Verdict] = Field(default_factory=list)
    items: list[Item] = Field(default_factory=list)
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    metrics: dict[str, dict[str, Any]] = Field(default_factory=dict)
    duration_s: float | None = None


class TCodeRow(BaseModel):
    code: str
    source: str
    label: str | None
    unit: str
    summary: Summary


class ReportData(BaseModel):
    manifest: dict[str, Any]
    decision: Decision
    cases: list[CaseReport]
    tcodes: list[TCodeRow]
    end_reasons: dict[str, int]
    runs: list[dict[str, Any]]
    extras: dict[str, Any] = Field(default_factory=dict)
    traces: list[TraceTree] = Field(default_factory=list)


def _group_label(m: Measure) -> str | None:
    """Labels that describe a kind of value stay apart; per-item labels (paper ids, T1) fold together."""
    if m.label is None:
        return None
    if m.code in ("T1",) and not m.label.startswith("ingest"):
        return None
    if m.label.startswith("first_text_kind="):
        return m.label
    if m.label.startswith("no_body:"):
        return "no_body"
    return m.label


def tcode_rows(measures: list[Measure]) -> list[TCodeRow]:
    groups: dict[tuple[str, str, str | None, str], list[float]] = defaultdict(list)
    for m in measures:
        if m.code == "T8":
            continue
        groups[(m.code, m.source, _group_label(m), m.unit)].append(m.value)
    rows = [TCodeRow(code=c, source=s, label=lbl, unit=u, summary=summarize(v)) for (c, s, lbl, u), v in groups.items()]
    order = {c: i for i, c in enumerate(["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T9", "T10", "T11", "T12", "T13"])}
    return sorted(rows, key=lambda r: (order.get(r.code, 99), r.code, r.source, r.label or ""))


def case_metrics(measures: list[Measure]) -> dict[str, dict[str, Any]]:
    """Per-case T-codes, client source first, times only (what results.json carries)."""
    out: dict[str, dict[str, Any]] = {}
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for m in measures:
        if m.unit == "ms" and (m.label is None or m.label.startswith("first_text_kind")) and m.code in TIME_CODES:
            by[(m.code, m.source)].append(m.value)
    for (code, source), values in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1] != "client")):
        if code not in out:
            s = summarize(values)
            out[code] = {"source": source, "count": s.count, "p50": s.p50, "p90": s.p90, "p95": s.p95, "p99": s.p99}
    return out


def final_verdict(repeats: list[Verdict]) -> tuple[Verdict, str | None]:
    """One verdict over repetitions; a flip is reported, and a shown failure is never cancelled."""
    distinct = set(repeats)
    if len(distinct) == 1:
        return repeats[0], None
    if Verdict.FAIL in distinct:
        return Verdict.FAIL, f"verdict flipped across repetitions: {[v.value for v in repeats]}"
    return Verdict.U, f"verdict flipped across repetitions: {[v.value for v in repeats]}"


def build_report_data(store: EvidenceStore, decision: Decision, manifest: dict[str, Any],
                      evidence_per_case: int = 400) -> ReportData:
    rows = store.cases()
    by_case: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        by_case[row.case_id].append(row)
    measures = store.measures()
    per_case_measures: dict[int, list[Measure]] = defaultdict(list)
    for m in measures:
        if m.case_id is not None:
            per_case_measures[m.case_id].append(m)
    cases = []
    for case_id, reps in sorted(by_case.items()):
        last = reps[-1]
        repeats = [r.verdict or Verdict.NOT_RUN for r in reps]
        verdict, flip = final_verdict(repeats)
        duration = ((last.ended_ms or 0) - (last.started_ms or 0)) / 1000 if last.ended_ms else None
        cases.append(CaseReport(
            record_id=last.record_id, case_id=case_id, module=last.module, name=last.name, verdict=verdict,
            reason=flip or (last.reason or ""), repeats=repeats, items=store.items(last.rep, case_id),
            evidence=[e for e in store.evidence(last.rep, case_id) if e["kind"] != "http"][:evidence_per_case],
            metrics=case_metrics(per_case_measures.get(case_id, [])), duration_s=duration))
    end_reasons: dict[str, int] = defaultdict(int)
    for m in measures:
        if m.code == "T8" and m.label:
            end_reasons[m.label] += int(m.value)
    traces = case_traces(store)
    counts = {t.trace_id: t.span_count for t in traces}

    def span_count(trace_id: str | None) -> int:
        """From the case traces already read; a run in a trace of its own (a target that ignored traceparent)."""
        if not trace_id:
            return 0
        return counts[trace_id] if trace_id in counts else len(store.spans(trace_id))

    runs = [{"run_id": r["run_id"], "case_id": r["case_id"], "trace_id": r["trace_id"], "state": r["state"],
             "end_reason": r["end_reason"], "spans": span_count(r["trace_id"])} for r in store.runs()]
    return ReportData(manifest=manifest, decision=decision, cases=cases, tcodes=tcode_rows(measures),
                      end_reasons=dict(end_reasons), runs=runs, traces=traces)


def case_verdicts(data: ReportData) -> list[CaseVerdict]:
    return [CaseVerdict(case_id=c.case_id, verdict=c.verdict, reason=c.reason) for c in data.cases]
