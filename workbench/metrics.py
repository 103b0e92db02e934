"""The workbench's own Prometheus metrics (one registry per app, so tests can run several)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

_STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class Metrics:
    """Request, run, slot, stage, ingest and token metrics."""

    def __init__(self, slots: int) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        r = self.registry
        self.http_requests = Counter("workbench_http_requests", "HTTP requests", ["method", "route", "status"],
                                     registry=r)
        self.http_duration = Histogram("workbench_http_request_duration_seconds", "HTTP time to response start",
                                       ["method", "route"], registry=r, buckets=_STAGE_BUCKETS)
        self.runs = Counter("workbench_runs", "Runs ended, by state and reason", ["state", "reason"], registry=r)
        self.runs_started = Counter("workbench_runs_started", "Runs accepted", registry=r)
        self.slots_in_use = Gauge("workbench_run_slots_in_use", "Run slots held by executing runs", registry=r)
        self.slots_total = Gauge("workbench_run_slots_total", "Run slots configured", registry=r)
        self.queue_depth = Gauge("workbench_run_queue_depth", "Runs waiting for a slot", registry=r)
        self.stage_duration = Histogram("workbench_stage_duration_seconds", "Duration of run and ingest stages",
                                        ["stage"], registry=r, buckets=_STAGE_BUCKETS)
        self.first_token = Histogram("workbench_first_token_seconds", "Run start to first answer token",
                                     registry=r, buckets=_STAGE_BUCKETS)
        self.ingest_documents = Counter("workbench_ingest_documents", "Documents ingested, by final status",
                                        ["status"], registry=r)
        self.tool_calls = Counter("workbench_tool_calls", "Tool calls executed", ["tool", "ok"], registry=r)
        self.model_tokens = Counter("workbench_model_tokens", "Model tokens", ["direction", "source"], registry=r)
        self.model_requests = Counter("workbench_model_requests", "Model requests", ["provider", "outcome"],
                                      registry=r)
        self.chaos_fired = Counter("workbench_chaos_faults_fired", "Injected faults that fired", ["point", "mode"],
                                   registry=r)
        self.slots_total.set(slots)
