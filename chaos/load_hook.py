"""`rig load --chaos schedule.yaml`: the schedule as `rig.events` listeners of a load run.

This module is the chaos package's `rig.extensions` entry point: importing it adds the listeners. `load_init`
reads the schedule (a bad file fails before anything starts); `load_starting` checks its steps against the
target and serves the schedule's metrics; `load_running` runs the steps beside Locust; `load_finished` checks
what each restart kept and puts the chaos analysis into the summary (load.json and the report's chaos section);
`load_closed` releases the schedule's metrics endpoint and tracer however the run ended.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import push_to_gateway

from chaos.analysis import analyse, check_retained, committed_messages
from chaos.injectors import Injectors
from chaos.runner import ChaosMetrics, ChaosRunner
from chaos.schedule import load_schedule
from rig import events
from rig.errors import RigError
from rig.load import LoadContext, LoadOptions
from rig.ports import free_port
from rig.results import LoadSummary, Retained, Window
from rig.telemetry import RigTracer, configured_endpoints, noop_tracer


class ChaosLoad:
    """Reads the schedule at once (a bad file fails before anything starts), then follows the load run."""

    def __init__(self, path: Path, *, metrics_port: int | None = None, metrics_host: str = "127.0.0.1",
                 pushgateway: str | None = None, otlp_endpoint: str | None = None) -> None:
        self.path = path
        self.schedule = load_schedule(path)
        self.metrics = ChaosMetrics()
        self.metrics_port = metrics_port
        self.metrics_host = metrics_host
        self.pushgateway = pushgateway
        self.otlp_endpoint = otlp_endpoint
        self.runner: ChaosRunner | None = None
        self._tracer: RigTracer = noop_tracer()

    # -- prepare: the target is up, Locust not yet started ---------------------------------------------------
    def prepare(self, ctx: LoadContext) -> None:

        self.schedule.check_fits(ctx.options.duration_s)
        injectors = Injectors(ctx.adapter, ctx.connection.restarter, {str(k): v for k, v in self.schedule.proxies.items()})
        for step in self.schedule.method:
            injectors.check(step.fault)
        port = self.metrics_port or free_port()
        self.metrics.serve(port, self.metrics_host)
        endpoints = configured_endpoints(self.otlp_endpoint)
        self._tracer = RigTracer(endpoints, kind="chaos") if endpoints else noop_tracer()
        self.runner = ChaosRunner(self.schedule, injectors, self.metrics, self._tracer)
        ctx.store.set_meta("chaos_schedule", {"file": str(self.path), **self.schedule.model_dump(mode="json",
                                                                                                  by_alias=True)})
        ctx.store.set_meta("chaos_metrics", f"http://{self.metrics_host}:{port}/metrics")

    # -- during and after -----------------------------------------------------------------------------------
    def during(self, ctx: LoadContext) -> None:
        assert self.runner is not None
        self.runner(ctx)

    def finish(self, ctx: LoadContext, summary: LoadSummary) -> None:
        """Check committed answers survived each restart, derive the per-window analysis, push the counters."""
        retention: dict[str, Retained] = {}
        for e in ctx.store.evidence(kind="chaos_window"):
            w = Window.model_validate(e.data)
            if w.via == "restart" and w.started_ms:
                committed = committed_messages(ctx.store, w.started_ms)
                try:
                    retention[w.step] = check_retained(ctx.adapter, ctx.passwords, committed)
                except RigError as exc:
                    retention[w.step] = Retained(checked=len(committed), error=str(exc))
        chaos = analyse(ctx.store, retention)
        chaos.metrics_url = ctx.store.meta("chaos_metrics")
        summary.chaos = chaos
        if self.pushgateway:

            try:
                push_to_gateway(self.pushgateway, job="rig_chaos", registry=self.metrics.registry,
                                grouping_key={"run": ctx.run_dir.name})
            except OSError as exc:
                chaos.push_error = str(exc)

    def close(self) -> None:
        """Stop serving the schedule's metrics and flush its spans (idempotent)."""
        self.metrics.close()
        if self._tracer is not noop_tracer():
            self._tracer.close()
            self._tracer = noop_tracer()


_RUNNING: dict[Path, ChaosLoad] = {}  # by run directory: the schedule each load run in this process follows


@events.load_init.add_listener
def read_schedule(options: LoadOptions) -> None:
    """A schedule that does not parse stops `rig load --chaos` before anything starts."""
    if options.chaos:
        load_schedule(options.chaos)


@events.load_starting.add_listener
def start_schedule(run: LoadContext) -> None:
    """Check the steps against the target, serve the schedule's metrics, write what will run to the store."""
    o = run.options
    if not o.chaos:
        return
    schedule = ChaosLoad(o.chaos, metrics_port=o.chaos_metrics_port, metrics_host=o.metrics_host,
                         pushgateway=o.pushgateway, otlp_endpoint=o.otlp_endpoint)
    _RUNNING[run.run_dir] = schedule  # first: whatever prepare started, load_closed releases
    schedule.prepare(run)


@events.load_running.add_listener
def chaos(run: LoadContext) -> None:
    """Apply each step at its offset and roll it back when its window ends (a thread beside Locust)."""
    schedule = _RUNNING.get(run.run_dir)
    if schedule is not None:
        schedule.during(run)


@events.load_finished.add_listener
def analyse_schedule(run: LoadContext, summary: LoadSummary) -> None:
    """Restarts' committed answers checked, the per-window analysis in `summary.chaos`, the counters pushed."""
    schedule = _RUNNING.get(run.run_dir)
    if schedule is not None:
        schedule.finish(run, summary)


@events.load_closed.add_listener
def release_schedule(run: LoadContext) -> None:
    """However the run ended, the schedule's metrics endpoint and tracer are released."""
    schedule = _RUNNING.pop(run.run_dir, None)
    if schedule is not None:
        schedule.close()
