"""Typed shapes of what a target answers: accounts, documents, search results, runs, and stream events.

Every adapter returns these, whatever its target's own wire format, so scenarios never see raw dicts.
Fields that a protocol version may add are kept (`extra="allow"`), fields the rig relies on are typed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError

from rig.measure.events import (  # noqa: F401  (re-exported: the shapes of what a run says)
    EVENT_TYPES,
    Checkpoint,
    CheckpointEvent,
    Citation,
    CitationEvent,
    Cost,
    Event,
    Hit,
    Message,
    ModelInputRecord,
    RoundDetail,
    RunDetail,
    RunModel,
    SearchCallResult,
    SearchResult,
    Stage,
    StatusEvent,
    TargetModel,
    TerminalEvent,
    TokenEvent,
    ToolCallEvent,
    ToolCallHit,
    ToolCallRecord,
    ToolResultEvent,
    Usage,
    make_event,
)

_Model = TargetModel  # every response shape, here and in rig.measure.events


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
    owner_id: str | None = None  # the account that owns it, where the target says (the rig never reuses another's)

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
    format: Literal["md", "json", "csv"]
    content_type: str
    text: str


class ModelConfigView(_Model):
    provider: str
    model: str
    base_url: str | None = None
    api_key_masked: str | None = None
    config_version: int | str | None = None


def protocol_violation(exc: Exception) -> str | None:
    """What the target sent that one of these models does not allow, or None when `exc` is not about them.

    A `ValidationError` on a response model is the target breaking its protocol (a FAIL), not the rig failing.
    """

    if not isinstance(exc, ValidationError) or not _is_response_model(exc.title):
        return None
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
    return (f"the target's {exc.title} broke the protocol: {where}: {first.get('msg', '')} "
            f"(got {str(first.get('input'))[:80]!r})" + (f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""))


def _is_response_model(name: str) -> bool:
    model = globals().get(name)
    return isinstance(model, type) and issubclass(model, _Model)
