"""Load shapes, as the rig process handles them (no Locust here): stages parsed from the command line or a file,
the environment variable that hands a shape to Locust, and the control file of a shape the rig steers.

A stage ramps linearly from the previous stage's target (0 at the start) to its own over its duration; a hold is a
stage whose target equals the one before, a spike a short stage to a high target and back. Both shapes are
Locust `LoadTestShape`s run by the master (distributed as any run); the locustfile picks one up only when
`RIG_SHAPE` is set. The shape never ends the run itself — the rig's clock (`rig.load.locust_hooks`) does, so the
workers' last reports still count — and a steered shape asks for that ending when the rig writes `stop`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from rig.clock import parse_duration
from rig.errors import ConfigError
from rig.results.shape import ShapeControl, ShapeSpec, Stage

SHAPE_ENV = "RIG_SHAPE"


_STAGE = re.compile(r"\s*(?P<duration>[0-9.]+\s*(?:ms|s|m|h)?)\s*:\s*(?P<target>[0-9]+)\s*")


def parse_shape(text: str) -> ShapeSpec:
    """`30s:10,1m:10,10s:0` (duration:target, k6's stages), or a YAML file with `stages: [{duration, target}]`."""
    path = Path(text)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"--shape {text}: cannot read the file ({exc})",
                              fix="a YAML file with stages: [{duration: 30s, target: 10}, …]") from None
        raw = data.get("stages") if isinstance(data, dict) else None
        if not isinstance(raw, list) or not raw:
            raise ConfigError(f"--shape {text}: no stages", fix="stages: [{duration: 30s, target: 10}, …]")
        try:
            stages = [Stage(duration_s=parse_duration(str(s["duration"])), target=int(s["target"])) for s in raw]
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"--shape {text}: a stage is not {{duration, target}} ({exc})",
                              fix="stages: [{duration: 30s, target: 10}, …]") from None
        return ShapeSpec(stages=stages)
    stages = []
    for part in text.split(","):
        m = _STAGE.fullmatch(part)
        if not m:
            raise ConfigError(f"--shape: {part.strip()!r} is not a stage like 30s:10 (ramp to 10 users over 30 s)",
                              fix="--shape 30s:10,1m:10,10s:0")
        duration = parse_duration(m.group("duration"))
        if duration <= 0:
            raise ConfigError(f"--shape: the stage {part.strip()!r} lasts no time", fix="--shape 30s:10,1m:10,10s:0")
        stages.append(Stage(duration_s=duration, target=int(m.group("target"))))
    return ShapeSpec(stages=stages)


def shape_from_env() -> ShapeSpec | None:
    raw = os.environ.get(SHAPE_ENV)
    return ShapeSpec.model_validate_json(raw) if raw else None


def write_control(path: Path, users: int, spawn_rate: float, *, step: int = 0, stop: bool = False) -> None:
    """What a steered shape runs next, as the search's `step` (written whole: a reader never sees half a file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(ShapeControl(users=users, spawn_rate=spawn_rate, step=step, stop=stop).model_dump_json(),
                   encoding="utf-8")
    tmp.replace(path)
