"""运行控制 — run control (reliability cases 20–26)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from rig.adapters import CheckpointEvent, Event, RunDetail, TokenEvent
from rig.clock import now_ns, wall_ms
from rig.errors import CapabilityMissing, TargetHTTPError
from rig.gate import CaseContext, case, kept, snapshot
from rig.measure import RunTranscript, restart_measures, stage_measures
from rig.target import MISSING_RESTARTER
from rig.verdict import Verdict
from rig.waiting import wait_until, wait_while_moving
from scenarios.reliability.steps import (
    answer_of,
    answers,
    attempt,
    model_calls_ended,
    run_ended,
    saved_answer,
    slots_in_use,
    wait_slots_free,
    wait_terminal,
)

LONG = "请查清买家保护与徽章关系并给依据。"
P32_QUESTION = "根据《Reputation and Regulations- Evidence from eBay》，2.9%指什么？用两句话解释并引用。"


def _stop_when(ctx: CaseContext, session_id: str, question: str, until: type, *,
               while_running: Callable[[RunTranscript], None] | None = None,
               after_stop: Callable[[RunTranscript], None] | None = None) -> RunTranscript:
    """Ask, read until an event of type `until` arrives, stop, read the rest; returns the transcript.
    `while_running` runs just before the stop, `after_stop` just after it (the edges of run control)."""
    run = ctx.submit(ctx.a, session_id, question)
    stream = ctx.stream_until(ctx.a, run, lambda e: isinstance(e, until))
    if while_running is not None:
        while_running(run)
    ctx.stop(ctx.a, run)
    if after_stop is not None:
        after_stop(run)
    for event in stream:
        run.events.append(event)
    run.end_ns = now_ns()
    assert run.stop_ns is not None
    ctx.evidence("stop", f"stop sent for {run.run_id}", {"after_event": until.__name__,
                                                         "stop_after_submit_ms": (run.stop_ns - run.submit_ns) / 1e6})
    return run


def _resume(ctx: CaseContext, run_id: str) -> tuple[int, str | None, object]:
    """(status, error code, details) of one resume attempt."""
    try:
        ctx.adapter.resume(ctx.a, run_id)
    except TargetHTTPError as exc:
        return exc.status, exc.code, exc.details
    return 201, None, None


def _stopped_with_checkpoint(ctx: CaseContext, session_id: str) -> RunTranscript:
    with ctx.slow_model():
        run = _stop_when(ctx, session_id, P32_QUESTION, CheckpointEvent)
    wait_terminal(ctx, run.run_id)
    return ctx.finish(ctx.a, run)


@case(20, "可靠性-20-1", codes=("T8", "T9"), papers=("P32",))
def stop_during_generation(ctx: CaseContext) -> None:
    """While a P32 answer is being generated, press stop; then send a new request.

    Expects: the stop reaches the running task, the reason is saved, the session/slot is freed, a new
    request is served, and results already saved remain. At the edges: a resume of the run while it still runs is
    refused, a second stop changes nothing more, and a stop of a run that has already ended is refused (or a no-op)
    and leaves its record and answer as they were. Evidence: stop time, task state, slot gauge, the saved objects
    before and after.
    """
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    kept_run = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    before = snapshot(ctx, [opened.session_id], [kept_run.run_id])
    proxy = ctx.target.model_proxy
    since = proxy.last_seq() if proxy is not None else 0
    edges = not ctx.caps.missing("stop=server", "run_detail")
    seen: dict[str, Any] = {}

    def resume_while_running(run: RunTranscript) -> None:
        if edges and not ctx.caps.missing("resume"):
            seen["resume"] = _resume(ctx, run.run_id)

    def stop_again(run: RunTranscript) -> None:
        if edges:
            seen["second_stop"] = attempt(lambda: ctx.adapter.stop(ctx.a, run.run_id)).status

    with ctx.slow_model():
        run = _stop_when(ctx, opened.session_id, LONG, TokenEvent, while_running=resume_while_running,
                         after_stop=stop_again)
        held = slots_in_use(ctx)
    if ctx.caps.missing("run_detail"):
        _stop_reached_by_disconnect(ctx, run, since)
    else:
        _stop_reached_by_record(ctx, run)
    if not ctx.lacks("slot_released", "slots_metric"):
        freed = wait_slots_free(ctx)
        e2 = ctx.observe("slot gauge", {"while_running": held, "freed": freed})
        ctx.item("slot_released", freed if freed is not None else None,
                 "slot gauge back to 0" if freed else "the declared slot gauge is not exposed" if freed is None
                 else "slot still held", e2)
    _edges_of_stop(ctx, run, seen, edges)
    after = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    ended = run_ended(after)
    ctx.item("new_request_served", None if ended is None else ended == "completed" and bool(after.answer.strip()),
             f"next run ended {ended}", *after.evidence,
             seen={"ended": ended, "answer_chars": len(after.answer)})
    kept(ctx, before, "stop", name="saved_results_kept")
    if edges:
        late = attempt(lambda: ctx.adapter.stop(ctx.a, kept_run.run_id))
        record = ctx.adapter.run(ctx.a, kept_run.run_id)
        e3 = ctx.observe("stop of a run that had already ended", {"status": late.status, "state": record.state,
                                                                   "end_reason": record.end_reason})
        ctx.item("stop_after_end", late.status in (200, 409) and (record.state, record.end_reason) ==
                 ("completed", "completed"), "a stop of an ended run is refused (409) or a no-op, and its record "
                 "stays completed", e3, seen={"status": late.status, "record": f"{record.state}/{record.end_reason}"})
        kept(ctx, before, "late stop")
    else:
        ctx.item("stop_after_end", Verdict.BLOCKED, "missing capability: " + ", ".join(
            ctx.caps.missing("stop=server", "run_detail")))


def _edges_of_stop(ctx: CaseContext, run: RunTranscript, seen: dict[str, Any], edges: bool) -> None:
    """Resume while running and a second stop, judged once the run has ended."""
    if not edges:
        missing = ", ".join(ctx.caps.missing("stop=server", "run_detail"))
        for name in ("resume_while_running", "stop_twice"):
            ctx.item(name, Verdict.BLOCKED, f"missing capability: {missing}")
        return
    d = run.detail
    if "resume" in seen:
        status, code, details = seen["resume"]
        e = ctx.observe("resume of a run still running", {"status": status, "code": code, "details": details})
        ctx.item("resume_while_running", status == 409, "a resume of a run that is still running is refused (409), "
                 "not a second continuation", e, seen={"status": status, "code": code})
    else:
        ctx.item("resume_while_running", Verdict.BLOCKED, "missing capability: resume")
    second = seen.get("second_stop")
    streamed_stop = run.terminal is not None and run.terminal.state == "stopped"
    stopped = d is not None and d.terminal and (d.state == "stopped" or streamed_stop) and (
        d.end_reason == "user_stop" or bool(ctx.caps.missing("end_reasons")))
    e_twice = ctx.observe("a second stop of the same run", {
        "second_stop_status": second, "stream_end": (run.terminal.state, run.terminal.reason) if run.terminal else None,
        "record": d.model_dump(mode="json", include={"run_id", "state", "end_reason"}) if d else None})
    ctx.item("stop_twice", second in (200, 409) and stopped, "a second stop is accepted again or refused, and the "
             "run ends once, stopped by the user", e_twice, seen={"second_stop": second, "stream_end": run.terminal.state
                                                         if run.terminal else None,
                                                         "record": f"{d.state}/{d.end_reason}" if d else None})


def _stop_reached_by_record(ctx: CaseContext, run: RunTranscript) -> None:
    """A target with run records: the record says the run stopped, for the user, and its stages were cancelled."""
    wait_terminal(ctx, run.run_id)
    ctx.finish(ctx.a, run)
    d = run.detail
    assert d is not None
    e = ctx.observe("after stop", {"state": d.state, "end_reason": d.end_reason, "stream_end": run.terminal.data
                                   if run.terminal else None, "cancelled_stages": [s.name for s in d.stages if s.cancelled]})
    streamed_stop = run.terminal is not None and run.terminal.state == "stopped"
    cancelled = [s.name for s in d.stages if s.cancelled]
    reached = (d.state == "stopped" or streamed_stop) and (bool(cancelled) or ctx.caps.missing("run_timings") != [])
    ctx.item("stop_reached_task", reached, f"record {d.state}/{d.end_reason}, stream ended "
             f"{run.terminal.state if run.terminal else None}; cancelled stages: {cancelled}", e)
    ctx.item("reason_saved", d.end_reason == "user_stop", f"end_reason {d.end_reason}", e, needs=("end_reasons",))


def _stop_reached_by_disconnect(ctx: CaseContext, run: RunTranscript, since: int) -> None:
    """A target without run records: what shows the stop reached the running task is the model call behind it —
    the rig's proxy sees the target give the streamed answer up once the stop came (closing the stream, where that is
    the target's only stop), rather than read it to the end for nobody."""
    ctx.finish(ctx.a, run)
    calls = model_calls_ended(ctx, since)
    streamed = [c for c in calls or [] if c.stream]
    gave_up = [c for c in streamed if c.outcome == "client_gone"]
    e = ctx.observe("the model call behind the stopped run (the rig's proxy)", {
        "stop": ctx.caps.stop, "stream_end": run.terminal.data if run.terminal else None,
        "model_calls": [(c.seq, c.outcome, c.chunks, c.total_ms) for c in streamed]})
    ctx.item("stop_reached_task", bool(gave_up) if streamed else None,
             "the stop reached the running task: the target gave up its model call before the answer ended", e,
             seen={"model_calls": [(c.outcome, c.chunks) for c in streamed], "stop": ctx.caps.stop})
    ctx.lacks("reason_saved", "end_reasons")


def _wait_inside(ctx: CaseContext, run_id: str, stage: str, stall_s: float = 5.0) -> bool:
    """True once the run is inside `stage` (started, not ended); False if the run ends first or its record
    stands still for `stall_s` (the deadline follows the run's own progress, not the clock alone)."""
    seen = [""]

    def inside() -> bool:
        detail = ctx.adapter.run(ctx.a, run_id)
        seen[0] = detail.model_dump_json()
        return not detail.terminal and any(s.name == stage and s.ended_at_ms is None for s in detail.stages)

    return bool(wait_while_moving(inside, lambda: seen[0], stall_s))


STAGE_DELAY_MS = 8000


def _stop_inside_stage_by_control(ctx: CaseContext, stage: str) -> None:
    """The target's own fault point stretches `stage`; its run record says whether the stage was cancelled."""
    ctx.fault(stage, "delay", delay_ms=STAGE_DELAY_MS, times=1)
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run = ctx.submit(ctx.a, opened.session_id, P32_QUESTION)
    stream = ctx.stream_until(ctx.a, run, lambda e: e.event == "tool_call")
    inside = _wait_inside(ctx, run.run_id, stage)
    ctx.stop(ctx.a, run)
    run.events.extend(stream)
    wait_terminal(ctx, run.run_id)
    ctx.finish(ctx.a, run)
    d = run.detail
    assert d is not None
    rec = next((s for s in d.stages if s.name == stage), None)
    cut = rec is not None and rec.cancelled and rec.ended_at_ms is not None and rec.started_at_ms is not None \
        and rec.ended_at_ms - rec.started_at_ms < STAGE_DELAY_MS
    e = ctx.observe(f"stop inside {stage}", {"was_inside": bool(inside), "stage": rec.model_dump() if rec else None,
                                             "state": d.state, "end_reason": d.end_reason})
    ctx.item(f"{stage}_cancelled", bool(inside) and cut, f"the {stage} stage cancelled before its delay ran out", e,
             seen={"stopped_inside_stage": bool(inside), "stage_cancelled": rec.cancelled if rec else None,
                   "stage_ms": (rec.ended_at_ms - rec.started_at_ms) if rec and rec.ended_at_ms and rec.started_at_ms
                   else None, "delay_ms": STAGE_DELAY_MS})
    _exit_recorded(ctx, stage, d, e)
    if rec is not None:
        ctx.measures(stage_measures(rec, run_id=run.run_id, suffix=":cancelled"))


def _stop_inside_encode_by_proxy(ctx: CaseContext) -> None:
    """The rig's LLM proxy holds the query's embedding request (the target's encode stage); the proxy itself sees
    whether the target, told to stop, gave that request up before the delay ran out."""
    proxy = ctx.target.model_proxy
    assert proxy is not None
    since = proxy.last_seq()
    fixture = ctx.retrieval_fault("slow", delay_ms=STAGE_DELAY_MS)
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run = ctx.submit(ctx.a, opened.session_id, P32_QUESTION)
    records = not ctx.caps.missing("run_detail")

    def moving() -> str:  # the run record, or the target's requests to its model: while they change it is working
        if records:
            return ctx.adapter.run(ctx.a, run.run_id).model_dump_json()
        return repr([(r.seq, r.total_ms) for r in proxy.requests(since, in_flight=True)])

    held = wait_while_moving(lambda: (ctx.fired(fixture) or 0) > 0, moving, 10.0)
    if not ctx.took_effect(fixture, "encode_cancelled", "encode_exit_recorded"):
        ctx.stop(ctx.a, run)
        return
    ctx.stop(ctx.a, run)
    run.events.extend(ctx.adapter.events(ctx.a, run.run_id))
    run.end_ns = now_ns()
    stop_ns = run.stop_ns
    assert stop_ns is not None
    # The proxy logs the held request when it ends: given up by the target, or answered once the delay ran out.
    mine = [r for r in wait_until(lambda: [r for r in proxy.requests(since) if set(r.rules or ())
                                           & set(fixture.rule_ids) and r.total_ms is not None],
                                  STAGE_DELAY_MS / 1000 + 10.0) or []]
    if records:
        wait_terminal(ctx, run.run_id)
    ctx.finish(ctx.a, run)
    d = run.detail
    gave_up = [r for r in mine if r.outcome == "client_gone" and (r.total_ms or 0) < STAGE_DELAY_MS]
    # A stop sent after the held request had ended was not a stop inside the stage (a target that answers — and so
    # can be stopped — only once its retrieval is done holds the rig's submit until then).
    late = [r for r in mine if r.at_ms is not None and r.at_ms + (r.total_ms or 0) <= wall_ms(stop_ns)]
    e = ctx.observe("stop inside encode (the proxy's view of the held embedding request)", {
        "fixture": fixture.kind, "held": bool(held), "requests": mine, "state": d.state if d else None,
        "end_reason": d.end_reason if d else None, "stop": ctx.caps.stop, "stop_came_after_the_hold": bool(late),
        "stop_after_submit_ms": (stop_ns - run.submit_ns) / 1e6})
    ctx.item("encode_cancelled", bool(gave_up) if mine and not late else Verdict.U,
             "the target gave the held embedding request up before the delay ran out "
             "(the cancellation reached the encode stage, not just the stream)", e,
             seen={"held_requests": [(r.outcome, round(r.total_ms or 0)) for r in mine],
                   "delay_ms": STAGE_DELAY_MS, "stop_came_after_the_hold": bool(late)})
    _exit_recorded(ctx, "encode", d, e)


def _exit_recorded(ctx: CaseContext, stage: str, d: RunDetail | None, evidence: int) -> None:
    if d is None:  # no run record to hold the exit
        ctx.lacks(f"{stage}_exit_recorded", "end_reasons")
        return
    freed = wait_slots_free(ctx)
    ctx.item(f"{stage}_exit_recorded", d.state == "stopped" and d.end_reason == "user_stop" and freed is not False,
             "the run ended stopped/user_stop and its slot was freed", evidence, needs=("end_reasons",),
             seen={"ended": f"{d.state}/{d.end_reason}", "slot_freed": freed})


@case(21, "可靠性-21-1", codes=("T2", "T8"), papers=("P32",))
def stop_during_retrieval(ctx: CaseContext) -> None:
    """Stretch the encode stage, then the query stage, and stop inside each (two variants, apart).

    Expects: the stage's cancellation is handled, the exit saves the reason and frees the slot; a
    front end merely stopping the stream would not count. Evidence: stage start/stop/end, slot gauge.
    The stages are stretched by the target's own fault points, or — for encode — by the rig's LLM proxy holding
    the query's embedding request where the target embeds through it (the query stage has no such way in).
    """
    proxy = ctx.target.model_proxy
    for stage in ("encode", "query"):
        if ctx.caps.chaos:
            _stop_inside_stage_by_control(ctx, stage)
        elif stage == "encode" and proxy is not None and proxy.embeddings:
            _stop_inside_encode_by_proxy(ctx)
        else:
            ctx.item(f"{stage}_cancelled", Verdict.BLOCKED, "missing capability: chaos (stretching the "
                     f"{stage} stage needs the target's own fault point" + (")" if stage == "query" else
                                                                              ", or model_proxy with embeddings: true)"))


@case(22, "可靠性-22-1", codes=("T8",), papers=("P32",))
def disconnect_is_not_cancel(ctx: CaseContext) -> None:
    """Start a long task, close the page (the stream) without stopping, then open the session again.

    Expects: on return the real backend state or the saved result is shown; the disconnect is not
    passed off as a user cancellation. Evidence: run ids, states and results before and after; on a
    target without run records, the saved session and what the target asked of its model after the close.
    """
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    if ctx.caps.missing("run_detail"):
        _disconnect_without_records(ctx, opened.session_id)
        return
    with ctx.slow_model():
        run = ctx.submit(ctx.a, opened.session_id, LONG)
        stream = ctx.stream_until(ctx.a, run, lambda e: isinstance(e, TokenEvent))
        stream.close()
        state_after_close = ctx.adapter.run(ctx.a, run.run_id).state
        detail = wait_terminal(ctx, run.run_id, 60)
    # coming back: the stream again where the target replays it, else the saved result (either satisfies the case)
    replay = not ctx.caps.missing("event_replay")
    reopened = list(ctx.adapter.events(ctx.a, run.run_id, last_event_id=run.events[-1].id)) if replay else []
    session = ctx.adapter.session(ctx.a, opened.session_id)
    saved = answers(session, run.run_id)
    e = ctx.observe("after closing and reopening", {"state_right_after_close": state_after_close,
                                                    "final": (detail.state, detail.end_reason) if detail else None,
                                                    "reopened_stream_end": reopened[-1].data if reopened else None,
                                                    "answers": len(saved), "replayed": replay})
    if not _closing_is_its_stop(ctx):
        ctx.item("disconnect_not_cancel", bool(detail) and detail.end_reason != "user_stop" and
                 detail.state == "completed", f"ended {detail.state if detail else None}/"
                 f"{detail.end_reason if detail else None}", e)
    shown = (bool(reopened) and reopened[-1].event == "done") if replay else bool(detail) and detail.terminal
    ctx.item("reopen_shows_real_state", shown and bool(saved) and bool(saved[0].content.strip()),
             ("the reopened stream ends done" if replay else "the run record is final") + " and the answer is saved", e,
             seen={"stream_end": reopened[-1].event if reopened else None,
                   "run_state": detail.state if detail else None, "saved_answers": len(saved),
                   "saved_chars": len(saved[0].content.strip()) if saved else 0})
    _replay_exact(ctx, run, reopened)
    run.events.extend(reopened)
    ctx.finish(ctx.a, run)


def _closing_is_its_stop(ctx: CaseContext) -> bool:
    """True (and `disconnect_not_cancel` BLOCKED) where the target's declared stop is closing the stream: on it a
    closed page and a stop are one act, and the case's distinction does not exist."""
    if ctx.caps.stop != "disconnect":
        return False
    ctx.item("disconnect_not_cancel", Verdict.BLOCKED, "missing capability: stop (this target's stop is closing the "
             "stream, so a closed page cannot be told from a stop)")
    return True


def _disconnect_without_records(ctx: CaseContext, session_id: str) -> None:
    """Case 22 on a target that keeps no run records: the saved session, waited for while it or the target's model
    calls still move, and the rig's LLM proxy's record of whether the target gave its model call up at the close."""
    proxy = ctx.target.model_proxy
    since = proxy.last_seq() if proxy is not None else 0
    sessions = not ctx.caps.missing("sessions")
    with ctx.slow_model():
        run = ctx.submit(ctx.a, session_id, LONG)
        stream = ctx.stream_until(ctx.a, run, lambda e: isinstance(e, TokenEvent))
        stream.close()
        read: list[Any] = [None]

        def saved_whole() -> bool:
            if not sessions:  # nothing to read back: the wait follows the model calls alone
                return False
            read[0] = ctx.adapter.session(ctx.a, session_id)
            return any(m.content.strip() for m in answers(read[0], run.run_id))

        def moving() -> object:
            calls = proxy.requests(since, in_flight=True) if proxy is not None else []
            return (read[0].model_dump_json() if read[0] is not None else None,
                    [(c.seq, c.chunks, c.total_ms) for c in calls])

        wait_while_moving(saved_whole, moving, 60)
        calls = model_calls_ended(ctx, since) or []
    session = read[0] if read[0] is not None or not sessions else ctx.adapter.session(ctx.a, session_id)
    saved = answers(session, run.run_id) if session is not None else []
    after = [m for m in session.messages if m.role == "assistant"] if session is not None else []  # its one question
    gave_up = [c.seq for c in calls if c.outcome == "client_gone"]
    e = ctx.observe("after closing the stream and reading the session again (no run records)", {
        "saved_answers": [(m.message_id, len(m.content)) for m in saved], "assistant_messages": len(after),
        "model_calls": [(c.seq, c.outcome, c.chunks) for c in calls], "given_up": gave_up,
        "stream_read_until": run.events[-1].event if run.events else None, "run_id": run.run_id})
    whole = bool(saved) and bool(saved[0].content.strip())
    if not _closing_is_its_stop(ctx):
        if gave_up or (calls and (whole or not sessions)):
            ctx.item("disconnect_not_cancel", not gave_up, "the target runs its model call to its end after the page "
                     "closes" + (" and saves the answer" if sessions else "") + " (a closed page is no stop)", e,
                     seen={"model_calls": len(calls), "given_up_at_the_close": gave_up,
                           "saved_chars": len(saved[0].content) if saved else 0})
        else:
            ctx.could_not("disconnect_not_cancel", "tell whether the run went on after the page closed",
                          "the run record (the target keeps none), the rig's LLM proxy's record of the target's model "
                          f"calls ({len(calls)} seen ended), the saved answer ({len(saved)} linked)", e)
    if not sessions:
        ctx.item("reopen_shows_real_state", Verdict.BLOCKED, "missing capability: sessions (no run record and no "
                 "saved session: nothing shows the run on return)")
    elif whole:
        ctx.item("reopen_shows_real_state", True, "the answer is saved and shown on return", e,
                 seen={"saved_chars": len(saved[0].content.strip())})
    elif after:  # an answer was saved in the case's own session, but the rig could not link it to the run
        saved_answer(ctx, session, run.run_id, item="reopen_shows_real_state")
    elif calls and not gave_up:
        ctx.item("reopen_shows_real_state", False, "an answer the model gave in full after the page closed is "
                 "shown in the session on return", e, seen={"model_calls_ended": len(calls),
                                                           "assistant_messages": 0})
    else:
        ctx.could_not("reopen_shows_real_state", "tell the run's real state on return",
                      "the run record (the target keeps none); the session shows no answer, and how the run ended "
                      "is known to no record the target keeps", e)
    ctx.finish(ctx.a, run)


def _replay_exact(ctx: CaseContext, run: RunTranscript, reopened: list[Event]) -> None:
    """Resume semantics: what a reconnect with the last id seen brings goes on exactly after that id — no event
    repeated, none skipped, the same ids and order as the server's record of the run (read again from its start)."""
    if ctx.lacks("resume_exact", "event_replay"):
        return
    last = run.events[-1].id if run.events else None
    record = list(ctx.adapter.events(ctx.a, run.run_id, last_event_id=0))
    def shape(events: list[Event]) -> list[tuple[int | None, str, str]]:
        return [(e.id, e.event, json.dumps(e.data, sort_keys=True, ensure_ascii=False)) for e in events]

    before = [e for e in record if last is not None and e.id is not None and e.id <= last]
    after = [e for e in record if last is not None and e.id is not None and e.id > last]
    e = ctx.observe("reconnect with Last-Event-ID vs the server's record", {
        "last_event_id": last, "read_before": [x.id for x in run.events], "reconnect": [x.id for x in reopened],
        "record": [x.id for x in record]})
    repeated = sorted({x.id for x in reopened if x.id is not None and last is not None and x.id <= last})
    missing = [x.id for x in after if x.id not in {y.id for y in reopened}]
    ctx.item("resume_exact", last is not None and shape(reopened) == shape(after) and
             shape(run.events) == shape(before), "after a reconnect with the last id seen, the stream goes on "
             "exactly after it, with the server's ids and order", e,
             seen={"last_event_id": last, "repeated": repeated[:5], "skipped": missing[:5],
                   "first_read_matches_record": shape(run.events) == shape(before),
                   "reconnect_ids": [x.id for x in reopened][:6]})


@case(23, "可靠性-23-1", codes=("T9",), papers=("P32",))
def valid_checkpoint_resume(ctx: CaseContext) -> None:
    """A run with a saved read-only tool checkpoint is stopped; nothing else changes; resume it.

    Expects: a new linked run records resume_from, the evidence and citation mapping carry on, and
    nothing leaks in from other cases. Evidence: the checkpoint, config comparison, old and new runs.
    """
    if ctx.lacks("checkpoint_resume", "checkpoints", "resume"):  # every item rests on a checkpoint and resume
        return
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    old = _stopped_with_checkpoint(ctx, opened.session_id)
    assert old.detail is not None
    e0 = ctx.observe("checkpoint before resume", [c.model_dump() for c in old.detail.checkpoints])
    before = snapshot(ctx, [opened.session_id], [old.run_id])
    resumed, new = ctx.resume(ctx.a, old.run_id, opened.session_id)
    ctx.read(ctx.a, new)  # T9: resume request → the linked run's end
    d = new.detail
    assert d is not None
    ctx.item("linked_run", resumed.resume_from == old.run_id and d.resume_from == old.run_id and
             resumed.run_id != old.run_id, f"new run {resumed.run_id} resumes {old.run_id}", e0)
    old_hits = {(c.tool_call_id, h.chunk_id) for c in old.detail.tool_calls for h in c.hits}
    answer = answer_of(ctx, opened.session_id, new.run_id, item="evidence_carried_over")
    mapped = [(c.tool_call_id, c.chunk_id) for c in answer.citations if c.chunk_id] if answer else []
    e = ctx.observe("resumed answer's citations vs checkpoint evidence", {"citations": mapped,
                                                                          "checkpoint_hits": sorted(old_hits)})
    if answer is not None:
        ctx.item("evidence_carried_over", d.state == "completed" and bool(mapped) and set(mapped) <= old_hits,
                 f"{len(mapped)} citation(s), all from the checkpoint's evidence", e)
    ctx.item("no_cross_case_mixing", d.session_id == opened.session_id and not d.tool_calls,
             "same session, no new searches needed", e,
             seen={"session": d.session_id, "expected_session": opened.session_id, "new_searches": len(d.tool_calls)})
    old_state = ctx.adapter.run(ctx.a, old.run_id).state
    e_old = ctx.observe("the stopped run's record after the resume", {"run_id": old.run_id, "state": old_state})
    ctx.item("old_run_kept", old_state == "stopped", "the stopped run is unchanged", e_old,
             seen={"old_run_state": old_state})
    kept(ctx, before, "resume")
    status, code, details = _resume(ctx, old.run_id)  # the edge: one continuation per stopped run
    e2 = ctx.observe("a second resume of the same run", {"status": status, "code": code, "details": details})
    ctx.item("resume_twice", status == 409 and code == "already_resumed",
             "a second resume of a run already resumed is refused, naming the first continuation", e2,
             seen={"status": status, "code": code, "names_first": (details or {}).get("run_id") == resumed.run_id
                   if isinstance(details, dict) else None})



@case(24, "可靠性-24-1", codes=("T9",), papers=("P21", "P32"))
def invalid_checkpoint_refused(ctx: CaseContext) -> None:
    """Keep a checkpoint, then change the material signature (scope) or the model config, and resume.

    Expects: an invalid resume is refused explicitly with a prompt to start again; the old saved
    results remain. A correct refusal is PASS. Evidence: what changed, the refusal, the original result.
    """
    if ctx.lacks("checkpoint_resume", "checkpoints", "resume"):  # every item rests on a checkpoint and resume
        return
    variants = ["materials"] + (["model_config"] if ctx.caps.model_config_api else [])
    for variant in variants:
        opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
        old = _stopped_with_checkpoint(ctx, opened.session_id)
        before = snapshot(ctx, [opened.session_id], [old.run_id])
        restore = None
        if variant == "materials":
            ctx.adapter.set_scope(ctx.a, opened.session_id, [ctx.doc("P32"), ctx.doc("P21")])
        else:
            restore = ctx.adapter.model_config(ctx.a)
            alt = ctx.target.models.alternative
            ctx.adapter.set_model_config(ctx.a, alt["provider"], alt["model"])
        try:
            status, code, details = _resume(ctx, old.run_id)
        finally:
            if restore is not None:
                ctx.adapter.set_model_config(ctx.a, restore.provider, restore.model)
        e = ctx.observe(f"resume after {variant} change", {"status": status, "code": code, "details": details})
        ctx.item(f"{variant}_refused", status == 409 and code == "checkpoint_invalid",
                 f"resume answered {status} {code}", e)
        record = ctx.adapter.run(ctx.a, old.run_id)
        e_rec = ctx.observe(f"the stopped run's record after the {variant} change", {
            "run_id": old.run_id, "state": record.state, "checkpoints": len(record.checkpoints)})
        ctx.item(f"{variant}_old_result_kept", record.state == "stopped" and bool(record.checkpoints),
                 "the stopped run and its checkpoint are kept", e_rec,
                 seen={"old_run_state": record.state, "checkpoints": len(record.checkpoints)})
        kept(ctx, before, f"{variant} change and refused resume", name=f"{variant}_saved_kept")


def _interrupt_early(ctx: CaseContext, session_id: str) -> RunTranscript | None:
    """A run stopped before its first tool cycle completed: held in its encode stage by the target's own fault
    point, or by the rig's LLM proxy holding the query's embedding; None (items U) when the hold never happened."""
    proxy = ctx.target.model_proxy
    stream: Iterator[Event]
    if ctx.caps.chaos:
        ctx.fault("encode", "delay", delay_ms=STAGE_DELAY_MS, times=1)
        run = ctx.submit(ctx.a, session_id, P32_QUESTION)
        stream = ctx.stream_until(ctx.a, run, lambda e: e.event == "tool_call")
    elif proxy is not None and proxy.embeddings:
        since = proxy.last_seq()
        fixture = ctx.retrieval_fault("slow", delay_ms=STAGE_DELAY_MS)
        run = ctx.submit(ctx.a, session_id, P32_QUESTION)
        records = not ctx.caps.missing("run_detail")  # the target's progress: its run record, or its model requests
        wait_while_moving(lambda: (ctx.fired(fixture) or 0) > 0,
                          lambda: ctx.adapter.run(ctx.a, run.run_id).model_dump_json() if records
                          else repr([(r.seq, r.total_ms) for r in proxy.requests(since, in_flight=True)]),
                          10.0)
        if not ctx.took_effect(fixture, "no_checkpoint_stated", "new_task_starts"):
            ctx.stop(ctx.a, run)
            return None
        stream = iter(())
    else:
        raise CapabilityMissing("chaos", detail="holding a run before its first tool cycle needs the target's own "
                                "fault point, or model_proxy with embeddings: true")
    ctx.stop(ctx.a, run)
    run.events.extend(stream)
    if not run.events:
        run.events.extend(ctx.adapter.events(ctx.a, run.run_id))
    if not ctx.caps.missing("run_detail"):
        wait_terminal(ctx, run.run_id)
    return ctx.finish(ctx.a, run)


@case(25, "可靠性-25-1", codes=("T9",), papers=("P32",))
def nothing_to_resume(ctx: CaseContext) -> None:
    """Interrupt before the first complete tool cycle, try to resume, then start the question anew.

    Expects: no promise to restore unsaved streamed text; the absence of a checkpoint is stated and a
    new task can be started. Evidence: checkpoint list, states, the new run.
    """
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run: RunTranscript | None = None
    with ctx.part("interrupted_early"):
        run = _interrupt_early(ctx, opened.session_id)
    if run is None:
        return
    if not ctx.lacks("no_checkpoint_stated", "checkpoints", "resume"):
        assert run.detail is not None  # checkpoints are a run record's
        e = ctx.observe("checkpoints of the interrupted run", [c.model_dump() for c in run.detail.checkpoints])
        before = snapshot(ctx, [opened.session_id], [run.run_id])
        status, code, details = _resume(ctx, run.run_id)
        e2 = ctx.observe("resume attempt", {"status": status, "code": code, "details": details})
        ctx.item("no_checkpoint_stated", not run.detail.checkpoints and status == 409 and code == "no_checkpoint",
                 f"resume answered {status} {code}", e, e2)
        kept(ctx, before, "refused resume")
    again = ctx.chat(ctx.a, opened.session_id, P32_QUESTION)
    ended = run_ended(again)
    e3 = ctx.observe("the question asked anew", {"interrupted": run_ended(run), "again": ended,
                                                 "answer_chars": len(again.answer)})
    ctx.item("new_task_starts", ended == "completed" and bool(again.answer),
             "after the interrupted run, the same question starts anew and is answered", e3,
             seen={"new_run": ended, "answer_chars": len(again.answer)})


def _committed(ctx: CaseContext, session_id: str, run_ids: list[str], resumable: RunTranscript | None) -> dict[str, Any]:
    """What was committed before the restart: A's documents as listed (id, name, status); where the target keeps
    them, the session's messages of finished runs (and the questions that led to them), each finished run's record,
    and the resumable run's checkpoints."""
    library = set(ctx.target.setup.docs.values())
    documents = sorted((d.doc_id, d.filename, d.status) for d in ctx.adapter.documents(ctx.a, ctx.target.setup.project_a)
                       if d.doc_id in library)
    out: dict[str, Any] = {"documents": documents}
    if not ctx.caps.missing("sessions"):
        session = ctx.adapter.session(ctx.a, session_id)
        finished = {m.message_id for m in session.messages if m.run_id in run_ids}
        asked = {m.parent_id for m in session.messages if m.message_id in finished}
        out["messages"] = [m.model_dump() for m in session.messages if m.message_id in finished | asked]
    if not ctx.caps.missing("run_detail"):
        out["runs"] = {r: ctx.adapter.run(ctx.a, r).model_dump() for r in run_ids}
        out["checkpoints"] = [c.model_dump() for c in ctx.adapter.run(ctx.a, resumable.run_id).checkpoints] \
            if resumable else []
    return out


@case(26, "可靠性-26-1", codes=("T9",), papers=("P32",))
def restart_keeps_saved_state(ctx: CaseContext) -> None:
    """In the isolated deployment, with a finished session and a resumable checkpoint, restart the server.

    Expects: everything committed is still there; interrupted runs say so truthfully; checkpoint rules
    still apply. BLOCKED when the rig has no restart window (no restarter configured). The restart is the
    rig's own (fixture rig_process: the embedded workbench's process, or the deployment's `restart_cmd`).
    Evidence: restart record, data before/after, run states.
    """
    restarter = ctx.target.restarter
    if restarter is None:
        ctx.item("restart_window", Verdict.BLOCKED, f"missing configuration: {MISSING_RESTARTER}")
        return
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    done = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    resumable = None if ctx.lacks("checkpoint_rules_hold", "checkpoints", "resume") else \
        _stopped_with_checkpoint(ctx, opened.session_id)
    records = not ctx.caps.missing("run_detail")
    with ctx.slow_model() as slowed:
        flight = ctx.submit(ctx.a, opened.session_id, LONG)
        ctx.stream_until(ctx.a, flight, lambda e: isinstance(e, TokenEvent))
        in_flight = not ctx.adapter.run(ctx.a, flight.run_id).terminal if records else flight.terminal is None
    ctx.evidence("fixture", "a run in flight at the restart", {"fixture": slowed.kind, "in_flight": in_flight})
    before = _committed(ctx, opened.session_id, [done.run_id], resumable)
    saved = snapshot(ctx, [opened.session_id], [done.run_id, *([resumable.run_id] if resumable else [])])
    record = restarter.restart("kill")
    ctx.evidence("restart", "target restarted", {"fixture": "rig_process", **record.model_dump(exclude_none=True)})
    ctx.target.relogin("a")
    ctx.target.relogin("b")
    after = _committed(ctx, opened.session_id, [done.run_id], resumable)
    kept(ctx, saved, "restart")
    held = "messages" if "messages" in before else "documents"  # what must be there to compare at all
    e = ctx.observe("committed data before and after", {"equal": before == after, "kept": sorted(before),
                                                        "messages": len(before.get("messages", [])),
                                                        "documents": len(before["documents"])})
    ctx.item("committed_data_intact", before == after and bool(before[held]),
             "what was committed re-reads equal: " + ", ".join(sorted(before)), e,
             seen={held: len(before[held]), "differs": [k for k in before if before[k] != after.get(k)]})
    if ctx.caps.missing("run_detail"):  # nothing but a run record can say how the cut run ended
        ctx.item("interruption_truthful", Verdict.BLOCKED, "missing capability: run_detail (the target keeps no run "
                 "records: nothing it keeps says how the run cut by the restart ended, and its saved session cannot "
                 "tell a cut answer from a whole one)")
        ctx.measures(restart_measures(record.began_ns, record.ready_ns))
        return
    # The process that ran the cut run is gone: its record must say so, at once or after the target's own recovery.
    cut = wait_terminal(ctx, flight.run_id) or ctx.adapter.run(ctx.a, flight.run_id)
    ctx.store.add_run(ctx.rep, ctx.key, cut.model_dump(mode="json"))
    e2 = ctx.observe("run in flight at the restart", {"in_flight_before": in_flight, "state": cut.state,
                                                      "end_reason": cut.end_reason})
    truthful = cut.state == "interrupted" and cut.end_reason == "server_restart" if ctx.caps.end_reasons \
        else cut.state in ("interrupted", "failed")
    ctx.item("interruption_truthful", in_flight and truthful, "the run cut by the restart is recorded as interrupted, "
             "not as still running, completed or stopped by the user", e2,
             seen={"in_flight_before_restart": in_flight, "recorded": f"{cut.state}/{cut.end_reason}"})
    new = None
    if resumable is not None:
        _, new = ctx.resume(ctx.a, resumable.run_id, opened.session_id)
        ctx.read(ctx.a, new)
        ctx.item("checkpoint_rules_hold", new.detail is not None and new.detail.state == "completed" and
                 new.detail.resume_from == resumable.run_id, "the valid checkpoint still resumes after the restart",
                 *new.evidence,
                 seen={"resumed_state": new.detail.state if new.detail else None,
                       "resume_from": new.detail.resume_from if new.detail else None, "expected": resumable.run_id})
    ctx.measures(restart_measures(record.began_ns, record.ready_ns, new))
