"""Seeded defects: each breaks its promise (its probe fails), and the clean build keeps every promise.

A probe returns True when the promise holds. The clean workbench must pass all of them; a workbench
started with one defect must fail that defect's probe.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rig.adapters.models import CheckpointEvent, Event, RunDetail, TerminalEvent, TokenEvent
from rig.corpus_load import load_corpus
from rig.errors import TargetHTTPError, TargetProtocolError
from rig.target.embedded import EmbeddedWorkbench
from rig.waiting import wait_until
from tests.conftest import CHAOS_TOKEN, Corpus, LiveWorkbench
from tests.workbench.helpers import ask, open_on, settings, slots_in_use, slow_stream, wait_terminal
from workbench.defects import DEFECTS
from workbench.tracing import ROOT_SPAN

Probe = Callable[[LiveWorkbench], bool]
PROBES: dict[str, Probe] = {}
NEEDED = ["P15", "P13", "P21", "P32", "P32-DUPQUOTE", "P32-CHANGED"]


def probe(defect: str) -> Callable[[Probe], Probe]:
    def register(fn: Probe) -> Probe:
        PROBES[defect] = fn
        return fn
    return register


def status(fn: Callable[[], object]) -> int:
    try:
        fn()
    except TargetHTTPError as exc:
        return exc.status
    return 200


@probe("logout_keeps_token")
def _(wb: LiveWorkbench) -> bool:
    auth = wb.adapter.login(wb.a.username, wb.a.password)
    wb.adapter.logout(auth)
    return status(lambda: wb.adapter.me(auth)) == 401


@probe("unauth_run_detail")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    return status(lambda: wb.adapter.run(None, asked.run_id)) == 401


@probe("cross_user_file")
def _(wb: LiveWorkbench) -> bool:
    return status(lambda: wb.adapter.download(wb.auth_b, wb.corpus.doc("P32"))) in (403, 404)


@probe("cross_user_export")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    return status(lambda: wb.adapter.export(wb.auth_b, asked.session_id, "md")) in (403, 404)


@probe("silent_parse_failure")
def _(wb: LiveWorkbench) -> bool:
    return wb.adapter.document(wb.auth_a, wb.corpus.doc("P15")).status == "no_text"


@probe("scope_leak")
def _(wb: LiveWorkbench) -> bool:
    p21 = wb.corpus.doc("P21")
    query = ["buyer protection badge 买家保护"]
    hits = wb.adapter.search(wb.auth_a, wb.corpus.project_id, query, [p21]).results[0].hits
    return all(h.doc_id == p21 for h in hits)


@probe("tool_result_misrouted")
def _(wb: LiveWorkbench) -> bool:
    queries = ["buyer protection badge", "warranty dealer"]
    result = wb.adapter.search(wb.auth_a, wb.corpus.project_id, queries)
    return [(r.tool_call_id, r.query) for r in result.results] == list(zip(result.tool_call_ids, queries, strict=True))


@probe("fake_tool_success")
def _(wb: LiveWorkbench) -> bool:
    with settings(wb):
        wb.adapter.chaos("POST", "faults", {"point": "internal_search", "mode": "error", "times": 1})
        result = wb.adapter.search(wb.auth_a, wb.corpus.project_id, ["badge"], [wb.corpus.doc("P32")])
    return result.results[0].ok is False and result.results[0].hits == []


@probe("empty_answer_completed")
def _(wb: LiveWorkbench) -> bool:
    with settings(wb):
        wb.adapter.chaos("POST", "faults", {"point": "llm", "mode": "empty", "times": 1})
        asked = ask(wb, ["P32"], "2.9%指什么？")
    return (asked.detail.state, asked.detail.end_reason) == ("failed", "empty_answer")


def _stopped_mid_answer(wb: LiveWorkbench) -> tuple[str, str, list[Event]]:
    """A slow answer stopped at its first token: (session, run, the stream's events after the stop)."""
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "请查清买家保护与徽章关系并给依据。")
    stream = wb.adapter.events(wb.auth_a, sub.run_id)
    next(e for e in stream if isinstance(e, TokenEvent))
    wb.adapter.stop(wb.auth_a, sub.run_id)
    return sid, sub.run_id, list(stream)


@probe("stop_not_propagated")
def _(wb: LiveWorkbench) -> bool:
    with slow_stream(wb):
        sid, run_id, _ = _stopped_mid_answer(wb)
        wait_until(lambda: slots_in_use(wb) == 0, 30.0)
    detail = wb.adapter.run(wb.auth_a, run_id)
    answered = [m for m in wb.adapter.session(wb.auth_a, sid).messages if m.role == "assistant"]
    return detail.state == "stopped" and any(s.cancelled for s in detail.stages) and not answered


@probe("disconnect_cancels")
def _(wb: LiveWorkbench) -> bool:
    with slow_stream(wb):
        sid = open_on(wb, wb.auth_a, ["P32"])
        sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？")
        stream = wb.adapter.events(wb.auth_a, sub.run_id)
        next(e for e in stream if isinstance(e, TokenEvent))
        stream.close()
        return wait_terminal(wb, sub.run_id).state == "completed"


def _stopped_with_checkpoint(wb: LiveWorkbench) -> tuple[str, str]:
    with slow_stream(wb):
        sid = open_on(wb, wb.auth_a, ["P32"])
        sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？")
        stream = wb.adapter.events(wb.auth_a, sub.run_id)
        next(e for e in stream if isinstance(e, CheckpointEvent))
        wb.adapter.stop(wb.auth_a, sub.run_id)
        list(stream)
        wait_terminal(wb, sub.run_id)
    return sid, sub.run_id


@probe("stale_checkpoint_resumes")
def _(wb: LiveWorkbench) -> bool:
    sid, run_id = _stopped_with_checkpoint(wb)
    wb.adapter.set_scope(wb.auth_a, sid, [wb.corpus.doc("P32"), wb.corpus.doc("P21")])
    try:
        wb.adapter.resume(wb.auth_a, run_id)
    except TargetHTTPError as exc:
        return exc.code == "checkpoint_invalid"
    return False


@probe("restart_marks_user_stop")
def _(wb: LiveWorkbench) -> bool:
    wb.adapter.chaos("PUT", "settings", {"token_delay_ms": 25})  # a fresh process starts with defaults again
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？")
    stream = wb.adapter.events(wb.auth_a, sub.run_id)
    next(e for e in stream if isinstance(e, TokenEvent))
    wb.target.kill()
    stream.close()
    wb.target.start()
    wb.auth_a = wb.adapter.login(wb.a.username, wb.a.password)
    wb.auth_b = wb.adapter.login(wb.b.username, wb.b.password)
    detail = wb.adapter.run(wb.auth_a, sub.run_id)
    return (detail.state, detail.end_reason) == ("interrupted", "server_restart")


@probe("summary_drops_originals")
def _(wb: LiveWorkbench) -> bool:
    with settings(wb, summary_trigger_tokens=40):
        first = ask(wb, ["P32"], "2.9%指什么？")
        second = ask(wb, [], "徽章还有信号价值吗？", session_id=first.session_id)
    session = wb.adapter.session(wb.auth_a, first.session_id)
    return bool(session.summaries) and len(session.messages) == 4 and second.detail.state == "completed"


@probe("branch_mixing")
def _(wb: LiveWorkbench) -> bool:
    first = ask(wb, ["P32"], "2.9%指什么？")
    original = next(m for m in wb.adapter.session(wb.auth_a, first.session_id).messages if m.role == "assistant")
    regen = wb.adapter.regenerate(wb.auth_a, original.message_id)
    list(wb.adapter.events(wb.auth_a, regen.run_id))
    alt = next(m for m in wb.adapter.session(wb.auth_a, first.session_id).messages if m.run_id == regen.run_id
               and m.role == "assistant")
    follow = ask(wb, [], "压缩为一句话。", session_id=first.session_id, parent_id=alt.message_id)
    return original.message_id not in follow.detail.model_input[0].included_message_ids


@probe("citation_page_shift")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    cites = [c for m in wb.adapter.session(wb.auth_a, asked.session_id).messages for c in m.citations]
    return bool(cites) and all(c.page is not None and c.quote in wb.adapter.page_text(wb.auth_a, c.doc_id, c.page).text
                               for c in cites)


@probe("duplicate_quote_highlighted")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32-DUPQUOTE"], "买家保护以后，徽章还有信号价值吗？")
    cites = [c for m in wb.adapter.session(wb.auth_a, asked.session_id).messages for c in m.citations
             if "徽章仍有信号价值" in c.quote]
    located = [wb.adapter.locate_citation(wb.auth_a, c.citation_id) for c in cites]
    return bool(located) and all(loc.match == "multiple" and not loc.highlights for loc in located)


@probe("stale_highlight_cache")
def _(wb: LiveWorkbench) -> bool:
    checks = []
    for paper in ("P32", "P32-CHANGED"):
        asked = ask(wb, [paper], "总福利提高2.9%指什么？")
        for m in wb.adapter.session(wb.auth_a, asked.session_id).messages:
            for c in m.citations:
                if c.page is None:
                    continue
                loc = wb.adapter.locate_citation(wb.auth_a, c.citation_id)
                text = wb.adapter.page_text(wb.auth_a, c.doc_id, c.page).text
                checks.append(all(text[h.start:h.end] == c.quote for h in loc.highlights))
    return bool(checks) and all(checks)


@probe("removed_source_returns")
def _(wb: LiveWorkbench) -> bool:
    first = ask(wb, ["P21", "P32"], "保修和买家保护分别怎样影响声誉溢价？")
    wb.adapter.set_scope(wb.auth_a, first.session_id, [wb.corpus.doc("P32")])
    second = ask(wb, [], "只保留买家保护那篇，重写一段。", session_id=first.session_id)
    answer = next(m for m in wb.adapter.session(wb.auth_a, first.session_id).messages
                  if m.run_id == second.run_id and m.role == "assistant")
    return {c.doc_id for c in answer.citations} <= {wb.corpus.doc("P32")}


@probe("export_other_session")
def _(wb: LiveWorkbench) -> bool:
    one = ask(wb, ["P32"], "2.9%指什么？")
    ask(wb, ["P13"], "体验品和搜寻品有什么不同？")
    exported = json.loads(wb.adapter.export(wb.auth_a, one.session_id, "json").text)
    return {m["session_id"] for m in exported["messages"]} == {one.session_id}


@probe("truncate_long_input")
def _(wb: LiveWorkbench) -> bool:
    with settings(wb, input_budget_tokens=40):
        sid = open_on(wb, wb.auth_a, ["P32"])
        code = status(lambda: wb.adapter.ask(wb.auth_a, sid, "请解释买家保护与徽章的关系。" * 10))
    return code == 413


@probe("model_fallback_silent")
def _(wb: LiveWorkbench) -> bool:
    before = wb.adapter.model_config(wb.auth_a)
    wb.adapter.set_model_config(wb.auth_a, "local", "no-such-model")
    try:
        asked = ask(wb, ["P32"], "2.9%指什么？")
    finally:
        wb.adapter.set_model_config(wb.auth_a, before.provider, before.model)
    return (asked.detail.state, asked.detail.end_reason) == ("failed", "model_config_invalid")


@probe("api_key_leak")
def _(wb: LiveWorkbench) -> bool:
    before = wb.adapter.model_config(wb.auth_a)
    secret = "sk-probe-0123456789abcdef"
    view = wb.adapter.set_model_config(wb.auth_a, "local", "local-extractive", api_key=secret)
    got = wb.adapter.model_config(wb.auth_a)
    wb.adapter.set_model_config(wb.auth_a, before.provider, before.model)
    return secret not in view.model_dump_json() + got.model_dump_json()


@probe("trace_incomplete_unmarked")
def _(wb: LiveWorkbench) -> bool:
    with settings(wb, trace_budget_spans=3):
        asked = ask(wb, ["P32"], "2.9%指什么？")
    return asked.detail.trace_complete is False


@probe("unauth_run_events")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    return status(lambda: list(wb.adapter.events(None, asked.run_id))) == 401


@probe("merged_results_swapped")
def _(wb: LiveWorkbench) -> bool:
    queries = ["buyer protection badge", "warranty dealer"]
    merged = wb.adapter.search(wb.auth_a, wb.corpus.project_id, queries)
    alone = [wb.adapter.search(wb.auth_a, wb.corpus.project_id, [q]).results[0] for q in queries]
    return [[h.chunk_id for h in r.hits] for r in merged.results] == [[h.chunk_id for h in r.hits] for r in alone]


@probe("tool_card_masks_error")
def _(wb: LiveWorkbench) -> bool:
    from rig.adapters.models import ToolResultEvent

    with settings(wb):
        wb.adapter.chaos("POST", "faults", {"point": "internal_search", "mode": "error", "times": 1})
        asked = ask(wb, ["P32"], "2.9%指什么？")
    cards = {e.tool_call_id: e.ok for e in asked.events if isinstance(e, ToolResultEvent)}
    return bool(asked.detail.tool_calls) and all(cards.get(c.tool_call_id) == c.ok for c in asked.detail.tool_calls)


@probe("export_all_branches")
def _(wb: LiveWorkbench) -> bool:
    first = ask(wb, ["P32"], "2.9%指什么？")
    original = next(m for m in wb.adapter.session(wb.auth_a, first.session_id).messages if m.role == "assistant")
    regen = wb.adapter.regenerate(wb.auth_a, original.message_id)
    list(wb.adapter.events(wb.auth_a, regen.run_id))
    exported = json.loads(wb.adapter.export(wb.auth_a, first.session_id, "json").text)
    return original.message_id not in {m["message_id"] for m in exported["messages"]}


@probe("export_leaks_api_key")
def _(wb: LiveWorkbench) -> bool:
    before = wb.adapter.model_config(wb.auth_a)
    secret = "sk-probe-export-0123456789"
    wb.adapter.set_model_config(wb.auth_a, "local", "local-extractive", api_key=secret)
    try:
        asked = ask(wb, ["P32"], "2.9%指什么？")
        texts = [wb.adapter.export(wb.auth_a, asked.session_id, fmt).text for fmt in ("md", "json")]
    finally:
        wb.adapter.set_model_config(wb.auth_a, before.provider, before.model)
    return not any(secret in t for t in texts)


@probe("run_record_null_state")
def _(wb: LiveWorkbench) -> bool:
    from pydantic import ValidationError

    try:
        ask(wb, ["P32"], "2.9%指什么？")
    except ValidationError:
        return False
    return True


@probe("search_down_after_corrupt")
def _(wb: LiveWorkbench) -> bool:
    project = wb.adapter.create_project(wb.auth_a, "probe: a corrupt upload")  # apart from the shared corpus
    corrupt = wb.target.data_dir.parent / "probe-corrupt.pdf"
    corrupt.write_bytes(b"%PDF-1.4 not really a pdf")
    doc = wb.adapter.upload(wb.auth_a, project, corrupt)
    wb.adapter.wait_documents(wb.auth_a, project, {doc.doc_id})
    return status(lambda: wb.adapter.search(wb.auth_a, project, ["2.9%"])) == 200


@probe("hit_page_shift")
def _(wb: LiveWorkbench) -> bool:
    doc = wb.corpus.doc("P32")
    hits = wb.adapter.search(wb.auth_a, wb.corpus.project_id, ["2.9%"], [doc]).results[0].hits
    return bool(hits) and all(h.text[:40] in wb.adapter.page_text(wb.auth_a, doc, h.page or 0).text for h in hits)


@probe("attachment_unreadable_kept")
def _(wb: LiveWorkbench) -> bool:
    stranger = wb.adapter.create_project(wb.auth_b, "B's own")
    opened = wb.adapter.open_session(wb.auth_a, wb.corpus.project_id, [wb.corpus.doc("P32")],
                                     attachments=[f"{stranger}-no-such-doc"])
    return opened.effective_scope == [wb.corpus.doc("P32")]


@probe("expand_error_hidden")
def _(wb: LiveWorkbench) -> bool:
    with settings(wb):
        wb.adapter.chaos("POST", "faults", {"point": "expand", "mode": "error", "times": 1})
        result = wb.adapter.search(wb.auth_a, wb.corpus.project_id, ["2.9%"], [wb.corpus.doc("P32")])
    expand = next(s for s in result.stages if s.name == "expand")
    return expand.ok is False


@probe("resume_searches_again")
def _(wb: LiveWorkbench) -> bool:
    _, run_id = _stopped_with_checkpoint(wb)
    resumed = wb.adapter.resume(wb.auth_a, run_id)
    list(wb.adapter.events(wb.auth_a, resumed.run_id))
    return wb.adapter.run(wb.auth_a, resumed.run_id).tool_calls == []


def _stopped_inside_encode(wb: LiveWorkbench) -> RunDetail:
    """A run stopped while its first encode stage (delayed 8 s) is running: before any checkpoint."""
    with settings(wb):
        wb.adapter.chaos("POST", "faults", {"point": "encode", "mode": "delay", "delay_ms": 8000, "times": 1})
        sid = open_on(wb, wb.auth_a, ["P32"])
        sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？")
        stream = wb.adapter.events(wb.auth_a, sub.run_id)
        next(e for e in stream if e.event == "tool_call")
        wait_until(lambda: any(s.name == "encode" and s.ended_at_ms is None
                               for s in wb.adapter.run(wb.auth_a, sub.run_id).stages), 10.0)
        wb.adapter.stop(wb.auth_a, sub.run_id)
        list(stream)
        return wait_terminal(wb, sub.run_id)


@probe("resume_without_checkpoint_restarts")
def _(wb: LiveWorkbench) -> bool:
    stopped = _stopped_inside_encode(wb)
    try:
        wb.adapter.resume(wb.auth_a, stopped.run_id)
    except TargetHTTPError as exc:
        return exc.code == "no_checkpoint"
    return False


@probe("trace_id_unlinked")
def _(wb: LiveWorkbench) -> bool:
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？", traceparent=f"00-{trace}-00f067aa0ba902b7-01")
    list(wb.adapter.events(wb.auth_a, sub.run_id))
    return wb.adapter.run(wb.auth_a, sub.run_id).trace_id == trace  # the run joined the caller's trace


@probe("relogin_drops_citations")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    before = [len(m.citations) for m in wb.adapter.session(wb.auth_a, asked.session_id).messages]
    again = wb.adapter.login(wb.a.username, wb.a.password)
    return [len(m.citations) for m in wb.adapter.session(again, asked.session_id).messages] == before


@probe("stop_waits_for_stage")
def _(wb: LiveWorkbench) -> bool:
    detail = _stopped_inside_encode(wb)
    encode = next(s for s in detail.stages if s.name == "encode")
    return encode.cancelled and (encode.ended_at_ms or 0) - (encode.started_at_ms or 0) < 8000


@probe("tool_count_inflated")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    announced = [e for e in asked.events if e.event == "tool_call"]
    queries = sum(len((e.data.get("args") or {}).get("queries") or [""]) for e in announced)
    return bool(announced) and asked.detail.tool_calls_proposed == queries and len(asked.detail.tool_calls) == len(
        announced)


@probe("md_export_page_shift")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    pages = {}
    for fmt in ("md", "json"):
        read = wb.adapter.read_export(wb.adapter.export(wb.auth_a, asked.session_id, fmt))
        pages[fmt] = sorted((c.paper_id or c.doc_id, c.page) for m in read.messages for c in m.citations)
    return bool(pages["json"]) and pages["md"] == pages["json"]


@probe("replay_repeats_last")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    last = asked.events[2].id
    assert last is not None
    resumed = list(wb.adapter.events(wb.auth_a, asked.run_id, last_event_id=last))
    return [e.id for e in resumed] == [e.id for e in asked.events if e.id is not None and e.id > last]


def _running(wb: LiveWorkbench) -> tuple[str, str, Iterator[Any]]:
    """A's session and a run of it, streaming its answer (inside `slow_stream`)."""
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "请查清买家保护与徽章关系并给依据。")
    stream = wb.adapter.events(wb.auth_a, sub.run_id)
    next(e for e in stream if isinstance(e, TokenEvent))
    return sid, sub.run_id, stream


@probe("foreign_stop")
def _(wb: LiveWorkbench) -> bool:
    with slow_stream(wb):
        _, run_id, stream = _running(wb)
        refused = status(lambda: wb.adapter.stop(wb.auth_b, run_id)) in (403, 404)
        owner = status(lambda: wb.adapter.stop(wb.auth_a, run_id))
        list(stream)
    return refused and owner == 200


@probe("stop_drops_citations")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")

    def cited() -> list[str]:
        return [c.citation_id for m in wb.adapter.session(wb.auth_a, asked.session_id).messages for c in m.citations]

    before = cited()
    with slow_stream(wb):
        sub = wb.adapter.ask(wb.auth_a, asked.session_id, "请查清买家保护与徽章关系并给依据。")
        stream = wb.adapter.events(wb.auth_a, sub.run_id)
        next(e for e in stream if isinstance(e, TokenEvent))
        wb.adapter.stop(wb.auth_a, sub.run_id)
        list(stream)
    return bool(before) and cited()[:len(before)] == before


@probe("late_stop_rewrites")
def _(wb: LiveWorkbench) -> bool:
    asked = ask(wb, ["P32"], "2.9%指什么？")
    late = status(lambda: wb.adapter.stop(wb.auth_a, asked.run_id))
    after = wb.adapter.run(wb.auth_a, asked.run_id)
    return late == 409 and (after.state, after.end_reason) == ("completed", "completed")


@probe("direct_calls_misreported")
def _(wb: LiveWorkbench) -> bool:
    queries = ["买家保护实施后声誉徽章溢价如何变化", "徽章还剩多少信号价值", "买家保护实施后声誉徽章溢价如何变化"]
    scope = [wb.corpus.doc("P32")]
    plain = wb.adapter.search(wb.auth_a, wb.corpus.project_id, queries, scope)
    traced = wb.adapter.search(wb.auth_a, wb.corpus.project_id, queries, scope,
                               traceparent=f"00-{'ab' * 16}-{'cd' * 8}-01")
    return plain.executed_calls == traced.executed_calls == 2


@probe("stream_end_contradicts")
def _(wb: LiveWorkbench) -> bool:
    with slow_stream(wb):
        _, run_id, after = _stopped_mid_answer(wb)
    end = [e for e in after if isinstance(e, TerminalEvent)][-1]
    detail = wb.adapter.run(wb.auth_a, run_id)
    return detail.state == "stopped" and (end.state, end.reason) == (detail.state, detail.end_reason)


@probe("first_token_backdated")
def _(wb: LiveWorkbench) -> bool:
    d = ask(wb, ["P32"], "2.9%指什么？").detail
    return d.first_token_at_ms is not None and d.queued_at_ms is not None and d.first_token_at_ms >= d.queued_at_ms


@probe("trace_ignores_caller")
def _(wb: LiveWorkbench) -> bool:
    trace = uuid.uuid4().hex
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？", traceparent=f"00-{trace}-00f067aa0ba902b7-01")
    list(wb.adapter.events(wb.auth_a, sub.run_id))
    if wb.adapter.run(wb.auth_a, sub.run_id).trace_id != trace:  # the record already says it ignored the caller
        return False
    return bool(wait_until(lambda: [s for s in _spans_in(wb, trace) if s["name"] == ROOT_SPAN], 30.0))


@probe("model_input_drops_history")
def _(wb: LiveWorkbench) -> bool:
    first = ask(wb, ["P32"], "2.9%指什么？")
    follow = ask(wb, [], "压缩为一句话。", session_id=first.session_id)
    earlier = [m.message_id for m in wb.adapter.session(wb.auth_a, first.session_id).messages
               if m.run_id != follow.run_id and m.role in ("user", "assistant")][:2]
    included = {i for mi in follow.detail.model_input for i in mi.included_message_ids}
    return len(earlier) == 2 and set(earlier) <= included


@probe("model_input_unlisted_results")
def _(wb: LiveWorkbench) -> bool:
    d = ask(wb, ["P32"], "2.9%指什么？").detail
    fed = {mi.round: set(mi.tool_call_ids) for mi in d.model_input}
    executed = [c for c in d.tool_calls if c.executed and c.returned_to_round is not None]
    return bool(executed) and all(c.tool_call_id in fed.get(c.returned_to_round or 0, set()) for c in executed)


@probe("direct_call_unspanned")
def _(wb: LiveWorkbench) -> bool:
    direct, marker = uuid.uuid4().hex, uuid.uuid4().hex
    wb.adapter.search(wb.auth_a, wb.corpus.project_id, ["buyer protection badge"], [wb.corpus.doc("P32")],
                      traceparent=f"00-{direct}-{'cd' * 8}-01")
    sid = open_on(wb, wb.auth_a, ["P32"])  # a run after it: once its spans are written, the call's were before them
    sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？", traceparent=f"00-{marker}-{'cd' * 8}-01")
    list(wb.adapter.events(wb.auth_a, sub.run_id))
    assert wait_until(lambda: [s for s in _spans_in(wb, marker) if s["name"] == ROOT_SPAN], 30.0), "no run span written"
    return any(s["name"] == "internal_search" for s in _spans_in(wb, direct))


@probe("foreign_project_hits_unpaged")
def _(wb: LiveWorkbench) -> bool:
    other = wb.adapter.create_project(wb.auth_a, f"other {uuid.uuid4().hex[:6]}")
    sid = wb.adapter.open_session(wb.auth_a, other, [wb.corpus.doc("P32")]).session_id
    d = ask(wb, [], "2.9%指什么？", session_id=sid).detail
    hits = [h for c in d.tool_calls for h in c.hits]
    return bool(hits) and all(h.page is not None for h in hits)


def _provider_silent(wb: LiveWorkbench) -> RunDetail:
    """A run whose one model request the provider answered without usage (the workbench's `llm` no_usage fault)."""
    with settings(wb):
        wb.adapter.chaos("POST", "faults", {"point": "llm", "mode": "no_usage", "times": 1})
        return ask(wb, ["P32"], "2.9%指什么？").detail


@probe("estimate_shown_as_actual")
def _(wb: LiveWorkbench) -> bool:
    return _provider_silent(wb).usage.source == "estimate"


@probe("actual_cost_from_estimate")
def _(wb: LiveWorkbench) -> bool:
    d = _provider_silent(wb)
    return d.usage.source == "estimate" and d.cost.actual_usd is None


def _spans_in(wb: LiveWorkbench, trace_id: str) -> list[dict[str, Any]]:
    """The spans of one trace the workbench wrote to its trace file (`--trace-file`)."""
    path = wb.target.data_dir / "spans.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [s for s in map(json.loads, lines) if s.get("context", {}).get("trace_id") == f"0x{trace_id}"]


def _target_gauge(wb: LiveWorkbench, name: str) -> float:
    from rig.promtext import sample_value

    return sample_value(wb.adapter.metrics_text(), name) or 0.0


@probe("memory_per_stream")
def _(wb: LiveWorkbench) -> bool:
    ask(wb, ["P32"], "2.9%指什么？")
    before = _target_gauge(wb, "process_resident_memory_bytes")
    for _ in range(40):  # 80 MiB leaked: more than the memory the process freed after its ingest can absorb
        ask(wb, ["P32"], "2.9%指什么？")
    return _target_gauge(wb, "process_resident_memory_bytes") - before < 24 * 2**20


@probe("fd_per_turn")
def _(wb: LiveWorkbench) -> bool:
    ask(wb, ["P32"], "2.9%指什么？")
    before = _target_gauge(wb, "process_open_fds")
    for _ in range(8):
        ask(wb, ["P32"], "2.9%指什么？")
    return _target_gauge(wb, "process_open_fds") - before < 5  # 8 runs leak 8 files


@probe("stop_race_slot")
def _(wb: LiveWorkbench) -> bool:
    """A stop sent the moment a run's end arrives is refused (409), and the run's slot is back in the pool."""
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？")
    list(wb.adapter.events(wb.auth_a, sub.run_id))  # to its end event
    try:
        wb.adapter.stop(wb.auth_a, sub.run_id)
        refused = False
    except TargetHTTPError as exc:
        refused = exc.status == 409
    return refused and slots_in_use(wb) == 0


@probe("t4_per_turn")
def _(wb: LiveWorkbench) -> bool:
    """The first answer token of a session's third question comes as soon as its first question's did."""
    first = ask(wb, ["P32"], "2.9%指什么？")
    ask(wb, ["P32"], "样本来自哪里？", session_id=first.session_id)
    third = ask(wb, ["P32"], "2.9%指什么？", session_id=first.session_id)

    def t4(d: RunDetail) -> float:
        return (d.first_token_at_ms or 0.0) - (d.started_at_ms or 0.0)
    return t4(third.detail) - t4(first.detail) < 200  # the seeded defect adds 300 ms by the third question


@probe("flaky_runs")
def _(wb: LiveWorkbench) -> bool:
    states = [ask(wb, ["P32"], "2.9%指什么？").detail.state for _ in range(20)]
    return states.count("completed") == 20


def _stream_ends_whole(wb: LiveWorkbench) -> bool:
    """A run's stream reaches its end within 20,000 events, every event within the reader's cap."""
    sid = open_on(wb, wb.auth_a, ["P32"])
    sub = wb.adapter.ask(wb.auth_a, sid, "2.9%指什么？")
    events = wb.adapter.events(wb.auth_a, sub.run_id)
    try:
        for n, event in enumerate(events):
            if event.event in ("done", "error"):
                return True
            if n > 20_000:
                return False
    except TargetProtocolError:  # an event or a line past the cap
        return False
    finally:
        events.close()
    return False


for _hostile in ("answer_never_ends", "giant_event", "no_line_end"):  # the load-path defects: the stream itself
    probe(_hostile)(_stream_ends_whole)


def test_every_seeded_defect_has_a_probe() -> None:
    assert set(PROBES) == set(DEFECTS)


def test_every_defect_of_a_case_has_its_guarding_case() -> None:
    from rig.selftest import GUARDS

    load_runs = {"flaky_runs", "memory_per_stream", "fd_per_turn", "stop_race_slot", "t4_per_turn",  # caught by
                 "answer_never_ends", "giant_event", "no_line_end"}  # load runs (error_rate.steady, soak, hostile)
    assert set(GUARDS) == set(DEFECTS) - load_runs


def test_the_clean_build_keeps_every_promise(live: LiveWorkbench) -> None:
    broken = [name for name, fn in PROBES.items() if name != "restart_marks_user_stop" and not fn(live)]
    assert broken == []


def test_the_clean_build_marks_restarted_runs_interrupted(tmp_path: Path, corpus: Corpus) -> None:
    with _defect_workbench(tmp_path, corpus, []) as wb:
        assert PROBES["restart_marks_user_stop"](wb)


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_defect_breaks_its_promise(defect: str, tmp_path: Path, corpus: Corpus) -> None:
    with _defect_workbench(tmp_path, corpus, [defect]) as wb:
        assert PROBES[defect](wb) is False, f"{defect} was not caught by its probe"


class _defect_workbench:  # noqa: N801 - used as a context manager
    def __init__(self, tmp: Path, corpus: Corpus, defects: list[str]) -> None:
        self.tmp, self.corpus, self.defects = tmp, corpus, defects

    def __enter__(self) -> LiveWorkbench:
        from rig.adapters import WorkbenchAdapter

        target = EmbeddedWorkbench(self.tmp / "wb", chaos_token=CHAOS_TOKEN, defects=self.defects,
                                   extra_args=["--trace-file", str(self.tmp / "wb" / "spans.jsonl")])
        target.start()
        a, b = target.add_account("alice"), target.add_account("bob")
        adapter = WorkbenchAdapter(target.url, chaos_token=CHAOS_TOKEN)
        auth_a, auth_b = adapter.login(a.username, a.password), adapter.login(b.username, b.password)
        project = adapter.create_project(auth_a, "library")
        loaded = load_corpus(adapter, auth_a, project, self.corpus.directory, self.corpus.manifest,
                             include_variants=True, only=NEEDED)
        self.wb = LiveWorkbench(target, adapter, a, b, auth_a, auth_b, loaded)
        return self.wb

    def __exit__(self, *_: object) -> None:
        self.wb.adapter.close()
        self.wb.target.cleanup()
