"""Replaying one recorded run (tests/measure/data/recorded_run.json) to any path that reads runs.

`Replay` is a transport that answers the run's event stream with the recorded pieces and its run record
with the recorded JSON; `recorded_clock()` gives the recorded arrival times in order, so every path that
reads the replay sees the same events at the same client times.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rig.adapters.transport import Reply, StreamReply, Transport

RECORDING = Path(__file__).resolve().parent / "data" / "recorded_run.json"
SUBMIT_NS = 1_000_000_000_000


def recording(drop_usage_source: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDING.read_text(encoding="utf-8"))
    if drop_usage_source:  # a target whose run record does not say where its token counts come from
        data["run"]["usage"].pop("source", None)
    return data


class Replay(Transport):
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def send(self, method: str, path: str, *, op: str, headers: dict[str, str], body: bytes | None = None,
             timeout_s: float | None = None) -> Reply:
        if method == "GET" and path.endswith(f"/runs/{self.data['run_id']}"):
            return Reply(200, {"content-type": "application/json"}, json.dumps(self.data["run"]).encode())
        return Reply(404, {"content-type": "application/json"}, b'{"error": {"code": "not_found"}}')

    @contextmanager
    def stream(self, method: str, path: str, *, op: str, headers: dict[str, str],
               timeout_s: float | None = None, body: bytes | None = None,
               delimiter: bytes = b"\n\n") -> Iterator[StreamReply]:
        pieces = [p.encode() for _, p in self.data["pieces"]]
        yield StreamReply(200, {"content-type": "text/event-stream"}, lambda: iter(pieces))


def recorded_clock(data: dict[str, Any]) -> Any:
    """A stand-in for `rig.measure.sse.now_ns` that returns each piece's recorded arrival, in order."""
    stamps = iter(SUBMIT_NS + int(ms * 1e6) for ms, _ in data["pieces"])
    return lambda: next(stamps)
