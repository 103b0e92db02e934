"""A soak run's drift (load.json's `soak`): per resource, the slope over the hold with its interval."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Slope(BaseModel):
    """How one series moved over the soak (after its warm-up), per hour or per question of a session: the
    least-squares slope and its bootstrap interval, against the policy's bound for it."""

    key: str  # the policy key: soak.rss_mb_per_h, soak.fds_per_h, soak.slots_per_h, soak.T4_ms_per_turn, …
    series: str
    unit: str
    per: Literal["h", "turn"] = "h"  # what the slope is per: an hour of the hold, or a question of the session
    points: int
    slope: float | None = None  # `unit` per `per`
    low: float | None = None
    high: float | None = None
    bound: float | None = None  # the most per `per` the policy allows
    call: Literal["flat", "drifts", "unclear", "no data"] = "no data"
    why: str = ""
    machine: str = ""  # set when the slope drifted but the machine was not steady: why the call is unclear
    # for the report's plot: the points (x in seconds into the hold, or the question of the session; at most
    # PLOT_POINTS, evenly thinned) and the fitted line's two ends over all of them
    plot: list[tuple[float, float]] = Field(default_factory=list)
    fit: list[tuple[float, float]] = Field(default_factory=list)


class Environment(BaseModel):
    """What the machine did beside the load over a soak's hold (cores' worth of CPU)."""

    cores: int | None = None
    others_first: float | None = None  # the others' mean over the hold's first third
    others_last: float | None = None  # and over its last third
    in_use_share: float | None = None  # busy and stolen, of all cores, over the hold
    steady: bool = True
    why: str = ""


class SoakAnalysis(BaseModel):
    warmup_s: float
    hold_s: float
    slopes: list[Slope] = Field(default_factory=list)
    environment: Environment | None = None  # the machine beside the load (rig.load.environment)

    @property
    def drifting(self) -> list[Slope]:
        return [s for s in self.slopes if s.call == "drifts"]
