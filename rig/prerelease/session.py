"""`rig demo`: one pre-release run on the embedded default, in the order an SRE would run it.

1. a distributed load run (Locust master and workers, browser users mixed in) under a chaos schedule
   (a tool error window and one restart);
2. the gate over the 38 reliability cases, its policy also judging the load run's numbers;
3. the quality workload over the 75 case-turns, with judge sheets.

Each part keeps its own run directory and evidence store under the demo's directory; `report.html` at
the top is rendered from those stores, with the gate decision first. The exit code is the gate's.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field

from rig.errors import ConfigError
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.load.options import LoadOptions
from rig.load.session import LoadResult
from rig.policy import Decision
from rig.quality.session import QualityOptions, QualityResult, run_quality
from rig.report.write import point_latest

Progress = Callable[[str, str, float, float], None]  # part, text, done, total


def packaged(name: str) -> Path:
    """A file shipped with the pre-release run (its chaos schedule, its policy)."""
    return Path(str(resources.files("rig.prerelease").joinpath(f"data/{name}")))


class PrereleaseOptions(BaseModel):
    out: Path | None = None
    reports_root: Path = Path("reports")
    users: int = Field(8, ge=1)
    think_s: tuple[float, float] = (0.5, 1.5)  # researchers' think time: short, so the restart cuts runs
    token_delay_ms: float | None = 15.0  # the embedded model streams its pieces this far apart, as a model would
    workers: int = Field(2, ge=0)
    browsers: int = Field(1, ge=0)
    duration_s: float = Field(60.0, gt=0)
    chaos: Path | None = None  # default: the packaged schedule
    policy: Path | None = None  # default: the packaged policy
    gate_cases: list[int] | None = None  # all 38 by default
    quality_cases: list[str] | None = None  # all 75 case-turns by default
    gate_browser: bool = True  # the gate's browser halves too (cases 1, 5, 17, 20, 22, 27–30)


@dataclass
class PrereleaseResult:
    run_dir: Path
    load: LoadResult
    gate: GateResult
    quality: QualityResult
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def decision(self) -> Decision:
        return self.gate.decision


def run_prerelease(options: PrereleaseOptions, progress: Progress | None = None) -> PrereleaseResult:
    """Load under chaos, then the gate (judging the load too), then quality; one report at the end."""
    from rig.load.extensions import load_extensions
    from rig.load.session import run_load
    from rig.prerelease.report import write_prerelease_report

    run_dir = options.out or options.reports_root / f"{dt.datetime.now():%Y%m%d-%H%M%S}-demo"
    if (run_dir / "report.html").exists() or (run_dir / "load").exists():
        raise ConfigError(f"{run_dir} already holds a pre-release run", fix="pass a new --out directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    policy = options.policy or packaged("policy.yaml")
    timings: dict[str, float] = {}

    def part(name: str) -> Callable[[str, float, float], None]:
        return lambda text, done, total: progress(name, text, done, total) if progress else None

    began = time.monotonic()
    load_options = LoadOptions(users=options.users, duration_s=options.duration_s, workers=options.workers,
                               browsers=options.browsers, chaos=options.chaos or packaged("chaos.yaml"),
                               out=run_dir / "load", policy=policy, spawn_rate=max(1.0, options.users / 2),
                               think_min_s=options.think_s[0], think_max_s=options.think_s[1],
                               token_delay_ms=options.token_delay_ms, reports_root=options.reports_root)
    ext = load_extensions(load_options)
    load = run_load(load_options, part("load"), during=ext.during, bands=ext.bands, prepare=ext.prepare,
                    finish=ext.finish, sections=ext.sections)
    timings["load"] = time.monotonic() - began
    mark = time.monotonic()
    gate = run_gate(GateOptions(out=run_dir / "gate", policy=policy, load=load.run_dir, cases=options.gate_cases,
                                browser=options.gate_browser, reports_root=options.reports_root), part("gate"))
    timings["gate"] = time.monotonic() - mark
    mark = time.monotonic()
    quality = run_quality(QualityOptions(out=run_dir / "quality", cases=options.quality_cases,
                                         reports_root=options.reports_root), part("quality"))
    timings["quality"] = time.monotonic() - mark
    timings["total"] = time.monotonic() - began
    result = PrereleaseResult(run_dir, load, gate, quality, timings)
    write_prerelease_report(result)
    point_latest(run_dir, options.reports_root)
    return result
