"""Two-stage stop for long runs: the first Ctrl-C or SIGTERM asks the run to stop taking new work and finish
what is in flight (then write its reports and decide "undecided"); a second one stops at once, leaving an
evidence store that `rig report` can finish."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Set by the first signal; `reason` says which one, for the run's decision."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reason = ""

    def __bool__(self) -> bool:
        return self.event.is_set()


@contextmanager
def graceful_stop() -> Iterator[StopRequest]:
    """Inside the block, the first SIGINT/SIGTERM sets the yielded request; the second raises KeyboardInterrupt.
    Outside the main thread (where Python cannot install handlers) the request simply never fires."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if request:
            raise KeyboardInterrupt(f"{signal.Signals(signum).name} again: stopping at once")
        request.reason = f"stopped by {signal.Signals(signum).name}: no new work was started after it"
        request.event.set()
        sys.stderr.write(f"\n{signal.Signals(signum).name}: finishing the work in flight, then the reports "
                         "(send it again to stop at once)\n")
        sys.stderr.flush()

    previous = {s: signal.signal(s, handler) for s in _SIGNALS}
    try:
        yield request
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
