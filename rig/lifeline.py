"""Children die with the rig, however it ends: a watchdog process holds a pipe from the rig and ends, when the
pipe closes, every process the rig registered with `guard()` that is still alive.

A pipe closes when its writer dies for any reason — a normal exit, an exception, SIGTERM, or a SIGKILL that
no handler sees — so an embedded workbench, Locust master and workers, proxies, a local Prometheus and browser
workers never outlive the rig that started them. `spawn()` starts each of them in a session of its own, so a
terminal's Ctrl-C reaches only the rig and never takes the target down under a case in flight. The watchdog
runs in its own session too, identifies each child by pid *and* start time (a reused pid is never signalled),
sends SIGTERM, and SIGKILL to whatever is left after a grace period.

    python -m rig.lifeline      # the watchdog; started by the first guard() of a process, never by hand
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, TypeVar

P = TypeVar("P", bound="subprocess.Popen[Any]")

GRACE_S = 5.0

_lock = threading.Lock()
_pipe: IO[bytes] | None = None
_owner: int | None = None  # the pid that started the watchdog (a forked child must start its own)


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), None when it is gone."""
    try:
        stat = open(f"/proc/{pid}/stat").read()  # noqa: SIM115 - tiny read, closed at once by CPython
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def spawn(argv: list[str], **popen: Any) -> subprocess.Popen[Any]:
    """Start a child of the rig in a session of its own, guarded: a Ctrl-C at the rig's terminal reaches only the
    rig (which then ends its children in order, after their last spans and reports), and the child still ends with
    the rig however the rig ends."""
    return guard(subprocess.Popen(argv, start_new_session=True, **popen))


def guard(proc: P) -> P:
    """Register a child the rig started: it is ended when the rig ends. Returns `proc`."""
    global _pipe, _owner
    started = start_time(proc.pid)
    if started is None:
        return proc
    with _lock:
        try:
            if _pipe is None or _owner != os.getpid():
                watchdog = subprocess.Popen([sys.executable, "-m", "rig.lifeline"], stdin=subprocess.PIPE,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            start_new_session=True)
                _pipe, _owner = watchdog.stdin, os.getpid()
            assert _pipe is not None
            _pipe.write(f"{proc.pid} {started}\n".encode())
            _pipe.flush()
        except (OSError, ValueError):  # no watchdog: the rig's own stop paths still end the child
            _pipe = None
    return proc


def _end(children: dict[int, str]) -> None:
    alive = {pid for pid, started in children.items() if start_time(pid) == started}
    for pid in alive:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if start_time(pid) == children[pid] and not _zombie(pid)}
        time.sleep(0.05)
    for pid in alive:
        _signal(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"  # noqa: SIM115
    except OSError:
        return True


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children: dict[int, str] = {}
    for line in sys.stdin.buffer:  # ends when the rig's end of the pipe closes, however the rig ended
        pid, _, started = line.decode().strip().partition(" ")
        if pid.isdigit() and started:
            children[int(pid)] = started
    _end(children)


if __name__ == "__main__":
    main()
