"""Telemetry: the rig's OTLP receiver, its own spans, and Prometheus metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.telemetry.otlp_receiver import ReceivedSpan, run_roots, subtree
    from rig.telemetry.tracing import RigTracer, configured_endpoints, noop_tracer, trace_id_of, traceparent_of

_EXPORTS = {
    "ReceivedSpan": "rig.telemetry.otlp_receiver", "RigTracer": "rig.telemetry.tracing",
    "configured_endpoints": "rig.telemetry.tracing", "noop_tracer": "rig.telemetry.tracing",
    "subtree": "rig.telemetry.otlp_receiver", "run_roots": "rig.telemetry.otlp_receiver", "trace_id_of": "rig.telemetry.tracing",
    "traceparent_of": "rig.telemetry.tracing",
}
__all__ = ["ReceivedSpan", "RigTracer", "configured_endpoints", "noop_tracer", "run_roots", "subtree", "trace_id_of",
          "traceparent_of"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
