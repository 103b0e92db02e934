"""The quality run's per-metric results, re-read from the evidence store (kind `quality_turn`).

Each metric is summarised on its own over the case-turns where it applies; no metric is folded into
another and no dimension into a total. The mechanical bars (traceability 1.00, no out-of-scope citation)
decide the run; the judged dimensions stay pending until a judge scores the sheets.
"""

from __future__ import annotations

from collections import Counter

from rig.evidence import EvidenceStore
from rig.policy import Decision
from rig.quality.metrics import TRACEABILITY_BAR
from rig.results.quality import MetricSummary, QualityReport, QualitySummary, TurnRecord, TurnResult

METRICS = ("traceability", "faithfulness", "recall@10", "nDCG@10", "refusal", "out_of_scope_citations")


def turn_records(store: EvidenceStore) -> list[TurnRecord]:
    """The last record of each case-turn, in eval-set order."""
    latest: dict[int, TurnRecord] = {}
    for e in store.evidence(kind="quality_turn"):
        record = TurnRecord.model_validate(e.data)
        latest[record.key] = record
    return [latest[k] for k in sorted(latest)]


def summarize_metric(name: str, records: list[TurnRecord]) -> MetricSummary:
    found = [(r, m) for r in records if (m := r.metric(name)) is not None and m.value is not None]
    values = [m.value for _, m in found if m.value is not None]
    num = sum(m.numerator or 0 for _, m in found)
    den = sum(m.denominator or 0 for _, m in found)
    below = [r.record_id for r, m in found if m.verdict is not None and m.verdict.value == "FAIL"]
    return MetricSummary(name=name, turns=len(found), pooled=round(num / den, 4) if den else None,
                         mean=round(sum(values) / len(values), 4) if values else None,
                         minimum=min(values) if values else None, below_bar=below)


def quality_summary(store: EvidenceStore, records: list[TurnRecord] | None = None) -> QualitySummary:
    """Per-metric results and the decision; pass `records` when they were already read from the store."""
    records = turn_records(store) if records is None else records
    cases = store.cases()
    verdicts = Counter((c.verdict.value if c.verdict else "running") for c in cases)
    states = Counter(r.state for r in records)
    recorded = {r.key for r in records}
    for c in cases:  # turns stopped before they had a record (BLOCKED, NOT_RUN) count by their verdict
        if c.verdict is not None and c.verdict.value in ("NOT_RUN", "BLOCKED") and c.case_id not in recorded:
            states[c.verdict.value] += 1
    summaries = [summarize_metric(n, records) for n in METRICS]
    return QualitySummary(turns=len(cases), states=dict(states), verdicts=dict(verdicts), metrics=summaries,
                          decision=decide_quality(summaries, len(cases), sum(1 for c in cases if c.status == "done")))


def decide_quality(summaries: list[MetricSummary], turns: int, recorded: int) -> Decision:
    """Pass when every turn is recorded, traceability is 1.00 on every turn, and nothing cites outside scope."""
    by = {s.name: s for s in summaries}
    reasons: list[str] = []
    failed = False
    trace = by["traceability"]
    if trace.below_bar:
        failed = True
        reasons.append(f"traceability below {TRACEABILITY_BAR:.2f} in {len(trace.below_bar)} turn(s): "
                       + ", ".join(trace.below_bar[:8]) + f" (pooled {trace.pooled})")
    scope = by["out_of_scope_citations"]
    if scope.below_bar:
        failed = True
        reasons.append(f"citations outside the allowed papers in {len(scope.below_bar)} turn(s): "
                       + ", ".join(scope.below_bar[:8]))
    refusal = by["refusal"]
    if refusal.below_bar:
        failed = True
        reasons.append("unanswerable question(s) answered without saying so: " + ", ".join(refusal.below_bar))
    if recorded < turns:
        reasons.append(f"only {recorded} of {turns} case-turns ended in a recorded state")
        return Decision(decision="fail" if failed else "undecided", reasons=reasons)
    if trace.turns == 0:
        reasons.append("no turn had a citation to trace")
        return Decision(decision="fail" if failed else "undecided", reasons=reasons)
    if not failed:
        reasons.append(f"traceability 1.00 over {trace.turns} turn(s) ({trace.pooled} pooled); "
                       "no out-of-scope citation; judged dimensions await the judge sheets")
    return Decision(decision="fail" if failed else "pass", reasons=reasons)


def quality_report(summary: QualitySummary, records: list[TurnRecord]) -> QualityReport:
    return QualityReport(summary=summary, turns=[
        TurnResult(record_id=r.record_id, kind=r.kind, state=r.state, run_id=r.run_id,
                   metrics={m.name: m for m in r.metrics},
                   tcodes=r.tcodes) for r in records])
