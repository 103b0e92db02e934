"""Researcher users: log in, open a session on a paper set, ask, read the stream to the end, and now and
then revise, stop and resume, regenerate, export or call the direct search.

Each run's T-codes become Locust stats rows (request type = code, name = scenario) and rig samples.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import gevent
from locust import events, task
from locust.contrib.fasthttp import FastHttpUser

from rig.load.plan import LoadPlan, PaperSet, load_secrets
from rig.telemetry.tracing import RigTracer, configured_endpoints, traceparent_of
from scenarios.load.arrivals import ArrivalSchedule
from scenarios.load.recorder import RECORDER, Sample
from scenarios.load.sse_reader import StreamTimes, read_stream

API = "/api/v1"
_PLAN: LoadPlan | None = None
_SCHEDULE: ArrivalSchedule | None = None
_ACCOUNT_COUNTER = [0]
_TRACER: list[RigTracer | None] = []  # the process's tracer once made (None inside when the plan names no endpoint)
RECONCILE_S = 60.0  # how long a broken stream's run is polled for its end (a restarting target)
RECONCILE_POLL_S = 0.5
TERMINAL = ("completed", "stopped", "failed", "interrupted")


def run_tracer(plan: LoadPlan) -> RigTracer | None:
    """This process's tracer for simulated runs, or None when the plan exports no spans."""
    if not _TRACER:
        _TRACER.append(RigTracer(configured_endpoints(plan.otlp_endpoint), kind="load") if plan.otlp_endpoint
                       else None)
    return _TRACER[0]


@events.quitting.add_listener
def _flush_spans(**_: Any) -> None:
    if _TRACER and _TRACER[0] is not None:
        _TRACER[0].close()


class RunEndedWithoutBody(Exception):
    """A run that ended failed, stopped or empty: kept apart from the T5 of answered runs."""


def plan_of(environment: Any) -> LoadPlan:
    global _PLAN
    if _PLAN is None:
        raw = getattr(environment.parsed_options, "rig_plan", None) if environment.parsed_options else None
        if not raw:
            raise RuntimeError("no --rig-plan given: start this locustfile through `rig load`")
        _PLAN = LoadPlan.model_validate_json(raw)
    return _PLAN


def schedule_of(environment: Any) -> ArrivalSchedule:
    global _SCHEDULE
    if _SCHEDULE is None:
        plan = plan_of(environment)
        runner = environment.runner
        share = int(getattr(runner, "worker_index", 0) or 0)
        shares = int(getattr(environment.parsed_options, "rig_workers", 1) or 1)
        _SCHEDULE = ArrivalSchedule(plan.arrival, plan.rate_per_s, plan.seed, share, shares)
    return _SCHEDULE


def fire(code: str, scenario: str, ms: float, *, length: int = 0, exception: Exception | None = None) -> None:
    events.request.fire(request_type=code, name=scenario, response_time=ms, response_length=length,
                        exception=exception, context={})


class ResearcherUser(FastHttpUser):
    """A researcher in a closed loop: act, then think for `think_min_s`–`think_max_s` (from the plan)."""

    connection_timeout = 30.0
    network_timeout = 180.0

    def on_start(self) -> None:
        self.plan = plan_of(self.environment)
        self.rng = random.Random()
        usernames = self.plan.usernames
        self.username = usernames[_ACCOUNT_COUNTER[0] % len(usernames)]
        _ACCOUNT_COUNTER[0] += 1
        password = load_secrets()[self.username]
        with self.client.post(f"{API}/auth/login", json={"username": self.username, "password": password},
                              name="POST /auth/login", catch_response=True) as resp:
            if resp.status_code != 200:
                resp.failure(f"login failed: {resp.status_code}")
                self.token = ""
                return
            self.token = resp.json()["token"]
        self.headers = {"authorization": f"Bearer {self.token}"}
        self.session_id: str | None = None
        self.last_message_id: str | None = None
        self.paper_set: PaperSet | None = None
        self.asked = 0

    def wait_time(self) -> float:
        """Think time between actions, from the plan."""
        return self.rng.uniform(self.plan.think_min_s, self.plan.think_max_s)

    # -- actions -----------------------------------------------------------------------------------------------
    @task
    def act(self) -> None:
        if not self.token:
            return
        weights = self.plan.weights
        action = self.rng.choices(list(weights), weights=list(weights.values()))[0]
        if action != "ask" and self.session_id is None:
            action = "ask"
        getattr(self, f"do_{action}")()

    def do_ask(self, scheduled_ns: int | None = None, scenario: str = "ask") -> None:
        if self.session_id is None or self.asked >= 3 or self.rng.random() < 0.3:
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
        submit = time.perf_counter_ns()
        with self.client.post(f"{API}/messages/{self.last_message_id}/regenerate", headers=self.headers,
                              name="POST /regenerate", catch_response=True) as resp:
            if resp.status_code != 202:
                resp.failure(f"regenerate: {resp.status_code}")
                return None
            run_id = resp.json()["run_id"]
        self.follow(run_id, "regenerate", submit)
        return None

    def do_stop_resume(self) -> None:
        assert self.paper_set is not None
        submit = time.perf_counter_ns()
        run_id = self.submit("请查清买家保护与徽章关系并给依据。", "stop_resume")
        if run_id is None:
            return
        with self.client.get(f"{API}/runs/{run_id}/events", headers=self.headers, stream=True,
                             name="GET /runs/{id}/events") as resp:
            times = StreamTimes()
            self._read_until_answer(resp, times)
            stop_ns = time.perf_counter_ns()
            self.client.post(f"{API}/runs/{run_id}/stop", json={}, headers=self.headers, name="POST /runs/{id}/stop")
            read_stream(resp, times)
        self.measure(run_id, "stop_resume", submit, times, revision=False)
        if times.state == "stopped":
            fire("T8", "stop_resume:stop_to_end", (times.end_ns - stop_ns) / 1e6 if times.end_ns else 0)
        began = time.perf_counter_ns()
        with self.client.post(f"{API}/runs/{run_id}/resume", headers=self.headers, name="POST /runs/{id}/resume",
                              catch_response=True) as resp:
            if resp.status_code == 409:
                resp.success()  # a refused resume is a correct answer when no checkpoint was taken yet
                return
            if resp.status_code != 201:
                resp.failure(f"resume: {resp.status_code}")
                return
            new_run = resp.json()["run_id"]
        self.follow(new_run, "resume", began, code_end="T9")

    def do_export(self) -> None:
        self.client.get(f"{API}/sessions/{self.session_id}/export?format=md", headers=self.headers,
                        name="GET /sessions/{id}/export")

    def do_search(self) -> None:
        assert self.paper_set is not None
        began = time.perf_counter_ns()
        body = {"project_id": self.plan.project_by_user[self.username], "queries": [self.rng.choice(
            self.paper_set.questions)], "scope": self.paper_set.doc_ids}
        with self.client.post(f"{API}/tools/internal_search", json=body, headers=self.headers,
                              name="POST /tools/internal_search", catch_response=True) as resp:
            ok = resp.status_code == 200
            if not ok:
                resp.failure(f"search: {resp.status_code}")
        ms = (time.perf_counter_ns() - began) / 1e6
        if ok:
            fire("T2", "search", ms)
            RECORDER.record([Sample("T2", "search", "client", ms, label="direct_search", ts_ms=time.time() * 1000)])

    # -- building blocks -------------------------------------------------------------------------------------
    def open_session(self) -> None:
        self.paper_set = self.rng.choice(self.plan.paper_sets)
        body = {"project_id": self.plan.project_by_user[self.username], "scope": self.paper_set.doc_ids}
        with self.client.post(f"{API}/sessions", json=body, headers=self.headers, name="POST /sessions",
                              catch_response=True) as resp:
            if resp.status_code != 200:
                resp.failure(f"open session: {resp.status_code}")
                return
            self.session_id = resp.json()["session_id"]
        self.asked = 0
        self.last_message_id = None

    def submit(self, content: str, scenario: str, traceparent: str | None = None) -> str | None:
        headers = {**self.headers, "traceparent": traceparent} if traceparent else self.headers
        with self.client.post(f"{API}/sessions/{self.session_id}/messages", json={"content": content},
                              headers=headers, name="POST /sessions/{id}/messages", catch_response=True) as resp:
            if resp.status_code != 202:
                resp.failure(f"{scenario}: {resp.status_code}")
                RECORDER.record([Sample("error", scenario, "client", 1, "count", label=f"http_{resp.status_code}",
                                        ts_ms=time.time() * 1000)])
                return None
            return str(resp.json()["run_id"])

    def ask(self, content: str, scenario: str, *, revision: bool = False, scheduled_ns: int | None = None) -> None:
        tracer = run_tracer(self.plan)
        span = tracer.root("rig.run", **{"rig.scenario": scenario, "rig.user": self.username}) if tracer else None
        try:
            submit = time.perf_counter_ns()
            run_id = self.submit(content, scenario, traceparent_of(span) if span else None)
            if scheduled_ns is not None:  # known at the send: kept even for runs the load run outlives
                RECORDER.record([Sample("send_lag", scenario, "client", (submit - scheduled_ns) / 1e6, run_id=run_id,
                                        ts_ms=time.time() * 1000)])
            if run_id is not None:
                if span:
                    span.set_attribute("run.id", run_id)
                self.follow(run_id, scenario, submit, revision=revision, scheduled_ns=scheduled_ns)
        finally:
            if span:
                span.end()

    def follow(self, run_id: str, scenario: str, submit_ns: int, *, revision: bool = False,
               scheduled_ns: int | None = None, code_end: str | None = None) -> None:
        with self.client.get(f"{API}/runs/{run_id}/events", headers=self.headers, stream=True,
                             name="GET /runs/{id}/events") as resp:
            times = read_stream(resp)
        self.measure(run_id, scenario, submit_ns, times, revision=revision, scheduled_ns=scheduled_ns,
                     code_end=code_end)

    def _read_until_answer(self, resp: Any, times: StreamTimes) -> None:
        """Read events until the first answer text (or the end), leaving the stream open."""
        raw = getattr(resp, "_response", None)
        from rig.adapters.sse import SseParser

        parser = SseParser()
        while times.first_answer_ns is None and times.end_ns is None:
            line = raw.readline(b"\n") if raw is not None else resp.readline()
            if not line:
                return
            event = parser.feed(line.rstrip(b"\r\n").decode("utf-8", "replace"))
            if event is None:
                continue
            now = time.perf_counter_ns()
            if event.event == "status" and times.first_status_ns is None:
                times.first_status_ns = now
            elif event.event == "token":
                times.first_answer_ns = times.first_text_ns = now
                times.first_text_kind = json.loads(event.data).get("kind", "answer")
            elif event.event in ("done", "error"):
                data = json.loads(event.data)
                times.end_ns, times.state, times.reason = now, data.get("state"), data.get("reason")

    def measure(self, run_id: str, scenario: str, submit_ns: int, times: StreamTimes, *, revision: bool,
                scheduled_ns: int | None = None, code_end: str | None = None) -> None:
        origin = scheduled_ns if scheduled_ns is not None else submit_ns
        wall = time.time() * 1000
        samples: list[Sample] = []

        def add(code: str, ns: int | None, label: str | None = None, exc: Exception | None = None) -> None:
            if ns is None:
                return
            ms = (ns - origin) / 1e6
            fire(code, scenario, ms, length=times.answer_chars, exception=exc)
            samples.append(Sample(code, scenario, "client", ms, run_id=run_id, label=label, ts_ms=wall))

        add("T3", times.first_status_ns)
        add("T4", times.first_answer_ns, label=f"first_text_kind={times.first_text_kind}")
        end_code = code_end or ("T6" if revision else "T5")
        if times.state == "completed" and times.answer_chars:
            add(end_code, times.end_ns)
        elif times.end_ns is not None:
            reason = f"{times.state}/{times.reason}"
            add(end_code, times.end_ns, label=f"no_body:{reason}",
                exc=None if scenario == "stop_resume" else RunEndedWithoutBody(reason))
        else:
            fire(end_code, scenario, (time.perf_counter_ns() - origin) / 1e6, exception=RunEndedWithoutBody(
                times.error or "stream broke"))
            samples.append(Sample("error", scenario, "client", 1, "count", run_id, "stream_broken", wall))
        if times.state and times.state != "completed" and scenario != "stop_resume":
            samples.append(Sample("error", scenario, "client", 1, "count", run_id, f"{times.state}/{times.reason}", wall))
        if self.plan.fetch_detail:
            detail = self.reconcile(run_id) if times.end_ns is None else None
            samples += self.detail_samples(run_id, scenario, wall, detail)
            if detail is not None and detail.get("end_reason") == "server_restart" and scenario != "resume":
                RECORDER.record(samples)
                self.resume_after_restart(run_id)
                return
        elif times.state:
            samples.append(Sample("T8", scenario, "client", 1, "count", run_id, f"{times.state}/{times.reason}", wall))
        RECORDER.record(samples)

    def reconcile(self, run_id: str) -> dict[str, Any] | None:
        """After a broken stream, ask the target how the run ended, retrying (bounded) while it restarts."""
        deadline = time.monotonic() + RECONCILE_S
        while time.monotonic() < deadline:
            with self.client.get(f"{API}/runs/{run_id}", headers=self.headers, name="GET /runs/{id} (reconcile)",
                                 catch_response=True) as resp:
                if resp.status_code == 200 and resp.json().get("state") in TERMINAL:
                    return dict(resp.json())
                resp.success()  # refused while the target restarts: expected, polled again
            gevent.sleep(RECONCILE_POLL_S)
        return None

    def resume_after_restart(self, run_id: str) -> None:
        """A run the restart interrupted: resume it once, linking the new run to it (T9)."""
        began = time.perf_counter_ns()
        with self.client.post(f"{API}/runs/{run_id}/resume", headers=self.headers, name="POST /runs/{id}/resume",
                              catch_response=True) as resp:
            if resp.status_code == 409:
                resp.success()  # nothing to resume from (no checkpoint yet) is a correct answer
                code = resp.json().get("error", {}).get("code", "conflict") if resp.content else "conflict"
                RECORDER.record([Sample("resume_refused", "resume", "client", 1, "count", run_id, code,
                                        time.time() * 1000)])
                return
            if resp.status_code != 201:
                resp.failure(f"resume: {resp.status_code}")
                return
            new_run = str(resp.json()["run_id"])
        RECORDER.record([Sample("resume_link", "resume", "client", 1, "count", new_run, run_id, time.time() * 1000)])
        self.follow(new_run, "resume", began, code_end="T9")

    def detail_samples(self, run_id: str, scenario: str, wall: float,
                       detail: dict[str, Any] | None = None) -> list[Sample]:
        if detail is None:
            with self.client.get(f"{API}/runs/{run_id}", headers=self.headers, name="GET /runs/{id}",
                                 catch_response=True) as resp:
                if resp.status_code != 200:
                    resp.failure(f"run detail: {resp.status_code}")
                    return []
                detail = dict(resp.json())
        d = detail
        if d.get("message_id"):
            self.last_message_id = d["message_id"]
        out = [Sample("T8", scenario, "server", 1, "count", run_id, f"{d['state']}/{d['end_reason']}", wall)]
        if d["state"] == "completed" and d.get("message_id") and d.get("session_id"):
            out.append(Sample("committed", scenario, "server", 1, "count", run_id,
                              f"{self.username}|{d['session_id']}|{d['message_id']}", wall))

        def add(code: str, value: float | None, unit: str = "ms", label: str | None = None, source: str = "server") -> None:
            if value is not None:
                out.append(Sample(code, scenario, source, float(value), unit, run_id, label, wall))

        q, s, f, e = d.get("queued_at_ms"), d.get("started_at_ms"), d.get("first_token_at_ms"), d.get("ended_at_ms")
        add("T7", (s - q) if q and s else None, label="queue")
        add("T7", (e - s) if s and e else None, label="execution")
        add("T7", d.get("retries") or 0, unit="count", label="retries")
        add("T4", (f - q) if q and f else None)
        for stage in d.get("stages", []):
            if stage["name"] == "internal_search" and stage.get("started_at_ms") and stage.get("ended_at_ms"):
                add("T2", stage["ended_at_ms"] - stage["started_at_ms"], label="tool_call")
        for name in ("rounds", "model_requests", "tool_calls_proposed", "tool_calls_executed"):
            add("T11", d.get(name), unit="count", label=name)
        usage = d.get("usage") or {}
        kind = usage.get("source") or "provider"
        add("T12", usage.get("input_tokens"), "tokens", "input", kind)
        add("T12", usage.get("output_tokens"), "tokens", "output", kind)
        add("T12", usage.get("estimated_input_tokens"), "tokens", "input", "estimate")
        add("T12", usage.get("estimated_output_tokens"), "tokens", "output", "estimate")
        cost = d.get("cost") or {}
        add("T13", cost.get("actual_usd"), "usd", source="actual")
        add("T13", cost.get("estimated_usd"), "usd", source="estimate")
        return out


class OpenLoopResearcher(ResearcherUser):
    """Sessions arrive on the plan's schedule (constant or Poisson); each one asks a question."""

    def wait_time(self) -> float:
        return 0.0

    @task
    def act(self) -> None:
        if not self.token:
            return
        scheduled = schedule_of(self.environment).take()
        delay = (scheduled - time.perf_counter_ns()) / 1e9
        if delay > 0:
            gevent.sleep(delay)
        self.open_session()
        assert self.paper_set is not None
        self.ask(self.rng.choice(self.paper_set.questions), "open_loop", scheduled_ns=scheduled)
