"""What `rig load` was asked to do."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from rig.clock import parse_duration
from rig.load.plan import DEFAULT_MIX
from rig.results.shape import ShapeSpec


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


class LoadOptions(BaseModel):
    users: int = Field(10, ge=1)
    spawn_rate: float = Field(5.0, gt=0)
    duration_s: float = Field(60.0, gt=0, le=24 * 3600)
    arrival: Literal["closed", "constant", "poisson"] = "closed"
    rate_per_s: float = Field(1.0, gt=0)
    workers: int = Field(0, ge=0)
    expect_workers: int | None = None
    master_host: str | None = None
    master_port: int | None = None
    master_bind: str = "127.0.0.1"  # the master's interface for workers (0.0.0.0 or its address: workers elsewhere)
    worker_only: bool = False
    target: str | None = None
    config: Path | None = None
    out: Path | None = None
    policy: Path | None = None
    pushgateway: str | None = None
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    seed: int = 1
    think_min_s: float = 1.0
    think_max_s: float = 3.0
    ingest_users: int = Field(0, ge=0)
    browsers: int = Field(0, ge=0)
    chaos: Path | None = None
    chaos_metrics_port: int | None = None  # the schedule's own Prometheus endpoint; None: a free port
    fetch_detail: bool = True
    reports_root: Path = Path("reports")
    token_delay_ms: float | None = None
    baseline: str | None = None  # a load run directory, or `last-pass`: also decide against it
    otlp_endpoint: str | None = None  # a span per simulated run, exported here (the embedded target's too)
    defects: list[str] = Field(default_factory=list)  # the embedded workbench's seeded defects (self-validation)
    replay: Path | None = None  # a trace export to replay (Langfuse observations or OTLP/JSON)
    speed: float = Field(1.0, gt=0)  # replay: arrivals this many times faster than in the trace
    window: str | None = None  # replay: part of the trace's timeline, e.g. 10m-20m
    anonymise: bool = False  # replay: send corpus questions in place of the trace's texts
    max_sessions: int | None = Field(None, ge=1)  # replay: at most this many sessions (the earliest)
    shape: ShapeSpec | None = None  # stages (`--shape 30s:10,1m:10`), or a shape the rig steers (`rig capacity`)
    slots: int | None = Field(None, ge=1)  # the embedded workbench's run slots (`--slots`)
    soak: bool = False  # `--soak`: fit each resource's slope over the hold (rig.load.soak)
    mix: dict[str, int] = Field(default_factory=dict)  # `--mix`: weights that replace the default mix's

    @field_validator("mix", mode="before")
    @classmethod
    def _mix(cls, v: object) -> object:
        mix = parse_mix(v) if isinstance(v, str) else v
        if isinstance(mix, dict) and not any({**DEFAULT_MIX, **mix}.values()):
            raise ValueError("--mix leaves every action out: give at least one a weight above 0")
        return mix

    @field_validator("duration_s", mode="before")
    @classmethod
    def _duration(cls, v: object) -> object:
        return parse_duration(v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _think(self) -> LoadOptions:
        if self.think_min_s < 0 or self.think_max_s < self.think_min_s:
            raise ValueError(f"--think {self.think_min_s:g}-{self.think_max_s:g} is not a range of seconds from low "
                             "to high (for example 1-3)")
        return self

    @field_validator("rate_per_s", mode="before")
    @classmethod
    def _rate(cls, v: object) -> object:
        return parse_rate(v) if isinstance(v, str) else v
