"""The one client of a fault proxy's control API (`/_rig/…`): the gate's model proxy, chaos schedules, Chaos
Toolkit's actions and tests all add, read and remove rules through it, and read back what the proxy saw."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel

from rig.errors import RigError
from rig.jsonvalue import ForeignJson


class RequestRecord(BaseModel):
    """One request that passed the proxy: what was asked, what was injected, what came back, how fast."""

    seq: int
    at_ms: float
    method: str
    path: str
    endpoint: str = "chat"  # LLM proxy: chat or embeddings
    model: str | None = None
    stream: bool = False
    rules: list[str] = []
    faults: list[str] = []
    status: int | None = None
    outcome: str = "ok"  # ok | injected_status | reset | cut | empty | upstream_error | client_gone
    first_byte_ms: float | None = None
    first_token_ms: float | None = None
    total_ms: float | None = None
    chunks: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    usage_dropped: bool = False
    error: str | None = None


class FaultControl:
    """A fault proxy's control API at `url` (its `/_rig/rules`, `/_rig/requests`, `/_rig/healthz`)."""

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self._timeout = timeout_s

    def _call(self, method: str, path: str, body: ForeignJson | None = None) -> Any:
        try:
            response = httpx.request(method, f"{self.url}/_rig/{path}", json=body, timeout=self._timeout)
        except httpx.TransportError as exc:
            raise RigError(f"the fault proxy at {self.url} does not answer: {type(exc).__name__}",
                           fix="start it (`rig chaos llm-proxy` / `rig chaos http-proxy`, or target.model_proxy in "
                               "rig.yaml) and check its URL") from None
        if response.status_code >= 300:
            raise RigError(f"the fault proxy refused {method} /_rig/{path}: {response.text[:300]}",
                           fix="check the rule against `rig chaos modes`")
        return response.json()

    def add(self, rule: BaseModel | ForeignJson) -> str:
        """Add a rule (a `ProxyFault`, a `LinkFault`, or its fields); returns its id."""
        body = rule.model_dump(exclude_none=True) if isinstance(rule, BaseModel) else rule
        return str(self._call("POST", "rules", body)["rule_id"])

    def remove(self, rule_id: str) -> bool:
        return bool(self._call("DELETE", f"rules/{rule_id}").get("removed", True))

    def clear(self) -> int:
        return int(self._call("DELETE", "rules").get("cleared", 0))

    def rules(self) -> list[ForeignJson]:
        return list(self._call("GET", "rules"))

    def fired(self, rule_id: str) -> int:
        """How often a rule has fired so far (0 when it is gone or never matched a request)."""
        return next((int(r.get("fired", 0)) for r in self.rules() if r.get("rule_id") == rule_id), 0)

    def requests(self, since: int = 0, *, in_flight: bool = False) -> list[RequestRecord]:
        """The proxy's request log after sequence number `since` (what the target actually asked of its model); with
        `in_flight`, the requests still being answered too (`total_ms` None, `chunks` growing while streamed)."""
        answered = self._call("GET", f"requests?since={since}" + ("&in_flight=1" if in_flight else ""))
        return [RequestRecord.model_validate(r) for r in answered]

    def last_seq(self) -> int:
        """The sequence number of the newest logged request (0 when none)."""
        return int(self._call("GET", "healthz").get("seq", 0))

    def healthy(self) -> bool:
        """Whether the proxy answers its health check."""
        try:
            return bool(self._call("GET", "healthz").get("ok"))
        except RigError:
            return False
