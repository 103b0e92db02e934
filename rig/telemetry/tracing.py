"""The rig's own spans: one per case, per step (HTTP exchange) and per simulated run.

Built on the OpenTelemetry SDK with a private `TracerProvider` (the rig never touches the global one),
exported over OTLP/HTTP to the rig's own receiver, which stores them beside the target's spans, and to
any further endpoint (`--otlp-endpoint`, or `OTEL_EXPORTER_OTLP_ENDPOINT`). A run's `traceparent`
carries the rig run span's id, so the target's spans hang under it in one trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.metadata import version
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from rig.clock import wall_ns

SCOPE = "rig"


def otlp_traces_url(endpoint: str) -> str:
    """An OTLP/HTTP base endpoint (`http://host:4318`) or a full `/v1/traces` URL → the traces URL."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def configured_endpoints(*endpoints: str | None) -> list[str]:
    """The given endpoints plus `OTEL_EXPORTER_OTLP_ENDPOINT` when set, as traces URLs without repeats."""
    found = [*endpoints, os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")]
    out: list[str] = []
    for e in found:
        if e and otlp_traces_url(e) not in out:
            out.append(otlp_traces_url(e))
    return out


def traceparent_of(span: Span) -> str:
    """The W3C `traceparent` header that makes `span` the parent of the receiver's spans."""
    c = span.get_span_context()
    return f"00-{c.trace_id:032x}-{c.span_id:016x}-{int(c.trace_flags):02x}"


def trace_id_of(span: Span) -> str:
    return f"{span.get_span_context().trace_id:032x}"


class RigTracer:
    """Starts the rig's spans and ships them; `close()` flushes what is still buffered."""

    def __init__(self, endpoints: list[str], *, run_name: str = "", kind: str = "gate") -> None:
        resource = Resource.create({"service.name": "rig", "service.version": version("rig"), "rig.run": run_name,
                                    "rig.kind": kind})
        self.provider = TracerProvider(resource=resource)
        for url in endpoints:
            self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url, timeout=5),
                                                                schedule_delay_millis=500))
        self.tracer = self.provider.get_tracer(SCOPE, version("rig"))

    @contextmanager
    def case_span(self, case_id: int, record_id: str, metrics: list[str], rep: int) -> Iterator[Span]:
        """The span of one case (named `rig.case`: which case is an attribute, so span names stay few); the caller
        sets `rig.verdict` on it before it ends."""
        with self.tracer.start_as_current_span(
                "rig.case", kind=SpanKind.INTERNAL, end_on_exit=True, record_exception=False,
                attributes={"rig.case_id": case_id, "rig.record_id": record_id, "rig.metric": ",".join(metrics),
                            "rig.rep": rep}) as span:
            yield span

    def root(self, name: str, **attributes: str | int) -> Span:
        """A new trace's root span (a simulated run of a load test); the caller ends it."""
        return self.tracer.start_span(name, context=Context(), kind=SpanKind.CLIENT, attributes=attributes)

    def child(self, name: str, parent: Span, start_ns: int | None = None, **attributes: str | int) -> Span:
        """A span under `parent`, started now or at `start_ns` (epoch ns); the caller ends it."""
        return self.tracer.start_span(name, context=trace.set_span_in_context(parent), kind=SpanKind.CLIENT,
                                      start_time=start_ns or wall_ns(), attributes=attributes)

    def step(self, parent: Span, base_url: str, method: str, path: str, status: int | None, start_ns: int,
             end_ns: int, account: str | None, error: str | None) -> None:
        """A finished HTTP exchange of a case, as an HTTP client span (OpenTelemetry's stable HTTP attributes) with
        the times the rig measured (`now_ns()` readings)."""
        url = urlsplit(base_url.rstrip("/") + path)
        port = url.port or (443 if url.scheme == "https" else 80)
        attributes: dict[str, str | int] = {
            "http.request.method": method, "url.full": url.geturl(), "url.path": url.path,
            "server.address": url.hostname or "", "server.port": port, "rig.account": account or ""}
        span = self.child(method, parent, wall_ns(start_ns), **attributes)
        if status is not None:
            span.set_attribute("http.response.status_code", status)
        if error or (status or 0) >= 400:
            span.set_attribute("error.type", str(status) if status is not None and status >= 400 else error or "error")
        if error or (status or 0) >= 500:
            span.set_status(Status(StatusCode.ERROR, error or f"HTTP {status}"))
        span.end(end_time=wall_ns(end_ns))

    def flush(self) -> bool:
        """Export every ended span now; False when an exporter did not finish within 10 s."""
        return self.provider.force_flush(10_000)

    def close(self) -> None:
        self.flush()
        self.provider.shutdown()


@cache
def noop_tracer() -> RigTracer:
    """A tracer that exports nowhere: the default where no endpoint is configured. Its spans still carry
    trace ids, so `traceparent` headers and case trace ids work the same with telemetry off."""
    return RigTracer([], kind="off")
