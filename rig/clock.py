"""One monotonic clock for every client-side time, anchored once to wall time.

`now_ns()` is `time.perf_counter_ns()`; `wall_ms(ns)` turns such a reading into epoch milliseconds
comparable with a target's `*_ms` fields. The anchor is taken once per process, so intervals never
jump with NTP adjustments and client and server stamps can still be put side by side.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Anchor:
    perf_ns: int
    wall_ns: int


def _take_anchor(tries: int = 9) -> Anchor:
    """Bracket the wall reading with two monotonic readings and take their midpoint; of a few brackets keep the
    tightest, so a process descheduled between the readings (a busy machine) does not skew every stamp it
    makes by half that pause (tens of ms, enough to put a stream's break before the kill that caused it)."""
    best: tuple[int, Anchor] | None = None
    for _ in range(tries):
        a = time.perf_counter_ns()
        wall = time.time_ns()
        b = time.perf_counter_ns()
        if best is None or b - a < best[0]:
            best = (b - a, Anchor((a + b) // 2, wall))
    assert best is not None
    return best[1]


ANCHOR = _take_anchor()


def now_ns() -> int:
    """Monotonic nanoseconds (the only source of client-side timings)."""
    return time.perf_counter_ns()


def wall_ms(ns: int) -> float:
    """Epoch milliseconds for a `now_ns()` reading."""
    return (ANCHOR.wall_ns + (ns - ANCHOR.perf_ns)) / 1e6


def wall_ns(ns: int | None = None) -> int:
    """Epoch nanoseconds for a `now_ns()` reading (or for now), as span timestamps want them."""
    return ANCHOR.wall_ns + ((time.perf_counter_ns() if ns is None else ns) - ANCHOR.perf_ns)


def elapsed_ms(start_ns: int, end_ns: int) -> float:
    return (end_ns - start_ns) / 1e6


def now_iso() -> str:
    """Wall time now, UTC, to the second (what manifests and reports stamp)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def parse_duration(text: str | float) -> float:
    """`60s`, `2m`, `90` → seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(ms|s|m|h)?\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a duration like 60s, 2m or 90")
    value = float(m.group(1))
    return value * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
