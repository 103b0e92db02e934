"""Open WebUI's shapes, as it really sent them (recorded from 0.12.4 in tests/peers' harness), in the rig's shape.

The live behaviour is covered by `make test-peers`; these check the mapping alone, fast, in `make test`.
"""

from __future__ import annotations

import json
from pathlib import Path

from rig.adapters.models import Exported, TerminalEvent, TokenEvent
from rig.adapters.openwebui import OpenWebUIAdapter, _branch, _citations, _events, _run_detail, _source_files

DATA = Path(__file__).resolve().parent / "data"


def _chat() -> dict:  # type: ignore[type-arg]
    return dict(json.loads((DATA / "openwebui_chat.json").read_text(encoding="utf-8")))


def test_socket_payloads_become_status_tokens_and_one_end() -> None:
    payloads = json.loads((DATA / "openwebui_events.json").read_text(encoding="utf-8"))
    events = [e for i, p in enumerate(payloads) for e in _events(p["data"], recv_ns=i)]
    kinds = [e.event for e in events]
    assert kinds[0] == "status" and kinds.count("done") == 1 and kinds[-1] == "done"
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    assert tokens and all(t.kind == "answer" and t.text for t in tokens)
    end = events[-1]
    assert isinstance(end, TerminalEvent) and (end.state, end.reason) == ("completed", "completed")
    # what carries nothing a run's measure needs (chat list refreshes, sources) makes no event
    assert len(events) < len(payloads)


def test_a_cancelled_task_ends_stopped_and_an_error_failed() -> None:
    (stopped,) = _events({"type": "chat:tasks:cancel"}, recv_ns=1)
    (failed,) = _events({"type": "chat:message:error", "data": {"error": {"content": "boom"}}}, recv_ns=2)
    assert isinstance(stopped, TerminalEvent) and (stopped.state, stopped.reason) == ("stopped", "user_stop")
    assert isinstance(failed, TerminalEvent) and failed.state == "failed"


def test_the_saved_message_is_the_run_record_with_its_retrieval_as_one_call() -> None:
    chat = _chat()
    answer = next(m for m in chat["chat"]["history"]["messages"].values() if m["role"] == "assistant")
    detail = _run_detail(f"{chat['id']}:{answer['id']}", chat["id"], answer)
    assert (detail.state, detail.end_reason, detail.session_id) == ("completed", "completed", chat["id"])
    (call,) = detail.tool_calls
    files = {meta["file_id"] for _, chunks in _source_files(answer["sources"]) for _, meta in chunks}
    assert call.hits and {h.doc_id for h in call.hits} == files and all(h.page and h.page >= 1 for h in call.hits)
    assert detail.trace_id is None and detail.queued_at_ms is None  # not invented: Open WebUI keeps neither


def test_citation_markers_name_the_file_open_webui_numbered() -> None:
    chat = _chat()
    answer = next(m for m in chat["chat"]["history"]["messages"].values() if m["role"] == "assistant")
    cites = _citations(answer["id"], answer["content"], answer["sources"])
    files = _source_files(answer["sources"])
    assert cites and all(c.page is None for c in cites)
    for c in cites:
        assert c.doc_id == files[(c.marker or 0) - 1][1][0][1]["file_id"] and c.quote
        assert c.quote in answer["content"]


def test_the_json_export_reads_back_as_the_current_branch() -> None:
    chat = _chat()
    session = OpenWebUIAdapter("http://127.0.0.1:9").read_export(
        Exported(format="json", content_type="application/json", text=json.dumps(chat)))
    branch = _branch(chat["chat"]["history"])
    assert session.session_id == chat["id"] and [m.message_id for m in session.messages] == [m["id"] for m in branch]
    assert [m.role for m in session.messages] == ["user", "assistant"]
