"""`rig report DIR`: finish a run from its evidence store — a gate, load, quality or demo run that was killed,
or one whose reports should be written again. Nothing is run against a target.

A run whose manifest has no end time ended early: its manifest gets `ended_early` (the time of the last
evidence), and its decision is at best "undecided" with that reason, since what it did not do cannot pass.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.policy import Decision, Policy, decide_gate
from rig.rundir import hold, release
from rig.runmanifest import RunManifest, read_manifest, write_manifest


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
    hold(run_dir)  # never rewrite what a live run is still writing
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        early = _mark_early(run_dir, manifest, store)
        if manifest.kind == "gate":
            return _finish_gate(run_dir, manifest, store, early)
        if manifest.kind == "load":
            return _finish_load(run_dir, manifest, store, early)
        if manifest.kind == "quality":
            return _finish_quality(run_dir, manifest, store, early)
        raise ConfigError(f"{run_dir} is a {manifest.kind!r} run; rig report finishes gate, load, quality and demo runs")
    finally:
        store.close()
        release(run_dir)


def _mark_early(run_dir: Path, manifest: RunManifest, store: EvidenceStore) -> str | None:
    if manifest.ended_at is not None and manifest.ended_early is None:
        return None
    last = store.last_activity_ms()
    when = dt.datetime.fromtimestamp(last / 1000, dt.UTC).isoformat(timespec="seconds") if last else "unknown"
    manifest.ended_early = manifest.ended_early or when
    write_manifest(run_dir, manifest)
    return manifest.ended_early


def _early_reason(early: str | None, store: EvidenceStore | None = None) -> list[str]:
    stopped = store.meta("stopped") if store is not None else None
    return ([f"the run ended early (last evidence at {early}); finished from its evidence by rig report"] if early
            else []) + ([str(stopped)] if stopped else [])


def _policy(manifest: RunManifest) -> Policy:
    return Policy.model_validate(manifest.policy or {})


def _finish_gate(run_dir: Path, manifest: RunManifest, store: EvidenceStore, early: str | None) -> Finished:
    from rig.measure.aggregate import observed
    from rig.report.data import build_report_data, store_verdicts
    from rig.report.write import write_reports

    verdicts, flips = store_verdicts(store)
    extra = _early_reason(early, store) + [f"case {v.case_id}: {v.reason}" for v in verdicts if v.case_id in flips]
    decision = decide_gate(verdicts, _policy(manifest), observed(store.measures()), extra)
    data = build_report_data(store, decision, manifest.model_dump(mode="json"))
    written = write_reports(run_dir, data)
    return Finished(run_dir, "gate", decision, early, list(written.values()))


def _finish_load(run_dir: Path, manifest: RunManifest, store: EvidenceStore, early: str | None) -> Finished:
    from rig.load.session import decide_load
    from rig.load.summary import load_summary
    from rig.report.data import build_report_data
    from rig.report.html import html_report
    from rig.report.load_section import load_section
    from rig.report.markdown import markdown_report

    plan = store.meta("plan") or {}
    previous = _json(run_dir / "load.json")
    duration = float(plan.get("duration_s") or previous.get("duration_s") or 0.0)
    if early:  # the run lasted until its last evidence, not its planned duration
        started = store.meta("load_started_ms")
        last = store.last_activity_ms()
        if started and last:
            duration = max(0.001, min(duration or float("inf"), (last - float(started)) / 1000))
    workers = int(previous.get("workers") or _count_worker_logs(run_dir))
    users = int(previous.get("users") or 0)
    summary = load_summary(store, run_dir, duration, workers, users)
    if previous.get("chaos") and summary.chaos is None:
        summary.chaos = previous["chaos"]  # the chaos plug-in's analysis, when the run got to write it
    (run_dir / "load.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    decision = decide_load(summary, _policy(manifest))
    if _early_reason(early, store):
        decision = Decision(decision="fail" if decision.decision == "fail" else "undecided",
                            reasons=_early_reason(early, store) + decision.reasons)
    data = build_report_data(store, decision, manifest.model_dump(mode="json"))
    (run_dir / "report.html").write_text(html_report(data, [("Load", load_section(store, summary))]), encoding="utf-8")
    (run_dir / "report.md").write_text(markdown_report(data), encoding="utf-8")
    return Finished(run_dir, "load", decision, early, [run_dir / "load.json", run_dir / "report.html"])


def _finish_quality(run_dir: Path, manifest: RunManifest, store: EvidenceStore, early: str | None) -> Finished:
    from rig.catalog import load_eval_set
    from rig.quality.session import write_quality_reports

    summary = write_quality_reports(run_dir, store, load_eval_set(), manifest, ended_early=early)
    return Finished(run_dir, "quality", summary.decision, early, [run_dir / "quality.json", run_dir / "report.html"])


def _is_demo(run_dir: Path) -> bool:
    return (run_dir / "load" / "manifest.json").exists() and not (run_dir / "manifest.json").exists()


def _finish_demo(run_dir: Path) -> Finished:
    """Each part that has a store is finished; the demo's report then shows what the parts hold."""
    parts = {p: finish_run(run_dir / p) for p in ("load", "gate", "quality") if (run_dir / p / "manifest.json").exists()}
    missing = [p for p in ("load", "gate", "quality") if p not in parts]
    early = next((f.ended_early for f in parts.values() if f.ended_early), None)
    reasons = [f"the {p} part never started" for p in missing] + _early_reason(early)
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
