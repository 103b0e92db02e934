"""The chaos schedule file, in Chaos Toolkit's shape: a steady-state hypothesis, a method, rollbacks.

    title: tool errors and one restart
    steady-state-hypothesis:
      title: the target answers
      probes:
        - {name: target-ready, probe: ready}
        - {name: a-question-completes, probe: run_completes, timeout_s: 30}
    method:
      - {name: tool-errors, at: 5s, duration: 10s, fault: {via: target, point: internal_search, mode: error}}
      - {name: restart, at: 20s, fault: {via: restart, mode: kill}}
    rollbacks:
      - {name: clear-everything, action: clear_all}
    proxies: {llm_proxy: http://127.0.0.1:8090}    # network: the net proxy's control URL (rig chaos net-proxy)

The hypothesis is checked before the first fault and after the last one has ended; every timed fault is
rolled back when its window ends, and the rollbacks run at the end whatever happened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rig.clock import parse_duration
from rig.errors import ConfigError
from rig.faults import Fault
from rig.yamlfile import load_yaml_model


class Probe(BaseModel):
    """A steady-state check: `ready` (the readiness URL answers 200) or `run_completes` (one question completes)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    probe: Literal["ready", "run_completes"]
    timeout_s: float = Field(30.0, gt=0, le=600)


class Hypothesis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = "the target answers"
    probes: list[Probe] = Field(default_factory=lambda: [Probe(name="target-ready", probe="ready"),
                                                         Probe(name="a-question-completes", probe="run_completes")])


class Step(BaseModel):
    """One fault of the method: starts `at` seconds into the load run, lasts `duration` (a restart is instant)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    at_s: float = Field(alias="at", ge=0)
    duration_s: float = Field(0.0, alias="duration", ge=0)
    fault: Fault

    @field_validator("at_s", "duration_s", mode="before")
    @classmethod
    def _seconds(cls, v: object) -> object:
        return parse_duration(v) if isinstance(v, str) else v

    @property
    def ends_s(self) -> float:
        return self.at_s + self.duration_s


class Rollback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    action: Literal["clear_all"] = "clear_all"


class Schedule(BaseModel):
    """A whole schedule file."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    title: str
    description: str = ""
    hypothesis: Hypothesis = Field(default_factory=Hypothesis, alias="steady-state-hypothesis")
    method: list[Step] = Field(min_length=1)
    rollbacks: list[Rollback] = Field(default_factory=lambda: [Rollback(name="clear-everything")])
    proxies: dict[Literal["llm_proxy", "http_proxy", "network"], str] = Field(default_factory=dict)

    @field_validator("method")
    @classmethod
    def _unique(cls, steps: list[Step]) -> list[Step]:
        names = [s.name for s in steps]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"step names must be unique (repeated: {', '.join(sorted(dup))})")
        for s in steps:
            if s.fault.via == "restart" and s.duration_s:
                raise ValueError(f"step {s.name}: a restart has no duration (its window ends when the target is ready)")
            if s.fault.via != "restart" and not s.duration_s:
                raise ValueError(f"step {s.name}: give a duration, e.g. duration: 10s")
        return sorted(steps, key=lambda s: s.at_s)

    def check_fits(self, duration_s: float) -> None:
        """Every window must end before the load run does."""
        late = [s.name for s in self.method if s.ends_s >= duration_s]
        if late:
            raise ConfigError(f"chaos steps {', '.join(late)} end at or after the load run's {duration_s:g}s",
                              fix="move them earlier or run longer (--duration)")


def load_schedule(path: Path) -> Schedule:
    """Read and validate a schedule file; any problem is a ConfigError naming the place and the fix."""
    return load_yaml_model(path, Schedule, what="chaos schedule", flag="--chaos", shape_fix="see docs/chaos.example.yaml")
