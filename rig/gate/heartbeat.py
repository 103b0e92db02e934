"""A progress line while a run streams long: a never-ending answer shows in a CI log long before its budget ends it.

The gate's progress says each case's verdict when it ends; a case whose run streams for minutes would otherwise be
silent all that time. `StreamHeartbeat` listens to `rig.events` (`case_started`, `run_event`) and says, at most every
`every_s` seconds, which run of which case is still streaming and how much it has sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rig.measure.events import Event

HEARTBEAT_S = 10.0


class StreamHeartbeat:
    """Says (`say(text)`) which run is still streaming, once a run has streamed `every_s` and at most that often."""

    def __init__(self, say: Callable[[str], None], every_s: float = HEARTBEAT_S) -> None:
        self.say = say
        self.every_s = every_s
        self.case = ""
        self._began: dict[str, tuple[float, int]] = {}  # run id → (first event, events since)
        self._last = time.monotonic()

    def on_case(self, case_id: int, rep: int, title: str) -> None:
        """`rig.events.case_started`: runs from here on belong to this case."""
        self.case = f"case {case_id} ({title})"
        self._last = time.monotonic()

    def on_event(self, run_id: str, event: Event) -> None:
        """`rig.events.run_event`: one more event of `run_id`; a line when it is due."""
        now = time.monotonic()
        began, count = self._began.get(run_id, (now, 0))
        self._began[run_id] = (began, count + 1)
        if now - began >= self.every_s and now - self._last >= self.every_s:
            self._last = now
            self.say(f"{self.case}: run {run_id} still streaming — {count + 1} events in {now - began:.0f} s")
