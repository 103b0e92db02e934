"""`rig capacity`'s result (capacity.json): each step of offered load as judged, what saturated, and the answer."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

StepCall = Literal["holds", "breaks", "unclear", "client_saturated", "collapsed"]


class SloCheck(BaseModel):
    """One threshold against one step: the observed value and its interval (same unit), and the call."""

    text: str
    key: str
    observed: float | None
    low: float | None = None
    high: float | None = None
    unit: str = ""
    samples: int = 0
    call: Literal["holds", "breaks", "unclear"] = "unclear"


class ResourceReading(BaseModel):
    """A resource during one step: its peak use, its limit where known, and when it first reached it."""

    name: str
    source: str  # "target /metrics", "process" (psutil, local target), "client"
    peak: float | None = None
    limit: float | None = None
    unit: str = ""
    at_limit: bool = False
    first_at_limit_ms: float | None = None


class ClientHealth(BaseModel):
    """How hard the load generators worked during a step: a saturated client measures itself, not the target."""

    cpu_peak_pct: float | None = None  # the busiest Locust process's CPU share (% of one core)
    loop_lag_p95_ms: float | None = None  # gevent loop lag: how late a 200 ms sleep woke
    processes: int = 0
    saturated: bool = False
    why: str = ""
    past_limits_ms: list[tuple[float, float]] = Field(default_factory=list)  # seconds a process was past a limit


class CapacityStep(BaseModel):
    index: int
    users: int
    started_ms: float
    window_start_ms: float  # after the warm-up
    window_end_ms: float
    runs: int = 0  # runs submitted in the window (each judged once it ended)
    completed: int = 0
    unfinished: int = 0  # submitted in the window and never ended: lost, counted as errors
    throughput_rps: float = 0.0
    error_ratio: float | None = None
    error_low: float | None = None
    error_high: float | None = None
    slos: list[SloCheck] = Field(default_factory=list)
    resources: list[ResourceReading] = Field(default_factory=list)
    client: ClientHealth = Field(default_factory=ClientHealth)
    call: StepCall = "unclear"
    why: str = ""


class Overload(BaseModel):
    """Past capacity and back: an overload step, then a step at the load that held."""

    users: int
    refused: int = 0  # submissions refused (429/503): load shed
    runs: int = 0  # runs submitted in the overload window
    shed_ratio: float = 0.0  # refused ÷ (refused + runs)
    lost_runs: int = 0  # runs of the overload window that never ended
    errors: dict[str, int] = Field(default_factory=dict)  # other failures in the window, by reason
    overload_call: str = ""
    recovered_at_users: int = 0
    recovery_s: float | None = None  # from the lighter step's start to the first run within every SLO
    recovery_call: str = ""
    checks: list[SloCheck] = Field(default_factory=list)  # the policy's overload.* and recovery_s thresholds


class CapacityResult(BaseModel):
    """The search: steps in the order run, the highest load that held, and what broke first above it."""

    unit: Literal["users"] = "users"
    confidence: float = 0.90
    thresholds: list[str] = Field(default_factory=list)
    steps: list[CapacityStep] = Field(default_factory=list)
    holds: int | None = None  # the highest offered load every SLO held at, with `confidence`
    breaks: int | None = None  # the lowest offered load that did not hold
    first_broken: list[str] = Field(default_factory=list)  # at `breaks`: the SLOs that broke
    saturating: str | None = None  # the first resource to reach its limit as load rose
    saturating_at: int | None = None  # … at this many users
    verdict: Literal["found", "above_max", "undecided"] = "undecided"
    required: int | None = None  # `--require N`: the release must hold at least this many
    answer: str = ""
    stopped_because: str = ""
    overload: Overload | None = None
