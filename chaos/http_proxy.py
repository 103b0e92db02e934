"""The HTTP fault proxy: any HTTP service (a tool backend, or the target itself) with faults by path and method.

Modes: `latency` before forwarding, `status` instead of forwarding, `reset` (before the response, or
after N body chunks), `slow_body` (a delay between body chunks), `cut` (the body ends after N chunks).
Bodies are streamed through, so an SSE stream behind the proxy stays a stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from chaos.proxy_base import JSON, FaultProxy, forward_headers
from chaos.wire import Request, Responder
from rig.faults import HTTP_MODES

PASS_RESPONSE_HEADERS = {"content-type", "cache-control", "retry-after", "set-cookie", "location", "etag",
                         "last-modified", "content-disposition", "www-authenticate", "x-request-id"}


class HttpFaultProxy(FaultProxy):
    """`rig chaos http-proxy`: forwards every request to `upstream`, applying the rules that fire."""

    modes = HTTP_MODES

    async def forward(self, request: Request, respond: Responder) -> None:
        fired = self.rules.draw(request.method, request.path, request.body, streaming=True)
        by_mode: dict[str, Any] = {r.fault.mode: r.fault for r in fired}
        record = self.new_record(request, rules=[r.rule_id for r in fired], faults=list(by_mode))
        began = time.perf_counter()
        try:
            if "latency" in by_mode:
                await asyncio.sleep((by_mode["latency"].delay_ms or 0) / 1000)
            if "status" in by_mode:
                status = by_mode["status"].status
                headers = list(JSON)
                if by_mode["status"].retry_after_s is not None:
                    headers.append(("retry-after", f"{by_mode['status'].retry_after_s:g}"))
                record.status, record.outcome = status, "injected_status"
                await respond.send(status, headers, json.dumps({"error": {
                    "code": "injected_status", "message": f"HTTP {status} injected by rig"}}).encode())
                return
            if "reset" in by_mode and not by_mode["reset"].after_chunks:
                record.outcome = "reset"
                respond.reset()
                return
            await self._pass(request, respond, by_mode, record, began)
        except (httpx.TransportError, OSError) as exc:
            record.outcome, record.error = "upstream_error", f"{type(exc).__name__}: {exc}"
            if not respond.started:
                respond.keep_alive = False
                record.status = 502
                await respond.send(502, JSON, json.dumps({"error": {"code": "upstream_unreachable",
                                                                    "message": str(exc)}}).encode())
        finally:
            record.total_ms = (time.perf_counter() - began) * 1000
            self.keep(record)

    async def _pass(self, request: Request, respond: Responder, by_mode: dict[str, Any], record: Any,
                    began: float) -> None:
        req = self.client.build_request(request.method, self.upstream + request.target, content=request.body,
                                        headers=forward_headers(request))
        response = await self.client.send(req, stream=True)
        try:
            record.status = response.status_code
            headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() in PASS_RESPONSE_HEADERS]
            await respond.start(response.status_code, headers)
            record.first_byte_ms = (time.perf_counter() - began) * 1000
            cut = by_mode["cut"].after_chunks if "cut" in by_mode else None
            reset = by_mode["reset"].after_chunks if "reset" in by_mode else None
            slow = (by_mode["slow_body"].delay_ms or 0) / 1000 if "slow_body" in by_mode else 0.0
            async for piece in response.aiter_raw():
                if cut is not None and record.chunks >= cut:
                    record.outcome = "cut"
                    respond.cut()
                    return
                if reset is not None and record.chunks >= reset:
                    record.outcome = "reset"
                    respond.reset()
                    return
                if slow and record.chunks:
                    await asyncio.sleep(slow)
                await respond.chunk(piece)
                record.chunks += 1
            await respond.end()
        finally:
            await response.aclose()
