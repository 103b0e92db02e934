"""`rig quality` end to end: run directory, target, the 75 case-turns, metrics, judge sheets and reports.

Like the gate, every turn is written to the evidence store as it ends; `--resume` skips the cases whose
turns all finished. The report, `quality.json` and the judge sheets are rendered from the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from rig.catalog import eval_set_sha256, load_eval_set
from rig.catalog.models import EvalSet, QualityTurn
from rig.clock import now_iso
from rig.config import RigConfig, load_config
from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.interrupt import DEFAULT_GRACE_S, GraceExpired, graceful_stop
from rig.plugins import load_extensions
from rig.policy import Decision
from rig.quality.driver import CaseDriver
from rig.quality.judge import propose
from rig.quality.plan import plan_cases, quality_needs
from rig.quality.registry import quality_scenario
from rig.quality.sheets import Proposal, build_sheets, write_sheets
from rig.quality.summary import quality_report, quality_summary, turn_records
from rig.redact import Redactor
from rig.report import build_report_data
from rig.report.html import html_report
from rig.report.quality_section import quality_section
from rig.report.write import point_latest, write_reports
from rig.results.quality import QualitySummary, TurnRecord
from rig.run_end import Finished, ended_reasons, finishing, resuming
from rig.rundir import release, run_directory
from rig.runmanifest import RunManifest, read_manifest, write_manifest
from rig.target.embedded import EmbeddedWorkbench
from rig.target.open import open_target
from rig.target.session import TargetSession
from rig.target.spans import keep_spans, settle_target_spans
from rig.telemetry.otlp_receiver import OtlpReceiver
from rig.telemetry.tracing import RigTracer, configured_endpoints
from rig.verdict import Verdict

Progress = Callable[[str, int, int], None]


class JudgeOptions(BaseModel):
    """An OpenAI-compatible endpoint that proposes scores (`--judge-url`, `--judge-model`, key from env)."""

    base_url: str
    model: str
    api_key_env: str | None = None


class QualityOptions(BaseModel):
    target: str | None = None
    config: Path | None = None
    cases: list[str] | None = None  # case labels (用户-04) or sets (专家, 用户, 对抗)
    out: Path | None = None
    resume: Path | None = None
    eval_set: Path | None = None
    defects: list[str] = Field(default_factory=list)
    reports_root: Path = Path("reports")
    judge: JudgeOptions | None = None
    otlp_endpoint: str | None = None


@dataclass
class QualityResult:
    run_dir: Path
    summary: QualitySummary

    @property
    def decision(self) -> Decision:
        return self.summary.decision


def run_quality(options: QualityOptions, progress: Progress | None = None) -> QualityResult:
    """Run the quality workload; raises RigError (exit 2) when it cannot start."""
    if options.target and not options.config:
        raise ConfigError("--target needs --config rig.yaml (accounts)", fix="see docs/rig.example.yaml")
    config: RigConfig | None = load_config(options.config) if options.config else None
    if config and options.target:
        config.target.url = options.target
    load_extensions()  # the installed plug-ins' `rig.events` listeners
    eval_set = load_eval_set(options.eval_set)
    cases = plan_cases(eval_set, options.cases)
    run_dir = run_directory("quality", out=options.out, reports_root=options.reports_root, resume=options.resume)
    redactor = Redactor()
    if options.resume:
        manifest = read_manifest(run_dir)
        store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
        resuming(manifest, store, now_iso())
    else:
        manifest = RunManifest(kind="quality", started_at=now_iso(), eval_set_sha256=eval_set_sha256(options.eval_set),
                               defects=options.defects)
        write_manifest(run_dir, manifest)  # first, before any evidence: a run that fails at once still says what it is
        store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
    receiver = OtlpReceiver().start()
    stop_keeping = keep_spans(store, receiver)
    tracer = RigTracer(configured_endpoints(receiver.endpoint, options.otlp_endpoint), run_name=run_dir.name,
                       kind="quality")
    started: list[EmbeddedWorkbench] = []
    opened: TargetSession | None = None
    try:
        opened = open_target(config, run_dir, store, redactor, receiver, manifest, manifest.defects, started,
                             progress, needs=quality_needs(cases, eval_set, ensure_corpus()[1]))
        done = store.done_cases()
        total = sum(len(c.turns) for c in cases)
        counter = {"n": 0}

        def on_turn(key: int, turn: QualityTurn, verdict: Verdict, reason: str) -> None:
            counter["n"] += 1
            if progress:
                progress(f"{turn.record_id} → {verdict.value}", counter["n"], total)

        target_down: str | None = None
        with graceful_stop(DEFAULT_GRACE_S) as stop:  # a first Ctrl-C/SIGTERM: the case in flight ends, then reports
            try:
                for case in cases:
                    if all((1, key) in done for key, _ in case.turns):
                        counter["n"] += len(case.turns)
                        continue
                    if stop:
                        stop.settle()
                        store.set_meta("stopped", f"{stop.reason} ({counter['n']} of {total} case-turns done)")
                        break
                    driver = CaseDriver(case, opened, store, tracer=tracer, chaos_defaults=opened.chaos_defaults,
                                        on_turn=on_turn, eval_set=eval_set, corpus=opened.corpus,
                                        corpus_dir=opened.corpus_dir,
                                        target_down=target_down)
                    driver.run(quality_scenario(case.kind))
                    target_down = driver.target_down
            except GraceExpired as exc:  # the turn in flight stays unfinished: `--resume` runs it again
                store.set_meta("stopped", f"{stop.reason} ({counter['n']} of {total} case-turns done; the turn in "
                                          f"flight was abandoned: {exc})")
        tracer.flush()
        if started:
            settle_target_spans(store, receiver)
        manifest.ended_at = now_iso()
        write_manifest(run_dir, manifest)
        summary = write_quality_reports(run_dir, store, eval_set, manifest, options.judge)
        point_latest(run_dir, options.reports_root)
        return QualityResult(run_dir, summary)
    finally:
        tracer.close()
        for target in started:
            target.stop()
        if opened is not None:
            opened.close_fixtures()
        receiver.stop()
        stop_keeping()
        store.close()
        release(run_dir)


def write_quality_reports(run_dir: Path, store: EvidenceStore, eval_set: EvalSet, manifest: RunManifest,
                          judge: JudgeOptions | None = None) -> QualitySummary:
    """The quality run's one decision and its outputs, for the live run and `rig report` alike: quality.json, the judge
    sheets (with proposals when a judge is set), report.html and report.md; a run that did not end whole (killed,
    stopped: `rig.run_end`) decides at best "undecided", saying so."""
    records = turn_records(store)
    proposals: dict[str, Proposal] = {}
    if judge is not None:
        proposals = propose_all(store, records, eval_set, judge)
    else:
        for e in store.evidence(kind="judge_proposal"):
            proposals[e["data"]["record_id"]] = Proposal.model_validate(e["data"]["proposal"])
    summary = quality_summary(store, records)
    notes = ended_reasons(manifest, store)
    if notes:
        summary.decision = Decision(decision="fail" if summary.decision.decision == "fail" else "undecided",
                                    reasons=[*notes, *summary.decision.reasons])
    sheets = build_sheets(records, eval_set, proposals)
    write_sheets(run_dir / "judge", sheets)
    (run_dir / "quality.json").write_text(quality_report(summary, records).model_dump_json(indent=2) + "\n",
                                          encoding="utf-8")
    data = build_report_data(store, summary.decision, manifest.model_dump(mode="json"))
    write_reports(run_dir, data, summary)  # results.json, junit.xml and report.md as the gate writes them
    section = quality_section(summary, records, "judge/sheets.html")
    (run_dir / "report.html").write_text(html_report(data, [("Quality", section)]), encoding="utf-8")
    return summary


def propose_all(store: EvidenceStore, records: list[TurnRecord], eval_set: EvalSet, judge: JudgeOptions
                ) -> dict[str, Proposal]:
    """One proposal per answered case-turn, each stored as evidence (kind `judge_proposal`) as it arrives."""


    key = os.environ.get(judge.api_key_env) if judge.api_key_env else None
    if key:
        store.redactor.add(key)
    answered = [r for r in records if r.answer is not None or (r.kind == "direct_tool" and r.hits)]
    out: dict[str, Proposal] = {}
    for sheet in build_sheets(answered, eval_set):
        proposal = propose(sheet, judge.base_url, judge.model, key)
        store.add_evidence(None, None, "judge_proposal", f"proposed scores for {sheet.record_id}",
                           {"record_id": sheet.record_id, "proposal": proposal.model_dump()})
        out[sheet.record_id] = proposal
    return out


def finish_quality_dir(run_dir: Path) -> Finished:
    """`rig report` of a quality run: its one decision, rebuilt from its directory."""
    with finishing(run_dir, "quality") as (manifest, store, early):
        summary = write_quality_reports(run_dir, store, load_eval_set(), manifest)
    return Finished(run_dir, "quality", summary.decision, early, [run_dir / "quality.json", run_dir / "report.html"])
