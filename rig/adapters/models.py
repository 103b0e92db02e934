"""Typed shapes of what a target answers: accounts, documents, search results, runs, and stream events.

Every adapter returns these, whatever its target's own wire format, so scenarios never see raw dicts.
Fields that a protocol version may add are kept (`extra="allow"`), fields the rig relies on are typed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class Auth(_Model):
    """A logged-in account: what later calls present."""

    token: str = Field(repr=False)
    user_id: str
    username: str
    expires_at: str | None = None


class Me(_Model):
    user_id: str
    username: str


class Project(_Model):
    project_id: str
    name: str = ""
    owner: bool = True


class DocStage(_Model):
    name: str
    started_at: str | None = None
    started_at_ms: float | None = None
    ended_at: str | None = None
    ended_at_ms: float | None = None
    ok: bool | None = None
    error: str | None = None


class DocError(_Model):
    code: str
    message: str | None = None


class Document(_Model):
    doc_id: str
    paper_id: str | None = None
    filename: str = ""
    sha256: str = ""
    status: Literal["queued", "processing", "ready", "partial", "no_text", "failed"]
    pages_total: int | None = None
    pages_with_text: int | None = None
    error: DocError | None = None
    stages: list[DocStage] = Field(default_factory=list)

    @property
    def final(self) -> bool:
        return self.status not in ("queued", "processing")


class Uploaded(_Model):
    """An accepted upload: the target's document id; `sha256` is the rig's own of the bytes it sent, and
    `reported_sha256` the target's, where it reports one (compared, never trusted instead)."""

    doc_id: str
    sha256: str | None = None
    reported_sha256: str | None = None
    status: str = "queued"
    filename: str | None = None
    accepted_ns: int = 0  # client clock when the upload was accepted


class PageText(_Model):
    page: int
    text: str
    kind: str | None = None


class Hit(_Model):
    doc_id: str
    paper_id: str | None = None
    page: int | None = None
    chunk_id: str
    text: str = ""
    score: float | None = None
    expanded: bool = False


class SearchCallResult(_Model):
    tool_call_id: str | None = None  # None where the target names no calls (capability search_calls)
    query: str = ""
    ok: bool
    error: dict[str, Any] | None = None
    hits: list[Hit] = Field(default_factory=list)


class Stage(_Model):
    name: str
    started_at: str | None = None
    started_at_ms: float | None = None
    ended_at: str | None = None
    ended_at_ms: float | None = None
    ok: bool | None = None
    cancelled: bool = False
    error: str | None = None


class SearchResult(_Model):
    """A direct search; the call ids and counts are the target's own report, None where it gives none."""

    tool_call_ids: list[str] = Field(default_factory=list)
    executed_calls: int | None = None
    proposed_calls: int | None = None
    results: list[SearchCallResult]
    stages: list[Stage] = Field(default_factory=list)
    sent_ns: int = 0
    received_ns: int = 0


class Dropped(_Model):
    doc_id: str
    reason: str


class SessionOpened(_Model):
    session_id: str
    effective_scope: list[str]
    dropped: list[Dropped] = Field(default_factory=list)


class ScopeSet(_Model):
    effective_scope: list[str]
    dropped: list[Dropped] = Field(default_factory=list)


class Citation(_Model):
    citation_id: str
    marker: int | None = None
    doc_id: str
    paper_id: str | None = None
    page: int | None = None
    chunk_id: str | None = None
    quote: str = ""
    tool_call_id: str | None = None


class Message(_Model):
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


class Summary(_Model):
    summary_id: str
    covers_until_message_id: str
    text: str
    created_at: str | None = None


class ExportSource(_Model):
    """One entry of an export's source list: a cited paper and the physical pages cited from it."""

    doc_id: str
    paper_id: str | None = None
    pages: list[int] = Field(default_factory=list)


class Session(_Model):
    session_id: str
    project_id: str
    scope: list[str]
    messages: list[Message] = Field(default_factory=list)
    summaries: list[Summary] = Field(default_factory=list)
    current_leaf: str | None = None
    sources: list[ExportSource] = Field(default_factory=list)  # an export's source list, where it has one


class Submitted(_Model):
    """A question accepted by the target. `submit_ns`/`accepted_ns`: the client clock around the call, stamped by
    `Adapter` itself; an adapter may stamp a narrower window (just before the request that starts the run)."""

    run_id: str
    message_id: str | None = None
    branch_id: str | None = None
    trace_id: str | None = None
    submit_ns: int = 0
    accepted_ns: int = 0


class Resumed(_Model):
    run_id: str
    resume_from: str


class Usage(_Model):
    input_tokens: int | None = None
    output_tokens: int | None = None
    estimated_input_tokens: int | None = None
    estimated_output_tokens: int | None = None
    source: str | None = None


class Cost(_Model):
    actual_usd: float | None = None
    estimated_usd: float | None = None
    unknown: list[str] = Field(default_factory=list)


class RunModel(_Model):
    provider: str | None = None
    model: str | None = None
    config_version: int | str | None = None


class Checkpoint(_Model):
    checkpoint_id: str
    round: int
    created_at: str | None = None
    signature: str | None = None


class RoundDetail(_Model):
    round: int
    tools_offered: bool | list[str] = True
    tool_call_ids: list[str] = Field(default_factory=list)
    model_request_id: str | None = None


class ToolCallHit(_Model):
    doc_id: str
    page: int | None = None
    chunk_id: str
    text: str | None = None
    result_tool_call_id: str | None = None


class ToolCallRecord(_Model):
    tool_call_id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    error: dict[str, Any] | None = None
    executed: bool = True
    hits: list[ToolCallHit] = Field(default_factory=list)
    returned_to_round: int | None = None


class ModelInputRecord(_Model):
    round: int
    messages_digest: str | None = None
    included_summary_id: str | None = None
    included_message_ids: list[str] = Field(default_factory=list)
    tool_call_ids: list[str] = Field(default_factory=list)


class RunDetail(_Model):
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


class Highlight(_Model):
    page: int
    start: int
    end: int


class Located(_Model):
    doc_id: str
    paper_id: str | None = None
    page: int | None = None
    quote: str = ""
    match: Literal["unique", "multiple", "none", "page_only", "file_only"]
    highlights: list[Highlight] = Field(default_factory=list)
    cache: Literal["hit", "miss"] | None = None
    content_sha256: str | None = None


class Exported(_Model):
    format: Literal["md", "json"]
    content_type: str
    text: str


class ModelConfigView(_Model):
    provider: str
    model: str
    base_url: str | None = None
    api_key_masked: str | None = None
    config_version: int | str | None = None


# -- stream events ------------------------------------------------------------------------------------------


class Event(_Model):
    """One event of a run's stream, stamped with the client's monotonic receive time."""

    event: str
    id: int | None = None
    recv_ns: int
    server_ts_ms: float | None = None
    data: dict[str, Any] = Field(default_factory=dict)


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


EVENT_TYPES: dict[str, type[Event]] = {
    "status": StatusEvent, "token": TokenEvent, "tool_call": ToolCallEvent, "tool_result": ToolResultEvent,
    "citation": CitationEvent, "checkpoint": CheckpointEvent, "done": TerminalEvent, "error": TerminalEvent,
}


def make_event(name: str, event_id: int | None, data: dict[str, Any], recv_ns: int) -> Event:
    """Normalise one received event into its typed model."""
    cls = EVENT_TYPES.get(name, Event)
    fields = {k: v for k, v in data.items() if k in cls.model_fields and k not in ("event", "id", "data")}
    ts = data.get("ts_ms")
    return cls(event=name, id=event_id, recv_ns=recv_ns, server_ts_ms=float(ts) if ts is not None else None,
               data=data, **fields)


def protocol_violation(exc: Exception) -> str | None:
    """What the target sent that one of these models does not allow, or None when `exc` is not about them.

    A `ValidationError` on a response model is the target breaking its protocol (a FAIL), not the rig failing.
    """
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError) or not _is_response_model(exc.title):
        return None
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
    return (f"the target's {exc.title} broke the protocol: {where}: {first.get('msg', '')} "
            f"(got {str(first.get('input'))[:80]!r})" + (f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""))


def _is_response_model(name: str) -> bool:
    model = globals().get(name)
    return isinstance(model, type) and issubclass(model, _Model)
