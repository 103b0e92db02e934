"""The option groups every run command shares, declared once: which target, where the run goes, what decides it,
where its telemetry goes, and the embedded workbench's knobs. A workload's options model is composed of the groups it
takes (`class GateOptions(TargetChoice, OutputChoice, …)`); each group is one help panel of its commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel, Field

from rig.config import RigConfig, load_config
from rig.errors import ConfigError
from rig.run.flags import Flag


class TargetChoice(BaseModel):
    """The target a run drives: the embedded workbench by default, or an external one described in rig.yaml."""

    PANEL: ClassVar[str] = "Target"
    RANK: ClassVar[int] = 10
    target: Annotated[str | None, Flag("URL of an external target (needs --config); without it the embedded "
                                       "workbench runs on a free loopback port.")] = None
    config: Annotated[Path | None, Flag("rig.yaml: the target's adapter, accounts (passwords from the environment), "
                                        "chaos token and restart command.")] = None
    defects: list[str] = Field(default_factory=list)  # the embedded workbench's seeded defects (self-validation)

    def rig_config(self) -> RigConfig | None:
        """The external target's rig.yaml, `--target` overriding its URL; None for the embedded workbench. A
        `--target` without `--config` is a ConfigError (the rig would not know its adapter or accounts)."""
        if self.target and not self.config:
            raise ConfigError("--target needs --config rig.yaml (the target's adapter and accounts)",
                              fix="write a rig.yaml (see docs/rig.example.yaml) and pass --config")
        config = load_config(self.config) if self.config else None
        if config is not None and self.target:
            config.target.url = self.target
        return config


class EmbeddedChoice(BaseModel):
    """Knobs of the embedded workbench (an external target has its own)."""

    PANEL: ClassVar[str] = "Embedded target"
    RANK: ClassVar[int] = 20
    slots: Annotated[int | None, Field(ge=1), Flag("The embedded workbench's run slots (runs executing at once).")
                     ] = None
    token_delay_ms: Annotated[float | None, Field(ge=0), Flag(
        "The embedded workbench's delay per answer token, in ms (a slower model).")] = None


class OutputChoice(BaseModel):
    """Where the run's directory goes."""

    PANEL: ClassVar[str] = "Output"
    RANK: ClassVar[int] = 70
    out: Annotated[Path | None, Flag("Run directory (default reports/<time>-<kind>).")] = None
    reports_root: Path = Path("reports")  # new run directories, `latest` and the run history live here


class Resumable(BaseModel):
    """A run that a later command may continue."""

    PANEL: ClassVar[str] = "Output"
    RANK: ClassVar[int] = 70
    resume: Annotated[Path | None, Flag("Continue a killed or stopped run directory; what finished stays.")] = None


class PolicyChoice(BaseModel):
    """What the run is decided against."""

    PANEL: ClassVar[str] = "Decision"
    RANK: ClassVar[int] = 60
    policy: Annotated[Path | None, Flag("policy.yaml: required cases, allowed BLOCKED, thresholds (T4.p95 < 3s).")
                      ] = None
    baseline: Annotated[str | None, Flag(
        "Also decide against this earlier run (a run directory, or last-pass: the newest passing run of this kind "
        "and target): the policy's baseline rules (default: no new FAIL) and rig compare's regressions.")] = None


class TelemetryChoice(BaseModel):
    """Where the run's telemetry also goes (it is always kept in the run's evidence store)."""

    PANEL: ClassVar[str] = "Telemetry"
    RANK: ClassVar[int] = 80
    otlp_endpoint: Annotated[str | None, Flag(
        "Also export the rig's spans (a span per run, traceparent sent to the target) to this OTLP/HTTP endpoint, "
        "e.g. http://127.0.0.1:4318.")] = None


class PushChoice(BaseModel):
    """A Pushgateway the run's end is pushed to."""

    PANEL: ClassVar[str] = "Telemetry"
    RANK: ClassVar[int] = 80
    pushgateway: Annotated[str | None, Flag("Push the run's final counts and decision to this Pushgateway.")] = None
