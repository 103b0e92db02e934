"""Measurement off the hot path: what users measured is derived when the event loop has nothing else to do.

While a simulated user reads a stream it only stamps and keeps the raw events; typing them, deriving the
T-code rows (`rig.measure`, the one derivation) and recording them is queued here and runs in one greenlet of
the same process whenever the gevent loop is idle (`gevent.idle()`), so it never delays a read that is due.
The backlog is bounded: past `max_backlog` jobs the oldest is derived at once (counted in `inline`), so a
client that stays saturated degrades to today's inline cost instead of growing without end. The bound is small
(32): a live stream's backlog peaks under a dozen jobs, and a client that is never idle gains nothing from a long
one while each held run's events age into the collector's older generations — at 200 saturated users a backlog
of 200 cost 12 % more CPU per event than one of 32 (`bench/client_capacity.py`). `drain()` runs what is left; the
load run calls it when its users stop, before the last report, so nothing is lost.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

import gevent
import gevent.event

log = logging.getLogger("rig.load")
Job = Callable[[], None]


class Deriver:
    """A bounded queue of derivation jobs, run when the loop is idle."""

    def __init__(self, max_backlog: int = 32) -> None:
        self.max_backlog = max_backlog
        self._queue: deque[Job] = deque()
        self._wake = gevent.event.Event()
        self._worker: gevent.Greenlet | None = None
        self.done = 0  # jobs run in idle time or by a drain
        self.inline = 0  # jobs run at once because the backlog was full
        self.failed = 0
        self.peak = 0  # the largest backlog seen

    def submit(self, job: Job) -> None:
        """Queue a job; with the backlog full, first run the oldest one now."""
        if len(self._queue) >= self.max_backlog:
            self.inline += 1
            self._run(self._queue.popleft())
        self._queue.append(job)
        self.peak = max(self.peak, len(self._queue))
        if self._worker is None or self._worker.dead:
            self._worker = gevent.spawn(self._loop)
        self._wake.set()

    def drain(self) -> None:
        """Run every queued job now (the users have stopped: their rows must go out with the last report)."""
        while self._queue:
            self._run(self._queue.popleft())
            self.done += 1

    @property
    def backlog(self) -> int:
        return len(self._queue)

    def _loop(self) -> None:
        while True:
            if not self._queue:
                self._wake.clear()
                self._wake.wait()
                continue
            gevent.idle()  # only when no read, write or timer of any user is pending
            if self._queue:
                self._run(self._queue.popleft())
                self.done += 1

    def _run(self, job: Job) -> None:
        try:
            job()
        except Exception:  # a bug in a derivation must not take the users down: counted and logged
            self.failed += 1
            log.exception("deriving a run's measures failed")

