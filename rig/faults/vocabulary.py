"""One fault vocabulary for every channel: `{via, point, mode, ...}`.

    via: target      the target's own fault points (shared/API.md `_chaos`): point internal_search, encode,
                     query, expand, llm, summarize, trace_export; mode error, timeout, delay, empty,
                     repeat_same, no_usage
    via: llm_proxy   the LLM fault proxy (point `llm`; with `endpoint: embeddings`, point `embeddings`: the
                     target's query embeddings): latency, first_token_delay, status, reset, empty, cut,
                     no_usage, slow_body
    via: http_proxy  the HTTP fault proxy (point: a path glob): latency, status, reset, slow_body, cut
    via: restart     the target's process or container (point `process`): kill (SIGKILL), term (SIGTERM),
                     restart (docker restart), stop_start
    via: network     the target's link, through the network fault proxy on its host (point `link`): latency
                     (delay_ms one way, `direction` from_target | to_target | both), partition, reset

A gate case's fixtures, a chaos schedule and Chaos Toolkit's actions all build a `Fault`; a proxy receives its
`proxy_rule()` (or `link_rule()`), the target's control its `target_spec()`.
"""

from __future__ import annotations

import fnmatch
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rig.jsonvalue import ForeignJson

Via = Literal["target", "llm_proxy", "http_proxy", "restart", "network"]
ProxyMode = Literal["latency", "first_token_delay", "status", "reset", "empty", "cut", "no_usage", "slow_body"]
ModelEndpoint = Literal["chat", "embeddings"]
RestartMode = Literal["kill", "term", "restart", "stop_start"]
Direction = Literal["from_target", "to_target", "both"]

TARGET_POINTS = ("internal_search", "encode", "query", "expand", "llm", "summarize", "trace_export")
TARGET_MODES = ("error", "timeout", "delay", "empty", "repeat_same", "no_usage")
LLM_MODES = ("latency", "first_token_delay", "status", "reset", "empty", "cut", "no_usage", "slow_body")
HTTP_MODES = ("latency", "status", "reset", "slow_body", "cut")
RESTART_MODES: tuple[RestartMode, ...] = ("kill", "term", "restart", "stop_start")
NET_MODES = ("latency", "partition", "reset")
STREAM_ONLY = {"first_token_delay", "cut"}  # proxy modes that act on a streamed answer only
MODES: dict[str, tuple[str, ...]] = {"target": TARGET_MODES, "llm_proxy": LLM_MODES, "http_proxy": HTTP_MODES,
                                     "restart": RESTART_MODES, "network": NET_MODES}


class ProxyFault(BaseModel):
    """One rule of a fault proxy (LLM or HTTP)."""

    model_config = ConfigDict(extra="forbid")

    mode: ProxyMode
    probability: float = Field(1.0, ge=0.0, le=1.0)
    times: int | None = Field(None, ge=1, description="fire at most this often (None: until cleared)")
    delay_ms: float | None = Field(None, ge=0, description="latency, first_token_delay, slow_body (per chunk)")
    status: int | None = Field(None, ge=400, le=599, description="status mode: the status to answer")
    retry_after_s: float | None = Field(None, ge=0, description="status mode: the Retry-After header")
    after_chunks: int | None = Field(None, ge=0, description="cut/reset: forward this many chunks first")
    path: str = Field("*", description="glob on the request path")
    method: str = "*"
    match: str | None = Field(None, description="only requests whose body contains this text")
    endpoint: ModelEndpoint = Field(
        "chat", description="LLM proxy: the endpoint the rule applies to (chat completions, or embeddings: a "
                            "target's retrieval when it embeds its queries through the proxy)")

    @model_validator(mode="after")
    def _needs(self) -> ProxyFault:
        if self.mode == "status" and self.status is None:
            self.status = 503
        if self.mode in ("latency", "first_token_delay", "slow_body") and self.delay_ms is None:
            raise ValueError(f"mode {self.mode} needs delay_ms")
        return self

    def applies(self, method: str, path: str, body: bytes) -> bool:
        """Whether a request is one this rule is for (method, path glob, body substring)."""
        if self.method != "*" and self.method.upper() != method.upper():
            return False
        if not fnmatch.fnmatchcase(path, self.path):
            return False
        return self.match is None or self.match.encode() in body


class LinkFault(BaseModel):
    """One rule of the network fault proxy."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["latency", "partition", "reset"]
    delay_ms: float | None = Field(None, ge=0, le=60_000, description="latency: one-way delay")
    direction: Direction = "from_target"

    @model_validator(mode="after")
    def _needs(self) -> LinkFault:
        if self.mode == "latency" and self.delay_ms is None:
            raise ValueError("mode latency needs delay_ms")
        return self


class Fault(BaseModel):
    """A fault in the rig's vocabulary; `via` says which channel injects it."""

    model_config = ConfigDict(extra="forbid")

    via: Via
    mode: str
    point: str | None = None
    probability: float = Field(1.0, ge=0.0, le=1.0)
    times: int | None = Field(None, ge=1)
    delay_ms: float | None = Field(None, ge=0)
    status: int | None = Field(None, ge=400, le=599)
    retry_after_s: float | None = Field(None, ge=0)
    after_chunks: int | None = Field(None, ge=0)
    method: str = "*"
    match: str | None = None
    direction: Direction | None = Field(None, description="network latency: which way (default from_target)")
    proxy_url: str | None = Field(None, description="llm_proxy / http_proxy / network: the proxy's control URL")
    endpoint: ModelEndpoint | None = Field(None, description="llm_proxy: chat (default) or embeddings (the target's "
                                                             "retrieval, where it embeds queries through the proxy)")

    @model_validator(mode="after")
    def _valid(self) -> Fault:
        allowed = MODES[self.via]
        if self.mode not in allowed:
            raise ValueError(f"via {self.via} has no mode {self.mode!r}; modes: {', '.join(allowed)}")
        if self.endpoint is not None and self.via != "llm_proxy":
            raise ValueError("endpoint applies to via llm_proxy only (the model's chat or embeddings endpoint)")
        if self.via == "target":
            if self.point not in TARGET_POINTS:
                raise ValueError(f"via target needs point, one of {', '.join(TARGET_POINTS)}")
            if self.probability != 1.0:
                raise ValueError("the target's fault points have no probability; use times, or a proxy")
        elif self.via == "restart":
            self.point = self.point or "process"
        elif self.via == "network":
            self.point = self.point or "link"
            self.link_rule()  # the network proxy's own checks (latency needs delay_ms)
        elif self.via == "llm_proxy":
            self.point = self.point or ("embeddings" if self.endpoint == "embeddings" else "llm")
            self.proxy_rule()  # the proxy's own checks (delay_ms needed, ...)
        else:
            self.point = self.point or "*"
            self.proxy_rule()
        return self

    @property
    def label(self) -> str:
        """`point/mode`, the Prometheus labels of `rig_chaos_faults_total`."""
        return f"{self.point}/{self.mode}"

    def target_spec(self) -> ForeignJson:
        """The body of `POST /_chaos/faults`."""
        return {k: v for k, v in {"point": self.point, "mode": self.mode, "times": self.times,
                                  "delay_ms": self.delay_ms, "match": self.match}.items() if v is not None}

    def link_rule(self) -> LinkFault:
        """The rule the network fault proxy applies."""
        return LinkFault(mode=self.mode, delay_ms=self.delay_ms,
                         direction=self.direction or "from_target")

    def proxy_rule(self) -> ProxyFault:
        """The rule a fault proxy applies."""
        path = "*" if self.via == "llm_proxy" else (self.point or "*")
        return ProxyFault(mode=self.mode, probability=self.probability, times=self.times,
                          delay_ms=self.delay_ms, status=self.status, retry_after_s=self.retry_after_s,
                          after_chunks=self.after_chunks, path=path, method=self.method, match=self.match,
                          endpoint=self.endpoint or "chat")
