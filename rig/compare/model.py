"""What `rig compare` finds between a base run and a new one: `compare.json` is this model."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from rig.compare.stats import Shift

Decision = Literal["regressed", "no regression", "not comparable"]


class Difference(BaseModel):
    """A setting in which the two runs differ; `blocking` ones make them not comparable at all; `environment` ones
    say only where the run happened (an embedded target's free port, the machine) and are listed apart."""

    field: str
    base: Any  # the setting's value as the run's own files hold it (a manifest field, a plan value)
    new: Any
    unit: str = ""  # s, users, /s …
    blocking: bool = False
    environment: bool = False
    caveat: bool = False  # would block, compared anyway because the user asked (`rig compare --anyway`)


class OfferedLoad(BaseModel):
    """How a load run offered its load, read from its plan and load.json: what two loads must share to compare."""

    users: int | None = None
    workers: int | None = None
    duration_s: float | None = None
    arrival: str | None = None  # closed, constant, poisson
    rate_per_s: float | None = None  # open loop only
    think_min_s: float | None = None  # closed loop only
    think_max_s: float | None = None
    weights: dict[str, int] = Field(default_factory=dict)  # the mix of actions
    stages: list[str] = Field(default_factory=list)  # `--shape`: each stage as `seconds:users`
    answer_events: int | None = None  # the answer budget
    answer_seconds: float | None = None

    def comparable_settings(self) -> dict[str, tuple[object, str]]:
        """The settings that decide what the target was asked to do, by name: (value, unit)."""
        closed = self.arrival in (None, "closed")
        think = f"{self.think_min_s:g}-{self.think_max_s:g}" if closed and self.think_min_s is not None \
            and self.think_max_s is not None else None
        return {"load.arrival": (self.arrival, ""), "load.users": (self.users, "users"),
                "load.rate": (None if closed else self.rate_per_s, "/s"), "load.think": (think, "s"),
                "load.mix": (", ".join(f"{k} {v}" for k, v in sorted(self.weights.items()) if v) or None, "weights"),
                "load.shape": (",".join(self.stages) or None, "s:users"),
                "load.answer_budget": (f"{self.answer_events} events / {self.answer_seconds:g}"
                                       if self.answer_events is not None and self.answer_seconds is not None else None,
                                       "s")}


class Throughput(BaseModel):
    """Completed runs per second of both runs, and whether they compare (only at the same offered load)."""

    base_rps: float
    new_rps: float
    comparable: bool
    why: str = ""


class VerdictChange(BaseModel):
    case: str  # record id (`可靠性-20-1`), or a case-turn of a quality run
    item: str | None = None  # None: the case verdict itself
    base: str | None
    new: str | None
    base_reason: str = ""
    new_reason: str = ""
    worse: bool = False  # PASS → FAIL/U/BLOCKED, or a new FAIL


class TCodeComparison(BaseModel):
    code: str
    source: str
    unit: str
    n_base: int
    n_new: int
    cliffs_delta: float | None = None  # P(new > base) − P(new < base)
    shifts: list[Shift] = Field(default_factory=list)


class RateComparison(BaseModel):
    """A share of runs (failed runs, or one end reason) in both runs and a two-proportion test."""

    name: str
    base: int
    base_runs: int
    new: int
    new_runs: int
    p_value: float | None = None
    call: Literal["regressed", "improved", "no evidence", "not enough samples"] = "not enough samples"


class CapacityComparison(BaseModel):
    """Two capacity searches: each one's bracket (held, broke), the shift of what the new release holds, its range
    from both brackets, and the call (`rig.compare.capacity`)."""

    unit: str = "users"
    base_holds: int | None = None
    base_breaks: int | None = None
    new_holds: int | None = None
    new_breaks: int | None = None
    shift: float | None = None  # new holds ÷ base holds − 1
    low: float | None = None  # the shift's range: None where a search found no upper end (above its highest step)
    high: float | None = None
    call: Literal["fewer", "more", "same", "not comparable"] = "not comparable"
    why: str = ""
    base_answer: str = ""
    new_answer: str = ""


class Comparison(BaseModel):
    """One part compared (a gate, load or quality run); a pre-release run has one per part."""

    part: str
    base_dir: str
    new_dir: str
    kind: str
    differences: list[Difference] = Field(default_factory=list)
    verdict_changes: list[VerdictChange] = Field(default_factory=list)
    tcodes: list[TCodeComparison] = Field(default_factory=list)
    rates: list[RateComparison] = Field(default_factory=list)
    throughput: Throughput | None = None
    capacity: CapacityComparison | None = None  # two capacity searches: what each holds (T-codes mix steps)
    tokens_and_cost: list[TCodeComparison] = Field(default_factory=list)


class CompareSettings(BaseModel):
    anyway: bool = False  # compare runs whose offered load, schedule or policy differ, each difference a caveat
    alpha: float = 0.05  # two-sided: a shift is real when the (1 − α) interval excludes zero
    min_rel: float = 0.10  # the smallest shift that matters, relative to the base value …
    min_abs_ms: float = 50.0  # … and in milliseconds for time codes (the larger of the two applies)
    resamples: int = 1000
    seed: int = 0


class CompareResult(BaseModel):
    base: str
    new: str
    settings: CompareSettings
    decision: Decision
    reasons: list[str]
    parts: list[Comparison]
