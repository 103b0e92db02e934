"""`rig demo`: one pre-release run on the embedded default, in the order an SRE would run it.

1. a distributed load run (Locust master and workers, browser users mixed in) under a chaos schedule
   (a tool error window and one restart);
2. the gate over the 38 reliability cases, its policy also judging the load run's numbers;
3. the quality workload over the 75 case-turns, with judge sheets.

Each part keeps its own run directory and evidence store under the demo's directory; `report.html` at
the top is rendered from those stores, with the gate decision first. The exit code is the gate's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field, field_validator

from rig.evidence import EvidenceStore
from rig.gate.session import GateOptions, GateResult, positive_seconds, run_gate
from rig.load.finish import finish_load_dir
from rig.load.options import LoadOptions
from rig.load.session import LoadResult, run_load
from rig.policy import Decision
from rig.prerelease.report import write_prerelease_report
from rig.prerelease.result import PrereleaseResult
from rig.quality.session import QualityOptions, QualityResult, run_quality
from rig.report.write import point_latest
from rig.results.load import LoadSummary
from rig.results.quality import QualityReport
from rig.run import Flag, OutputChoice, Resumable, claim
from rig.runmanifest import read_manifest

Progress = Callable[[str, str, float, float], None]  # part, text, done, total


def packaged(name: str) -> Path:
    """A file shipped with the pre-release run (its chaos schedule, its policy)."""
    return Path(str(resources.files("rig.prerelease").joinpath(f"data/{name}")))


class PrereleaseOptions(OutputChoice, Resumable):
    """What `rig demo` was asked to do (`--resume`: a killed pre-release run's finished parts are kept, a killed load
    part is finished from its evidence, the gate and quality parts resume)."""

    PANEL: ClassVar[str] = "Pre-release run"
    users: Annotated[int, Field(ge=1), Flag("Locust users of the load part.")] = 8
    workers: Annotated[int, Field(ge=0), Flag("Locust workers (distributed mode on loopback).")] = 2
    browsers: Annotated[int, Field(ge=0), Flag("Playwright browser users mixed into the load.")] = 1
    duration_s: Annotated[float, Field(gt=0), Flag("Length of the load part, e.g. 60s.", names=("--duration",),
                                                   cli_type=str, cli_default="60s")] = 60.0
    chaos: Annotated[Path | None, Flag("Chaos schedule of the load part (default: tool errors, then one restart).")
                     ] = None
    policy: Annotated[Path | None, Flag("Gate policy (default: all cases, T4/T5 p95 thresholds).")] = None
    gate_browser: Annotated[bool, Flag("Run the gate's browser halves (cases 1, 5, 17, 20, 22, 27–30).")] = True
    think_s: tuple[float, float] = (0.5, 1.5)  # researchers' think time: short, so the restart cuts runs
    token_delay_ms: float | None = 15.0  # the embedded model streams its pieces this far apart, as a model would
    gate_cases: list[int] | None = None  # all 38 by default
    quality_cases: list[str] | None = None  # all 75 case-turns by default

    @field_validator("duration_s", mode="before")
    @classmethod
    def _duration(cls, v: object) -> object:
        return positive_seconds(v)


DEMO_MARKS = ("report.html", "load")  # a directory holds a demo once its load part began or it reported


def run_prerelease(options: PrereleaseOptions, progress: Progress | None = None) -> PrereleaseResult:
    """Load under chaos, then the gate (judging the load too), then quality; one report at the end."""

    with claim("demo", options, resume=options.resume, marks=DEMO_MARKS) as run_dir:
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
        load = kept_load(run_dir / "load", policy)
        if load is None:
            load = run_load(load_options, part("load"))
        timings["load"] = time.monotonic() - began
        mark = time.monotonic()
        gate = kept_gate(run_dir / "gate") or run_gate(GateOptions(
            out=run_dir / "gate", resume=_started(run_dir / "gate"), policy=policy, load=load.run_dir,
            cases=options.gate_cases, browser=options.gate_browser, reports_root=options.reports_root), part("gate"))
        timings["gate"] = time.monotonic() - mark
        mark = time.monotonic()
        quality = kept_quality(run_dir / "quality") or run_quality(QualityOptions(
            out=run_dir / "quality", resume=_started(run_dir / "quality"), cases=options.quality_cases,
            reports_root=options.reports_root), part("quality"))
        timings["quality"] = time.monotonic() - mark
        timings["total"] = time.monotonic() - began
        result = PrereleaseResult(run_dir, load, gate, quality, timings)
        write_prerelease_report(result)
        point_latest(run_dir, options.reports_root)
        return result


# -- resuming: what a killed pre-release run already finished is kept as it is ---------------------------------
def _finished(part_dir: Path) -> bool:
    """A part that ran to its end (its manifest has an end time and was not finished by rig report)."""
    if not (part_dir / "manifest.json").exists():
        return False
    manifest = read_manifest(part_dir)
    return manifest.ended_at is not None and manifest.ended_early is None


def _started(part_dir: Path) -> Path | None:
    """The part's directory to --resume when it started and did not finish, else None (run it afresh)."""
    return part_dir if (part_dir / "evidence.sqlite3").exists() and not _finished(part_dir) else None


def kept_load(load_dir: Path, policy: Path) -> LoadResult | None:
    """A finished load part as it is; a killed one finished from its evidence (load runs are not resumed:
    a second half would not be the same load); None when it never started."""

    if not (load_dir / "evidence.sqlite3").exists():
        return None
    if _finished(load_dir) and (load_dir / "load.json").exists():  # its own decision, as it took it
        summary = LoadSummary.model_validate_json((load_dir / "load.json").read_text(encoding="utf-8"))
        store = EvidenceStore(load_dir / "evidence.sqlite3")
        try:
            decided = store.meta("decision")
        finally:
            store.close()
        if decided:
            return LoadResult(load_dir, summary, Decision.model_validate(decided), None)
    finished = finish_load_dir(load_dir)
    summary = LoadSummary.model_validate_json((load_dir / "load.json").read_text(encoding="utf-8"))
    return LoadResult(load_dir, summary, finished.decision, None)


def kept_gate(gate_dir: Path) -> GateResult | None:

    if not (_finished(gate_dir) and (gate_dir / "results.json").exists()):
        return None
    results = json.loads((gate_dir / "results.json").read_text(encoding="utf-8"))
    return GateResult.read(gate_dir, Decision(decision=results["decision"], reasons=results.get("reasons", [])))


def kept_quality(quality_dir: Path) -> QualityResult | None:

    if not (_finished(quality_dir) and (quality_dir / "quality.json").exists()):
        return None
    report = QualityReport.model_validate_json((quality_dir / "quality.json").read_text(encoding="utf-8"))
    return QualityResult(quality_dir, report.summary)
