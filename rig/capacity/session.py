"""`rig capacity` end to end: a load run whose users the rig steers step by step (a Locust shape on the master),
each step judged as it ends, the search bracketing and bisecting, and the answer kept in the run's evidence store
(meta `capacity`) so the run's one finish — live or `rig report` — writes capacity.json and its report."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel, Field, field_validator, model_validator

from rig import events
from rig.capacity.judge import judge_step
from rig.capacity.overload import is_overload_threshold, judge_overload
from rig.capacity.saturation import SaturationSampler
from rig.capacity.search import capacity_search, conclude
from rig.clock import parse_duration
from rig.errors import ConfigError
from rig.load.context import LoadContext
from rig.load.headroom import CPU_LIMIT_PCT, LAG_LIMIT_MS, client_health
from rig.load.options import LoadOptions
from rig.load.session import LoadResult, run_load
from rig.load.stages import write_control
from rig.measure.thresholds import Threshold
from rig.policy import Decision, load_policy
from rig.results.capacity import CapacityResult, CapacityStep
from rig.results.shape import ShapeSpec
from rig.run.flags import Flag
from rig.waiting import wait_while_moving

CONTROL_FILE = "shape-control.json"
Progress = Callable[[str, float, float], None]


class CapacityOptions(BaseModel):
    """What `rig capacity` was asked: the load it offers (closed-loop researchers) and how it searches."""

    PANEL: ClassVar[str] = "Search"
    RANK: ClassVar[int] = 30
    load: LoadOptions = Field(default_factory=LoadOptions)
    start: Annotated[int, Field(ge=1), Flag("Users of the first step.")] = 1
    max_users: Annotated[int, Field(ge=1), Flag("The most users a step offers.")] = 64
    step_s: Annotated[float, Field(gt=0), Flag("Each step's length, its warm-up included.", names=("--step",),
                                               cli_type=str, cli_default="30s")] = 30.0
    warmup_s: Annotated[float, Field(ge=0), Flag("The start of each step left out of its judgement.",
                                                 names=("--warmup",), cli_type=str, cli_default="10s")] = 10.0
    max_steps: Annotated[int, Field(ge=1), Flag("The most steps the search runs.")] = 12
    max_extensions: int = Field(6, ge=0)  # how many more lengths an undecided step may run for
    budget_s: Annotated[float, Field(gt=0), Flag("The whole search's time limit.", names=("--budget",), cli_type=str,
                                                 cli_default="15m")] = 900.0
    confidence: Annotated[float, Field(gt=0.5, lt=1.0), Flag(
        "Confidence of each step's call (interval of its SLOs).")] = 0.90
    cpu_limit_pct: Annotated[float, Field(gt=0), Flag(
        "A Locust process past this CPU share (% of a core) makes its step undecided.",
        names=("--client-cpu-limit",))] = CPU_LIMIT_PCT
    lag_limit_ms: Annotated[float, Field(gt=0), Flag(
        "An event loop waking this late (p95) makes its step undecided.", names=("--client-lag-limit",),
        cli_type=str, cli_default="50ms")] = LAG_LIMIT_MS
    required: Annotated[int | None, Field(ge=1), Flag(
        "Fail (exit 1) when the deployment holds fewer researchers than this.", names=("--require",))] = None
    overload: bool = True  # after the search: a step past capacity, then one at what held (shedding, recovery)
    overload_factor: float = Field(2.0, gt=1.0)  # the overload step offers this many times the load that broke

    @field_validator("step_s", "warmup_s", "budget_s", mode="before")
    @classmethod
    def _seconds(cls, v: object) -> object:
        return parse_duration(v) if isinstance(v, str) else v

    @field_validator("lag_limit_ms", mode="before")
    @classmethod
    def _ms(cls, v: object) -> object:
        return parse_duration(v) * 1000 if isinstance(v, str) else v

    @model_validator(mode="after")
    def _window(self) -> CapacityOptions:
        if self.warmup_s >= self.step_s:
            raise ValueError(f"--warmup {self.warmup_s:g}s leaves nothing of a {self.step_s:g}s step to judge")
        if self.start > self.max_users:
            raise ValueError(f"--start {self.start} is above --max-users {self.max_users}")
        return self


class CapacityRun(BaseModel):
    run_dir: Path
    result: CapacityResult
    decision: Decision


def run_capacity(options: CapacityOptions, progress: Progress | None = None) -> CapacityRun:
    """Search for the highest offered load that holds the policy's thresholds; raises RigError before anything
    starts when there is nothing to search against."""
    thresholds = load_policy(options.load.policy).thresholds
    if not thresholds:
        raise ConfigError("rig capacity searches for the load that holds your SLOs, and the policy states none",
                          fix="give --policy a policy.yaml with thresholds, e.g. [T4.p95 < 3s, error_rate < 1%]")
    steer = Steering(options, thresholds, progress)
    load = options.load.model_copy(update={
        "kind": "capacity", "shape": ShapeSpec(control=CONTROL_FILE), "users": options.max_users,
        "spawn_rate": float(max(options.max_users, 1)), "duration_s": options.budget_s + 2 * options.step_s})
    with events.load_running.listening(steer.run):
        result: LoadResult = run_load(load, progress)
    return CapacityRun(run_dir=result.run_dir, result=steer.result or CapacityResult(answer="undecided: the search "
                       "never ran"), decision=result.decision)


class Steering:
    """Beside Locust: sets each step's users, judges it once its runs have ended, and searches."""

    def __init__(self, options: CapacityOptions, thresholds: list[Threshold], progress: Progress | None) -> None:
        self.options = options
        self.thresholds = thresholds
        self.step_slos = [t for t in thresholds if not is_overload_threshold(t)]  # what each step is judged on
        self.overload_checks = [t for t in thresholds if is_overload_threshold(t)]
        self.progress = progress
        self.result: CapacityResult | None = None
        self.began = time.monotonic()

    def run(self, run: LoadContext) -> None:
        o = self.options
        control = run.run_dir / CONTROL_FILE
        sampler = SaturationSampler(run.adapter, slots_metric=run.connection.slots_metric,
                                    pid=run.target.pid if run.target else None).start()
        self.began = time.monotonic()
        alpha = 1 - o.confidence

        ran: list[int] = []

        def run_step(users: int) -> CapacityStep:
            ran.append(users)
            index = len(ran)
            write_control(control, users, float(max(users, 1)), step=index)
            started = time.time() * 1000
            step = CapacityStep(index=index, users=users, started_ms=started,
                                window_start_ms=started + o.warmup_s * 1000, window_end_ms=started + o.step_s * 1000)
            if self.progress:
                self.progress(f"step {index}: {users} users", time.monotonic() - self.began, o.budget_s)
            if run.stopped.wait(o.step_s):
                step.why = "stopped: the load run ended during the step"
                return step
            self._drain(run, step)
            judged = self._judge(run, step, sampler, alpha)
            extended = 0
            while judged.call == "unclear" and extended < o.max_extensions and not run.stopped.is_set():
                # not decided yet (too few runs for the interval to clear the SLO either way): the step goes on
                extended += 1
                if run.stopped.wait(o.step_s - o.warmup_s):
                    break
                step.window_end_ms = time.time() * 1000
                self._drain(run, step)
                judged = self._judge(run, step, sampler, alpha)
            steps = list(run.store.meta("capacity_steps") or [])
            run.store.set_meta("capacity_steps", [*steps, judged.model_dump(mode="json")])
            if self.progress:
                self.progress(f"step {index}: {users} users → {judged.call} ({judged.why})",
                              time.monotonic() - self.began, o.budget_s)
            return judged

        try:
            searched = capacity_search(run_step, start=o.start, max_users=o.max_users, max_steps=o.max_steps,
                                       time_left=lambda: o.budget_s - (time.monotonic() - self.began),
                                       step_cost_s=o.step_s)
            searched.confidence = o.confidence
            searched.thresholds = [t.text for t in self.step_slos]
            searched.required = o.required
            self.result = conclude(searched)
            if o.overload and self.result.verdict == "found" and self.result.breaks and self.result.holds \
                    and not run.stopped.is_set():
                over_users = max(self.result.breaks + 1, round(self.result.breaks * o.overload_factor))
                over = run_step(over_users)
                under = run_step(self.result.holds)
                self.result.steps += [over, under]
                self.result.overload = judge_overload(run.store.measures(), over, under, self.step_slos,
                                                      self.overload_checks)
            run.store.set_meta("capacity", self.result.model_dump(mode="json"))
        finally:
            write_control(control, 0, 1.0, stop=True)  # the master ends the run as its clock would
            sampler.stop()

    def _drain(self, run: LoadContext, step: CapacityStep) -> None:
        """Wait (users still at the step's level) until the runs submitted in the window have ended, while the
        target keeps ending runs; a run that never ends is then counted lost."""
        def settled() -> bool:
            rows = run.store.measures()
            caught_up = any(m.code == "T8" and (m.ts_ms or 0) >= step.window_end_ms for m in rows)
            return caught_up and judge_step(rows, step.model_copy(deep=True), []).unfinished == 0

        wait_while_moving(settled, lambda: len(run.store.measures("T8")), 10.0)

    def _judge(self, run: LoadContext, step: CapacityStep, sampler: SaturationSampler, alpha: float) -> CapacityStep:
        rows = run.store.measures()
        judged = judge_step(rows, step, self.step_slos, alpha=alpha)
        judged.resources = sampler.reading(step.started_ms, step.window_end_ms)
        judged.client = client_health(rows, step.started_ms, step.window_end_ms,
                                      cpu_limit_pct=self.options.cpu_limit_pct, lag_limit_ms=self.options.lag_limit_ms)
        if judged.client.saturated:
            judged.call, judged.why = "client_saturated", f"client saturated: {judged.client.why}"
        return judged
