"""A run that streams long is said in the gate's progress while it streams, at most every HEARTBEAT_S seconds."""

from __future__ import annotations

import pytest

from rig.gate import heartbeat
from rig.gate.heartbeat import StreamHeartbeat
from rig.measure.events import TokenEvent


def test_a_long_stream_is_said_every_ten_seconds_and_a_short_one_never(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(heartbeat.time, "monotonic", lambda: clock[0])
    said: list[str] = []
    beat = StreamHeartbeat(said.append, every_s=10.0)
    beat.on_case(20, 1, "可靠性-20-1 stop")
    token = TokenEvent(event="token", recv_ns=0, text="w")
    for _ in range(50):  # a short run: 5 s of events
        clock[0] += 0.1
        beat.on_event("r-short", token)
    assert said == []
    for _ in range(300):  # a run that never ends: 30 s of events
        clock[0] += 0.1
        beat.on_event("r-long", token)
    assert len(said) == 2, said  # at 10 s and 20 s of its stream (the line every 10 s at most)
    assert said[0].startswith("case 20 (可靠性-20-1 stop): run r-long still streaming — ") and \
        said[0].endswith(" events in 10 s") and said[1].endswith(" events in 20 s")
