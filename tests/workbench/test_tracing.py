"""Spans of a run (run, rounds, model calls, tool calls, stages) joined to the caller's trace; budgets; Langfuse."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rig.telemetry.otlp_receiver import OtlpReceiver
from tests.conftest import Corpus, LiveWorkbench, start_workbench
from tests.workbench.helpers import ask, open_on, settings
from workbench.tracing import ROOT_SPAN

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    r = OtlpReceiver().start()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory, corpus: Corpus, receiver: OtlpReceiver
           ) -> Iterator[LiveWorkbench]:
    tmp = tmp_path_factory.mktemp("traced")
    wb = start_workbench(tmp / "wb", corpus, include_variants=False,
                         extra_args=["--otlp-endpoint", receiver.endpoint, "--trace-file", str(tmp / "spans.jsonl")])
    wb.target.env.update({"LANGFUSE_PUBLIC_KEY": "pk-lf-test", "LANGFUSE_SECRET_KEY": "sk-lf-test-secret",
                          "LANGFUSE_HOST": receiver.endpoint})
    wb.target.stop()
    wb.target.start()
    wb.auth_a = wb.adapter.login(wb.a.username, wb.a.password)
    try:
        yield wb
    finally:
        wb.adapter.close()
        wb.target.cleanup()


def test_run_spans_join_the_incoming_trace(traced: LiveWorkbench, receiver: OtlpReceiver) -> None:
    sid = open_on(traced, traced.auth_a, ["P32"])
    sub = traced.adapter.ask(traced.auth_a, sid, "2.9%指什么？", traceparent=TRACEPARENT)
    list(traced.adapter.events(traced.auth_a, sub.run_id))
    detail = traced.adapter.run(traced.auth_a, sub.run_id)
    assert detail.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" == sub.trace_id
    assert receiver.wait_for(lambda spans: any(s.name == ROOT_SPAN and s.trace_id == detail.trace_id
                                               and s.scope == "workbench" for s in spans))
    spans = [s for s in receiver.trace(detail.trace_id) if s.scope == "workbench"]
    by_name = {s.name: s for s in spans}
    assert by_name[ROOT_SPAN].parent_span_id == "00f067aa0ba902b7"
    root = by_name[ROOT_SPAN].attributes  # OpenTelemetry's GenAI agent span, carrying the run's id
    assert (root["gen_ai.operation.name"], root["run.id"], root["gen_ai.conversation.id"]) == ("invoke_agent", sub.run_id, sid)
    assert {"round 1", "round 2", "chat local-extractive", "execute_tool internal_search", "stage encode",
            "stage query", "stage expand"} <= set(by_name)
    chats = [s for s in spans if s.name == "chat local-extractive"]
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) == detail.usage.input_tokens
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats) == detail.usage.output_tokens
    assert all(s.attributes["gen_ai.operation.name"] == "chat" for s in chats)
    tool = by_name["execute_tool internal_search"]
    assert tool.attributes["gen_ai.tool.call.id"] == detail.tool_calls[0].tool_call_id
    ids = {s.span_id for s in spans}
    assert all(s.parent_span_id in ids for s in spans if s.name != ROOT_SPAN), "one tree, no orphans"


def test_langfuse_receives_generations_with_usage_and_cost(traced: LiveWorkbench, receiver: OtlpReceiver) -> None:
    asked = ask(traced, ["P32"], "2.9%指什么？")
    trace_id = asked.detail.trace_id
    assert receiver.wait_for(lambda spans: any(s.trace_id == trace_id and s.path.startswith("/api/public")
                                               and s.name == "run" for s in spans), 15)
    generations = [s for s in receiver.trace(trace_id) if s.attributes.get("langfuse.observation.type") == "generation"]
    assert len(generations) == asked.detail.model_requests
    usage = [json.loads(s.attributes["langfuse.observation.usage_details"]) for s in generations]
    assert sum(u["input"] for u in usage) == asked.detail.usage.input_tokens
    cost = sum(json.loads(s.attributes["langfuse.observation.cost_details"])["total"] for s in generations)
    assert abs(cost - (asked.detail.cost.estimated_usd or 0)) < 1e-9


def test_span_budget_marks_the_trace_incomplete_and_leaves_the_answer_alone(traced: LiveWorkbench) -> None:
    full = ask(traced, ["P32"], "2.9%指什么？")
    with settings(traced, trace_budget_spans=3):
        cut = ask(traced, ["P32"], "2.9%指什么？")
    assert full.detail.trace_complete is True and cut.detail.trace_complete is False
    assert cut.detail.state == "completed" and len(cut.detail.checkpoints) == len(full.detail.checkpoints)
    answers = [next(m.content for m in traced.adapter.session(traced.auth_a, a.session_id).messages
                    if m.role == "assistant") for a in (full, cut)]
    assert answers[0] == answers[1]


def test_spans_are_written_to_the_trace_file(traced: LiveWorkbench) -> None:
    asked = ask(traced, ["P32"], "2.9%指什么？")
    path = Path(traced.target.data_dir).parent / "spans.jsonl"
    from rig.waiting import wait_until

    def has_run() -> bool:
        if not path.exists():
            return False
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        return any(x["context"]["trace_id"].endswith(asked.detail.trace_id) and x["name"] == ROOT_SPAN for x in lines)

    assert wait_until(has_run, 10.0)
