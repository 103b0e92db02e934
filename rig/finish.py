"""`rig report DIR`: finish a run from its evidence store — a gate, load, quality or demo run that was killed, or one
whose reports should be written again. Nothing is run against a target.

Each workload finishes through the same function its live run ends with (`finish_gate`, `finish_load`,
`write_quality_reports`, the demo's report), so `rig report` reproduces a finished run's decision and reasons exactly.
A run whose manifest has no end time ended early: it is marked so (the time of its last evidence) and decides at best
"undecided", since what it did not do cannot pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.load.chaos_result import ChaosAnalysis
from rig.policy import Decision
from rig.run_end import mark_ended_early
from rig.rundir import hold, release
from rig.runmanifest import RunManifest, read_manifest


@dataclass
class Finished:
    run_dir: Path
    kind: str
    decision: Decision
    ended_early: str | None
    outputs: list[Path]


def finish_run(run_dir: Path) -> Finished:
    """Rebuild the run's outputs (results.json, load.json, quality.json, prerelease.json and the reports)."""
    if (run_dir / "prerelease.json").exists() or _is_demo(run_dir):
        return _finish_demo(run_dir)
    if not (run_dir / "manifest.json").exists() or not (run_dir / "evidence.sqlite3").exists():
        raise ConfigError(f"{run_dir} has no manifest.json and evidence.sqlite3: not a rig run directory",
                          fix="pass the directory a rig gate, load, quality or demo run wrote")
    manifest = read_manifest(run_dir)
    if manifest.kind not in ("gate", "load", "quality"):
        raise ConfigError(f"{run_dir} is a {manifest.kind!r} run; rig report finishes gate, load, quality and demo runs")
    hold(run_dir)  # never rewrite what a live run is still writing
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        early = mark_ended_early(run_dir, manifest, store)
        if manifest.kind == "gate":
            from rig.gate.finish import finish_gate

            decision, _ = finish_gate(run_dir, store, manifest)
            return Finished(run_dir, "gate", decision, early, [run_dir / n for n in (
                "results.json", "report.md", "junit.xml", "report.html")])
        if manifest.kind == "load":
            return Finished(run_dir, "load", _finish_load(run_dir, manifest, store, early), early,
                            [run_dir / "load.json", run_dir / "report.html"])
        from rig.catalog import load_eval_set
        from rig.quality.session import write_quality_reports

        summary = write_quality_reports(run_dir, store, load_eval_set(), manifest)
        return Finished(run_dir, "quality", summary.decision, early, [run_dir / "quality.json", run_dir / "report.html"])
    finally:
        store.close()
        release(run_dir)


def _finish_load(run_dir: Path, manifest: RunManifest, store: EvidenceStore, early: str | None) -> Decision:
    from rig.load.finish import finish_load
    from rig.load.summary import load_summary

    plan = store.meta("plan") or {}
    previous = _json(run_dir / "load.json")
    duration = float(plan.get("duration_s") or previous.get("duration_s") or 0.0)
    if previous.get("duration_s") and not early:  # a finished run: the duration its summary was taken over
        duration = float(previous["duration_s"])
    elif early:  # the run lasted until its last evidence, not its planned duration
        started = store.meta("load_started_ms")
        last = store.last_activity_ms()
        if started and last:
            duration = max(0.001, min(duration or float("inf"), (last - float(started)) / 1000))
    workers = int(previous.get("workers") or _count_worker_logs(run_dir))
    users = int(previous.get("users") or 0)
    summary = load_summary(store, run_dir, duration, workers, users)
    if previous.get("chaos") and summary.chaos is None:
        summary.chaos = ChaosAnalysis.model_validate(previous["chaos"])  # the chaos plug-in's, when it got to write it
    return finish_load(run_dir, store, manifest, summary)


def _is_demo(run_dir: Path) -> bool:
    return (run_dir / "load" / "manifest.json").exists() and not (run_dir / "manifest.json").exists()


def _finish_demo(run_dir: Path) -> Finished:
    """Each part that has a store is finished; the demo's report then shows what the parts hold."""
    hold(run_dir)  # never rewrite a demo that is still running
    try:
        return _finish_demo_parts(run_dir)
    finally:
        release(run_dir)


def _finish_demo_parts(run_dir: Path) -> Finished:
    parts = {p: finish_run(run_dir / p) for p in ("load", "gate", "quality") if (run_dir / p / "manifest.json").exists()}
    missing = [p for p in ("load", "gate", "quality") if p not in parts]
    early = next((f.ended_early for f in parts.values() if f.ended_early), None)
    reasons = [f"the {p} part never started" for p in missing] + (
        [f"the run ended early (last evidence at {early}); finished from its evidence by rig report"] if early else [])
    gate = parts.get("gate")
    decision = gate.decision if gate is not None else Decision(decision="undecided", reasons=[])
    if reasons and decision.decision != "fail":
        decision = Decision(decision="undecided", reasons=reasons + decision.reasons)
    outputs = [o for f in parts.values() for o in f.outputs]
    if not missing:
        outputs += _demo_report(run_dir, parts)
    return Finished(run_dir, "demo", decision, early, outputs)


def _demo_report(run_dir: Path, parts: dict[str, Finished]) -> list[Path]:
    from rig.gate.session import GateResult
    from rig.load.session import LoadResult
    from rig.load.summary import LoadSummary
    from rig.prerelease.report import write_prerelease_report
    from rig.prerelease.session import PrereleaseResult
    from rig.quality.session import QualityResult
    from rig.quality.summary import QualityReport

    summary = LoadSummary.model_validate_json((run_dir / "load" / "load.json").read_text(encoding="utf-8"))
    load_decision, gate_decision = parts["load"].decision, parts["gate"].decision
    quality = QualityReport.model_validate_json((run_dir / "quality" / "quality.json").read_text(encoding="utf-8"))
    result = PrereleaseResult(run_dir, LoadResult(run_dir / "load", summary, load_decision, None),
                              GateResult.read(run_dir / "gate", gate_decision),
                              QualityResult(run_dir / "quality", quality.summary))
    write_prerelease_report(result)
    return [run_dir / "prerelease.json", run_dir / "report.html"]


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _count_worker_logs(run_dir: Path) -> int:
    return len(list(run_dir.glob("locust-worker-*.log")))
