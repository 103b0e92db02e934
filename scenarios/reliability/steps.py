"""Steps several reliability cases share: independent checks of citations, access denial, slots."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.adapters import Citation, Hit, Message, Session
from rig.errors import TargetHTTPError
from rig.faults import RequestRecord
from rig.gate import CaseContext
from rig.measure import RunTranscript
from rig.pdftext import occurrences_on_page, page_texts, pages_containing, span_pages, squash
from rig.promtext import sample_value
from rig.waiting import wait_until, wait_while_moving


@dataclass
class Attempt:
    """What happened when the rig tried an access: the status and whether any content came back."""

    status: int | None
    body: str

    @property
    def denied(self) -> bool:
        return self.status in (401, 403, 404)


def attempt(fn: Callable[[], Any]) -> Attempt:
    """Call an adapter operation and report its outcome without raising."""
    try:
        value = fn()
    except TargetHTTPError as exc:
        return Attempt(exc.status, str(exc.details or exc.message))
    if isinstance(value, bytes):
        return Attempt(200, value[:200].decode("latin-1"))
    dump = getattr(value, "model_dump_json", None)
    return Attempt(200, dump() if dump else str(value))


def export_format(ctx: CaseContext) -> str:
    """The export format to try: Markdown where the target has it, else the one it has."""
    formats = ctx.caps.export
    return "md" if "md" in formats or not formats else formats[0]


def answers(session: Session, run_id: str) -> list[Message]:
    """The session's assistant messages of run `run_id`: linked by the target's run id, or by the rig's correlation
    where the target names none (`rig.target.linking`: read the session through `ctx.adapter`)."""
    return [m for m in session.messages if m.role == "assistant" and m.run_id == run_id]


UNLINKED_TRIED = ("the run id on the session's messages, then the rig's correlation: the answer text it streamed "
                  "and the question it asked, in order")


def answer_of(ctx: CaseContext, session_id: str, run_id: str, *, item: str | None = None) -> Message | None:
    """The answer as the target saved it in the session (needs sessions). None when no saved message links to the
    run; with `item`, that item is then recorded U naming what was tried (what the rig could not link is never the
    target's FAIL)."""
    return saved_answer(ctx, ctx.adapter.session(ctx.a, session_id), run_id, item=item)


def saved_answer(ctx: CaseContext, session: Session, run_id: str, *, item: str | None = None) -> Message | None:
    """The answer of `run_id` in a session already read; None (with `item` U, as in `answer_of`) when none links."""
    found = answers(session, run_id)
    if found:
        return found[0]
    if item is not None:
        e = ctx.observe(f"no saved answer links to run {run_id}", {
            "session_id": session.session_id, "run_id": run_id,
            "messages": [(m.message_id, m.role, m.run_id, m.content[:80]) for m in session.messages]})
        ctx.could_not(item, f"find the saved answer of run {run_id} in session {session.session_id}",
                      UNLINKED_TRIED, e)
    return None


def answer_cited(ctx: CaseContext, session_id: str, run: RunTranscript, *, item: str | None = None
                 ) -> Message | None:
    """The answer with its citations: as the target saved it where it keeps sessions; on a target that keeps none,
    as its stream gave it (the message's `source` is then `stream`, and nothing is claimed about what was saved)."""
    if ctx.caps.missing("sessions"):
        return run.streamed_message()
    return answer_of(ctx, session_id, run.run_id, item=item)


def run_ended(run: RunTranscript) -> str | None:
    """How the run ended: the target's run record where it keeps one, else the stream's own end (its last event,
    or — for a stream without one — the rig's reading of its clean close)."""
    if run.detail is not None:
        return run.detail.state
    return run.terminal.state if run.terminal is not None else None


def file_for_doc(ctx: CaseContext, doc_id: str) -> Any:
    """The fixture file behind one of the setup's documents (for the rig's own page reading)."""
    entry = next(e for e in ctx.target.setup.ingest if e.doc_id == doc_id)
    return ctx.corpus_dir / entry.file


def citation_on_its_page(ctx: CaseContext, citation: Citation) -> bool:
    """True when the cited quote occurs on the cited physical page of the original file (rig's reading)."""
    if citation.page is None:
        return False
    return occurrences_on_page(file_for_doc(ctx, citation.doc_id), citation.page, citation.quote) >= 1


def derived_page(ctx: CaseContext, citation: Citation) -> int | None:
    """The one physical page of the cited document's original on which the quote stands (the rig's reading of
    the file it uploaded); None when the quote stands on no page of it, or on several."""
    if not citation.quote.strip() or not any(e.doc_id == citation.doc_id for e in ctx.target.setup.ingest):
        return None
    pages = pages_containing(file_for_doc(ctx, citation.doc_id), citation.quote)
    return pages[0] if len(pages) == 1 else None


def with_pages(ctx: CaseContext, citations: list[Citation]) -> tuple[list[Citation], str]:
    """The citations with the physical pages they rest on, and who gave the pages: `target`, or — for a target
    whose citations name a document but no page — `rig_derived`: the rig places each quote in the original it
    uploaded itself (the corpus is the rig's own), and a quote it cannot place on one page keeps none. The
    derivation is kept as evidence, so a reader sees the target named no page."""
    if not ctx.caps.missing("citation_pages"):
        return citations, "target"
    derived = [c.model_copy(update={"page": derived_page(ctx, c)}) for c in citations]
    ctx.evidence("fixture", "citation pages derived by the rig (the target names none)", {
        "fixture": "rig_derived", "how": "each quote located in the physical pages of the cited document's original",
        "citations": [(c.citation_id, ctx.paper_of(c.doc_id), c.quote[:60], c.page) for c in derived]})
    return derived, "rig_derived"


def citation_grounded(ctx: CaseContext, citation: Citation) -> bool:
    """The quote stands where the citation says: on its cited page, or — where the target names no page — in
    the cited document's original (so nothing of another paper is passed off as this one's)."""
    if not ctx.caps.missing("citation_pages"):
        return citation_on_its_page(ctx, citation)
    known = any(e.doc_id == citation.doc_id for e in ctx.target.setup.ingest)
    return known and bool(citation.quote.strip()) and bool(pages_containing(file_for_doc(ctx, citation.doc_id),
                                                                            citation.quote))


def hit_pages(ctx: CaseContext, hit: Hit, path: Path) -> list[int]:
    """The physical pages a search hit comes from: the page it names, or — where the target names none
    (`hit_pages: false`) — the pages the rig finds its text on in the original it uploaded ([] when not there)."""
    if hit.page is not None:
        return [hit.page]
    if ctx.caps.missing("hit_pages"):
        return span_pages(path, hit.text)
    return []


def hit_in_original(ctx: CaseContext, hit: Hit, path: Path) -> bool:
    """The hit's text stands in the original: on the page it names, or (a page-less hit) anywhere in the file."""
    if hit.page is not None:
        pages = page_texts(path)
        return 1 <= hit.page <= len(pages) and squash(hit.text) in squash(pages[hit.page - 1])
    return bool(span_pages(path, hit.text))


def slots_in_use(ctx: CaseContext) -> float | None:
    """The target's slot gauge (None when its metrics do not expose it)."""
    if not ctx.target.slots_metric:
        return None
    try:
        return sample_value(ctx.adapter.metrics_text(), ctx.target.slots_metric)
    except Exception:
        return None


def wait_slots_free(ctx: CaseContext, timeout_s: float = 10.0) -> bool | None:
    """True once the gauge reads 0, False if it never does, None when there is no gauge to read."""
    if slots_in_use(ctx) is None:
        return None
    return bool(wait_until(lambda: slots_in_use(ctx) == 0, timeout_s))


def wait_terminal(ctx: CaseContext, run_id: str, timeout_s: float = 30.0) -> Any:
    """The run's record once it is terminal; None when it stood still for `timeout_s` (any change restarts it)."""
    last: list[Any] = [None]

    def done() -> Any:
        last[0] = ctx.adapter.run(ctx.a, run_id)
        return last[0].terminal and last[0]

    return wait_while_moving(done, lambda: last[0] and last[0].model_dump_json(), timeout_s)



def model_calls_ended(ctx: CaseContext, since: int, *, endpoint: str = "chat", stall_s: float = 10.0
                      ) -> list[RequestRecord] | None:
    """The target's model (or embeddings) requests the rig's proxy saw after `since`, once each has ended: the wait
    goes on while any of them still moves (a streamed answer's chunks growing) and gives up after `stall_s` of
    stillness (None: the rig cannot tell how they ended). None too when no proxy sits in front of the model."""
    proxy = ctx.target.model_proxy
    if proxy is None:
        return None
    seen: list[list[RequestRecord]] = [[]]

    def ended() -> bool:
        seen[0] = [r for r in proxy.requests(since, in_flight=True) if r.endpoint == endpoint]
        return bool(seen[0]) and all(r.total_ms is not None for r in seen[0])

    if not wait_while_moving(ended, lambda: [(r.seq, r.chunks, r.total_ms) for r in seen[0]],
                             stall_s):
        return None
    return seen[0]
