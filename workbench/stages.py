"""Stage records: name, start, end, ok, cancelled, error — for runs and for the retrieval tool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import Any, Protocol

from workbench.clock import iso, now_ms
from workbench.metrics import Metrics


class SpanSource(Protocol):
    def span(self, name: str, attributes: dict[str, Any] | None = None) -> AbstractContextManager[Any]: ...


class StageLog:
    """An ordered list of stage records (each also a span when a trace is given)."""

    def __init__(self, metrics: Metrics | None = None, trace: SpanSource | None = None) -> None:
        self.records: list[dict[str, Any]] = []
        self.metrics = metrics
        self.trace = trace

    @asynccontextmanager
    async def stage(self, name: str, **attrs: Any) -> AsyncIterator[dict[str, Any]]:
        """Record a stage around a block; CancelledError marks it `cancelled` and propagates."""
        started = now_ms()
        record: dict[str, Any] = {"name": name, **attrs, "started_at": iso(started), "started_at_ms": started,
                                  "ended_at": None, "ended_at_ms": None, "ok": None, "cancelled": False}
        self.records.append(record)
        span_cm = self.trace.span(f"stage {name}", {"rig.stage": name}) if self.trace else nullcontext()
        try:
            with span_cm:
                yield record
        except asyncio.CancelledError:
            record["cancelled"] = True
            record["ok"] = False
            raise
        except Exception as exc:
            record["ok"] = False
            record.setdefault("error", getattr(exc, "code", type(exc).__name__))
            raise
        else:
            if record["ok"] is None:
                record["ok"] = "error" not in record
        finally:
            ended = now_ms()
            record["ended_at"] = iso(ended)
            record["ended_at_ms"] = ended
            if self.metrics is not None:
                self.metrics.stage_duration.labels(name).observe((ended - started) / 1000)
