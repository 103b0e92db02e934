"""OpenTelemetry for the workbench: a provider with configurable exporters, and per-run span budgets."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import NonRecordingSpan, Span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from workbench import __version__
from workbench.config import ServerConfig

if TYPE_CHECKING:
    from workbench.services import Services


AGENT_NAME = "workbench"
ROOT_SPAN = f"invoke_agent {AGENT_NAME}"  # a run's root: OpenTelemetry's GenAI agent-invocation span, carrying run.id


class JsonlSpanExporter(SpanExporter):
    """Writes finished spans, one JSON object per line, to a file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            for span in spans:
                out.write(json.dumps(json.loads(span.to_json()), ensure_ascii=False) + "\n")
        return SpanExportResult.SUCCESS


class Tracing:
    """The workbench's own tracer provider (never the global one, so tests can run several servers)."""

    def __init__(self, config: ServerConfig) -> None:
        resource = Resource.create({"service.name": "workbench", "service.version": __version__})
        self.provider = TracerProvider(resource=resource)
        if config.otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            endpoint = config.otlp_endpoint.rstrip("/")
            if not endpoint.endswith("/v1/traces"):
                endpoint += "/v1/traces"
            self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint),
                                                                schedule_delay_millis=200))
        if config.trace_file:
            self.provider.add_span_processor(BatchSpanProcessor(JsonlSpanExporter(config.trace_file),
                                                                schedule_delay_millis=200))
        self.tracer = self.provider.get_tracer("workbench", __version__)
        self.propagator = TraceContextTextMapPropagator()

    def flush(self) -> None:
        self.provider.force_flush(5000)

    def shutdown(self) -> None:
        self.provider.shutdown()


class RunTrace:
    """Spans of one run under one root (joined to an incoming `traceparent`), cut at the span budget."""

    def __init__(self, svc: Services, detail: dict[str, Any], traceparent: str | None) -> None:
        tracing = svc.tracing
        self.tracer = tracing.tracer
        joined = traceparent and "trace_ignores_caller" not in svc.defects
        ctx = tracing.propagator.extract({"traceparent": traceparent}) if joined else None
        self.root = self.tracer.start_span(ROOT_SPAN, context=ctx, attributes={
            "run.id": detail["run_id"], "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME})
        detail["trace_id"] = format(self.root.get_span_context().trace_id, "032x")
        self.budget = svc.settings.trace_budget_spans
        self.count = 1
        self.complete = True
        if svc.faults.fire("trace_export", detail["run_id"]) is not None:
            self.complete = False
            self.budget = 1

    @contextmanager
    def root_span(self, attributes: dict[str, Any] | None = None) -> Iterator[Span]:
        """The run's root (`invoke_agent workbench`), current while the run executes; ended when it ends."""
        with trace.use_span(self.root, end_on_exit=True) as span:
            for key, value in (attributes or {}).items():
                span.set_attribute(key, value)
            yield span

    @contextmanager
    def span(self, name: str, attributes: dict[str, Any] | None = None) -> Iterator[Span]:
        if self.count >= self.budget:
            self.complete = False
            yield NonRecordingSpan(trace.INVALID_SPAN_CONTEXT)
            return
        self.count += 1
        with self.tracer.start_as_current_span(name, attributes=attributes) as span:
            yield span


class ToolTrace:
    """Spans of one call of the retrieval tool's direct entry, joined to the caller's `traceparent`: a root
    `internal_search`, one `stage <name>` per stage and one `execute_tool internal_search` per executed call."""

    def __init__(self, svc: Services, traceparent: str) -> None:
        tracing = svc.tracing
        self.tracer = tracing.tracer
        ctx = tracing.propagator.extract({"traceparent": traceparent})
        self.root = self.tracer.start_span("internal_search", context=ctx,
                                           attributes={"gen_ai.tool.name": "internal_search"})

    @contextmanager
    def active(self) -> Iterator[Span]:
        """The root is the current span inside the block, and ends with it."""
        with trace.use_span(self.root, end_on_exit=True) as span:
            yield span

    @contextmanager
    def span(self, name: str, attributes: dict[str, Any] | None = None) -> Iterator[Span]:
        with self.tracer.start_as_current_span(name, attributes=attributes) as span:
            yield span
