"""What both fault proxies share: the rule book, the request log, and the control API under `/_rig/`.

    GET    /_rig/healthz          → {"ok": true, "upstream": ..., "seq": the newest request's number}
    GET    /_rig/rules            → active rules with how often each was seen and fired
    POST   /_rig/rules            ProxyFault → {"rule_id"}
    DELETE /_rig/rules            → {"cleared": n}
    DELETE /_rig/rules/{rule_id}  → {"removed": bool}
    GET    /_rig/requests?since=N → the request log from sequence number N
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from pydantic import ValidationError

from chaos.rules import RuleBook
from chaos.wire import Request, Responder, WireServer
from rig.faults import ProxyFault, ProxyMode, RequestRecord

JSON = [("content-type", "application/json")]


class FaultProxy:
    """A proxy with rules and a request log; subclasses implement `forward`."""

    modes: tuple[str, ...] = ()

    def __init__(self, upstream: str, *, seed: int = 1, record_path: Path | None = None,
                 max_records: int = 20000) -> None:
        self.upstream = upstream.rstrip("/")
        self.rules = RuleBook(seed)
        self.records: deque[RequestRecord] = deque(maxlen=max_records)
        self.in_flight: dict[int, RequestRecord] = {}  # begun, not yet answered in full (listed on request)
        self._seq = 0
        self._lock = threading.Lock()
        self._record_file = record_path.open("a", encoding="utf-8") if record_path else None
        self._client: httpx.AsyncClient | None = None
        self.server: WireServer | None = None

    # -- serving -----------------------------------------------------------------------------------------
    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve in a background thread; returns the proxy's base URL."""
        self.server = WireServer(self.handle, host, port)
        return self.server.start()

    def serve_forever(self, host: str, port: int) -> None:
        WireServer(self.handle, host, port).serve_forever()

    def stop(self) -> None:
        if self.server is not None:
            if self._client is not None:
                client, self._client = self._client, None
                self.server.call(client.aclose())
            self.server.stop()
        if self._record_file is not None:
            self._record_file.close()
            self._record_file = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(300.0, connect=10.0),
                                             limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200))
        return self._client

    async def handle(self, request: Request, respond: Responder) -> None:
        if request.path.startswith("/_rig/"):
            await self._control(request, respond)
            return
        await self.forward(request, respond)

    async def forward(self, request: Request, respond: Responder) -> None:
        raise NotImplementedError

    # -- the request log ---------------------------------------------------------------------------------
    def new_record(self, request: Request, **fields: Any) -> RequestRecord:
        with self._lock:
            self._seq += 1
            seq = self._seq
        record = RequestRecord(seq=seq, at_ms=time.time() * 1000, method=request.method, path=request.path, **fields)
        self.in_flight[seq] = record
        return record

    def keep(self, record: RequestRecord) -> None:
        self.in_flight.pop(record.seq, None)
        self.records.append(record)
        if self._record_file is not None:
            with self._lock:
                self._record_file.write(record.model_dump_json() + "\n")
                self._record_file.flush()

    # -- control -----------------------------------------------------------------------------------------
    async def _control(self, request: Request, respond: Responder) -> None:
        path, method = request.path.rstrip("/"), request.method
        if path == "/_rig/healthz":
            return await _json(respond, 200, {"ok": True, "upstream": self.upstream, "modes": list(self.modes),
                                              "seq": self._seq})
        if path == "/_rig/rules" and method == "GET":
            return await _json(respond, 200, [r.model_dump(mode="json") for r in self.rules.active()])
        if path == "/_rig/rules" and method == "POST":
            try:
                fault = ProxyFault.model_validate_json(request.body or b"{}")
            except ValidationError as exc:
                return await _json(respond, 422, {"error": {"code": "invalid_rule", "message": str(exc.errors()[0]["msg"]),
                                                            "loc": list(exc.errors()[0]["loc"])}})
            if fault.mode not in self.modes:
                return await _json(respond, 422, {"error": {"code": "invalid_rule", "message":
                                                            f"this proxy has no mode {fault.mode!r}; "
                                                            f"modes: {', '.join(self.modes)}"}})
            return await _json(respond, 201, {"rule_id": self.rules.add(fault)})
        if path == "/_rig/rules" and method == "DELETE":
            return await _json(respond, 200, {"cleared": self.rules.clear()})
        if path.startswith("/_rig/rules/") and method == "DELETE":
            return await _json(respond, 200, {"removed": self.rules.remove(path.rsplit("/", 1)[1])})
        if path == "/_rig/requests" and method == "GET":
            query = parse_qs(urlsplit(request.target).query)
            since = int((query.get("since") or ["0"])[0])
            listed = list(self.records) + (list(self.in_flight.values()) if query.get("in_flight") == ["1"] else [])
            return await _json(respond, 200, [r.model_dump(mode="json") for r in sorted(listed, key=lambda r: r.seq)
                                              if r.seq > since])
        return await _json(respond, 404, {"error": {"code": "not_found", "message": f"no control endpoint {path}"}})


async def _json(respond: Responder, status: int, data: Any) -> None:
    await respond.send(status, JSON, json.dumps(data, ensure_ascii=False).encode())


def forward_headers(request: Request) -> dict[str, str]:
    """The request's headers minus hop-by-hop ones, for the upstream."""
    drop = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "accept-encoding"}
    return {k: v for k, v in request.headers.items() if k not in drop}


__all__ = ["FaultProxy", "ProxyFault", "ProxyMode", "RequestRecord", "forward_headers"]
