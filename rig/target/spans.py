"""The target's own spans, received over OTLP: kept in the evidence store, waited for before a report."""

from __future__ import annotations

from collections.abc import Callable

from rig import events
from rig.evidence import EvidenceStore
from rig.telemetry.otlp_receiver import OtlpReceiver, ReceivedSpan, run_roots


def store_span(store: EvidenceStore, span: ReceivedSpan) -> None:
    """Keep one received span beside the rig's evidence."""
    store.add_span(span.trace_id, span.span_id, span.parent_span_id, span.name, span.service, span.scope,
                   span.start_ns, span.end_ns, span.attributes)


def keep_spans(store: EvidenceStore, mine: OtlpReceiver) -> Callable[[], None]:
    """Store every span `mine` decodes (a `rig.events.span_received` listener) until the returned call."""

    def on_span(receiver: OtlpReceiver, span: ReceivedSpan) -> None:
        if receiver is mine:
            store_span(store, span)

    events.span_received.add_listener(on_span)
    return lambda: events.span_received.remove_listener(on_span)


def settle_target_spans(store: EvidenceStore, receiver: OtlpReceiver, timeout_s: float = 5.0) -> bool:
    """Wait (bounded) until the root span of every recorded run has arrived, so the report's trace trees are whole."""
    wanted = {r.run_id for r in store.runs() if r.trace_id}

    def arrived(spans: list[ReceivedSpan]) -> bool:
        return wanted <= {str(s.attributes.get("run.id")) for s in run_roots(spans)}

    return receiver.wait_for(arrived, timeout_s)
