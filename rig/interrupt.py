"""Two-stage stop for long runs: the first Ctrl-C or SIGTERM asks the run to stop taking new work and finish
what is in flight (then write its reports and decide "undecided"); a second one stops at once, leaving an
evidence store that `rig report` can finish.

The work in flight has a grace: when it has not ended `grace_s` after the first signal, `GraceExpired` is raised
in the main thread, so the run abandons it (recorded as interrupted by the rig, which `--resume` runs again) and
still writes its reports."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
DEFAULT_GRACE_S = 120.0


class GraceExpired(BaseException):  # noqa: N818 - not an error of the run: the operator's stop, carried out
    """The work in flight outlived its grace after the first stop signal: it is abandoned, and its record says so."""


class StopRequest:
    """Set by the first signal; `reason` says which one, for the run's decision."""

    def __init__(self, grace_s: float | None = None) -> None:
        self.event = threading.Event()
        self.reason = ""
        self.grace_s = grace_s
        self.abandoned = ""  # what the grace cut short, for the run's decision
        self._armed = False

    def __bool__(self) -> bool:
        return self.event.is_set()

    def settle(self) -> None:
        """The work in flight has ended: the grace no longer runs."""
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._armed = False

    def _arm(self) -> None:
        if self.grace_s and threading.current_thread() is threading.main_thread():
            signal.setitimer(signal.ITIMER_REAL, self.grace_s)
            self._armed = True


@contextmanager
def graceful_stop(grace_s: float | None = None) -> Iterator[StopRequest]:
    """Inside the block, the first SIGINT/SIGTERM sets the yielded request (and, with `grace_s`, raises
    `GraceExpired` that long after unless the request is settled first); the second raises KeyboardInterrupt.
    Outside the main thread (where Python cannot install handlers) the request simply never fires."""
    request = StopRequest(grace_s)
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if request:
            raise KeyboardInterrupt(f"{signal.Signals(signum).name} again: stopping at once")
        request.reason = f"stopped by {signal.Signals(signum).name}: no new work was started after it"
        request.event.set()
        request._arm()
        grace = f" (at most {grace_s:g} s)" if grace_s else ""
        sys.stderr.write(f"\n{signal.Signals(signum).name}: finishing the work in flight{grace}, then the reports "
                         "(send it again to stop at once)\n")
        sys.stderr.flush()

    def expired(signum: int, frame: FrameType | None) -> None:
        if request._armed:
            request._armed = False
            raise GraceExpired(f"the work in flight did not end within {grace_s:g} s of the stop signal")

    previous = {s: signal.signal(s, handler) for s in _SIGNALS}
    previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, expired)
    try:
        yield request
    finally:
        request.settle()
        for s, h in previous.items():
            signal.signal(s, h)


def helper_thread(target: Callable[[], object], name: str) -> threading.Thread:
    """A started daemon thread that never takes SIGINT or SIGTERM. The kernel hands a process's signal to any thread
    not blocking it, and Python runs its handlers only in the main thread: a stop signal taken by a helper thread
    while the main thread waits in a system call is heard when that call returns — late, or never. Blocked here (the
    thread inherits the mask it is started under), they reach the main thread. A helper thread must not start
    processes that should take those signals: a child inherits the mask (the browser's driver unblocks its own)."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return thread

