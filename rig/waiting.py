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
