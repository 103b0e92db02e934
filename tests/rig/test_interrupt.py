"""The stop signals reach the main thread: the rig's helper threads block them (a handler runs only in the main
thread, and a signal a helper took while the main thread waited in a call would wait with it)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

from rig.interrupt import helper_thread


def blocked_signals(status: Path) -> set[int]:
    """The signals a task blocks, from its /proc status (SigBlk, a hex mask: bit n-1 is signal n)."""
    mask = next(int(line.split()[1], 16) for line in status.read_text().splitlines() if line.startswith("SigBlk:"))
    return {n for n in range(1, 65) if mask >> (n - 1) & 1}


def test_a_helper_thread_leaves_the_stop_signals_to_the_main_thread() -> None:
    seen: dict[str, set[int]] = {}
    ready, done = threading.Event(), threading.Event()

    def helper() -> None:
        seen["helper"] = blocked_signals(Path(f"/proc/self/task/{threading.get_native_id()}/status"))
        ready.set()
        done.wait(10)

    thread = helper_thread(helper, "test-helper")
    try:
        assert ready.wait(10) and thread.daemon and thread.name == "test-helper"
        assert {signal.SIGINT, signal.SIGTERM} <= seen["helper"], seen
        main = blocked_signals(Path(f"/proc/self/task/{threading.get_native_id()}/status"))
        assert signal.SIGINT not in main and signal.SIGTERM not in main, "the main thread's mask is as it was"
    finally:
        done.set()
        thread.join(10)
