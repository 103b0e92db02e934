"""What a run says, typed: its stream's events, its run record, a direct search's result, the answer's citations
and messages, and `Measure`, one measured value. The measuring core reads these; adapters produce them (from
any target's wire format) and `rig.adapters.models` re-exports them beside the shapes only adapters use.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rig.jsonvalue import ForeignJson


class TargetModel(BaseModel):
    """A shape a target answers: fields a protocol version may add are kept (`extra="allow"`)."""

    model_config = ConfigDict(extra="allow")


class Measure(BaseModel):
    """One measured value of a metric code: a time (ms), a count, tokens or USD, with where it came from."""

    rep: int | None = None
    case_id: int | None = None
    code: str
    source: str
    value: float
    unit: str = "ms"
    run_id: str | None = None
    label: str | None = None
    scenario: str | None = None
    ts_ms: float | None = None
    origin: str | None = None


class Hit(TargetModel):
    doc_id: str
    paper_id: str | None = None
    page: int | None = None
    chunk_id: str
    text: str = ""
    score: float | None = None
    expanded: bool = False


class SearchCallResult(TargetModel):
    tool_call_id: str | None = None  # None where the target names no calls (capability search_calls)
    query: str = ""
    ok: bool
    error: ForeignJson | None = None  # the target's error object, as it sent it
    hits: list[Hit] = Field(default_factory=list)


class Stage(TargetModel):
    name: str
    started_at: str | None = None
    started_at_ms: float | None = None
    ended_at: str | None = None
    ended_at_ms: float | None = None
    ok: bool | None = None
    cancelled: bool = False
    error: str | None = None


class SearchResult(TargetModel):
    """A direct search; the call ids and counts are the target's own report, None where it gives none."""

    tool_call_ids: list[str] = Field(default_factory=list)
    executed_calls: int | None = None
    proposed_calls: int | None = None
    results: list[SearchCallResult]
    stages: list[Stage] = Field(default_factory=list)
    sent_ns: int = 0
    received_ns: int = 0


class Citation(TargetModel):
    citation_id: str
    marker: int | None = None
    doc_id: str
    paper_id: str | None = None
    page: int | None = None
    chunk_id: str | None = None
    quote: str = ""
    tool_call_id: str | None = None


class Message(TargetModel):
    message_id: str
    parent_id: str | None = None
    branch_id: str | None = None
    role: Literal["user", "assistant"]
    content: str
    citations: list[Citation] = Field(default_factory=list)
    run_id: str | None = None
    scope: list[str] | None = None
    created_at: str | None = None
    source: Literal["target", "stream"] = "target"  # stream: as the answer's stream gave it (the target keeps none)
    run_link: Literal["text", "question"] | None = None  # run_id given by the rig's correlation (rig.target.linking)


class Usage(TargetModel):
    input_tokens: int | None = None
    output_tokens: int | None = None
    estimated_input_tokens: int | None = None
    estimated_output_tokens: int | None = None
    source: str | None = None


class Cost(TargetModel):
    actual_usd: float | None = None
    estimated_usd: float | None = None
    unknown: list[str] = Field(default_factory=list)


class RunModel(TargetModel):
    provider: str | None = None
    model: str | None = None
    config_version: int | str | None = None


class Checkpoint(TargetModel):
    checkpoint_id: str
    round: int
    created_at: str | None = None
    signature: str | None = None


class RoundDetail(TargetModel):
    round: int
    tools_offered: bool | list[str] = True
    tool_call_ids: list[str] = Field(default_factory=list)
    model_request_id: str | None = None


class ToolCallHit(TargetModel):
    doc_id: str
    page: int | None = None
    chunk_id: str
    text: str | None = None
    result_tool_call_id: str | None = None


class ToolCallRecord(TargetModel):
    tool_call_id: str
    name: str
    args: ForeignJson = Field(default_factory=dict)  # the tool call's arguments, as the target sent them
    ok: bool
    error: ForeignJson | None = None  # the target's error object, as it sent it
    executed: bool = True
    hits: list[ToolCallHit] = Field(default_factory=list)
    returned_to_round: int | None = None


class ModelInputRecord(TargetModel):
    round: int
    messages_digest: str | None = None
    included_summary_id: str | None = None
    included_message_ids: list[str] = Field(default_factory=list)
    tool_call_ids: list[str] = Field(default_factory=list)


class RunDetail(TargetModel):
    run_id: str
    session_id: str | None = None
    message_id: str | None = None
    user_message_id: str | None = None
    branch_id: str | None = None
    state: Literal["queued", "running", "completed", "stopped", "failed", "interrupted"]
    end_reason: str | None = None
    resume_from: str | None = None
    trace_id: str | None = None
    trace_complete: bool | None = None
    queued_at_ms: float | None = None
    started_at_ms: float | None = None
    first_status_at_ms: float | None = None
    first_token_at_ms: float | None = None
    ended_at_ms: float | None = None
    rounds: int | None = None
    max_rounds: int | None = None
    model_requests: int | None = None
    tool_calls_proposed: int | None = None
    tool_calls_executed: int | None = None
    retrieval_model_requests: int | None = None
    embedding_requests: int | None = None
    retries: int | None = None
    usage: Usage = Field(default_factory=Usage)
    cost: Cost = Field(default_factory=Cost)
    model: RunModel = Field(default_factory=RunModel)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    stages: list[Stage] = Field(default_factory=list)
    rounds_detail: list[RoundDetail] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    model_input: list[ModelInputRecord] = Field(default_factory=list)

    @property
    def terminal(self) -> bool:
        return self.state in ("completed", "stopped", "failed", "interrupted")


class Event(TargetModel):
    """One event of a run's stream, stamped with the client's monotonic receive time."""

    event: str
    id: int | None = None
    recv_ns: int
    server_ts_ms: float | None = None
    data: ForeignJson = Field(default_factory=dict)


class StatusEvent(Event):
    stage: str = ""
    text: str = ""


class TokenEvent(Event):
    text: str = ""
    kind: Literal["answer", "reasoning"] = "answer"


class ToolCallEvent(Event):
    tool_call_id: str = ""
    name: str = ""


class ToolResultEvent(Event):
    tool_call_id: str = ""
    ok: bool = True
    hits: int = 0


class CitationEvent(Event):
    citation_id: str = ""
    page: int | None = None


class CheckpointEvent(Event):
    checkpoint_id: str = ""
    round: int = 0


class TerminalEvent(Event):
    """`done` or `error`: the run's final state and reason."""

    state: str = ""
    reason: str | None = None
    message_id: str | None = None


class UsageEvent(Event):
    """Tokens the target reports on the stream for the run (OpenAI's final `usage` chunk and the like)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


EVENT_TYPES: dict[str, type[Event]] = {
    "usage": UsageEvent, "status": StatusEvent, "token": TokenEvent, "tool_call": ToolCallEvent, "tool_result": ToolResultEvent,
    "citation": CitationEvent, "checkpoint": CheckpointEvent, "done": TerminalEvent, "error": TerminalEvent,
}


_EVENT_CLASSES: list[type[Event]] = [Event, *EVENT_TYPES.values()]
_OWN_FIELDS: dict[type[Event], frozenset[str]] = {
    cls: frozenset(cls.model_fields) - {"event", "id", "data"} for cls in _EVENT_CLASSES}


def make_event(name: str, event_id: int | None, data: ForeignJson, recv_ns: int) -> Event:
    """Normalise one received event into its typed model (its fields validated; the whole payload kept in `data`)."""
    cls = EVENT_TYPES.get(name, Event)
    own = _OWN_FIELDS[cls]  # read once per class: pydantic's `model_fields` costs a descriptor call per access
    fields = {k: v for k, v in data.items() if k in own}
    ts = data.get("ts_ms")
    return cls(event=name, id=event_id, recv_ns=recv_ns, server_ts_ms=float(ts) if ts is not None else None,
               data=data, **fields)
