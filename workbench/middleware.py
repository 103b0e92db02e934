"""ASGI middleware: `X-Request-Id` on every response and request metrics by route template."""

from __future__ import annotations

import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.clock import now_ms
from workbench.ids import new_id
from workbench.metrics import Metrics


class RequestMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_id("req")
        scope.setdefault("state", {})["received_ms"] = now_ms()
        started = time.perf_counter()
        status = {"code": 500}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers: list[Any] = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message["headers"] = headers
                route = scope.get("route")
                template = getattr(route, "path", None) or "unmatched"
                self.metrics.http_duration.labels(scope["method"], template).observe(time.perf_counter() - started)
                self.metrics.http_requests.labels(scope["method"], template, str(status["code"])).inc()
            await send(message)

        await self.app(scope, receive, send_wrapper)
