"""A run over SSE: ordered events with ids, replay by Last-Event-ID, a complete run record, citations."""

from __future__ import annotations

from rig.adapters.models import TerminalEvent, TokenEvent
from tests.conftest import LiveWorkbench

QUESTION = "根据《Reputation and Regulations- Evidence from eBay》，2.9%指什么？用两句话解释并引用。"


def _run(live: LiveWorkbench, paper: str, question: str):  # type: ignore[no-untyped-def]
    opened = live.adapter.open_session(live.auth_a, live.corpus.project_id, [live.corpus.doc(paper)])
    sub = live.adapter.ask(live.auth_a, opened.session_id, question)
    events = list(live.adapter.events(live.auth_a, sub.run_id))
    return opened, sub, events


def test_events_arrive_in_order_with_increasing_ids(live: LiveWorkbench) -> None:
    _, sub, events = _run(live, "P32", QUESTION)
    ids = [e.id for e in events]
    assert ids == list(range(1, len(ids) + 1))
    names = [e.event for e in events]
    assert names[0] == "queued" and names[-1] == "done"
    assert names.index("status") < names.index("tool_call") < names.index("tool_result") < names.index("token")
    assert all(e.server_ts_ms for e in events)
    server_times = [e.server_ts_ms for e in events]
    assert server_times == sorted(server_times)
    recv = [e.recv_ns for e in events]
    assert recv == sorted(recv)
    answer = "".join(e.text for e in events if isinstance(e, TokenEvent) and e.kind == "answer")
    assert "2.9%" in answer
    done = events[-1]
    assert isinstance(done, TerminalEvent) and done.state == "completed" and done.message_id


def test_last_event_id_replays_what_was_missed(live: LiveWorkbench) -> None:
    _, sub, events = _run(live, "P32", QUESTION)
    cut = len(events) // 2
    replay = list(live.adapter.events(live.auth_a, sub.run_id, last_event_id=cut))
    assert [(e.id, e.event, e.data) for e in replay] == [(e.id, e.event, e.data) for e in events[cut:]]


def test_run_record_has_every_timestamp_in_order(live: LiveWorkbench) -> None:
    _, sub, events = _run(live, "P32", QUESTION)
    d = live.adapter.run(live.auth_a, sub.run_id)
    assert d.state == "completed" and d.end_reason == "completed"
    stamps = [d.queued_at_ms, d.started_at_ms, d.first_status_at_ms, d.first_token_at_ms, d.ended_at_ms]
    assert all(stamps) and stamps == sorted(stamps)  # type: ignore[type-var]
    assert d.trace_id and len(d.trace_id) == 32
    assert d.rounds == 2 and d.model_requests == 2 and d.tool_calls_executed == 1 and d.embedding_requests == 1
    assert d.usage.input_tokens and d.usage.output_tokens and d.usage.estimated_input_tokens
    assert d.cost.actual_usd is None and d.cost.estimated_usd and "actual_cost" in d.cost.unknown
    assert d.model.provider == "local" and d.checkpoints and d.tool_calls[0].ok
    first_token = next(e for e in events if isinstance(e, TokenEvent))
    assert abs(first_token.server_ts_ms - d.first_token_at_ms) < 1.0  # type: ignore[operator]


def test_citations_locate_to_the_physical_page_with_the_quote(live: LiveWorkbench) -> None:
    opened, sub, _ = _run(live, "P32", QUESTION)
    session = live.adapter.session(live.auth_a, opened.session_id)
    answer = next(m for m in session.messages if m.role == "assistant")
    assert answer.citations
    for c in answer.citations:
        located = live.adapter.locate_citation(live.auth_a, c.citation_id)
        assert located.page == c.page
        page = live.adapter.page_text(live.auth_a, c.doc_id, c.page)  # type: ignore[arg-type]
        assert c.quote in page.text
        assert located.match == "unique"
        h = located.highlights[0]
        assert page.text[h.start:h.end] == c.quote


def test_closing_the_stream_does_not_cancel_the_run(live: LiveWorkbench) -> None:
    opened = live.adapter.open_session(live.auth_a, live.corpus.project_id, [live.corpus.doc("P32")])
    sub = live.adapter.ask(live.auth_a, opened.session_id, QUESTION)
    stream = live.adapter.events(live.auth_a, sub.run_id)
    first = next(stream)
    stream.close()
    assert first.event == "queued"
    rest = list(live.adapter.events(live.auth_a, sub.run_id, last_event_id=first.id))
    assert rest[-1].event == "done"
    assert live.adapter.run(live.auth_a, sub.run_id).state == "completed"
