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
    base: Any
    new: Any
    blocking: bool = False
    environment: bool = False


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
    throughput: dict[str, Any] | None = None
    capacity: CapacityComparison | None = None  # two capacity searches: what each holds (T-codes mix steps)
    tokens_and_cost: list[TCodeComparison] = Field(default_factory=list)


class CompareSettings(BaseModel):
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
