"""The load plan every Locust process reads: target, sessions to use, question pool, arrival model.

It travels as JSON in the `--rig-plan` option (Locust forwards custom options from the master to its
workers); secrets never go into it — passwords come from `RIG_LOAD_SECRETS` in each process's
environment.
"""

from __future__ import annotations

import json
import os
from typing import Literal

from pydantic import BaseModel, Field

from rig.jsonvalue import ForeignJson
from rig.load.replay.plan import ReplayPlan

# a researcher's actions and how often each is drawn (`rig load --mix` changes them)
DEFAULT_MIX = {"ask": 10, "revision": 3, "stop_resume": 1, "late_stop": 1, "regenerate": 1, "export": 1, "search": 2}


class PaperSet(BaseModel):
    """A set of documents a researcher opens a session on, with questions that fit it."""

    doc_ids: list[str]
    questions: list[str]
    revisions: list[str] = Field(default_factory=list)


class LoadPlan(BaseModel):
    target_url: str
    adapter: str = "rig.adapters:WorkbenchAdapter"  # `package.module:Class` every user builds on its Locust client
    adapter_options: ForeignJson = Field(default_factory=dict)  # target.options and target.http (no secrets)
    project_by_user: dict[str, str]
    paper_sets: list[PaperSet]
    usernames: list[str]
    ingest_files: list[str] = Field(default_factory=list)
    arrival: Literal["closed", "constant", "poisson"] = "closed"
    rate_per_s: float = 1.0
    seed: int = 1
    duration_s: float | None = None  # the master ends the run after this long (Locust's -t is only a backstop)
    think_min_s: float = 1.0
    think_max_s: float = 3.0
    weights: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_MIX))
    fetch_detail: bool = True
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"  # 0.0.0.0 where Prometheus scrapes from another container
    pushgateway: str | None = None
    store_path: str | None = None
    target_metrics: bool = True
    slots_metric: str | None = None  # the target's run-slot gauge, sampled beside its CPU and memory
    stream_timeout_s: float = 120.0
    answer_events: int = 200_000  # the answer budget (target.answer_budget): past it without an end, `never_ended`
    answer_seconds: float = 900.0
    otlp_endpoint: str | None = None  # each simulated run is a `rig.run` span sent here, its traceparent to the target
    replay: ReplayPlan | None = None  # `rig load --replay`: the sessions of a trace, replayed by ReplayUser

    def dumps(self) -> str:
        return self.model_dump_json()


def load_secrets() -> dict[str, str]:
    """Passwords by username from `RIG_LOAD_SECRETS` (a JSON object), never from the plan."""
    raw = os.environ.get("RIG_LOAD_SECRETS", "{}")
    data = json.loads(raw)
    return {str(k): str(v) for k, v in data.items()}
