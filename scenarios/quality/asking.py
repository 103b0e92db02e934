"""One chat turn as the quality cases measure it: ask, read the stream, then check the saved answer.

The answer and its citations are read back from the session (what the target kept), and every citation
is traced to the hits the run's own tool calls returned. T-codes come from the run as streamed.
"""

from __future__ import annotations

from rig.measure.transcript import RunTranscript
from rig.quality import metrics
from rig.quality.context import QualityContext, answer_citations, open_pages, run_hits
from rig.quality.models import TurnRecord
from rig.verdict import Verdict

NOT_MEASURED = {
    "T3": "no status event reached the client",
    "T4": "no answer token reached the client",
    "T5": "the run ended without a full answer",
    "T6": "the run ended without a full revised answer",
    "T7": "the run record has no queue/start/end times",
    "T8": "the run record has no terminal state",
    "T11": "the run record has no round or call counts",
    "T12": "the run record has no token counts",
    "T13": "the run record has no cost",
}


def listed_tcodes(codes: list[str], measured: set[str], notes: dict[str, str] | None = None) -> dict[str, str]:
    """Each T-code the case lists, with `measured` or why it could not be."""
    notes = notes or {}
    return {c: notes.get(c) or ("measured" if c in measured else "not measured: " + NOT_MEASURED.get(c, "no value"))
            for c in codes if c.startswith("T")}


def measure_turn(ctx: QualityContext, record: TurnRecord, run: RunTranscript, allowed_docs: list[str],
                 expected_refusal: str | None = None) -> TurnRecord:
    """Fill the record from a finished run: answer, hits, traced citations, metrics and listed T-codes."""
    detail = run.detail
    assert detail is not None
    record.run_id, record.session_id = run.run_id, run.session_id
    record.state = f"{detail.state}/{detail.end_reason}"
    session = ctx.adapter.session(ctx.a, run.session_id or "")
    saved, citations = answer_citations(session, run.run_id)
    record.answer = saved if saved is not None else run.answer
    record.hits = run_hits(detail)
    for hit in record.hits:
        hit.paper_id = ctx.paper_of(hit.doc_id) or hit.paper_id
    record.citations = [metrics.trace(c, record.hits, set(allowed_docs)) for c in citations]
    open_pages(ctx, record.citations)
    answer = record.answer or ""
    refused = metrics.refuses(answer)
    completed = detail.state == "completed" and bool(answer.strip())
    record.metrics = [
        metrics.Metric(name="run_end", verdict=Verdict.of(completed), detail=record.state),
        metrics.traceability(record.citations, refused=refused),
        metrics.out_of_scope(record.citations),
        metrics.faithfulness(answer, record.citations),
        metrics.refusal(answer, expected_refusal),
    ]
    measured = {m.code for m in run.measures()}
    cost = "measured (estimate only: the target reports no actual cost)" if detail.cost.actual_usd is None else None
    record.tcodes = listed_tcodes(record.performance_codes, measured,
                                  {"T13": cost} if cost and "T13" in measured else None)
    return record
