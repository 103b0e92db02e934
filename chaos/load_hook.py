"""`rig load --chaos schedule.yaml`: the schedule as a load extension (prepare, during, finish, report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import push_to_gateway

from chaos.analysis import analyse, check_retained, committed_messages
from chaos.injectors import Injectors
from chaos.runner import ChaosMetrics, ChaosRunner
from chaos.schedule import load_schedule
from rig.errors import RigError
from rig.load.extensions import LoadExtensions
from rig.load.options import LoadOptions
from rig.ports import free_port
from rig.report.chaos_section import chaos_bands, chaos_section
from rig.results.chaos import ChaosAnalysis, Retained
from rig.results.load import LoadSummary
from rig.telemetry.tracing import RigTracer, configured_endpoints, noop_tracer


def chaos_extension(options: LoadOptions, *, chaos_metrics_port: int | None = None, **_: Any) -> LoadExtensions | None:
    """The `rig.load_extensions` plug-in: the schedule of `--chaos` as load hooks, None without one."""
    if not options.chaos:
        return None
    schedule = ChaosLoad(options.chaos, metrics_port=chaos_metrics_port, metrics_host=options.metrics_host,
                         pushgateway=options.pushgateway, otlp_endpoint=options.otlp_endpoint)
    return LoadExtensions(during=[schedule.during], prepare=[schedule.prepare], finish=[schedule.finish],
                          bands=schedule.bands, sections=schedule.sections)


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
    def prepare(self, ctx: Any) -> None:

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
    def during(self, ctx: Any) -> None:
        assert self.runner is not None
        self.runner(ctx)

    during.__name__ = "chaos"

    def finish(self, ctx: Any, summary: LoadSummary) -> None:
        """Check committed answers survived each restart, derive the per-window analysis, push the counters."""
        retention: dict[str, Retained] = {}
        for e in ctx.store.evidence(kind="chaos_window"):
            w = e["data"]
            if w["via"] == "restart" and w.get("started_ms"):
                committed = committed_messages(ctx.store, w["started_ms"])
                try:
                    retention[w["step"]] = check_retained(ctx.adapter, ctx.passwords, committed)
                except RigError as exc:
                    retention[w["step"]] = Retained(checked=len(committed), error=str(exc))
        chaos = analyse(ctx.store, retention)
        chaos.metrics_url = ctx.store.meta("chaos_metrics")
        summary.chaos = chaos
        if self.pushgateway:

            try:
                push_to_gateway(self.pushgateway, job="rig_chaos", registry=self.metrics.registry,
                                grouping_key={"run": ctx.run_dir.name})
            except OSError as exc:
                chaos.push_error = str(exc)
        self.metrics.close()
        if self._tracer is not noop_tracer():
            self._tracer.close()

    def bands(self, ctx: Any) -> list[tuple[float, float, str]]:

        return chaos_bands(ctx.store)

    def sections(self, ctx: Any, summary: LoadSummary) -> list[tuple[str, str]]:

        return [("Chaos", chaos_section(summary.chaos or ChaosAnalysis()))]
