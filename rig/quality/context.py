"""What a quality case-turn works with: the recording context plus its eval-set turn and the library's ids."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rig.adapters.models import Citation, RunDetail, Session
from rig.catalog.models import QualityTurn
from rig.evidence import EvidenceStore
from rig.pdftext import page_texts
from rig.results.quality import CitedSource, RankedHit, TurnRecord
from rig.target.recording import RecordingContext
from rig.target.session import TargetSession
from rig.verdict import Verdict

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from rig.telemetry.tracing import RigTracer


class QualityContext(RecordingContext):
    """One case-turn: its record id, allowed papers, and `record()` that stores the turn's result."""

    def __init__(self, key: int, turn: QualityTurn, store: EvidenceStore, target: TargetSession, *,
                 tracer: RigTracer, span: Span, corpus_dir: Path | None = None) -> None:
        super().__init__(1, key, store, target, tracer=tracer, span=span)
        self.turn = turn
        self.corpus_dir = corpus_dir  # the rig's own copies of what it uploaded (pages it derives, judges read)

    @property
    def project(self) -> str:
        return self.target.setup.project_a

    def doc_ids(self, papers: list[str]) -> list[str]:
        """doc_ids of papers in A's library; a paper the library lacks is left out (and shows in `dropped`)."""
        return [self.target.setup.docs[p] for p in papers if p in self.target.setup.docs]

    def paper_of(self, doc_id: str) -> str | None:
        """The paper id of one of the library's documents (None for a document outside it)."""
        return self._papers.get(doc_id)

    @cached_property
    def _papers(self) -> dict[str, str]:
        return {doc: paper for paper, doc in self.target.setup.docs.items()}

    def base_record(self, kind: str) -> TurnRecord:
        t = self.turn
        return TurnRecord(key=self.key, record_id=t.record_id, sheet=t.sheet, case_id=t.case_id, turn=t.turn,
                          name=t.name, kind=kind, dimensions=t.dimension_codes,
                          performance_codes=t.performance_codes, allowed_papers=t.allowed_paper_ids,
                          question=t.prompt, state="started")

    def record(self, record: TurnRecord) -> int:
        """Store the turn's record, an item per metric with a bar, and a U item per judged dimension."""
        eid = self.evidence("quality_turn", f"{record.record_id}: {record.state}", record)
        for m in record.metrics:
            if m.verdict is not None:
                self.item(m.name, m.verdict, m.detail if m.value is None else f"{m.value:g} — {m.detail}", eid,
                          required=m.verdict != Verdict.NA)
        for code in record.dimensions:
            self.item(code, Verdict.U, "awaiting a judge: see the judge sheet", eid)
        return eid


def run_hits(detail: RunDetail) -> list[RankedHit]:
    """Every hit the run's tool calls returned, in call order (text kept for faithfulness and judges)."""
    out: list[RankedHit] = []
    for call in detail.tool_calls:
        for h in call.hits:
            out.append(RankedHit(rank=len(out) + 1, doc_id=h.doc_id, page=h.page, chunk_id=h.chunk_id,
                                 text=h.text or ""))
    return out


def answer_citations(session: Session, run_id: str) -> tuple[str | None, list[Citation]]:
    """The saved answer of a run and its citations, as the session holds them (not as the stream said)."""
    for m in session.messages:
        if m.role == "assistant" and m.run_id == run_id:
            return m.content, m.citations
    return None, []


def open_pages(ctx: QualityContext, cited: list[CitedSource], limit: int = 1200) -> None:
    """Download each cited page once (judges read the citation against the page, not the target's quote); a target
    that serves no page text has the page read from the original the rig uploaded."""
    pages: dict[tuple[str, int], str | None] = {}
    files = {e.doc_id: ctx.corpus_dir / e.file for e in ctx.target.setup.ingest} if ctx.corpus_dir else {}
    for c in cited:
        if c.page is None:
            continue
        key = (c.doc_id, c.page)
        if key not in pages:
            text = _page(ctx, c.doc_id, c.page, files.get(c.doc_id))
            pages[key] = text[:limit] if text is not None else None
        c.page_text = pages[key]


def _page(ctx: QualityContext, doc_id: str, page: int, original: Path | None) -> str | None:
    if not ctx.caps.missing("page_text"):
        try:
            return ctx.adapter.page_text(ctx.a, doc_id, page).text
        except Exception:  # a page the target cannot serve: the sheet says so
            return None
    texts = page_texts(original) if original is not None and original.exists() else ()
    return texts[page - 1] if 1 <= page <= len(texts) else None
