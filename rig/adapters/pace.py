"""Pacing against a target's rate limit: a request answered 429 is sent again after the target's Retry-After, or a
bounded back-off when it names none, until a budget is spent; then the 429 stands (the caller decides what it
means). Gates, quality runs and setups pace themselves (a stock rate limit is the deployment's own, not a failure
to report); a load run's users do not (there a 429 is load shed, and counts)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

BACKOFF_S = (2.0, 4.0, 8.0, 16.0, 32.0)  # without Retry-After: 62 s in all covers a per-minute window
RETRY_AFTER_CAP_S = 60.0  # the longest one Retry-After is waited for


@dataclass
class RatePace:
    """How long the rig waits on 429s (per request, at most `budget_s`), and how long it has waited in all."""

    budget_s: float = sum(BACKOFF_S)
    sleep: Callable[[float], None] = time.sleep
    waited_s: float = 0.0
    waits: int = 0
    by_op: dict[str, int] = field(default_factory=dict)

    def next_wait(self, attempt: int, retry_after_s: float | None, spent_s: float) -> float | None:
        """Seconds to wait before try `attempt + 1` of a request answered 429, None when the budget is spent."""
        wait = min(retry_after_s, RETRY_AFTER_CAP_S) if retry_after_s is not None else (
            BACKOFF_S[attempt] if attempt < len(BACKOFF_S) else None)
        if wait is None or spent_s + wait > self.budget_s + 1e-9:
            return None
        return wait

    def wait(self, op: str, seconds: float) -> None:
        self.waits += 1
        self.waited_s += seconds
        self.by_op[op] = self.by_op.get(op, 0) + 1
        self.sleep(seconds)
