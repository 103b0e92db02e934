"""`manifest.json`: what a run directory holds and whether two runs are comparable."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from pydantic import BaseModel, Field

from rig.jsonvalue import ForeignJson, JsonObject
from rig.policy import Policy


def git_commit() -> str | None:
    """The rig's git commit when it runs from a checkout."""
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


class Machine(BaseModel):
    """The machine a run ran on, as far as the rig can read it."""

    cores: int | None = None
    memory_gib: float | None = None
    os: str | None = None
    python: str | None = None

    def describe(self) -> str:
        """One line: `2 cores, 23.5 GiB, Linux-6.1…, Python 3.11.2`."""
        return f"{self.cores} cores, {self.memory_gib} GiB, {self.os}, Python {self.python}"


def machine() -> Machine:
    """This machine: its cores, memory (from /proc/meminfo where there is one), OS and Python."""
    mem = None
    try:
        with open("/proc/meminfo") as fh:
            mem = round(int(fh.readline().split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return Machine(cores=os.cpu_count(), memory_gib=mem, os=platform.platform(), python=sys.version.split()[0])


class DecisionInputs(BaseModel):
    """What a run's decision reads besides its own evidence and policy, so `rig report` decides exactly as the run did."""

    load: str | None = None  # a finished `rig load` run whose numbers the gate's thresholds also judge
    baseline: str | None = None  # the earlier run (resolved) the decision is also taken against


class ReplaySource(BaseModel):
    """The trace a `rig load --replay` run replayed, and how."""

    file: str
    sha256: str
    format: str
    speed: float
    window_s: tuple[float, float] | None = None
    sessions: int
    turns: int
    anonymised: bool = False


class RunManifest(BaseModel):
    kind: str
    rig_version: str = Field(default_factory=lambda: version("rig"))
    git_commit: str | None = Field(default_factory=git_commit)
    argv: list[str] = Field(default_factory=lambda: sys.argv[1:])
    target_url: str | None = None
    target_version: str | None = None
    target_embedded: bool = True
    adapter: str = "rig.adapters:WorkbenchAdapter"
    target_shape: ForeignJson | None = None  # what the target keeps itself: projects, sessions, run records …
    model_config_redacted: JsonObject | None = None  # the target's model settings as it reported them, redacted
    eval_set_sha256: str | None = None
    corpus_digest: str | None = None
    policy: Policy | None = None  # the policy the run decided by, as it read it
    decision_inputs: DecisionInputs = Field(default_factory=DecisionInputs)
    seeds: dict[str, int] = Field(default_factory=dict)  # each random draw's seed (arrival …)
    chaos_schedule: JsonObject | None = None  # the chaos plug-in's schedule as it read it (compared whole)
    defects: list[str] = Field(default_factory=list)
    cases: list[int] | None = None  # the gate's selected case ids (a resume runs the same ones)
    repeat: int = 1  # the gate's repetitions of each case
    replay: ReplaySource | None = None  # `rig load --replay`: what was replayed
    machine: Machine = Field(default_factory=machine)
    started_at: str | None = None
    ended_at: str | None = None
    resumed_at: list[str] = Field(default_factory=list)
    ended_early: str | None = None  # set by `rig report` on a run that was killed: the time of its last evidence


def write_manifest(run_dir: Path, manifest: RunManifest) -> None:
    tmp = run_dir / "manifest.json.tmp"
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(run_dir / "manifest.json")


def read_manifest(run_dir: Path) -> RunManifest:
    return RunManifest.model_validate_json((run_dir / "manifest.json").read_text(encoding="utf-8"))
