"""An OpenAI-compatible chat-completions provider (streaming, tools, usage, retries on 429/5xx)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from workbench.models.base import ModelError, ModelRequest, ModelResult, OnText, ToolCall

MAX_RETRIES = 2
RETRYABLE = {429, 500, 502, 503, 504}
INVALID_CONFIG = {400, 401, 403, 404}


def _retry_after_s(response: httpx.Response, attempt: int) -> float:
    header = response.headers.get("retry-after")
    try:
        wait = float(header) if header is not None else 0.2 * (2**attempt)
    except ValueError:
        wait = 0.2 * (2**attempt)
    return min(max(wait, 0.0), 2.0)


class OpenAICompatModel:
    """Calls `{base_url}/chat/completions` with `stream=true`; never logs or echoes the API key."""

    provider = "openai"

    def __init__(self, model: str, base_url: str, api_key: str | None, timeout_s: float = 60.0) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout_s = timeout_s

    async def generate(self, request: ModelRequest, on_text: OnText) -> ModelResult:
        body: dict[str, Any] = {"model": self.model, "messages": request.messages, "stream": True,
                                "stream_options": {"include_usage": True}}
        if request.tools:
            body["tools"] = request.tools
        headers = {"x-request-id": request.request_id}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        retries = 0
        async with httpx.AsyncClient(timeout=self.timeout_s) as client:
            while True:
                try:
                    return await self._attempt(client, body, headers, on_text, retries)
                except _Retry as exc:
                    if retries >= MAX_RETRIES:
                        raise ModelError("internal_error", f"model provider kept failing: {exc}",
                                         retries=retries) from None
                    await asyncio.sleep(exc.wait_s)
                    retries += 1

    async def _attempt(self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str],
                       on_text: OnText, retries: int) -> ModelResult:
        url = f"{self.base_url}/chat/completions"
        try:
            async with client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code in RETRYABLE:
                    raise _Retry(f"HTTP {response.status_code}", _retry_after_s(response, retries))
                if response.status_code in INVALID_CONFIG:
                    await response.aread()
                    raise ModelError("model_config_invalid",
                                     f"provider refused the configured model ({response.status_code})",
                                     retries=retries)
                if response.status_code >= 300:
                    raise ModelError("internal_error", f"provider answered {response.status_code}", retries=retries)
                return await self._read_stream(response, on_text, retries)
        except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError) as exc:
            raise _Retry(f"{type(exc).__name__}: {exc}", 0.2 * (2**retries)) from None
        except httpx.TimeoutException:
            raise _Retry("timeout", 0.0) from None

    async def _read_stream(self, response: httpx.Response, on_text: OnText, retries: int) -> ModelResult:
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] = {}
        finish = "stop"
        done = False
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                break
            chunk = json.loads(data)
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content"):
                    await on_text(delta["reasoning_content"], "reasoning")
                if delta.get("content"):
                    text.append(delta["content"])
                    await on_text(delta["content"], "answer")
                for tc in delta.get("tool_calls") or []:
                    slot = calls.setdefault(tc.get("index", 0), {"id": "", "name": "", "arguments": ""})
                    slot["id"] = tc.get("id") or slot["id"]
                    fn = tc.get("function") or {}
                    slot["name"] = fn.get("name") or slot["name"]
                    slot["arguments"] += fn.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
        if not done and not text and not calls:
            raise _Retry("stream ended before any content", 0.1)
        tool_calls: list[ToolCall] = []
        for slot in calls.values():
            try:
                args = json.loads(slot["arguments"] or "{}")
            except json.JSONDecodeError:
                args = {"queries": [slot["arguments"]]}
            tool_calls.append(ToolCall(slot["id"] or f"call_{len(tool_calls)}", slot["name"], args))
        cost = usage.get("cost")
        return ModelResult(
            "".join(text), tool_calls, usage.get("prompt_tokens"), usage.get("completion_tokens"),
            float(cost) if isinstance(cost, (int, float)) else None, self.model, retries=retries,
            finish_reason="truncated" if not done else finish,
        )


class _Retry(Exception):
    def __init__(self, message: str, wait_s: float) -> None:
        super().__init__(message)
        self.wait_s = wait_s
