"""Trace trees for the report: every case's trace, rig spans and target spans together, as an indented list."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rig.evidence import EvidenceStore, StoredSpan
from rig.jsonvalue import JsonObject
from rig.report.plain import escape

MAX_SPANS = 400
SHOWN_ATTRIBUTES = ("run.id", "rig.verdict", "rig.run.state", "http.response.status_code", "url.path",
                    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.tool.call.id")


class TraceNode(BaseModel):
    span_id: str
    depth: int
    service: str
    name: str
    duration_ms: float
    attributes: JsonObject = Field(default_factory=dict)  # the shown ones (SHOWN_ATTRIBUTES), as the span had them
    orphan: bool = False  # its parent never arrived (a cut or lost export)


class TraceTree(BaseModel):
    trace_id: str
    case_id: int | None
    services: list[str]
    nodes: list[TraceNode]
    span_count: int = 0  # every span of the trace, shown or not
    truncated: bool = False


def trace_tree(trace_id: str, spans: list[StoredSpan], case_id: int | None = None) -> TraceTree:
    """Spans of one trace ordered depth-first by start time; spans whose parent is missing start their own root."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[StoredSpan]] = {}
    for s in sorted(spans, key=lambda s: s.start_ns or 0):
        parent = s.parent_span_id if s.parent_span_id in ids else None
        children.setdefault(parent, []).append(s)
    nodes: list[TraceNode] = []
    stack = [(s, 0) for s in reversed(children.get(None, []))]
    while stack and len(nodes) < MAX_SPANS:
        s, depth = stack.pop()
        attrs = {k: s.attributes[k] for k in SHOWN_ATTRIBUTES if k in s.attributes}
        nodes.append(TraceNode(span_id=s.span_id, depth=depth, service=s.service or "", name=s.name,
                               duration_ms=round(((s.end_ns or 0) - (s.start_ns or 0)) / 1e6, 3), attributes=attrs,
                               orphan=s.parent_span_id is not None and s.parent_span_id not in ids))
        stack.extend((c, depth + 1) for c in reversed(children.get(s.span_id, [])))
    return TraceTree(trace_id=trace_id, case_id=case_id, services=sorted({s.service or "" for s in spans}),
                     nodes=nodes, span_count=len(spans), truncated=len(spans) > len(nodes))


def case_traces(store: EvidenceStore) -> list[TraceTree]:
    """The trace of every case that had a case span (last repeat first kept per case)."""
    seen: dict[int, str] = {}
    for c in store.cases():
        if c.trace_id:
            seen[c.case_id] = c.trace_id
    return [trace_tree(t, store.spans(t), case_id) for case_id, t in sorted(seen.items())]


def traces_html(trees: list[TraceTree]) -> str:
    """One collapsible block per trace, anchored `trace-<id>` so run and case rows can link to it."""
    blocks = []
    for t in trees:
        rows = "".join(
            f"<tr><td style='padding-left:{0.4 + n.depth * 1.2}em'>{'⚠ ' if n.orphan else ''}{escape(n.name)}</td>"
            f"<td>{escape(n.service)}</td><td class=num>{n.duration_ms}</td>"
            f"<td>{escape(', '.join(f'{k}={v}' for k, v in n.attributes.items()))}</td></tr>" for n in t.nodes)
        more = f"<p>… {MAX_SPANS}+ spans, the rest are in the evidence store</p>" if t.truncated else ""
        blocks.append(f"<details id='trace-{escape(t.trace_id)}'><summary>case {t.case_id} · trace "
                      f"<code>{escape(t.trace_id)}</code> · {len(t.nodes)} spans from {escape(', '.join(t.services))}"
                      f"</summary><table><tr><th>span</th><th>service</th><th>ms</th><th>attributes</th></tr>{rows}"
                      f"</table>{more}</details>")
    return "".join(blocks) or "<p>No traces were recorded.</p>"
