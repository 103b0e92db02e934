"""Waiting on a condition with a deadline (never a bare sleep standing in for synchronisation)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T], timeout_s: float, interval_s: float = 0.02) -> T | None:
    """Call `check` until it returns a truthy value (returned) or the deadline passes (None)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval_s)


def wait_while_moving(check: Callable[[], T], progress: Callable[[], object], stall_s: float,
                      interval_s: float = 0.05) -> T | None:
    """Like `wait_until`, but the deadline is `stall_s` without progress: it restarts whenever `progress()`
    returns something new, so a slow target that keeps moving is waited for and a stuck one is not."""
    seen = progress()
    moved = time.monotonic()
    while True:
        value = check()
        if value:
            return value
        now = progress()
        if now != seen:
            seen, moved = now, time.monotonic()
        elif time.monotonic() - moved >= stall_s:
            return None
        time.sleep(interval_s)
