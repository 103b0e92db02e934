"""The workbench with an OpenAI-compatible model behind the LLM fault proxy: each fault, the run ending it causes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from chaos.injectors import Injectors
from chaos.llm_proxy import LlmFaultProxy
from rig.adapters.models import RunDetail, TokenEvent
from rig.faults import Fault, FaultControl, RequestRecord
from tests.conftest import Corpus, LiveWorkbench, start_workbench
from tests.workbench.helpers import ask

QUESTION = "请概括《Reputation and Regulations- Evidence from eBay》的主要发现"


@dataclass
class Rigged:
    wb: LiveWorkbench
    proxy: LlmFaultProxy
    control: FaultControl


@pytest.fixture(scope="module")
def rigged(tmp_path_factory: pytest.TempPathFactory, corpus: Corpus) -> Iterator[Rigged]:
    wb = start_workbench(tmp_path_factory.mktemp("wb-llm"), corpus, include_variants=False)
    proxy = LlmFaultProxy("mock", record_path=tmp_path_factory.mktemp("proxy") / "requests.jsonl")
    url = proxy.start()
    wb.adapter.set_model_config(wb.auth_a, "openai", "rig-mock", f"{url}/v1", "sk-rig-test-key")
    try:
        yield Rigged(wb, proxy, FaultControl(url))
    finally:
        proxy.stop()
        wb.adapter.close()
        wb.target.cleanup()


def run_with(r: Rigged, rule: dict[str, object] | None) -> tuple[RunDetail, list[RequestRecord], str]:
    """One question with `rule` active; the run detail, the proxy's log of this run, the streamed answer."""
    r.control.clear()
    if rule:
        r.control.add(rule)
    since = max((rec.seq for rec in r.control.requests()), default=0)
    asked = ask(r.wb, ["P32"], QUESTION)
    text = "".join(e.text for e in asked.events if isinstance(e, TokenEvent) and e.kind == "answer")
    return asked.detail, r.control.requests(since), text


def model_ms(detail: RunDetail) -> list[float]:
    return [s.ended_at_ms - s.started_at_ms for s in detail.stages if s.name == "model"
            and s.ended_at_ms is not None and s.started_at_ms is not None]


def test_clean_pass_through_is_a_full_agent_loop(rigged: Rigged) -> None:
    detail, log, text = run_with(rigged, None)
    assert (detail.state, detail.end_reason) == ("completed", "completed")
    assert detail.model.provider == "openai" and detail.tool_calls_executed == 1
    assert [rec.faults for rec in log] == [[], []] and all(rec.status == 200 for rec in log)
    assert detail.usage.source == "provider"
    assert detail.usage.input_tokens == sum(rec.prompt_tokens or 0 for rec in log)
    assert "[" in text and "根据所选资料" in text
    assert "sk-rig-test-key" not in Path(str(rigged.proxy._record_file.name)).read_text()  # type: ignore[union-attr]


def test_one_429_with_retry_after_is_retried_after_the_wait(rigged: Rigged) -> None:
    detail, log, _ = run_with(rigged, {"mode": "status", "status": 429, "retry_after_s": 0.4, "times": 1})
    assert (detail.state, detail.end_reason, detail.retries) == ("completed", "completed", 1)
    assert log[0].status == 429 and log[0].outcome == "injected_status"
    assert log[1].at_ms - log[0].at_ms >= 400, "the target retried before Retry-After"


def test_persistent_5xx_fails_the_run_after_its_retries(rigged: Rigged) -> None:
    detail, log, _ = run_with(rigged, {"mode": "status", "status": 503})
    assert (detail.state, detail.end_reason) == ("failed", "internal_error")
    assert detail.retries == 2 and len(log) == 3 and {rec.status for rec in log} == {503}


def test_one_connection_reset_is_retried(rigged: Rigged) -> None:
    detail, log, _ = run_with(rigged, {"mode": "reset", "times": 1})
    assert (detail.state, detail.retries) == ("completed", 1)
    assert log[0].outcome == "reset" and log[0].status is None


def test_an_empty_completion_ends_failed_empty_answer(rigged: Rigged) -> None:
    detail, log, text = run_with(rigged, {"mode": "empty"})
    assert (detail.state, detail.end_reason) == ("failed", "empty_answer")
    assert text == "" and log[0].outcome == "empty"


def test_a_stream_cut_after_three_chunks_is_a_failed_run_not_a_completed_one(rigged: Rigged) -> None:
    detail, log, text = run_with(rigged, {"mode": "cut", "after_chunks": 3, "match": "tool_call_id"})
    assert (detail.state, detail.end_reason) == ("failed", "internal_error")
    assert log[-1].outcome == "cut" and log[-1].chunks == 3
    assert 0 < len(text) < 10, "the part streamed before the cut is all the client got"
    assert detail.message_id is None


def test_dropped_usage_is_estimated_and_named(rigged: Rigged) -> None:
    detail, log, _ = run_with(rigged, {"mode": "no_usage"})
    assert detail.state == "completed"
    assert all(rec.usage_dropped for rec in log)
    assert detail.usage.source == "estimate" and "provider_usage" in detail.cost.unknown


def test_latency_and_first_token_delay_show_in_the_model_stage(rigged: Rigged) -> None:
    _, base_log, _ = run_with(rigged, None)
    slow, log, _ = run_with(rigged, {"mode": "latency", "delay_ms": 300})
    chat = [rec for rec in log if rec.endpoint == "chat"]
    assert all(rec.faults == [] for rec in base_log) and chat and all(rec.faults == ["latency"] for rec in chat)
    assert model_ms(slow) and all(ms >= 300 for ms in model_ms(slow))  # a delay is a floor, on any machine
    late, log, _ = run_with(rigged, {"mode": "first_token_delay", "delay_ms": 300, "match": "tool_call_id"})
    assert log[-1].first_token_ms is not None and log[-1].first_token_ms >= 300
    assert late.first_token_at_ms is not None and late.queued_at_ms is not None
    assert late.first_token_at_ms - late.queued_at_ms >= 300


def test_a_seeded_probability_fires_on_the_same_requests_every_time(tmp_path: Path) -> None:
    patterns = []
    for _ in range(2):
        proxy = LlmFaultProxy("mock", seed=7)
        url = proxy.start()
        try:
            FaultControl(url).add({"mode": "status", "status": 500, "probability": 0.5})
            body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
            patterns.append([httpx.post(f"{url}/v1/chat/completions", json=body).status_code for _ in range(20)])
        finally:
            proxy.stop()
    assert patterns[0] == patterns[1]
    assert 0 < patterns[0].count(500) < 20


def test_bad_rules_are_refused_with_the_reason(rigged: Rigged) -> None:
    response = httpx.post(f"{rigged.control.url}/_rig/rules", json={"mode": "latency"})
    assert response.status_code == 422 and "delay_ms" in response.text
    response = httpx.post(f"{rigged.control.url}/_rig/rules", json={"mode": "teleport"})
    assert response.status_code == 422


def test_a_schedule_fault_with_endpoint_embeddings_hits_the_embeddings_only() -> None:
    """The vocabulary's `endpoint` reaches the proxy: the gate's retrieval fault, written as a chaos step."""
    proxy = LlmFaultProxy("mock")
    url = proxy.start()
    try:
        injectors = Injectors(proxies={"llm_proxy": url})
        fault = Fault(via="llm_proxy", mode="status", status=503, endpoint="embeddings")
        injectors.check(fault)
        applied = injectors.apply(fault)
        chat = httpx.post(f"{url}/v1/chat/completions", json={"model": "m", "messages": [{"role": "user",
                                                                                         "content": "hi"}]})
        embed = httpx.post(f"{url}/v1/embeddings", json={"model": "e", "input": ["hi"]})
        assert (fault.label, chat.status_code, embed.status_code) == ("embeddings/status", 200, 503)
        injectors.rollback(applied)
        assert httpx.post(f"{url}/v1/embeddings", json={"model": "e", "input": ["hi"]}).status_code == 200
    finally:
        proxy.stop()
    with pytest.raises(ValueError, match="llm_proxy only"):
        Fault(via="http_proxy", mode="status", endpoint="embeddings")
