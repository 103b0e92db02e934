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
        gap_s = self.rng.expovariate(self.rate) if self.kind == "poisson" else 1.0 / self.rate
        self.next_ns = scheduled + int(gap_s * 1e9)
        return scheduled
