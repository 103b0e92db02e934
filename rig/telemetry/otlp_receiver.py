"""A small OTLP/HTTP trace receiver on loopback (protobuf or JSON), for the target's spans.

It accepts `POST /v1/traces` (any OTLP exporter) and `POST /api/public/otel/v1/traces` (what the
Langfuse SDK sends), decodes spans with `opentelemetry-proto`, and hands each one to the `rig.events.span_received` listeners.
Authorization headers are never kept.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from rig import events
from rig.errors import ConfigError
from rig.jsonvalue import ForeignJson

PATHS = ("/v1/traces", "/api/public/otel/v1/traces")


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as received: ids in hex, times in epoch nanoseconds, attributes as plain values."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: ForeignJson  # as the exporter sent them (OTLP values decoded: str, int, float, bool, lists)
    resource: ForeignJson
    scope: str
    path: str
    status_code: int = 0

    @property
    def service(self) -> str:
        return str(self.resource.get("service.name", ""))


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def decode(body: bytes, content_type: str, path: str) -> list[ReceivedSpan]:
    """Spans of one OTLP export request."""
    request = ExportTraceServiceRequest()
    if "json" in content_type:
        Parse(body.decode("utf-8"), request)
    else:
        request.ParseFromString(body)
    spans = []
    for rs in request.resource_spans:
        resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append(ReceivedSpan(
                    trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                    parent_span_id=s.parent_span_id.hex() or None, name=s.name,
                    start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano,
                    attributes={kv.key: _value(kv.value) for kv in s.attributes}, resource=resource,
                    scope=ss.scope.name, path=path, status_code=s.status.code,
                ))
    return spans


class _QuietServer(ThreadingHTTPServer):
    """An exporter hanging up mid-answer (at its shutdown) is not an error worth a traceback."""

    dropped = 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.dropped += 1


@dataclass
class OtlpReceiver:
    """Start with `start()`; `endpoint` is the base URL to give an exporter; spans land in `spans`."""

    host: str = "127.0.0.1"
    port: int = 0
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    # Extra read paths served beside ingestion: handler(path, headers) → (status, JSON body), or None to 404.
    get_handler: Callable[[str, Any], tuple[int, Any] | None] | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._arrived = threading.Condition(self._lock)

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://{self.host}:{self._server.server_address[1]}"

    def start(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                answer = receiver.get_handler(self.path, self.headers) if receiver.get_handler else None
                if answer is None:
                    self.send_error(404)
                    return
                status, body = answer
                payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                path = self.path.split("?")[0]
                if path not in PATHS:
                    self.send_error(404)
                    return
                body = _export_body(self)
                if body is None:
                    return
                ctype = self.headers.get("content-type", "application/x-protobuf")
                try:
                    spans = decode(body, ctype, path)
                except Exception as exc:  # a malformed export is the sender's problem: answer 400
                    self.send_error(400, f"cannot decode OTLP: {exc}")
                    return
                receiver._accept(spans)
                if "json" in ctype:
                    payload, out_type = json.dumps({}).encode(), "application/json"
                else:
                    payload, out_type = ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf"
                self.send_response(200)
                self.send_header("content-type", out_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_: Any) -> None:
                return

        self._server = _QuietServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def _accept(self, spans: list[ReceivedSpan]) -> None:
        with self._arrived:
            self.requests += 1
            self.spans.extend(spans)
            self._arrived.notify_all()
        if events.span_received.has_listeners:
            for span in spans:
                events.span_received.fire(receiver=self, span=span)

    def wait_for(self, predicate: Callable[[list[ReceivedSpan]], bool], timeout_s: float = 10.0) -> bool:
        """Block until `predicate(spans)` holds or the timeout passes; returns whether it held."""
        with self._arrived:
            return self._arrived.wait_for(lambda: predicate(self.spans), timeout=timeout_s)

    def trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self._lock:
            return [s for s in self.spans if s.trace_id == trace_id]

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def subtree(spans: list[ReceivedSpan], roots: set[str]) -> list[ReceivedSpan]:
    """The spans under `roots` (span ids), the roots included: one call's or one run's own spans of a trace."""
    keep = set(roots)
    grew = True
    while grew:
        grew = False
        for s in spans:
            if s.span_id not in keep and s.parent_span_id in keep:
                keep.add(s.span_id)
                grew = True
    return [s for s in spans if s.span_id in keep]


NOT_THE_TARGETS = ("rig", "langfuse-sdk")  # scopes of spans the target did not make itself: the rig's, a Langfuse export


def run_roots(spans: list[ReceivedSpan], run_id: str | None = None) -> list[ReceivedSpan]:
    """The target's root span of each run (of `run_id` only, when given): the topmost of its own spans carrying the
    run's id in `run.id` (DESIGN's attribute), whatever the span is called — the reference names it `invoke_agent
    workbench` (OpenTelemetry's GenAI agent span), another target may call it anything."""
    carrying = [s for s in spans if s.scope not in NOT_THE_TARGETS and s.attributes.get("run.id") is not None
                and (run_id is None or str(s.attributes["run.id"]) == run_id)]
    ids = {(s.span_id, str(s.attributes["run.id"])) for s in carrying}
    return [s for s in carrying if (s.parent_span_id, str(s.attributes["run.id"])) not in ids]


def start_receiver(listen: str | None) -> OtlpReceiver:
    """A started receiver on `HOST:PORT` (an address a target's exporter can be told), or a free loopback port."""
    if not listen:
        return OtlpReceiver().start()

    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"OTLP listen address {listen!r} is not HOST:PORT",
                          fix="e.g. --otlp-listen 0.0.0.0:4318, or target.otlp_listen in rig.yaml")
    try:
        return OtlpReceiver(host=host, port=int(port)).start()
    except OSError as exc:
        raise ConfigError(f"cannot listen for spans on {listen}: {exc.strerror or exc}",
                          fix="pick a free port, or an address of this machine") from None


MAX_EXPORT_BYTES = 16 * 2**20  # one export request, sent or unpacked: larger is refused 413 (OTLP exporters batch far less)


def _export_body(handler: BaseHTTPRequestHandler) -> bytes | None:
    """An export request's body, unpacked when gzipped; past `MAX_EXPORT_BYTES` either way it is refused 413 (None):
    a 400 KB gzip of zeros must not become 400 MiB in the rig's memory."""
    length = int(handler.headers.get("content-length") or 0)
    if length > MAX_EXPORT_BYTES:
        handler.send_error(413, f"an OTLP export of {length} bytes is past the receiver's {MAX_EXPORT_BYTES}")
        return None
    body = handler.rfile.read(length)
    if handler.headers.get("content-encoding") == "gzip":
        unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = unpack.decompress(body, MAX_EXPORT_BYTES + 1)
        except zlib.error as exc:
            handler.send_error(400, f"cannot unpack the gzip body: {exc}")
            return None
        if len(body) > MAX_EXPORT_BYTES or unpack.unconsumed_tail:
            handler.send_error(413, f"an OTLP export unpacks past the receiver's {MAX_EXPORT_BYTES} bytes")
            return None
    return body
