"""The fault proxies' rules: what to inject, on which requests, how often, with a seeded dice.

A rule matches by method, path glob and an optional substring of the request body, fires with its
probability (drawn from the proxy's own seeded `random.Random`, so a run can be repeated exactly) and
at most `times` times. Several rules may fire on one request (latency plus dropped usage, say).
"""

from __future__ import annotations

import fnmatch
import itertools
import random
import threading
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ProxyMode = Literal["latency", "first_token_delay", "status", "reset", "empty", "cut", "no_usage", "slow_body"]
ModelEndpoint = Literal["chat", "embeddings"]
STREAM_ONLY = {"first_token_delay", "cut"}


class ProxyFault(BaseModel):
    """One rule of a fault proxy."""

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
        if self.method != "*" and self.method.upper() != method.upper():
            return False
        if not fnmatch.fnmatchcase(path, self.path):
            return False
        return self.match is None or self.match.encode() in body


class ActiveRule(BaseModel):
    rule_id: str
    fault: ProxyFault
    fired: int = 0
    seen: int = 0

    @property
    def exhausted(self) -> bool:
        return self.fault.times is not None and self.fired >= self.fault.times


class RuleBook:
    """The active rules of one proxy; thread-safe (the control API and the serving loop share it)."""

    def __init__(self, seed: int = 1) -> None:
        self._rules: list[ActiveRule] = []
        self._ids = itertools.count(1)
        self._dice = random.Random(seed)
        self._lock = threading.Lock()

    def add(self, fault: ProxyFault) -> str:
        with self._lock:
            rule = ActiveRule(rule_id=f"rule_{next(self._ids)}", fault=fault)
            self._rules.append(rule)
            return rule.rule_id

    def remove(self, rule_id: str) -> bool:
        with self._lock:
            before = len(self._rules)
            self._rules = [r for r in self._rules if r.rule_id != rule_id]
            return len(self._rules) < before

    def clear(self) -> int:
        with self._lock:
            count, self._rules = len(self._rules), []
            return count

    def active(self) -> list[ActiveRule]:
        with self._lock:
            return [r.model_copy() for r in self._rules]

    def draw(self, method: str, path: str, body: bytes, *, streaming: bool, endpoint: str = "chat") -> list[ActiveRule]:
        """The rules that fire on this request (each counted), in the order they were added."""
        fired: list[ActiveRule] = []
        with self._lock:
            for rule in self._rules:
                f = rule.fault
                if rule.exhausted or f.endpoint != endpoint or not f.applies(method, path, body):
                    continue
                if f.mode in STREAM_ONLY and not streaming:
                    continue
                rule.seen += 1
                if f.probability < 1.0 and self._dice.random() >= f.probability:
                    continue
                rule.fired += 1
                fired.append(rule.model_copy())
        return fired
