"""What the agent loop asks of a model provider, and what it gets back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

OnText = Callable[[str, Literal["answer", "reasoning"]], Awaitable[None]]

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "internal_search",
        "description": "Search the selected papers. Returns numbered hits with paper id, physical page and text.",
        "parameters": {
            "type": "object",
            "properties": {"queries": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            "required": ["queries"],
        },
    },
}


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class ModelRequest:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    round: int
    request_id: str


@dataclass
class ModelResult:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    model: str = ""
    retries: int = 0
    finish_reason: str = "stop"


class ModelError(Exception):
    """A model call that failed; `code` is the run end reason it leads to."""

    def __init__(self, code: str, message: str, *, retries: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.retries = retries


class Provider(Protocol):
    provider: str
    model: str

    async def generate(self, request: ModelRequest, on_text: OnText) -> ModelResult: ...
