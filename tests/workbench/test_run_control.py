"""Stop reaches the running stage and frees the slot; a closed stream does not cancel; replay follows live."""

from __future__ import annotations

from rig.adapters.models import TokenEvent
from rig.waiting import wait_until
from tests.conftest import LiveWorkbench
from tests.workbench.helpers import open_on, settings, slots_in_use, slow_stream, wait_terminal

QUESTION = "请查清买家保护与徽章关系并给依据。"


def _first(events, name):  # type: ignore[no-untyped-def]
    for event in events:
        if event.event == name or (name == "answer" and isinstance(event, TokenEvent) and event.kind == "answer"):
            return event
    raise AssertionError(f"no {name} event")


def test_stop_during_generation_cancels_the_model_stage_and_frees_the_slot(live: LiveWorkbench) -> None:
    with slow_stream(live):
        sid = open_on(live, live.auth_a, ["P32"])
        sub = live.adapter.ask(live.auth_a, sid, QUESTION)
        stream = live.adapter.events(live.auth_a, sub.run_id)
        _first(stream, "answer")
        assert slots_in_use(live) == 1
        live.adapter.stop(live.auth_a, sub.run_id)
        rest = list(stream)
        detail = wait_terminal(live, sub.run_id)
    assert rest[-1].event == "error" and rest[-1].data["state"] == "stopped"
    assert (detail.state, detail.end_reason) == ("stopped", "user_stop")
    cancelled = [s for s in detail.stages if s.cancelled]
    assert [s.name for s in cancelled] == ["model"]
    assert wait_until(lambda: slots_in_use(live) == 0, 5.0)
    assert detail.checkpoints, "the completed tool cycle before the stop keeps its checkpoint"
    session = live.adapter.session(live.auth_a, sid)
    assert not [m for m in session.messages if m.role == "assistant"]
    after = live.adapter.ask(live.auth_a, sid, "2.9%指什么？")
    list(live.adapter.events(live.auth_a, after.run_id))
    assert live.adapter.run(live.auth_a, after.run_id).state == "completed"


def test_stop_reaches_the_encode_and_the_query_stage(live: LiveWorkbench) -> None:
    for stage in ("encode", "query"):
        with settings(live):
            live.adapter.chaos("POST", "faults", {"point": stage, "mode": "delay", "delay_ms": 5000})
            sid = open_on(live, live.auth_a, ["P32"])
            sub = live.adapter.ask(live.auth_a, sid, QUESTION)
            stream = live.adapter.events(live.auth_a, sub.run_id)
            _first(stream, "tool_call")
            def in_stage(run_id: str = sub.run_id, name: str = stage) -> bool:
                return any(s.name == name and s.ended_at_ms is None
                           for s in live.adapter.run(live.auth_a, run_id).stages)

            assert wait_until(in_stage, 5.0)
            live.adapter.stop(live.auth_a, sub.run_id)
            list(stream)
            detail = wait_terminal(live, sub.run_id)
        assert (detail.state, detail.end_reason) == ("stopped", "user_stop"), stage
        by_name = {s.name: s for s in detail.stages}
        assert by_name[stage].cancelled and by_name["internal_search"].cancelled, stage
        assert by_name[stage].ended_at_ms - by_name[stage].started_at_ms < 5000, "the delay was cut short"
        assert not detail.checkpoints, "no tool cycle completed, so no checkpoint"
        assert wait_until(lambda: slots_in_use(live) == 0, 5.0)


def test_reconnect_with_last_event_id_follows_the_live_run(live: LiveWorkbench) -> None:
    with slow_stream(live):
        sid = open_on(live, live.auth_a, ["P32"])
        sub = live.adapter.ask(live.auth_a, sid, QUESTION)
        stream = live.adapter.events(live.auth_a, sub.run_id)
        seen = [next(stream) for _ in range(8)]
        stream.close()
        assert live.adapter.run(live.auth_a, sub.run_id).state == "running"
        rest = list(live.adapter.events(live.auth_a, sub.run_id, last_event_id=seen[-1].id))
    assert rest[0].id == seen[-1].id + 1  # type: ignore[operator]
    assert [e.id for e in rest] == list(range(rest[0].id, rest[0].id + len(rest)))  # type: ignore[arg-type]
    assert rest[-1].event == "done"
    assert live.adapter.run(live.auth_a, sub.run_id).state == "completed"


def test_stopping_a_finished_run_is_refused(live: LiveWorkbench) -> None:
    sid = open_on(live, live.auth_a, ["P32"])
    sub = live.adapter.ask(live.auth_a, sid, "2.9%指什么？")
    list(live.adapter.events(live.auth_a, sub.run_id))
    response = live.adapter.request(live.auth_a, "POST", f"/api/v1/runs/{sub.run_id}/stop", json={},
                                    raise_for_status=False)
    assert response.status_code == 409 and response.json()["error"]["code"] == "run_not_active"
