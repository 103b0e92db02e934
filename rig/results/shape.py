"""A load run's shape: the stages of users (k6's ramping stages) and where each lies on the run's time axis."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field


class Stage(BaseModel):
    """Ramp to `target` users over `duration_s` seconds."""

    duration_s: float = Field(gt=0)
    target: int = Field(ge=0)


class StageMark(BaseModel):
    """One stage on the run's time axis (ms since the epoch): load.json's `stages`, the report's marks."""

    index: int
    start_ms: float
    end_ms: float
    from_users: int
    to_users: int


class ShapeControl(BaseModel):
    """The file a steered shape reads each tick (`rig capacity` writes it): users, spawn rate, the search's step, and
    whether to end the run."""

    users: int = 0
    spawn_rate: float = 1.0
    step: int = 0
    stop: bool = False


class ShapeSpec(BaseModel):
    """The stages of a run, or (`control`) a file the rig rewrites: `{"users": n, "spawn_rate": r, "step": k,
    "stop": bool}`."""

    stages: list[Stage] = Field(default_factory=list)
    control: str | None = None

    @property
    def duration_s(self) -> float:
        return sum(s.duration_s for s in self.stages)

    @property
    def max_users(self) -> int:
        return max((s.target for s in self.stages), default=0)

    def users_at(self, t: float) -> tuple[int, float]:
        """Users wanted `t` seconds in, and the spawn rate that keeps up with the ramp (the last target after the
        end)."""
        before, start = 0, 0.0
        for stage in self.stages:
            if t < start + stage.duration_s:
                slope = (stage.target - before) / stage.duration_s
                return round(before + slope * (t - start)), max(1.0, math.ceil(abs(slope)))
            before, start = stage.target, start + stage.duration_s
        return before, 1.0

    def stage_at(self, t: float) -> int:
        """The stage `t` seconds in (1 for the first; the last after the end; 0 without stages)."""
        start = 0.0
        for i, stage in enumerate(self.stages):
            if t < start + stage.duration_s:
                return i + 1
            start += stage.duration_s
        return len(self.stages)

    def marks(self, started_ms: float) -> list[StageMark]:
        out, before, at = [], 0, started_ms
        for i, stage in enumerate(self.stages):
            end = at + stage.duration_s * 1000
            out.append(StageMark(index=i + 1, start_ms=at, end_ms=end, from_users=before, to_users=stage.target))
            before, at = stage.target, end
        return out
