"""Input budget, round limit, no-progress guard, empty answers, tool errors and expansion failures."""

from __future__ import annotations

import pytest

from rig.errors import TargetHTTPError
from tests.conftest import LiveWorkbench
from tests.workbench.helpers import ask, open_on, settings


def test_over_budget_input_is_refused_and_the_next_message_works(live: LiveWorkbench) -> None:
    with settings(live, input_budget_tokens=40):
        sid = open_on(live, live.auth_a, ["P32"])
        with pytest.raises(TargetHTTPError) as err:
            live.adapter.ask(live.auth_a, sid, "请解释买家保护与徽章的关系。" * 10)
        assert err.value.status == 413 and err.value.code == "input_too_long"
        assert err.value.details == {"limit_tokens": 40, "measured_tokens": 140}
        after = ask(live, [], "2.9%指什么？", session_id=sid)
        assert after.detail.state == "completed"
        assert not [m for m in live.adapter.session(live.auth_a, sid).messages if "请解释买家保护" in m.content]


def test_last_round_withholds_tools_and_ends_honestly(live: LiveWorkbench) -> None:
    with settings(live, max_rounds=1):
        asked = ask(live, ["P32"], "2.9%指什么？")
    d = asked.detail
    assert (d.state, d.end_reason, d.rounds) == ("completed", "max_rounds", 1)
    assert d.rounds_detail[0].tools_offered is False and d.tool_calls == []
    answer = next(m for m in live.adapter.session(live.auth_a, asked.session_id).messages if m.role == "assistant")
    assert "工具调用上限" in answer.content and answer.citations == []


def test_repeated_identical_results_end_with_no_progress(live: LiveWorkbench) -> None:
    question = "请查清买家保护与徽章关系并给依据。"
    clean = ask(live, ["P32"], question)
    assert (clean.detail.end_reason, len(clean.detail.tool_calls)) == ("completed", 3)
    with settings(live, no_progress_threshold=2):
        live.adapter.chaos("POST", "faults", {"point": "internal_search", "mode": "repeat_same"})
        asked = ask(live, ["P32"], question)
    d = asked.detail
    assert (d.state, d.end_reason) == ("completed", "no_progress")
    hits = [[h.chunk_id for h in c.hits] for c in d.tool_calls]
    assert len(hits) == 3 and hits[1] == hits[0] == hits[2]
    assert d.rounds_detail[-1].tools_offered is False


def test_empty_model_answer_is_a_failure_not_a_completion(live: LiveWorkbench) -> None:
    with settings(live):
        live.adapter.chaos("POST", "faults", {"point": "llm", "mode": "empty", "times": 1, "match": "2.9%"})
        faults = live.adapter.chaos("GET", "faults")
        asked = ask(live, ["P32"], "2.9%指什么？")
        assert live.adapter.chaos("GET", "faults")[0]["fired"] == faults[0]["fired"] + 1
    assert (asked.detail.state, asked.detail.end_reason) == ("failed", "empty_answer")
    assert asked.events[-1].event == "error"
    assert not [m for m in live.adapter.session(live.auth_a, asked.session_id).messages if m.role == "assistant"]


def test_tool_error_is_visible_and_the_model_retries(live: LiveWorkbench) -> None:
    with settings(live):
        live.adapter.chaos("POST", "faults", {"point": "internal_search", "mode": "error", "times": 1})
        asked = ask(live, ["P32"], "2.9%指什么？")
    calls = asked.detail.tool_calls
    assert [c.ok for c in calls] == [False, True]
    assert calls[0].error and calls[0].error["code"] == "injected_error" and calls[0].hits == []
    results = [e for e in asked.events if e.event == "tool_result"]
    assert results[0].data["ok"] is False and results[0].data["error"]["code"] == "injected_error"
    assert asked.detail.state == "completed"


def test_tool_that_keeps_failing_ends_tool_error_without_invented_evidence(live: LiveWorkbench) -> None:
    with settings(live):
        live.adapter.chaos("POST", "faults", {"point": "internal_search", "mode": "timeout", "delay_ms": 10})
        asked = ask(live, ["P32"], "2.9%指什么？")
    assert (asked.detail.state, asked.detail.end_reason) == ("failed", "tool_error")
    answer = next(m for m in live.adapter.session(live.auth_a, asked.session_id).messages if m.role == "assistant")
    assert answer.citations == [] and "检索工具返回错误" in answer.content


def test_expansion_failure_returns_the_original_chunk_with_its_true_source(live: LiveWorkbench) -> None:
    p32 = live.corpus.doc("P32")
    normal = live.adapter.search(live.auth_a, live.corpus.project_id, ["2.9%"], scope=[p32])
    assert any(h.expanded for h in normal.results[0].hits)
    with settings(live):
        live.adapter.chaos("POST", "faults", {"point": "expand", "mode": "error", "times": 1})
        degraded = live.adapter.search(live.auth_a, live.corpus.project_id, ["2.9%"], scope=[p32])
    expand = next(s for s in degraded.stages if s.name == "expand")
    assert expand.ok is False and expand.error == "injected_error"
    for hit in degraded.results[0].hits:
        assert hit.expanded is False
        page = live.adapter.page_text(live.auth_a, hit.doc_id, hit.page)  # type: ignore[arg-type]
        assert hit.text in page.text, "the original chunk text, from its true page"
    assert [h.chunk_id for h in degraded.results[0].hits] == [h.chunk_id for h in normal.results[0].hits]
