"""The LLM fault proxy: an OpenAI-compatible reverse proxy for `/chat/completions` that injects faults.

Point a target's model `base_url` at the proxy; it forwards to `--upstream` (or answers itself with
`--upstream mock`) and, by rule, adds latency or a first-token delay, answers 429 with Retry-After or
a 5xx, resets the connection, returns an empty completion, cuts the stream after N chunks, or drops
the usage fields. Rules with `endpoint: embeddings` apply to `/embeddings` instead (latency, status,
reset, empty): a target whose retrieval embeds its queries here gets its retrieval tool faulted, and a
target that gives up on a held request, or on a streamed answer mid-way, is seen doing so (outcome `client_gone`).
Every request is logged with its timings, usage and the faults it got.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import httpx

from chaos import mock_model
from chaos.proxy_base import JSON, FaultProxy, forward_headers
from chaos.rules import ActiveRule
from chaos.wire import Request, Responder
from rig.faults import LLM_MODES, RequestRecord


def _error_body(status: int, retry_after_s: float | None) -> bytes:
    kind = "rate_limit_exceeded" if status == 429 else "server_error"
    message = "Rate limit reached (injected by rig)" if status == 429 else f"Upstream error {status} (injected by rig)"
    return json.dumps({"error": {"message": message, "type": kind, "code": kind,
                                 "retry_after_s": retry_after_s}}).encode()


def _strip_content(chunk: dict[str, Any]) -> dict[str, Any] | None:
    """`empty`: a chunk without any content or tool call (None when nothing is left of it)."""
    choices = []
    for choice in chunk.get("choices") or []:
        delta = {k: v for k, v in (choice.get("delta") or {}).items() if k not in ("content", "tool_calls",
                                                                                   "reasoning_content")}
        finish = choice.get("finish_reason")
        if finish == "tool_calls":
            finish = "stop"
        choices.append({**choice, "delta": delta, "finish_reason": finish})
    if chunk.get("choices") and not any(c["delta"] or c["finish_reason"] for c in choices):
        return None
    return {**chunk, "choices": choices}


def _has_token(chunk: dict[str, Any]) -> bool:
    return any((c.get("delta") or {}).get(k) for c in chunk.get("choices") or []
               for k in ("content", "tool_calls", "reasoning_content"))


class LlmFaultProxy(FaultProxy):
    """`rig chaos llm-proxy`: OpenAI-compatible, streaming and not, pass-through or `mock`."""

    modes = LLM_MODES

    def __init__(self, upstream: str = "mock", *, mock_chunk_ms: float = 0.0, mock_first_token_ms: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(upstream, **kwargs)
        self.mock = upstream == "mock"
        self.mock_chunk_ms = mock_chunk_ms
        self.mock_first_token_ms = mock_first_token_ms

    async def forward(self, request: Request, respond: Responder) -> None:
        if request.method == "GET" and request.path.rstrip("/").endswith("/models"):
            await self._models(request, respond)
            return
        if request.method == "POST" and request.path.rstrip("/").endswith("/embeddings"):
            await self._embeddings(request, respond)
            return
        if not (request.method == "POST" and request.path.rstrip("/").endswith("/chat/completions")):
            await respond.send(404, JSON, json.dumps({"error": {"message": f"no route {request.path}",
                                                                "type": "invalid_request_error"}}).encode())
            return
        try:
            body = json.loads(request.body or b"{}")
        except json.JSONDecodeError:
            await respond.send(400, JSON, b'{"error": {"message": "body is not JSON", "type": "invalid_request_error"}}')
            return
        stream = bool(body.get("stream"))
        fired = self.rules.draw(request.method, request.path, request.body, streaming=stream)
        record = self.new_record(request, model=body.get("model"), stream=stream,
                                 rules=[r.rule_id for r in fired], faults=[r.fault.mode for r in fired])
        began = time.perf_counter()
        await self._logged(self._complete(request, respond, body, stream, fired, record, began), respond, record,
                           began)

    async def _logged(self, work: Awaitable[None], respond: Responder, record: RequestRecord, began: float) -> None:
        """Run one request's handling; an unreachable upstream answers 502 (when nothing was sent yet), and the
        request is logged with its total time however it ended."""
        try:
            await work
        except (httpx.TransportError, OSError) as exc:
            record.outcome, record.error = "upstream_error", f"{type(exc).__name__}: {exc}"
            if not respond.started:
                respond.keep_alive = False
                await respond.send(502, JSON, json.dumps({"error": {"message": f"upstream unreachable: {exc}",
                                                                    "type": "upstream_error"}}).encode())
                record.status = 502
        finally:
            record.total_ms = (time.perf_counter() - began) * 1000
            self.keep(record)

    async def _complete(self, request: Request, respond: Responder, body: dict[str, Any], stream: bool,
                        fired: list[ActiveRule], record: RequestRecord, began: float) -> None:
        by_mode: dict[str, Any] = {r.fault.mode: r.fault for r in fired}
        if "latency" in by_mode:
            await asyncio.sleep((by_mode["latency"].delay_ms or 0) / 1000)
        if "status" in by_mode:
            f = by_mode["status"]
            assert f.status is not None
            headers = list(JSON)
            if f.retry_after_s is not None:
                headers.append(("retry-after", f"{f.retry_after_s:g}"))
            record.status, record.outcome = f.status, "injected_status"
            await respond.send(f.status, headers, _error_body(f.status, f.retry_after_s))
            return
        if "reset" in by_mode and not by_mode["reset"].after_chunks:
            record.outcome = "reset"
            respond.reset()
            return
        if stream:
            await self._stream(request, respond, body, by_mode, record, began)
        else:
            await self._whole(request, respond, body, by_mode, record, began)

    # -- streamed completions --------------------------------------------------------------------------------
    async def _stream(self, request: Request, respond: Responder, body: dict[str, Any],
                      by_mode: dict[str, Any], record: RequestRecord, began: float) -> None:
        cut_after = by_mode["cut"].after_chunks if "cut" in by_mode else None
        reset_after = by_mode["reset"].after_chunks if "reset" in by_mode else None
        slow = (by_mode["slow_body"].delay_ms or 0) / 1000 if "slow_body" in by_mode else 0.0
        first_delay = (by_mode["first_token_delay"].delay_ms or 0) / 1000 if "first_token_delay" in by_mode else 0.0
        status, headers, events = await self._events(request, body)
        record.status = status
        if status >= 300:
            record.outcome = "upstream_error"
            payload = b"".join([e.encode() async for e in events])
            await respond.send(status, headers, payload)
            return
        await respond.start(200, [("content-type", "text/event-stream"), ("cache-control", "no-cache")])
        record.first_byte_ms = (time.perf_counter() - began) * 1000
        sent = 0
        async for data in events:
            if data == "[DONE]":
                if cut_after is None and reset_after is None:
                    await respond.chunk(b"data: [DONE]\n\n")
                break
            if not by_mode and record.first_token_ms is not None and '"usage"' not in data:
                await respond.chunk(b"data: %s\n\n" % data.encode())  # nothing to change or record: as is
                sent += 1
                continue
            chunk = json.loads(data)
            if chunk.get("usage"):
                record.prompt_tokens = chunk["usage"].get("prompt_tokens")
                record.completion_tokens = chunk["usage"].get("completion_tokens")
                if "no_usage" in by_mode:
                    record.usage_dropped = True
                    chunk = {k: v for k, v in chunk.items() if k != "usage"}
                    if not chunk.get("choices"):
                        continue
            if "empty" in by_mode:
                record.outcome = "empty"
                stripped = _strip_content(chunk)
                if stripped is None:
                    continue
                chunk = stripped
            if cut_after is not None and sent >= cut_after:
                record.outcome = "cut"
                break
            if reset_after is not None and sent >= reset_after:
                record.outcome = "reset"
                respond.reset()
                return
            if _has_token(chunk) and record.first_token_ms is None:
                if first_delay:
                    await asyncio.sleep(first_delay)
                record.first_token_ms = (time.perf_counter() - began) * 1000
            elif slow and sent:
                await asyncio.sleep(slow)
            if respond.client_gone():  # the target gave the answer up (its run stopped, or its client went away)
                record.outcome = "client_gone"
                respond.keep_alive = False
                return
            await respond.chunk(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
            sent += 1
            record.chunks = sent  # live: while it grows the model call is still being read
        record.chunks = sent
        if cut_after is not None and record.outcome != "cut":
            record.outcome = "cut"
        await respond.end()  # a cut stream ends cleanly, just early: no [DONE], no finish_reason

    async def _events(self, request: Request, body: dict[str, Any]) -> tuple[int, list[tuple[str, str]],
                                                                              AsyncIterator[str]]:
        """The upstream's SSE data payloads (or an error body as one item), from the mock or over HTTP."""
        if self.mock:
            completion = mock_model.complete(body)
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = mock_model.stream_chunks(completion, f"chatcmpl-{uuid.uuid4().hex[:20]}", include_usage)

            async def paced() -> AsyncIterator[str]:
                for i, chunk in enumerate(chunks):
                    if i == 1 and self.mock_first_token_ms:
                        await asyncio.sleep(self.mock_first_token_ms / 1000)
                    elif i > 1 and self.mock_chunk_ms:
                        await asyncio.sleep(self.mock_chunk_ms / 1000)
                    yield json.dumps(chunk, ensure_ascii=False)
                yield "[DONE]"

            return 200, [], paced()
        req = self.client.build_request("POST", self.upstream + _tail(request), content=request.body,
                                        headers=forward_headers(request))
        response = await self.client.send(req, stream=True)

        async def lines() -> AsyncIterator[str]:
            try:
                if response.status_code >= 300:
                    yield (await response.aread()).decode("utf-8", "replace")
                    return
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        yield line[5:].strip()
            finally:
                await response.aclose()

        headers = [(k, v) for k, v in response.headers.items() if k in ("content-type", "retry-after")]
        return response.status_code, headers, lines()

    # -- whole completions ---------------------------------------------------------------------------------
    async def _whole(self, request: Request, respond: Responder, body: dict[str, Any], by_mode: dict[str, Any],
                     record: RequestRecord, began: float) -> None:
        if self.mock:
            status, headers = 200, list(JSON)
            data: dict[str, Any] | None = mock_model.full_response(mock_model.complete(body),
                                                                  f"chatcmpl-{uuid.uuid4().hex[:20]}")
            raw = b""
        else:
            response = await self.client.post(self.upstream + _tail(request), content=request.body,
                                              headers=forward_headers(request))
            status, raw = response.status_code, response.content
            headers = [(k, v) for k, v in response.headers.items() if k in ("content-type", "retry-after")]
            try:
                data = response.json() if status < 300 else None
            except json.JSONDecodeError:
                data = None
        record.status = status
        if data is not None:
            usage = data.get("usage") or {}
            record.prompt_tokens, record.completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
            if "no_usage" in by_mode:
                record.usage_dropped = bool(usage)
                data.pop("usage", None)
            if "empty" in by_mode:
                record.outcome = "empty"
                for choice in data.get("choices") or []:
                    choice["message"] = {"role": "assistant", "content": ""}
                    choice["finish_reason"] = "stop"
            raw = json.dumps(data, ensure_ascii=False).encode()
        elif status >= 300:
            record.outcome = "upstream_error"
        record.first_byte_ms = (time.perf_counter() - began) * 1000
        if "reset" in by_mode:  # after_chunks > 0 on a whole body: part of it, then a reset
            record.outcome = "reset"
            await respond.start(status, headers)
            await respond.chunk(raw[: max(1, len(raw) // 2)])
            respond.reset()
            return
        if "slow_body" in by_mode:
            delay = (by_mode["slow_body"].delay_ms or 0) / 1000
            await respond.start(status, headers)
            for i in range(0, len(raw), 256):
                if i:
                    await asyncio.sleep(delay)
                await respond.chunk(raw[i:i + 256])
            await respond.end()
            return
        await respond.send(status, headers, raw)

    async def _embeddings(self, request: Request, respond: Responder) -> None:
        """Embeddings pass through (or come from the mock), with the rules whose `endpoint` is `embeddings`:
        a target that embeds its retrieval queries here gets its retrieval tool failed, slowed or emptied."""
        fired = self.rules.draw(request.method, request.path, request.body, streaming=False, endpoint="embeddings")
        record = self.new_record(request, endpoint="embeddings", rules=[r.rule_id for r in fired],
                                 faults=[r.fault.mode for r in fired])
        began = time.perf_counter()
        await self._logged(self._embed(request, respond, {r.fault.mode: r.fault for r in fired}, record), respond,
                           record, began)

    async def _embed(self, request: Request, respond: Responder, by_mode: dict[str, Any], record: RequestRecord) -> None:
        if "latency" in by_mode and not await respond.hold((by_mode["latency"].delay_ms or 0) / 1000):
            record.outcome = "client_gone"  # the target gave up waiting (its timeout, or its task cancelled)
            respond.keep_alive = False
            return
        if "status" in by_mode:
            f = by_mode["status"]
            assert f.status is not None
            record.status, record.outcome = f.status, "injected_status"
            await respond.send(f.status, list(JSON), _error_body(f.status, f.retry_after_s))
            return
        if "reset" in by_mode:
            record.outcome = "reset"
            respond.reset()
            return
        if self.mock:
            try:
                body = json.loads(request.body or b"{}")
            except json.JSONDecodeError:
                record.status = 400
                await respond.send(400, JSON, b'{"error": {"message": "body is not JSON"}}')
                return
            status, ctype, data = 200, "application/json", mock_model.embeddings_response(body)
            raw = b""
        else:
            response = await self.client.post(self.upstream + _tail(request), content=request.body,
                                              headers=forward_headers(request))
            status, ctype, raw = response.status_code, response.headers.get("content-type", "application/json"), \
                response.content
            data = None
            if "empty" in by_mode and status < 300:
                data = response.json()
        record.status = status
        if "empty" in by_mode and data is not None:
            record.outcome = "empty"
            data = {**data, "data": []}  # an answer with no vectors at all
        await respond.send(status, [("content-type", ctype)],
                           json.dumps(data).encode() if data is not None else raw)

    async def _models(self, request: Request, respond: Responder) -> None:
        if self.mock:
            await respond.send(200, JSON, json.dumps({"object": "list", "data": [
                {"id": name, "object": "model", "owned_by": "rig"} for name in mock_model.MODELS]}).encode())
            return
        response = await self.client.get(self.upstream + _tail(request), headers=forward_headers(request))
        await respond.send(response.status_code, [("content-type", response.headers.get("content-type", "application/json"))],
                           response.content)


def _tail(request: Request) -> str:
    """The request path below the proxy's `/v1` (the upstream URL carries its own `/v1`)."""
    target = request.target
    return target[3:] if target.startswith("/v1/") else target
