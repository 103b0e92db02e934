"""A stand-in for a Langfuse server (a SaaS we cannot run here), for the reconciliation tests.

It ingests what the Langfuse SDK really sends (OTLP at `/api/public/otel/v1/traces`) and answers
`GET /api/public/traces/{traceId}` in the public API's documented `TraceWithFullDetails` shape, mapping
the SDK's `langfuse.observation.*` span attributes to observations the way Langfuse documents it. Like
the real service it ingests asynchronously: a trace becomes readable only `ingest_delay_s` after its
spans arrived, and it checks basic auth with the project's keys.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rig import events
from rig.telemetry.otlp_receiver import OtlpReceiver, ReceivedSpan

A = "langfuse.observation."


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")


def observation(span: ReceivedSpan) -> dict[str, Any]:
    """One `ObservationsView` from one SDK span."""
    a = span.attributes
    usage = _json(a.get(A + "usage_details")) or None
    cost = _json(a.get(A + "cost_details")) or None
    metadata = {k[len(A + "metadata."):]: _json(v) for k, v in a.items() if k.startswith(A + "metadata.")}
    return {
        "id": span.span_id, "traceId": span.trace_id, "type": str(a.get(A + "type", "span")).upper(),
        "name": span.name, "startTime": _iso(span.start_ns), "endTime": _iso(span.end_ns),
        "parentObservationId": span.parent_span_id, "model": a.get(A + "model.name"),
        "usageDetails": usage, "costDetails": cost, "metadata": metadata,
        "usage": {"input": (usage or {}).get("input"), "output": (usage or {}).get("output"),
                  "total": sum((usage or {}).values()) if usage else None, "unit": "TOKENS"},
        "calculatedTotalCost": (cost or {}).get("total"), "level": "DEFAULT",
        "latency": (span.end_ns - span.start_ns) / 1e9,
    }


@dataclass
class LangfuseDouble:
    public_key: str = "pk-lf-rig-test"
    secret_key: str = "sk-lf-rig-test"
    ingest_delay_s: float = 1.0
    reads: int = 0
    _arrived: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.receiver = OtlpReceiver(get_handler=self._get)
        events.span_received.add_listener(self._on_span)

    @property
    def host(self) -> str:
        return self.receiver.endpoint

    def env(self) -> dict[str, str]:
        return {"LANGFUSE_PUBLIC_KEY": self.public_key, "LANGFUSE_SECRET_KEY": self.secret_key,
                "LANGFUSE_HOST": self.host}

    def start(self) -> LangfuseDouble:
        self.receiver.start()
        return self

    def stop(self) -> None:
        self.receiver.stop()
        if self._on_span in events.span_received.listeners:
            events.span_received.remove_listener(self._on_span)

    def _on_span(self, receiver: OtlpReceiver, span: ReceivedSpan) -> None:
        if receiver is not self.receiver:
            return
        if span.path == "/api/public/otel/v1/traces":
            self._arrived[span.trace_id] = time.monotonic()

    def _get(self, path: str, headers: Any) -> tuple[int, Any] | None:
        prefix = "/api/public/traces/"
        if not path.startswith(prefix):
            return None
        want = "Basic " + base64.b64encode(f"{self.public_key}:{self.secret_key}".encode()).decode()
        if headers.get("authorization") != want:
            return 401, {"message": "Invalid credentials"}
        self.reads += 1
        trace_id = path[len(prefix):].split("?")[0]
        arrived = self._arrived.get(trace_id)
        if arrived is None or time.monotonic() - arrived < self.ingest_delay_s:
            return 404, {"message": f"Trace {trace_id} not found within authorized project"}
        spans = [s for s in self.receiver.trace(trace_id) if s.path == "/api/public/otel/v1/traces"]
        observations = [observation(s) for s in sorted(spans, key=lambda s: s.start_ns)]
        root = next((o for o in observations if o["parentObservationId"] is None), observations[0])
        costs = [o["calculatedTotalCost"] for o in observations if o["calculatedTotalCost"] is not None]
        return 200, {
            "id": trace_id, "timestamp": root["startTime"], "name": root["name"], "input": None, "output": None,
            "sessionId": None, "release": None, "version": None, "userId": None, "metadata": root["metadata"],
            "tags": [], "public": False, "environment": "default", "htmlPath": f"/project/rig/traces/{trace_id}",
            "latency": root["latency"], "totalCost": round(sum(costs), 10), "observations": observations,
            "scores": [],
        }
