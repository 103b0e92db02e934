"""Open-loop arrivals: sessions start on a schedule (constant or Poisson, seeded), not when a user is free.

Each process owns a share of the rate; times are measured from the scheduled send, and the gap to the
actual send is reported as send lag, so a slow target shows up as lag instead of hiding (no
coordinated omission).
"""

from __future__ import annotations

import random
import time


class ArrivalSchedule:
    """Scheduled send times (monotonic ns) for one process."""

    def __init__(self, kind: str, rate_per_s: float, seed: int, share: int = 0, shares: int = 1) -> None:
        if rate_per_s <= 0:
            raise ValueError("the arrival rate must be positive")
        self.kind = kind
        self.rate = rate_per_s / max(shares, 1)
        self.rng = random.Random(seed * 1000 + share)
        self.next_ns: int | None = None

    def take(self) -> int:
        """The next scheduled send time; the first one is now."""
        now = time.perf_counter_ns()
        if self.next_ns is None:
            self.next_ns = now
        scheduled = self.next_ns
        self._advance()
        return scheduled

    def unsent(self, until_ns: int) -> list[int]:
        """Scheduled sends up to `until_ns` that no user took (the run ended with them still queued)."""
        out: list[int] = []
        while self.next_ns is not None and self.next_ns <= until_ns:
            out.append(self.next_ns)
            self._advance()
        return out

    def _advance(self) -> None:
        assert self.next_ns is not None
        gap_s = self.rng.expovariate(self.rate) if self.kind == "poisson" else 1.0 / self.rate
        self.next_ns += int(gap_s * 1e9)
