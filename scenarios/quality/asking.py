"""One chat turn as the quality cases measure it: ask, read the stream, then check the saved answer.

The answer and its citations are read back from the session (what the target kept), and every citation
is traced to the hits the run's own tool calls returned. T-codes come from the run as streamed.
"""

from __future__ import annotations

from rig.adapters import Citation, CitationEvent
from rig.measure import RunTranscript, run_measures
from rig.pdftext import place_quote
from rig.quality import QualityContext, answer_citations, metrics, open_pages, run_hits
from rig.results import RankedHit, TurnRecord
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
    """Fill the record from a finished run: answer, hits, traced citations, metrics and listed T-codes.

    The answer and citations are the saved ones where the target keeps sessions, the streamed ones where it keeps
    none; the hits are the run record's tool calls, or — without those — the sources the stream named, in its order
    (`record.fixture["read_from"]` says which)."""
    detail = run.detail
    record.run_id, record.session_id = run.run_id, run.session_id
    if detail is not None:
        record.state = f"{detail.state}/{detail.end_reason}"
    else:
        end = run.terminal
        record.state = f"{end.state}/{end.reason}" if end is not None else "stream broke"
    if not ctx.caps.missing("sessions"):
        session = ctx.adapter.session(ctx.a, run.session_id or "")
        saved, citations = answer_citations(session, run.run_id)
        record.answer = saved if saved is not None else run.answer
    else:
        record.answer, citations = run.answer, run.citations()
    record.hits = run_hits(detail) if detail is not None and not ctx.caps.missing("run_tool_calls") \
        else stream_hits(run)
    record.fixture["read_from"] = {"answer": "session" if not ctx.caps.missing("sessions") else "stream",
                                   "hits": "run record" if detail is not None and not ctx.caps.missing(
                                       "run_tool_calls") else "stream sources"}
    for hit in record.hits:
        hit.paper_id = ctx.paper_of(hit.doc_id) or hit.paper_id
    placed = place_pages(ctx, citations)
    record.citations = [metrics.trace(c, record.hits, set(allowed_docs)) for c in placed]
    open_pages(ctx, record.citations)
    answer = record.answer or ""
    refused = metrics.refuses(answer)
    ended = detail.state if detail is not None else run.terminal.state if run.terminal else None
    completed = ended == "completed" and bool(answer.strip())
    record.metrics = [
        metrics.Metric(name="run_end", verdict=Verdict.of(completed), detail=record.state),
        metrics.traceability(record.citations, refused=refused, scoped=not ctx.caps.missing("scope")),
        metrics.out_of_scope(record.citations, scoped=not ctx.caps.missing("scope")),
        metrics.faithfulness(answer, record.citations),
        metrics.refusal(answer, expected_refusal),
    ]
    measured = {m.code for m in run_measures(run)}
    cost = "measured (estimate only: the target reports no actual cost)" \
        if detail is not None and detail.cost.actual_usd is None else None
    notes = {"T13": cost} if cost and "T13" in measured else {}
    if detail is None:
        notes.update({c: "not measured: the target keeps no run record" for c in RECORD_CODES if c not in measured})
    record.tcodes = listed_tcodes(record.performance_codes, measured, notes or None)
    return record


RECORD_CODES = ("T7", "T11", "T12", "T13")  # what only a run record can give


def stream_hits(run: RunTranscript) -> list[RankedHit]:
    """The sources the run's stream named, in its order, as its hits (with the text it gave of each)."""
    out: list[RankedHit] = []
    for e in run.events:
        if isinstance(e, CitationEvent):
            text = e.data.get("text")
            out.append(RankedHit(rank=len(out) + 1, doc_id=str(e.data.get("doc_id") or ""), page=e.page,
                                 chunk_id=str(e.data.get("chunk_id") or e.citation_id),
                                 text=text if isinstance(text, str) else ""))
    return out


def place_pages(ctx: QualityContext, citations: list[Citation]) -> list[Citation]:
    """Citations with the physical pages they rest on: the target's, or — where it names none — the one page of
    the original the rig uploaded on which the quote stands (none when it stands on no page, or on several)."""
    if not ctx.caps.missing("citation_pages"):
        return citations
    files = {e.doc_id: ctx.corpus_dir / e.file for e in ctx.target.setup.ingest} if ctx.corpus_dir else {}
    return [c.model_copy(update={"page": place_quote(files[c.doc_id], c.quote)}) if c.doc_id in files and c.page is None
            else c for c in citations]
