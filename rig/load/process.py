"""Everything one Locust process of a load run keeps, in one object (`PROCESS`): the plan it was given, its share of
the arrival schedule or the replay, the recorder of its rows, the deriver that measures in idle time, the tracer of
simulated runs, the master's book of workers, and what the rig's hooks started once.

Each part is made on first use, from the plan Locust received as `--rig-plan` (the master forwards it to its
workers). A Locust process runs one load; nothing else in the rig keeps process-wide state on the Locust side.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from rig.load.arrivals import ArrivalSchedule
from rig.load.deriver import Deriver
from rig.load.plan import LoadPlan
from rig.load.recorder import Recorder
from rig.load.replay.queue import ReplayQueue
from rig.load.workers import WorkerBook
from rig.telemetry.tracing import RigTracer, configured_endpoints, noop_tracer


@dataclass
class LoadProcess:
    """One Locust process's part of a load run."""

    recorder: Recorder = field(default_factory=Recorder)
    deriver: Deriver = field(default_factory=Deriver)  # measures what a run said when the event loop is idle
    plan: LoadPlan | None = None
    schedule: ArrivalSchedule | None = None
    replay: ReplayQueue | None = None
    tracer: RigTracer | None = None
    book: WorkerBook = field(default_factory=WorkerBook)  # the master's: workers joined, reports, lost, back
    last_report: dict[str, float] = field(default_factory=dict)  # worker id → monotonic time of its last report
    accounts: itertools.count[int] = field(default_factory=itertools.count)  # users take the plan's accounts in turn
    installed: bool = False  # the rig's Locust listeners are registered
    serving: bool = False  # the Prometheus endpoint is up
    clock: Any = None  # the greenlet that ends the run after its duration
    probing: Any = None  # the greenlet that samples this process's CPU share and loop lag

    def __post_init__(self) -> None:
        self.book.bind(self._save_workers)

    def plan_of(self, environment: Any) -> LoadPlan:
        """This process's load plan (from `--rig-plan`)."""
        if self.plan is None:
            raw = getattr(environment.parsed_options, "rig_plan", None) if environment.parsed_options else None
            if not raw:
                raise RuntimeError("no --rig-plan given: start this locustfile through `rig load`")
            self.plan = LoadPlan.model_validate_json(raw)
        return self.plan

    def schedule_of(self, environment: Any) -> ArrivalSchedule:
        """This process's share of the open-loop arrival schedule."""
        if self.schedule is None:
            plan = self.plan_of(environment)
            share, shares = _share(environment)
            self.schedule = ArrivalSchedule(plan.arrival, plan.rate_per_s, plan.seed, share, shares)
        return self.schedule

    def replay_of(self, environment: Any) -> ReplayQueue:
        """This process's share of the replay's sessions (`rig load --replay`)."""
        if self.replay is None:
            plan = self.plan_of(environment)
            if plan.replay is None:
                raise RuntimeError("ReplayUser needs a plan with a replay: start it through `rig load --replay`")
            self.replay = ReplayQueue(plan.replay, *_share(environment))
        return self.replay

    def run_tracer(self, plan: LoadPlan) -> RigTracer:
        """This process's tracer for simulated runs: exporting to the plan's endpoint, else the no-op one."""
        if self.tracer is None:
            self.tracer = (RigTracer(configured_endpoints(plan.otlp_endpoint), kind="load") if plan.otlp_endpoint
                           else noop_tracer())
        return self.tracer

    def close_tracer(self) -> None:
        if self.tracer is not None:
            self.tracer.close()

    def _save_workers(self, records: Any) -> None:
        if self.recorder.store is not None:
            self.recorder.store.set_meta("workers", records)


def _share(environment: Any) -> tuple[int, int]:
    """(this worker's index, how many share the load): a local run is the one share."""
    share = int(getattr(environment.runner, "worker_index", 0) or 0)
    shares = int(getattr(environment.parsed_options, "rig_workers", 1) or 1)
    return share, shares


PROCESS = LoadProcess()
RECORDER = PROCESS.recorder  # the same objects under the names the locustfiles use
DERIVER = PROCESS.deriver


def plan_of(environment: Any) -> LoadPlan:
    """This process's load plan (from `--rig-plan`)."""
    return PROCESS.plan_of(environment)


def schedule_of(environment: Any) -> ArrivalSchedule:
    """This process's share of the open-loop arrival schedule."""
    return PROCESS.schedule_of(environment)


def replay_of(environment: Any) -> ReplayQueue:
    """This process's share of the replay's sessions."""
    return PROCESS.replay_of(environment)


def run_tracer(plan: LoadPlan) -> RigTracer:
    """This process's tracer for simulated runs."""
    return PROCESS.run_tracer(plan)
