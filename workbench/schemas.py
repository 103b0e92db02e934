"""Request bodies of the protocol, validated at the edge."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LoginIn(BaseModel):
    username: str = Field(min_length=1, max_length=128)
    password: str = Field(min_length=1, max_length=1024)


class ProjectIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class MemberIn(BaseModel):
    username: str = Field(min_length=1, max_length=128)


class HistoryTurn(BaseModel):
    role: str
    content: str


class SearchIn(BaseModel):
    project_id: str
    queries: list[str] = Field(min_length=1, max_length=16)
    scope: list[str] | None = None
    history: list[HistoryTurn] | None = None


class SessionIn(BaseModel):
    project_id: str
    scope: list[str] = Field(default_factory=list)
    attachments: list[str] = Field(default_factory=list)


class SessionPatch(BaseModel):
    scope: list[str]
    attachments: list[str] | None = None


class MessageIn(BaseModel):
    content: str = Field(min_length=1)
    parent_id: str | None = None


class StopIn(BaseModel):
    reason: str | None = None


class ModelConfigIn(BaseModel):
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None


class SettingsPatch(BaseModel):
    max_rounds: int | None = None
    no_progress_threshold: int | None = None
    input_budget_tokens: int | None = None
    summary_trigger_tokens: int | None = None
    trace_budget_spans: int | None = None
    token_delay_ms: float | None = None
    first_token_delay_ms: float | None = None
    search_top_k: int | None = None
