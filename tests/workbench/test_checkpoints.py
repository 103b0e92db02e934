"""Checkpoints after each tool cycle; resume carries evidence over, or is refused with the changed parts."""

from __future__ import annotations

import pytest

from rig.adapters.models import CheckpointEvent
from rig.errors import TargetHTTPError
from tests.conftest import LiveWorkbench
from tests.workbench.helpers import open_on, settings, slow_stream, wait_terminal

QUESTION = "根据《Reputation and Regulations- Evidence from eBay》，2.9%指什么？用两句话解释并引用。"


def stopped_after_checkpoint(live: LiveWorkbench, papers: list[str] | None = None) -> tuple[str, str]:
    """A run stopped during generation, after its first tool cycle was checkpointed."""
    with slow_stream(live):
        sid = open_on(live, live.auth_a, papers or ["P32"])
        sub = live.adapter.ask(live.auth_a, sid, QUESTION)
        stream = live.adapter.events(live.auth_a, sub.run_id)
        next(e for e in stream if isinstance(e, CheckpointEvent))
        live.adapter.stop(live.auth_a, sub.run_id)
        list(stream)
    assert wait_terminal(live, sub.run_id).state == "stopped"
    return sid, sub.run_id


def test_valid_checkpoint_resumes_into_a_linked_run_with_the_same_evidence(live: LiveWorkbench) -> None:
    sid, old = stopped_after_checkpoint(live)
    before = live.adapter.run(live.auth_a, old)
    resumed = live.adapter.resume(live.auth_a, old)
    assert resumed.resume_from == old and resumed.run_id != old
    list(live.adapter.events(live.auth_a, resumed.run_id))
    new = live.adapter.run(live.auth_a, resumed.run_id)
    assert (new.state, new.resume_from) == ("completed", old)
    assert new.tool_calls == [] and new.rounds == 2, "evidence came from the checkpoint, not a new search"
    assert new.model_input[0].tool_call_ids == [c.tool_call_id for c in before.tool_calls]
    old_chunks = {h.chunk_id for c in before.tool_calls for h in c.hits}
    answer = next(m for m in live.adapter.session(live.auth_a, sid).messages if m.run_id == resumed.run_id)
    assert answer.citations and {c.chunk_id for c in answer.citations} <= old_chunks
    assert {c.tool_call_id for c in answer.citations} <= {c.tool_call_id for c in before.tool_calls}
    assert live.adapter.run(live.auth_a, old).state == "stopped", "the old run and its record are kept"


def test_changed_model_config_invalidates_the_checkpoint(live: LiveWorkbench) -> None:
    _, old = stopped_after_checkpoint(live)
    current = live.adapter.model_config(live.auth_a)
    live.adapter.set_model_config(live.auth_a, "local", "local-extractive-mini")
    try:
        with pytest.raises(TargetHTTPError) as err:
            live.adapter.resume(live.auth_a, old)
    finally:
        live.adapter.set_model_config(live.auth_a, current.provider, current.model)
    assert err.value.status == 409 and err.value.code == "checkpoint_invalid"
    assert err.value.details["reasons"] == ["model_config_changed"]
    assert live.adapter.run(live.auth_a, old).state == "stopped"


def test_changed_materials_invalidate_the_checkpoint(live: LiveWorkbench) -> None:
    sid, old = stopped_after_checkpoint(live)
    live.adapter.set_scope(live.auth_a, sid, [live.corpus.doc("P32"), live.corpus.doc("P21")])
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.resume(live.auth_a, old)
    assert err.value.code == "checkpoint_invalid" and err.value.details["reasons"] == ["materials_changed"]


def test_a_run_stopped_before_its_first_tool_cycle_has_no_checkpoint(live: LiveWorkbench) -> None:
    with settings(live):
        live.adapter.chaos("POST", "faults", {"point": "encode", "mode": "delay", "delay_ms": 5000})
        sid = open_on(live, live.auth_a, ["P32"])
        sub = live.adapter.ask(live.auth_a, sid, QUESTION)
        stream = live.adapter.events(live.auth_a, sub.run_id)
        next(e for e in stream if e.event == "tool_call")
        live.adapter.stop(live.auth_a, sub.run_id)
        list(stream)
        wait_terminal(live, sub.run_id)
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.resume(live.auth_a, sub.run_id)
    assert err.value.status == 409 and err.value.code == "no_checkpoint"
    again = live.adapter.ask(live.auth_a, sid, QUESTION)
    list(live.adapter.events(live.auth_a, again.run_id))
    assert live.adapter.run(live.auth_a, again.run_id).state == "completed", "a new question can be started"


def test_a_completed_run_is_not_resumable(live: LiveWorkbench) -> None:
    sid = open_on(live, live.auth_a, ["P32"])
    sub = live.adapter.ask(live.auth_a, sid, QUESTION)
    list(live.adapter.events(live.auth_a, sub.run_id))
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.resume(live.auth_a, sub.run_id)
    assert err.value.code == "not_resumable"
