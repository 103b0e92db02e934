"""`rig report` of a demo: each part that has a store is finished through its own workload's finish, and the demo's
report then shows what the parts hold; a part that never started leaves the demo undecided."""

from __future__ import annotations

from pathlib import Path

from rig.gate.finish import finish_gate_dir
from rig.gate.session import GateResult
from rig.load.finish import finish_load_dir
from rig.load.session import LoadResult
from rig.policy import Decision
from rig.prerelease.report import write_prerelease_report
from rig.prerelease.result import PrereleaseResult
from rig.quality.session import QualityResult, finish_quality_dir
from rig.results.load import LoadSummary
from rig.results.quality import QualityReport
from rig.run_end import Finished
from rig.rundir import hold, release

PARTS = {"load": finish_load_dir, "gate": finish_gate_dir, "quality": finish_quality_dir}


def is_demo(run_dir: Path) -> bool:
    """A demo's directory: its parts' runs below it, none of its own (or the prerelease.json it reported)."""
    return (run_dir / "prerelease.json").exists() or (
        (run_dir / "load" / "manifest.json").exists() and not (run_dir / "manifest.json").exists())


def finish_demo_dir(run_dir: Path) -> Finished:
    """Finish every part that started, then the demo's report when all three are there."""
    hold(run_dir)  # never rewrite a demo that is still running
    try:
        parts = {name: finish(run_dir / name) for name, finish in PARTS.items()
                 if (run_dir / name / "manifest.json").exists()}
        missing = [name for name in PARTS if name not in parts]
        early = next((f.ended_early for f in parts.values() if f.ended_early), None)
        reasons = [f"the {p} part never started" for p in missing] + (
            [f"the run ended early (last evidence at {early}); finished from its evidence by rig report"]
            if early else [])
        gate = parts.get("gate")
        decision = gate.decision if gate is not None else Decision(decision="undecided", reasons=[])
        if reasons and decision.decision != "fail":
            decision = Decision(decision="undecided", reasons=reasons + decision.reasons)
        outputs = [o for f in parts.values() for o in f.outputs]
        if not missing:
            outputs += _demo_report(run_dir, parts)
        return Finished(run_dir, "demo", decision, early, outputs)
    finally:
        release(run_dir)


def _demo_report(run_dir: Path, parts: dict[str, Finished]) -> list[Path]:
    summary = LoadSummary.model_validate_json((run_dir / "load" / "load.json").read_text(encoding="utf-8"))
    quality = QualityReport.model_validate_json((run_dir / "quality" / "quality.json").read_text(encoding="utf-8"))
    result = PrereleaseResult(run_dir, LoadResult(run_dir / "load", summary, parts["load"].decision, None),
                              GateResult.read(run_dir / "gate", parts["gate"].decision),
                              QualityResult(run_dir / "quality", quality.summary))
    write_prerelease_report(result)
    return [run_dir / "prerelease.json", run_dir / "report.html"]
