"""What every Locust process of a load run shares: the plan, the arrival schedule, the recorder, the tracer.

Each is made once per process on first use, from the plan Locust received as `--rig-plan` (the master
forwards it to its workers).
"""

from __future__ import annotations

from typing import Any

from rig.load.arrivals import ArrivalSchedule
from rig.load.plan import LoadPlan
from rig.load.recorder import Recorder
from rig.load.replay.queue import ReplayQueue
from rig.telemetry.tracing import RigTracer, configured_endpoints, noop_tracer

RECORDER = Recorder()
_PLAN: list[LoadPlan] = []
_SCHEDULE: list[ArrivalSchedule] = []
_TRACER: list[RigTracer] = []
_REPLAY: list[ReplayQueue] = []


def plan_of(environment: Any) -> LoadPlan:
    """This process's load plan (from `--rig-plan`)."""
    if not _PLAN:
        raw = getattr(environment.parsed_options, "rig_plan", None) if environment.parsed_options else None
        if not raw:
            raise RuntimeError("no --rig-plan given: start this locustfile through `rig load`")
        _PLAN.append(LoadPlan.model_validate_json(raw))
    return _PLAN[0]


def schedule_of(environment: Any) -> ArrivalSchedule:
    """This process's share of the open-loop arrival schedule."""
    if not _SCHEDULE:
        plan = plan_of(environment)
        share = int(getattr(environment.runner, "worker_index", 0) or 0)
        shares = int(getattr(environment.parsed_options, "rig_workers", 1) or 1)
        _SCHEDULE.append(ArrivalSchedule(plan.arrival, plan.rate_per_s, plan.seed, share, shares))
    return _SCHEDULE[0]


def replay_of(environment: Any) -> ReplayQueue:
    """This process's share of the replay's sessions (`rig load --replay`)."""
    if not _REPLAY:
        plan = plan_of(environment)
        if plan.replay is None:
            raise RuntimeError("ReplayUser needs a plan with a replay: start it through `rig load --replay`")
        share = int(getattr(environment.runner, "worker_index", 0) or 0)
        shares = int(getattr(environment.parsed_options, "rig_workers", 1) or 1)
        _REPLAY.append(ReplayQueue(plan.replay, share, shares))
    return _REPLAY[0]


def current_schedule() -> ArrivalSchedule | None:
    """The schedule this process made, if its users run on one."""
    return _SCHEDULE[0] if _SCHEDULE else None


def run_tracer(plan: LoadPlan) -> RigTracer:
    """This process's tracer for simulated runs: exporting to the plan's endpoint, else the no-op one."""
    if not _TRACER:
        _TRACER.append(RigTracer(configured_endpoints(plan.otlp_endpoint), kind="load") if plan.otlp_endpoint
                       else noop_tracer())
    return _TRACER[0]


def close_tracer() -> None:
    if _TRACER:
        _TRACER[0].close()
