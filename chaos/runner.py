"""Run a chaos schedule beside a load run.

The runner follows a load run (a thread next to Locust, `chaos.load_hook`): it checks the steady-state hypothesis, applies each
step at its offset and rolls it back when its window ends, checks the hypothesis again, and runs the
rollbacks whatever happened. Every window is written to the evidence store as it opens and as it
closes (`chaos_window`), is a `rig.chaos <step>` span, and counts in `rig_chaos_faults_total{point,mode}`
(with `rig_chaos_active{step}` 1 while it lasts) on the runner's own Prometheus endpoint.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from chaos.injectors import Applied, Injectors
from chaos.schedule import Probe, Schedule, Step
from rig import events
from rig.errors import RigError
from rig.load import LoadContext
from rig.results import ProbeResult, Window
from rig.telemetry import RigTracer, noop_tracer


def _now_ms() -> float:
    return time.time() * 1000


class ChaosMetrics:
    """`rig_chaos_faults_total{point,mode}` and `rig_chaos_active{step}`, on their own registry and port."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.faults = Counter("rig_chaos_faults", "Faults the chaos schedule injected", ["point", "mode"],
                              registry=self.registry)
        self.active = Gauge("rig_chaos_active", "1 while a chaos step's window is open", ["step", "point", "mode"],
                            registry=self.registry)
        self._server: Any = None

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        self._server, _thread = start_http_server(port, host, registry=self.registry)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None


CLOCK_POLL_S = 0.1


class ChaosRunner:
    """Follows one load run: `ChaosRunner(schedule, injectors, metrics)(run)` in a thread beside Locust."""

    def __init__(self, schedule: Schedule, injectors: Injectors, metrics: ChaosMetrics | None = None,
                 tracer: RigTracer | None = None) -> None:
        self.schedule = schedule
        self.injectors = injectors
        self.metrics = metrics or ChaosMetrics()
        self.tracer = tracer or noop_tracer()
        self.windows: list[Window] = []
        self.__name__ = "chaos"

    # -- the hook ------------------------------------------------------------------------------------------
    def __call__(self, ctx: LoadContext) -> None:
        store = ctx.store
        before = self.hypothesis(ctx)
        store.add_evidence(None, None, "chaos_hypothesis", "before", [p.model_dump() for p in before])
        started = self.clock_zero(ctx)
        open_: dict[str, tuple[Step, Applied, Window, Any]] = {}
        timeline: list[tuple[float, int, Step]] = []
        for step in self.schedule.method:
            timeline.append((step.at_s, 1, step))
            if step.fault.via != "restart":
                timeline.append((step.ends_s, 0, step))
        timeline.sort(key=lambda t: (t[0], t[1]))
        try:
            for offset, is_apply, step in timeline:
                delay = started + offset - time.time()
                if delay > 0 and ctx.stopped.wait(delay):
                    break
                if is_apply:
                    self._apply(ctx, step, open_)
                elif step.name in open_:
                    self._rollback(ctx, *open_.pop(step.name))
        finally:
            for name in list(open_):
                self._rollback(ctx, *open_.pop(name))
            cleared = []
            for rollback in self.schedule.rollbacks:
                try:
                    cleared += self.injectors.clear_all()
                except RigError as exc:
                    cleared.append(f"{rollback.name} failed: {exc}")
            store.add_evidence(None, None, "chaos_rollbacks", "rollbacks", {"cleared": cleared})
        if not ctx.stopped.is_set():
            after = self.hypothesis(ctx)
            store.add_evidence(None, None, "chaos_hypothesis", "after", [p.model_dump() for p in after])

    def clock_zero(self, ctx: LoadContext) -> float:
        """Wall seconds the step offsets count from: the moment every user of the load was spawned (as the
        Locust master recorded it), so a slow start on a busy machine does not let a window pass before
        any run is in flight. Falls back to the Locust start if the load ends before that."""
        while not ctx.stopped.is_set():
            spawned = ctx.store.meta("load_spawned_ms")
            if spawned:
                ctx.store.set_meta("chaos_clock", {"zero": "all users spawned", "at_ms": spawned})
                return float(spawned) / 1000
            ctx.stopped.wait(CLOCK_POLL_S)
        return float(ctx.started_at) / 1000

    def _window(self, step: Step) -> Window:
        f = step.fault
        return Window(step=step.name, via=f.via, point=f.point or "", mode=f.mode, planned_at_s=step.at_s,
                      planned_duration_s=step.duration_s)

    def _apply(self, ctx: LoadContext, step: Step, open_: dict[str, Any]) -> None:
        window = self._window(step)
        window.started_ms = _now_ms()
        f = step.fault
        span = self._span_start(step)
        self.metrics.active.labels(step.name, f.point, f.mode).set(1)
        try:
            applied = self.injectors.apply(f)
            window.applied = {"handle": applied.handle, **applied.record}
            self.metrics.faults.labels(f.point, f.mode).inc()
            events.fault_injected.fire(point=f.point or f.via, mode=f.mode, source=f"chaos step {step.name}",
                                       at_ns=time.time_ns())
        except (RigError, OSError) as exc:
            window.error = f"could not inject: {exc}"
            applied = None
        self.windows.append(window)
        if applied is None or f.via == "restart":
            window.ended_ms = _now_ms()
            self.metrics.active.labels(step.name, f.point, f.mode).set(0)
            self._span_end(ctx, span, window)
            ctx.store.add_evidence(None, None, "chaos_window", step.name, window.model_dump())
            events.window_closed.fire(step=step.name, window=window)
            return
        ctx.store.add_evidence(None, None, "chaos_window_open", step.name, window.model_dump())
        events.window_opened.fire(step=step.name, window=window)
        open_[step.name] = (step, applied, window, span)

    def _rollback(self, ctx: LoadContext, step: Step, applied: Applied, window: Window, span: Any) -> None:
        try:
            window.rolled_back = self.injectors.rollback(applied)
        except (RigError, OSError) as exc:
            window.error = f"rollback failed: {exc}"
        window.ended_ms = _now_ms()
        f = step.fault
        self.metrics.active.labels(step.name, f.point, f.mode).set(0)
        self._span_end(ctx, span, window)
        ctx.store.add_evidence(None, None, "chaos_window", step.name, window.model_dump())
        events.window_closed.fire(step=step.name, window=window)

    # -- spans -----------------------------------------------------------------------------------------------
    def _span_start(self, step: Step) -> dict[str, Any]:
        f = step.fault
        attrs = {"rig.chaos.step": step.name, "rig.chaos.via": f.via, "rig.chaos.point": f.point or "",
                 "rig.chaos.mode": f.mode}
        live = self.tracer.root(f"rig.chaos {step.name}", **attrs)
        return {"live": live, "attrs": attrs, "start_ns": time.time_ns()}

    def _span_end(self, ctx: LoadContext, span: dict[str, Any], window: Window) -> None:
        attrs = {**span["attrs"], "rig.chaos.error": window.error or ""}
        live = span["live"]
        ctx_ = live.get_span_context()
        trace_id, span_id = f"{ctx_.trace_id:032x}", f"{ctx_.span_id:016x}"
        for k, v in attrs.items():
            live.set_attribute(k, v)
        live.end()
        window.trace_id = trace_id
        ctx.store.add_span(trace_id, span_id, None, f"rig.chaos {window.step}", "rig", "rig.chaos",
                           span["start_ns"], time.time_ns(), attrs)

    # -- the steady-state hypothesis ---------------------------------------------------------------------------
    def hypothesis(self, ctx: LoadContext) -> list[ProbeResult]:
        return [self.probe(ctx, p) for p in self.schedule.hypothesis.probes]

    def probe(self, ctx: LoadContext, probe: Probe) -> ProbeResult:
        began = time.monotonic()
        deadline = began + probe.timeout_s
        detail = ""
        ok = False
        while not ok and time.monotonic() < deadline and not ctx.stopped.is_set():
            try:
                ok, detail = (ready_probe(ctx) if probe.probe == "ready" else run_probe(ctx, deadline))
            except RigError as exc:
                ok, detail = False, str(exc)
            if not ok:
                ctx.stopped.wait(0.5)  # poll again until the probe's deadline
        return ProbeResult(name=probe.name, probe=probe.probe, ok=ok, ms=(time.monotonic() - began) * 1000,
                           detail=detail)


def ready_probe(ctx: LoadContext) -> tuple[bool, str]:
    ok = bool(ctx.adapter.ready())
    return ok, "readiness answered 200" if ok else "readiness did not answer 200"


def run_probe(ctx: LoadContext, deadline: float) -> tuple[bool, str]:
    """Ask one question of the plan's first paper set as the first account and read it to its end."""
    name = ctx.plan.usernames[0]
    auth = ctx.adapter.login(name, ctx.passwords[name])
    papers = ctx.plan.paper_sets[0]
    session = ctx.adapter.open_session(auth, ctx.plan.project_by_user[name], papers.doc_ids)
    submitted = ctx.adapter.ask(auth, session.session_id, papers.questions[0])
    for _ in ctx.adapter.events(auth, submitted.run_id):
        if time.monotonic() > deadline:
            break
    detail = ctx.adapter.run(auth, submitted.run_id)
    return detail.state == "completed", f"run {detail.run_id}: {detail.state}/{detail.end_reason}"


def run_in_thread(runner: ChaosRunner, ctx: LoadContext) -> threading.Thread:
    thread = threading.Thread(target=runner, args=(ctx,), name="chaos-schedule", daemon=True)
    thread.start()
    return thread
