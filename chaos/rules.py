"""The fault proxies' rules: what to inject, on which requests, how often, with a seeded dice.

A rule matches by method, path glob and an optional substring of the request body, fires with its
probability (drawn from the proxy's own seeded `random.Random`, so a run can be repeated exactly) and
at most `times` times. Several rules may fire on one request (latency plus dropped usage, say).
"""

from __future__ import annotations

import itertools
import random
import threading

from pydantic import BaseModel

from rig.faults import STREAM_ONLY, ProxyFault


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
