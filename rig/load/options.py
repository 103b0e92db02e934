"""What `rig load` was asked to do, in the option groups its command shows."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from rig.clock import parse_duration
from rig.errors import RigError
from rig.load.plan import DEFAULT_MIX
from rig.load.stages import parse_shape
from rig.results.shape import ShapeSpec
from rig.run.flags import Flag
from rig.run.options import EmbeddedChoice, OutputChoice, PolicyChoice, PushChoice, TargetChoice, TelemetryChoice


def parse_rate(text: str | float) -> float:
    """`2/s`, `120/m`, `0.5` → arrivals per second."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.]+)\s*(?:/\s*(s|m))?\s*", text)
    if not m:
        raise ValueError(f"rate {text!r} is not like 2/s or 120/m")
    return float(m.group(1)) / (60 if m.group(2) == "m" else 1)


def parse_mix(text: str) -> dict[str, int]:
    """`late_stop=5,search=0` → the weights it changes in the researchers' mix (0 leaves an action out)."""
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, weight = part.partition("=")
        name = name.strip()
        if name not in DEFAULT_MIX or not eq or not weight.strip().isdigit():
            raise ValueError(f"--mix {part!r} is not ACTION=WEIGHT with ACTION one of {', '.join(DEFAULT_MIX)} and a "
                             "whole number (for example late_stop=5,search=0)")
        out[name] = int(weight)
    return out


class LoadShape(BaseModel):
    """The load offered: how many researchers, how they arrive, think and what they do, for how long."""

    PANEL: ClassVar[str] = "Load"
    RANK: ClassVar[int] = 30
    FLAGS: ClassVar[dict[str, Flag]] = {"think": Flag(
        "Think time range in seconds between a user's questions, e.g. 1-3.", cli_default="1-3",
        sets=("think_min_s", "think_max_s"))}
    users: Annotated[int, Field(ge=1), Flag("Simulated researchers (closed loop) or concurrency cap (open loop).")
                     ] = 10
    spawn_rate: Annotated[float, Field(gt=0), Flag("Users started per second.")] = 5.0
    duration_s: Annotated[float, Field(gt=0, le=24 * 3600), Flag(
        "How long to run, e.g. 60s or 2m; the run stops by itself.", names=("--duration",), cli_type=str,
        cli_default="60s")] = 60.0
    arrival: Annotated[Literal["closed", "constant", "poisson"], Flag(
        "closed (think time), constant or poisson (open loop).", cli_type=str)] = "closed"
    rate_per_s: Annotated[float, Field(gt=0), Flag("Open-loop session arrival rate, e.g. 2/s.", names=("--rate",),
                                                   cli_type=str, cli_default="1/s")] = 1.0
    seed: Annotated[int, Flag("Seed of the arrival schedule.")] = 1
    think_min_s: float = 1.0
    think_max_s: float = 3.0
    ingest_users: Annotated[int, Field(ge=0), Flag("Additional users uploading papers (T1).")] = 0
    browsers: Annotated[int, Field(ge=0), Flag("Playwright browser users beside the Locust users.")] = 0
    shape: Annotated[ShapeSpec | None, Flag(
        "Stages of users as k6 ramps them, duration:target each: 30s:10,1m:10,10s:0 (ramp to 10, hold, ramp down), "
        "or a YAML file with stages: [{duration, target}]; the run lasts as long as its stages.", cli_type=str | None)
    ] = None  # or a shape the rig steers (`rig capacity`)
    soak: Annotated[bool, Flag(
        "Hold the load this long (e.g. 30m) and fit each resource's slope per hour (memory, open files, slots, T4, "
        "T5, and T4 per question of a session): a slope whose interval lies past the policy's bound fails the run.",
        cli_type=str | None, cli_default=None)] = False
    mix: Annotated[dict[str, int], Flag(
        "Change how often researchers draw each action, ACTION=WEIGHT: ask=10, revision=3, stop_resume=1, late_stop=1 "
        "(a stop racing the run's end), regenerate=1, export=1, search=2 by default; 0 leaves one out. Example: "
        "--mix late_stop=5,search=0.", cli_type=str | None, cli_default=None)] = Field(default_factory=dict)
    fetch_detail: bool = True

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        """The command line's texts: `--think 1-3` sets both ends, `--soak 30m` holds that long."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        think = data.pop("think", None)
        if think is not None:
            lo, _, hi = str(think).partition("-")
            try:
                data["think_min_s"], data["think_max_s"] = float(lo), float(hi or lo)
            except ValueError:
                raise ValueError(f"--think {think!r} is not seconds or a range of seconds (for example 1-3)") from None
        soak = data.get("soak")
        if isinstance(soak, str):
            data["soak"], data["duration_s"] = True, soak
        elif soak is None:
            data["soak"] = False
        return data

    @field_validator("shape", mode="before")
    @classmethod
    def _shape(cls, v: object) -> object:
        if isinstance(v, str):
            try:
                return parse_shape(v)
            except RigError as exc:
                raise ValueError(f"{exc.message}" + (f" ({exc.fix})" if exc.fix else "")) from None
        return v

    @field_validator("mix", mode="before")
    @classmethod
    def _mix(cls, v: object) -> object:
        mix = parse_mix(v) if isinstance(v, str) else ({} if v is None else v)
        if isinstance(mix, dict) and not any({**DEFAULT_MIX, **mix}.values()):
            raise ValueError("--mix leaves every action out: give at least one a weight above 0")
        return mix

    @field_validator("duration_s", mode="before")
    @classmethod
    def _duration(cls, v: object) -> object:
        return parse_duration(v) if isinstance(v, str) else v

    @field_validator("rate_per_s", mode="before")
    @classmethod
    def _rate(cls, v: object) -> object:
        return parse_rate(v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _think(self) -> LoadShape:
        if self.think_min_s < 0 or self.think_max_s < self.think_min_s:
            raise ValueError(f"--think {self.think_min_s:g}-{self.think_max_s:g} is not a range of seconds from low "
                             "to high (for example 1-3)")
        return self


class Distribution(BaseModel):
    """Locust's processes: one local process, a master with workers, or workers joining a master elsewhere."""

    PANEL: ClassVar[str] = "Locust processes"
    RANK: ClassVar[int] = 40
    workers: Annotated[int, Field(ge=0), Flag(
        "Locust workers beside a master (0: one local process; auto: one per core of this machine).", cli_type=str,
        cli_default="0")] = 0
    expect_workers: Annotated[int | None, Flag("Workers the master waits for (incl. remote).")] = None
    master_host: Annotated[str | None, Flag("With --worker-only: the master to join.")] = None
    master_port: Annotated[int | None, Flag("Master port (both sides).")] = None
    master_bind: Annotated[str, Flag(
        "Interface the master listens on for workers: 0.0.0.0 or its address when workers run elsewhere.",
        names=("--master-bind-host",))] = "127.0.0.1"
    worker_only: Annotated[bool, Flag(
        "Start workers only, joining --master-host; they end when the master does (or a minute after losing it).")
    ] = False
    metrics_host: Annotated[str, Flag("Interface the master's /metrics binds (0.0.0.0 inside a container).")
                            ] = "127.0.0.1"
    metrics_port: Annotated[int | None, Flag("Port of the master's Prometheus endpoint.")] = None


    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() == "auto":
            return os.cpu_count() or 1
        return v


class PromptChoice(BaseModel):
    """What the researchers ask: the eval set's questions, a prompts file, or synthetic prompts of a given length."""

    PANEL: ClassVar[str] = "Load"
    RANK: ClassVar[int] = 30
    prompts: Annotated[Path | None, Flag(
        'Ask these questions, not the eval set\'s: a JSONL file, one {"question": ..., "papers": ["P32"]} a line.')
    ] = None
    synthetic_prompts: Annotated[int | None, Field(ge=1, le=100_000), Flag(
        "Ask synthetic prompts of about this many tokens (a model endpoint at a known input length).")] = None

    @model_validator(mode="after")
    def _one_source(self) -> PromptChoice:
        if self.prompts is not None and self.synthetic_prompts is not None:
            raise ValueError("--prompts and --synthetic-prompts both choose the questions: give one")
        return self


class ReplayChoice(BaseModel):
    """A trace export replayed in place of the researchers' mix."""

    PANEL: ClassVar[str] = "Replay"
    RANK: ClassVar[int] = 45
    replay: Annotated[Path | None, Flag(
        "Replay a trace export (Langfuse observations JSON or an OTLP/JSON dump): its sessions, turns and arrival "
        "times; the run lasts as long as the replay (--duration is not used).")] = None
    speed: Annotated[float, Field(gt=0), Flag("Replay: arrivals this many times faster (60: an hour in a minute).")
                     ] = 1.0
    window: Annotated[str | None, Flag("Replay: only this part of the trace, e.g. 10m-20m or 1h-.")] = None
    max_sessions: Annotated[int | None, Field(ge=1), Flag("Replay: at most this many sessions (the earliest).")
                            ] = None
    anonymise: Annotated[bool, Flag(
        "Replay: send questions of the rig's corpus in place of the trace's texts (none is sent or stored).")] = False


class ChaosChoice(BaseModel):
    """Faults injected during the load, on a schedule."""

    PANEL: ClassVar[str] = "Chaos"
    RANK: ClassVar[int] = 46
    chaos: Annotated[Path | None, Flag("Chaos schedule (YAML, see docs/chaos.example.yaml) applied during the run.")
                     ] = None
    chaos_metrics_port: Annotated[int | None, Flag(
        "Port of the schedule's Prometheus endpoint (rig_chaos_faults_total); default a free port.")] = None


class LoadOptions(TargetChoice, EmbeddedChoice, OutputChoice, PolicyChoice, TelemetryChoice, PushChoice, LoadShape,
                  Distribution, PromptChoice, ReplayChoice, ChaosChoice):
    """What `rig load` was asked to do."""

    kind: Literal["load", "capacity"] = "load"  # a capacity search is a load the rig steers, filed as its own kind
