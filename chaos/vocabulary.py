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
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chaos.http_proxy import HTTP_MODES
from chaos.llm_proxy import LLM_MODES
from chaos.net_proxy import NET_MODES, Direction, LinkFault
from chaos.rules import ModelEndpoint, ProxyFault
from rig.target import RESTART_MODES

Via = Literal["target", "llm_proxy", "http_proxy", "restart", "network"]
TARGET_POINTS = ("internal_search", "encode", "query", "expand", "llm", "summarize", "trace_export")
TARGET_MODES = ("error", "timeout", "delay", "empty", "repeat_same", "no_usage")
MODES: dict[str, tuple[str, ...]] = {"target": TARGET_MODES, "llm_proxy": LLM_MODES, "http_proxy": HTTP_MODES,
                                     "restart": RESTART_MODES, "network": NET_MODES}


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

    def target_spec(self) -> dict[str, Any]:
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
