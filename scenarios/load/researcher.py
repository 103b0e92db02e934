"""Researcher users: log in, open a session on a paper set, ask, read the stream to the end, and now and
then revise, stop and resume, regenerate, export or call the direct search.

Everything goes through the configured adapter (`rig.load.user.AdapterUser`); every T-code comes from
`rig.measure.derive`, as in the gate and the quality workload. An action the target's capabilities lack
is left out of the mix. While a stream is read only stamps and raw events are kept (`Adapter.raw_events`);
typing them and deriving the rows waits for the event loop's idle time (`rig.load.deriver`), so the rig's
own measuring never delays the reads it measures.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import gevent
from gevent import GreenletExit
from locust import task

from rig.adapters import Event, RunDetail, TokenEvent
from rig.clock import now_ns, wall_ms
from rig.errors import TargetError, TargetHTTPError, TargetUnreachable
from rig.load import (
    DERIVER,
    AdapterUser,
    PaperSet,
    RunEndedWithoutBody,
    error_row,
    reason_of,
    run_tracer,
    schedule_of,
    stream_failure,
)
from rig.measure import (
    LOAD_ENDED,
    Measure,
    RawEvent,
    RunTranscript,
    TCode,
    flight_measure,
    run_measures,
    search_measures,
    send_lag_measure,
    task_row,
    tcode,
    turn_row,
)
from rig.telemetry import traceparent_of

RECONCILE_POLL_S = 0.5
NEEDS = {"revision": (), "stop_resume": ("stop", "resume"), "late_stop": ("stop",), "regenerate": ("regenerate",),
         "export": ("export=md",), "search": ("direct_search",)}


class ResearcherUser(AdapterUser):
    """A researcher in a closed loop: act, then think for `think_min_s`–`think_max_s` (from the plan).

    A subclass tunes the behaviour with these class attributes (the plan's weights choose among the actions of
    `actions()`, leaving out those the target's capabilities lack):
    """

    questions_per_session: int = 3  #: questions asked in one session before a new one is opened
    new_session_chance: float = 0.3  #: chance that a question opens a new session anyway
    stop_question: str = "请查清买家保护与徽章关系并给依据。"  #: asked, then stopped at its first answer text
    reconcile_s: float = 60.0  #: how long a broken stream's run is polled for its end (a restarting target)
    turns: int = 0  #: questions (and revisions) sent in the current session so far

    def on_start(self) -> None:
        super().on_start()
        self.rng = random.Random()
        self.session_id: str | None = None
        self.last_message_id: str | None = None
        self.paper_set: PaperSet | None = None
        self.asked = 0
        known = self.actions()
        self.weights = {a: w for a, w in self.plan.weights.items()
                        if a in known and not self.caps.missing(*NEEDS.get(a, ()))}

    def actions(self) -> dict[str, Callable[[], None]]:
        """The actions the plan's weights name, each with the method that does it (a subclass adds its own)."""
        return {"ask": self.do_ask, "revision": self.do_revision, "stop_resume": self.do_stop_resume,
                "late_stop": self.do_late_stop, "regenerate": self.do_regenerate, "export": self.do_export,
                "search": self.do_search}

    def wait_time(self) -> float:
        """Think time between actions, from the plan."""
        return self.rng.uniform(self.plan.think_min_s, self.plan.think_max_s)

    # -- actions -----------------------------------------------------------------------------------------------
    @task
    def act(self) -> None:
        """The user's one task (Locust keeps a base class's tasks in subclasses, so they override `turn`)."""
        self.turn()

    def turn(self) -> None:
        """One closed-loop action, drawn by the plan's weights among those the target supports."""
        action = self.rng.choices(list(self.weights), weights=list(self.weights.values()))[0]
        if action != "ask" and self.session_id is None:
            action = "ask"
        self.guarded(action, self.actions()[action])

    def do_ask(self, scheduled_ns: int | None = None, scenario: str = "ask") -> None:
        if self.session_id is None or self.asked >= self.questions_per_session or \
                self.rng.random() < self.new_session_chance:
            self.open_session()
        assert self.paper_set is not None
        self.ask(self.rng.choice(self.paper_set.questions), scenario, scheduled_ns=scheduled_ns)
        self.asked += 1

    def do_revision(self) -> None:
        assert self.paper_set is not None
        prompts = self.paper_set.revisions or ["压缩为120–180字，保留引用。"]
        self.ask(self.rng.choice(prompts), "revision", revision=True)

    def do_regenerate(self) -> None:
        if not self.last_message_id:
            return self.do_ask()
        sub = self.adapter.regenerate(self.auth, self.last_message_id)
        self.follow(RunTranscript(run_id=sub.run_id, session_id=self.session_id, submit_ns=sub.submit_ns),
                    "regenerate")
        return None

    def do_stop_resume(self) -> None:
        """Ask, stop at the first answer text, read the stream to its end, then resume the stopped run."""
        assert self.session_id is not None
        sub = self.adapter.ask(self.auth, self.session_id, self.stop_question)
        self.turns += 1
        self.record([turn_row(self.turns, sub.run_id, "stop_resume")])
        run = RunTranscript(run_id=sub.run_id, session_id=self.session_id, submit_ns=sub.submit_ns)
        raw: list[RawEvent] = []
        try:
            for event in self.stream(run.run_id):
                raw.append(event)
                if run.stop_ns is None and event.event == "token" and _answer(self.adapter.typed(event)):
                    run.stop_ns = now_ns()  # T9 stop_to_end counts from here (rig.measure.derive.stop_measures)
                    with self.transport.expecting(409):  # the run may have ended on its own in between
                        self.adapter.stop(self.auth, run.run_id)
        except TargetError as exc:
            run.error = _reason(exc)
        run.end_ns = now_ns()
        self.finish(run, "stop_resume", raw)
        self.resume(run.run_id, "stop_resume")

    def do_late_stop(self) -> None:
        """Ask, and send a stop the moment the run's end arrives: a click that races the end. A 409 (already ended)
        and a 202 are both right; what the target does with its slots meanwhile is for its gauges to show (soak)."""
        assert self.session_id is not None
        assert self.paper_set is not None
        sub = self.adapter.ask(self.auth, self.session_id, self.rng.choice(self.paper_set.questions))
        self.turns += 1
        self.record([turn_row(self.turns, sub.run_id, "late_stop")])
        run = RunTranscript(run_id=sub.run_id, session_id=self.session_id, submit_ns=sub.submit_ns)
        raw: list[RawEvent] = []
        try:
            raw.extend(self.stream(run.run_id))  # to the end event: then the stop, at once
        except TargetError as exc:
            run.error = _reason(exc)
        run.end_ns = now_ns()
        if raw and run.error is None:
            try:
                with self.transport.expecting(409):
                    self.adapter.stop(self.auth, run.run_id)
            except TargetError as exc:  # 409: the run had ended, the right answer to a stop that lost the race
                if not (isinstance(exc, TargetHTTPError) and exc.status == 409):
                    self.record([error_row("late_stop", f"stop:{_reason(exc)}", run.run_id)])
        self.finish(run, "late_stop", raw)

    def do_export(self) -> None:
        assert self.session_id is not None
        self.adapter.export(self.auth, self.session_id, "md")
        self.record([task_row("export")])

    def do_search(self) -> None:
        assert self.paper_set is not None
        result = self.adapter.search(self.auth, self.plan.project_by_user[self.username],
                                     [self.rng.choice(self.paper_set.questions)], self.paper_set.doc_ids)
        self.record([*search_measures(result, "search"), task_row("search")])

    # -- building blocks -------------------------------------------------------------------------------------
    def open_session(self) -> None:
        self.paper_set = self.rng.choice(self.plan.paper_sets)
        opened = self.adapter.open_session(self.auth, self.plan.project_by_user[self.username], self.paper_set.doc_ids)
        self.session_id = opened.session_id
        self.asked = 0
        self.turns = 0
        self.last_message_id = None

    def ask(self, content: str, scenario: str, *, revision: bool = False, scheduled_ns: int | None = None) -> None:
        assert self.session_id is not None
        span = run_tracer(self.plan).root("rig.run", **{"rig.scenario": scenario, "rig.user": self.username})
        try:
            submit = now_ns()
            try:
                sub = self.adapter.ask(self.auth, self.session_id, content, traceparent=traceparent_of(span))
            except TargetError as exc:
                rows = [error_row(scenario, _reason(exc))]
                if scheduled_ns is not None:
                    rows.append(send_lag_measure(scheduled_ns, submit, scenario=scenario))
                self.record(rows)
                return
            self.turns += 1
            sent = [turn_row(self.turns, sub.run_id, scenario)]
            if scheduled_ns is not None:  # known at the send: kept even for runs the load run outlives
                sent.append(send_lag_measure(scheduled_ns, sub.submit_ns, run_id=sub.run_id, scenario=scenario))
            self.record(sent)
            span.set_attribute("run.id", sub.run_id)
            self.follow(RunTranscript(run_id=sub.run_id, session_id=self.session_id, question=content,
                                      revision=revision, submit_ns=sub.submit_ns, scheduled_ns=scheduled_ns), scenario)
        finally:
            span.end()

    def follow(self, run: RunTranscript, scenario: str) -> None:
        """Read the run's stream to its end, keeping each event raw with its arrival stamp; then measure it."""
        raw: list[RawEvent] = []
        try:
            for event in self.stream(run.run_id):
                raw.append(event)
        except TargetError as exc:
            run.error = _reason(exc)
        except GreenletExit:  # the load run ended while this run streamed: counted as cut by the rig, not lost
            self.record([tcode(TCode.T8, "client", 1.0, label=LOAD_ENDED, run_id=run.run_id, scenario=scenario,
                               ts_ms=wall_ms(now_ns()))])
            raise
        run.end_ns = now_ns()
        self.finish(run, scenario, raw)

    def finish(self, run: RunTranscript, scenario: str, raw: list[RawEvent]) -> None:
        """The run record (polled after a broken stream) and what the user decides from it, now; the typed events,
        the run's T-code rows and what the load run counts, when the event loop is idle (`DERIVER`)."""
        ended = bool(raw) and raw[-1].event in ("done", "error")
        if self.plan.fetch_detail and not self.caps.missing("run_detail"):
            try:
                run.detail = self.reconcile(run.run_id) if not ended else self.adapter.run(self.auth, run.run_id)
            except TargetError as exc:
                self.record([error_row(scenario, f"run_record:{_reason(exc)}", run.run_id)])
        d = run.detail
        if d is not None:
            self.last_message_id = d.message_id or self.last_message_id
        DERIVER.submit(lambda: self.derive(run, scenario, raw))
        if d is not None and d.end_reason == "server_restart" and scenario != "resume":
            self.resume(run.run_id, "resume")

    def derive(self, run: RunTranscript, scenario: str, raw: list[RawEvent]) -> None:
        """The run's typed events (those its measures read: `RunTranscript.add_measured`), its T-code rows
        (`rig.measure`, the one derivation) and its counts, recorded."""
        run.add_measured(raw, self.adapter.typed)
        rows = run_measures(run, scenario)
        terminal = run.terminal
        failure = None if scenario == "stop_resume" else RunEndedWithoutBody(
            f"{terminal.state}/{terminal.reason}" if terminal else run.error or "stream broke")
        extra: list[Measure] = []
        if terminal is None:  # the answer never came whole: how its stream failed (broke, too large, never ended)
            extra.append(error_row(scenario, stream_failure(run.error), run.run_id))
            flight = flight_measure(run, scenario)  # where the run lay in time, not when its break was seen
            if flight is not None:
                extra.append(flight)
        elif terminal.state != "completed" and scenario != "stop_resume":
            extra.append(error_row(scenario, f"{terminal.state}/{terminal.reason}", run.run_id))
        d = run.detail
        if d is not None:
            if d.state == "completed" and d.message_id and d.session_id:
                extra.append(Measure(code="committed", source="server", value=1.0, unit="count", run_id=run.run_id,
                                     label=f"{self.username}|{d.session_id}|{d.message_id}", scenario=scenario))
        ended = wall_ms(run.end_ns) if run.end_ns is not None else None
        for m in extra:  # stamped like the run's own rows: when the client saw the run end
            m.ts_ms = ended
        rows += extra
        self.record(rows, failure)

    def reconcile(self, run_id: str) -> RunDetail | None:
        """After a broken stream, ask the target how the run ended, polling (bounded) while it restarts."""
        deadline = time.monotonic() + self.reconcile_s
        while time.monotonic() < deadline:
            try:
                with self.transport.expecting(500, 502, 503, 504):
                    detail = self.adapter.run(self.auth, run_id)
                if detail.terminal:
                    return detail
            except (TargetUnreachable, TargetHTTPError):
                pass  # refused while the target restarts: expected, polled again
            gevent.sleep(RECONCILE_POLL_S)
        return None

    def resume(self, run_id: str, scenario: str) -> None:
        """Resume a stopped or interrupted run once, linking the new run to it (T9 from the resume request)."""
        began = now_ns()
        try:
            with self.transport.expecting(409):
                resumed = self.adapter.resume(self.auth, run_id)
        except TargetHTTPError as exc:
            if exc.status == 409:  # nothing to resume from (no checkpoint yet) is a correct answer
                self.record([Measure(code="resume_refused", source="client", value=1.0, unit="count", run_id=run_id,
                                     label=exc.code or "conflict", scenario=scenario)])
                return
            raise
        self.record([Measure(code="resume_link", source="client", value=1.0, unit="count", run_id=resumed.run_id,
                             label=run_id, scenario="resume")])
        self.follow(RunTranscript(run_id=resumed.run_id, session_id=self.session_id, submit_ns=began,
                                  end_code=TCode.T9), "resume")


class OpenLoopResearcher(ResearcherUser):
    """Sessions arrive on the plan's schedule (constant or Poisson); each one asks a question."""

    def wait_time(self) -> float:
        return 0.0

    def turn(self) -> None:
        """Wait for this process's next scheduled arrival, then open a session and ask once."""
        scheduled = schedule_of(self.environment).take()
        delay = (scheduled - now_ns()) / 1e9
        if delay > 0:
            gevent.sleep(delay)

        def arrive() -> None:
            self.open_session()
            assert self.paper_set is not None
            self.ask(self.rng.choice(self.paper_set.questions), "open_loop", scheduled_ns=scheduled)

        self.guarded("open_loop", arrive)


def _answer(event: Event) -> bool:
    return isinstance(event, TokenEvent) and event.kind == "answer"


_reason = reason_of
