"""The chaos part of a load run's result, typed: what a chaos schedule's analysis hands the rig.

The analysis itself lives with the schedules (`chaos.analysis`); the rig reads only this shape, in
load.json (`LoadSummary.chaos`), the report's chaos section, the prerelease numbers and `rig load`'s summary.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rig.jsonvalue import JsonObject


class Percentiles(BaseModel):
    n: int
    p50: float | None = None
    p95: float | None = None


class Delta(BaseModel):
    p50: float | None = None
    p95: float | None = None


class Shift(BaseModel):
    """A T-code inside a window (or after it) against the runs that ended before the first fault."""

    window: Percentiles
    baseline: Percentiles
    delta: Delta


class Retained(BaseModel):
    """Answers committed before a restart, read back after it."""

    checked: int
    present: int | None = None
    lost: int | None = None
    lost_messages: list[str] = Field(default_factory=list)
    error: str | None = None  # why they could not be read back


class ResumedRun(BaseModel):
    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

    origin: str = Field(alias="from")  # the interrupted run
    run: str  # the run linked to it (T9)
    end: str | None = None


class ChaosWindow(BaseModel):
    """One step of the schedule as the load saw it: errors and shifts inside, recovery after."""

    step: str
    fault: str  # `via point/mode`
    via: str
    started_ms: float
    ended_ms: float
    seconds: float
    error: str | None = None  # the channel failed to apply or roll back the fault
    applied: JsonObject | None = None  # what the channel reported (a restart's record, a proxy's rule id)
    rolled_back: JsonObject | None = None
    trace_id: str | None = None
    runs_in_flight: int
    ends_in_window: dict[str, int]
    errors_in_window: dict[str, int]
    T4_shift_ms: Shift
    T5_shift_ms: Shift
    T4_after_ms: Shift  # runs submitted after the window closed: the fault's effect must be gone there
    recovery_s: float | None = None  # first completed run after the window (after a restart: from the kill)
    first_good_run: str | None = None
    # restarts only
    ready_s: float | None = None
    interrupted: int | None = None  # runs in flight recorded interrupted/server_restart
    interrupted_runs: list[str] = Field(default_factory=list)
    lost: int | None = None  # runs in flight that broke with no terminal state recorded
    lost_runs: list[str] = Field(default_factory=list)
    other_ends: dict[str, int] = Field(default_factory=dict)
    resumed: list[ResumedRun] = Field(default_factory=list)
    committed: Retained | None = None


class Window(BaseModel):
    """One chaos step as it happened: when its fault was in force and what the channel reported."""

    step: str
    via: str
    point: str
    mode: str
    planned_at_s: float
    planned_duration_s: float
    started_ms: float | None = None
    ended_ms: float | None = None
    applied: JsonObject = {}  # what the channel reported, kept unread (ready_s after a restart)
    rolled_back: JsonObject = {}
    error: str | None = None
    trace_id: str | None = None


class ProbeResult(BaseModel):
    """One steady-state probe of the schedule's hypothesis."""

    name: str
    probe: str
    ok: bool
    ms: float
    detail: str = ""


class ChaosAnalysis(BaseModel):
    """Every window of a schedule, its hypothesis checked before and after, and what was rolled back."""

    windows: list[ChaosWindow] = Field(default_factory=list)
    hypothesis: dict[str, list[ProbeResult]] = Field(default_factory=dict)  # "before" / "after"
    baseline_runs: int = 0
    rollbacks: list[JsonObject] = Field(default_factory=list)  # what each channel cleared, as it said
    metrics_url: str | None = None  # where `rig_chaos_*` were served
    push_error: str | None = None  # the Pushgateway refused the counters
