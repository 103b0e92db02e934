"""Fault points for the test-only control (`/api/v1/_chaos/faults`)."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

Point = Literal["internal_search", "encode", "query", "expand", "llm", "summarize", "trace_export"]
Mode = Literal["error", "timeout", "delay", "empty", "repeat_same", "no_usage"]


class FaultSpec(BaseModel):
    """A fault to inject: where, how, how many times (None = until cleared), delay, and a text match."""

    point: Point
    mode: Mode
    times: int | None = Field(None, ge=1)
    delay_ms: float | None = Field(None, ge=0)
    match: str | None = None


@dataclass
class Fault:
    fault_id: str
    spec: FaultSpec
    fired: int = 0
    memo: dict[str, object] = field(default_factory=dict)

    @property
    def exhausted(self) -> bool:
        return self.spec.times is not None and self.fired >= self.spec.times


class InjectedFault(Exception):
    """Raised at a fault point in `error` or `timeout` mode."""

    def __init__(self, point: str, mode: str) -> None:
        code = "timeout" if mode == "timeout" else "injected_error"
        super().__init__(f"{point}: {code} (injected)")
        self.point = point
        self.code = code


class FaultRegistry:
    """Active faults; `fire()` at a point returns the fault that applies, counting it."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._ids = itertools.count(1)
        self.on_fire: list[object] = []

    def add(self, spec: FaultSpec) -> Fault:
        fault = Fault(f"flt_{next(self._ids)}", spec)
        self._faults.append(fault)
        return fault

    def clear(self) -> None:
        self._faults.clear()

    def list(self) -> list[Fault]:
        return list(self._faults)

    def fire(self, point: str, text: str = "") -> Fault | None:
        for fault in self._faults:
            if fault.spec.point != point or fault.exhausted:
                continue
            if fault.spec.match and fault.spec.match not in text:
                continue
            fault.fired += 1
            for hook in self.on_fire:
                hook(fault)  # type: ignore[operator]
            return fault
        return None

    async def apply(self, point: str, text: str = "") -> Fault | None:
        """Fire at `point`: sleeps for delay/timeout, raises for error/timeout, returns the faults the caller applies."""
        fault = self.fire(point, text)
        if fault is None:
            return None
        mode = fault.spec.mode
        if mode in ("delay", "timeout"):
            await asyncio.sleep((fault.spec.delay_ms if fault.spec.delay_ms is not None else
                                 (1000.0 if mode == "timeout" else 200.0)) / 1000.0)
        if mode in ("error", "timeout"):
            raise InjectedFault(point, mode)
        return fault if mode in ("empty", "repeat_same", "no_usage") else None
