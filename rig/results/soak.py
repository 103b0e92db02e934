"""A soak run's drift (load.json's `soak`): per resource, the slope over the hold with its interval."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Slope(BaseModel):
    """How one series moved per hour over the soak (after its warm-up): the least-squares slope and its
    bootstrap interval, against the policy's bound for it."""

    key: str  # the policy key: soak.rss_mb_per_h, soak.fds_per_h, soak.slots_per_h, soak.T4_ms_per_h, …
    series: str
    unit: str
    points: int
    per_hour: float | None = None
    low: float | None = None
    high: float | None = None
    bound: float | None = None  # the most per hour the policy allows
    call: Literal["flat", "drifts", "unclear", "no data"] = "no data"
    why: str = ""


class SoakAnalysis(BaseModel):
    warmup_s: float
    hold_s: float
    slopes: list[Slope] = Field(default_factory=list)

    @property
    def drifting(self) -> list[Slope]:
        return [s for s in self.slopes if s.call == "drifts"]
