"""A load run's result, typed: `load.json` (JSON Schema docs/schemas/load.schema.json) and its parts.

`rig.load` computes it (`rig.load.summary.load_summary`); the report, the gate's thresholds, the prerelease
numbers and `rig compare` read it. Nothing here computes: these are the shapes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rig.measure.aggregate import TCodeStats
from rig.measure.thresholds import ThresholdCheck
from rig.results.capacity import ClientHealth
from rig.results.chaos import ChaosAnalysis
from rig.results.shape import StageMark
from rig.results.soak import SoakAnalysis
from rig.stats import summarize

EventKind = Literal["joined", "missing", "returned", "stopped", "left"]


class WorkerEvent(BaseModel):
    at_ms: float
    kind: EventKind
    detail: str = ""


class WorkerRecord(BaseModel):
    """One worker as its master saw it."""

    worker_id: str  # Locust's client id (`<hostname>_<uuid>`)
    host: str
    joined_ms: float | None = None
    first_report_ms: float | None = None
    last_report_ms: float | None = None
    last_heard_ms: float | None = None  # last report or heartbeat
    reports: int = 0
    rows: int = 0  # rig rows merged from its reports (T-codes, errors, send lag)
    requests: int = 0  # HTTP requests merged from its reports (T-code rows excluded)
    failures: int = 0
    state: str = "ready"  # the last state seen: ready, spawning, running, missing, stopped, left
    lost_ms: float | None = None  # first time the master marked it missing
    silent_since_ms: float | None = None  # when the master had last heard from it, at that loss
    returned_ms: float | None = None  # when a missing worker was heard again
    events: list[WorkerEvent] = Field(default_factory=list)

    @property
    def lost(self) -> bool:
        """Lost at some point of the run (back later or not), or gone before the run ended."""
        return self.lost_ms is not None or self.state == "left"


class Spread(BaseModel):
    count: int = 0
    p50: float | None = None
    p99: float | None = None
    max: float | None = None


class ReplayFidelity(BaseModel):
    """`load.json["replay"]`: the offered load's fidelity to its source."""

    source_sha256: str
    source_format: str
    speed: float
    sessions: int
    turns_planned: int
    turns_sent: int
    arrival_error_ms: Spread = Field(default_factory=Spread)
    inter_arrival_error_ms: Spread = Field(default_factory=Spread)
    sequences_equal: bool
    sessions_differing: list[str] = Field(default_factory=list)


Phase = Literal["steady", "in_fault", "recovery"]


PHASES: tuple[Phase, ...] = ("steady", "in_fault", "recovery")


class WindowSpan(BaseModel):
    """One injected fault window and the recovery after it (times are wall ms)."""

    step: str
    fault: str
    started_ms: float
    ended_ms: float
    recovered_ms: float | None = None  # when the first run submitted after the window completed
    recovery_s: float | None = None  # from the window's end to that run's end; None when none completed


class PhaseStats(BaseModel):
    """What happened in one phase: runs and how they ended, the error ratio, the T-codes."""

    runs: int = 0
    completed: int = 0
    failed: int = 0
    attempts: int = 0
    error_ratio: float | None = None  # failed ÷ attempts; None with no attempt in the phase
    end_states: dict[str, int] = Field(default_factory=dict)
    errors_by_reason: dict[str, int] = Field(default_factory=dict)
    t_codes: dict[str, TCodeStats] = Field(default_factory=dict)


class FaultPhases(BaseModel):
    """`load.json["phases"]`: the run split by cause, and each window's recovery."""

    windows: list[WindowSpan] = Field(default_factory=list)
    steady: PhaseStats = Field(default_factory=PhaseStats)
    in_fault: PhaseStats = Field(default_factory=PhaseStats)
    recovery: PhaseStats = Field(default_factory=PhaseStats)

    def recovery_ms(self) -> list[float]:
        return [w.recovery_s * 1000 for w in self.windows if w.recovery_s is not None]


class LocustRow(BaseModel):
    type: str
    name: str
    requests: int
    failures: int


class LocustTotals(BaseModel):
    """Locust's stats rows: HTTP requests (by operation) and, apart, the T-code rows the users fired."""

    requests: int = 0
    failures: int = 0
    rows: list[LocustRow] = Field(default_factory=list)
    tcode_rows: list[LocustRow] = Field(default_factory=list)


class SendLag(BaseModel):
    count: int
    p50: float | None = None
    p99: float | None = None
    max: float | None = None


class LoadSummary(BaseModel):
    """What `rig load` measured; thresholds read `t_codes`, `error_ratio`, `throughput_rps` and `send_lag`."""

    t_codes: dict[str, TCodeStats]
    by_source: dict[str, dict[str, TCodeStats]]
    throughput_rps: float  # completed runs per second of the run's duration
    runs: int
    completed_runs: int
    delivered_runs: int | None = None  # completed runs whose answer also arrived whole on the stream
    tokens_out_per_s: float | None = None  # output tokens of the completed runs per second of the run (pace_measures)
    requests: int  # HTTP requests Locust made (the T-code rows excluded)
    requests_per_s: float  # requests ÷ duration_s
    error_ratio: float  # tasks that did not finish ÷ every task attempted (rig.measure.tally)
    rig_errors: int = 0  # tasks the rig itself broke: the run is undecided, never passed
    phases: FaultPhases = Field(default_factory=FaultPhases)  # the same apart: steady, in fault windows, recovery
    thresholds: list[ThresholdCheck] = Field(default_factory=list)  # the policy's, each with what was observed
    errors_by_reason: dict[str, int]
    login_failures: int
    end_states: dict[str, int]
    send_lag: SendLag
    workers: int
    users: int
    duration_s: float
    samples_by_origin: dict[str, int]
    locust: LocustTotals
    chaos: ChaosAnalysis | None = None  # the chaos plug-in's per-window analysis, when a schedule ran
    replay: ReplayFidelity | None = None  # `--replay`: the offered load's fidelity to its source
    worker_nodes: list[WorkerRecord] = Field(default_factory=list)  # distributed runs: each worker as the master saw it
    stages: list[StageMark] = Field(default_factory=list)  # `--shape`: each stage on the run's time axis
    soak: SoakAnalysis | None = None  # `--soak`: each resource's slope over the hold
    client: ClientHealth | None = None  # the load generators' own headroom over the run (CPU share, loop lag)

    @property
    def lost_workers(self) -> list[WorkerRecord]:
        return [w for w in self.worker_nodes if w.lost]


def recovery_stats(phases: FaultPhases) -> dict[str, float | None]:
    """`recovery_s.p95` and `recovery_s.max` (in ms, like every time a threshold compares) over the windows."""
    s = summarize(phases.recovery_ms())
    return {"recovery_s.p95": s.p95, "recovery_s.max": s.max}


def observed_for_policy(summary: LoadSummary) -> dict[str, float | None]:
    """Keys thresholds are written against: `T4.p95@20`, `error_rate@20` and the same without `@users`."""
    out: dict[str, float | None] = {}
    for code, entry in summary.t_codes.items():
        for stat in ("p50", "p90", "p95", "p99", "max", "mean", "count"):
            out[f"{code}.{stat}"] = getattr(entry, stat)
    out["error_rate"] = summary.error_ratio
    for phase in ("steady", "in_fault", "recovery"):
        out[f"error_rate.{phase}"] = getattr(summary.phases, phase).error_ratio
    out.update(recovery_stats(summary.phases))
    out["throughput"] = summary.throughput_rps
    out["tokens_out_per_s"] = summary.tokens_out_per_s
    out["send_lag.p50"] = summary.send_lag.p50
    out["send_lag.p99"] = summary.send_lag.p99
    for slope in summary.soak.slopes if summary.soak else []:  # the low end: a threshold fails only on a sure drift
        out[slope.key] = slope.low
    for key in list(out):
        out[f"{key}@{summary.users}"] = out[key]
    return out
