"""`rig quality` end to end: run directory, target, the 75 case-turns, metrics, judge sheets and reports.

Like the gate, every turn is written to the evidence store as it ends; `--resume` skips the cases whose
turns all finished. The report, `quality.json` and the judge sheets are rendered from the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel

from rig.catalog import eval_set_sha256, load_eval_set
from rig.catalog.models import EvalSet, QualityTurn
from rig.clock import now_iso
from rig.config import RigConfig
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.interrupt import DEFAULT_GRACE_S, GraceExpired, graceful_stop
from rig.plugins import load_extensions
from rig.policy import Decision
from rig.quality.driver import CaseDriver, QualityCase
from rig.quality.judge import propose
from rig.quality.plan import plan_cases, quality_needs
from rig.quality.registry import quality_scenario
from rig.quality.sheets import Proposal, build_sheets, write_sheets
from rig.quality.summary import quality_report, quality_summary, turn_records
from rig.report import build_report_data
from rig.report.html import html_report
from rig.report.quality_section import quality_section
from rig.report.write import point_latest, write_reports
from rig.results.quality import QualitySummary, TurnRecord
from rig.run import Flag, OnOptions, OutputChoice, Resumable, Run, TargetChoice, TelemetryChoice, perform
from rig.run_end import Finished, ended_reasons, finishing
from rig.runmanifest import RunManifest
from rig.verdict import Verdict

Progress = Callable[[str, int, int], None]


class JudgeOptions(BaseModel):
    """An OpenAI-compatible endpoint that proposes scores (`--judge-url`, `--judge-model`, key from env)."""

    PANEL: ClassVar[str] = "Judge"
    base_url: Annotated[str | None, Flag("OpenAI-compatible endpoint (…/v1) whose model proposes scores on the judge "
                                         "sheets.", names=("--judge-url",))] = None
    model: Annotated[str, Flag("Model name for --judge-url.", names=("--judge-model",))] = "gpt-4o-mini"
    api_key_env: Annotated[str | None, Flag("Environment variable holding the judge's API key (never passed on the "
                                            "command line).", names=("--judge-key-env",))] = None


class QualityOptions(TargetChoice, OutputChoice, Resumable, TelemetryChoice):
    """What `rig quality` was asked to do."""

    PANEL: ClassVar[str] = "Quality"
    cases: Annotated[list[str] | None, Flag("Only these cases (用户-04) or sets (专家, 用户, 对抗); repeatable.",
                                            names=("--case",))] = None
    eval_set: Annotated[Path | None, Flag("Another eval set file of the same schema.")] = None
    judge: JudgeOptions | None = None  # proposes scores when it names an endpoint


@dataclass
class QualityResult:
    run_dir: Path
    summary: QualitySummary

    @property
    def decision(self) -> Decision:
        return self.summary.decision


def run_quality(options: QualityOptions, progress: Progress | None = None) -> QualityResult:
    """Run the quality workload; raises RigError (exit 2) when it cannot start."""
    return perform(QualityRun(options, progress))


class QualityRun(OnOptions[QualityOptions]):
    """`rig quality` on the run lifecycle: every case's turns in the way its case says, then the metrics."""

    kind = "quality"

    def __init__(self, options: QualityOptions, progress: Progress | None = None) -> None:
        self.options = options
        self.progress = progress
        self.config: RigConfig | None = None
        self.eval_set: EvalSet | None = None
        self.cases: list[QualityCase] = []
        self.done = 0


    def prepare(self) -> RunManifest:
        """Config, eval set and the chosen cases, read before anything starts."""
        o = self.options
        self.config = o.rig_config()
        load_extensions()  # the installed plug-ins' `rig.events` listeners
        self.eval_set = load_eval_set(o.eval_set)
        self.cases = plan_cases(self.eval_set, o.cases)
        return RunManifest(kind="quality", started_at=now_iso(), eval_set_sha256=eval_set_sha256(o.eval_set),
                           defects=o.defects)

    def execute(self, run: Run) -> None:
        """Each case's turns, the finished ones of a resumed run skipped; a stop signal lets the case in flight end."""
        eval_set = self.eval_set
        assert eval_set is not None
        _, tracer = run.spans(export=self.options.otlp_endpoint)
        opened = run.open_target(self.config, progress=self.progress,
                                 needs=quality_needs(self.cases, eval_set, ensure_corpus()[1]))
        done = run.store.done_cases()
        target_down: str | None = None
        with graceful_stop(DEFAULT_GRACE_S) as stop:  # a first Ctrl-C/SIGTERM: the case in flight ends, then reports
            try:
                for case in self.cases:
                    if all((1, key) in done for key, _ in case.turns):
                        self.done += len(case.turns)
                        continue
                    if stop:
                        stop.settle()
                        run.store.set_meta("stopped", f"{stop.reason} ({self.done} of {self.total} case-turns done)")
                        break
                    driver = CaseDriver(case, opened, run.store, tracer=tracer, chaos_defaults=opened.chaos_defaults,
                                        on_turn=self._on_turn, eval_set=eval_set, corpus=opened.corpus,
                                        corpus_dir=opened.corpus_dir, target_down=target_down)
                    driver.run(quality_scenario(case.kind))
                    target_down = driver.target_down
            except GraceExpired as exc:  # the turn in flight stays unfinished: `--resume` runs it again
                run.store.set_meta("stopped", f"{stop.reason} ({self.done} of {self.total} case-turns done; the turn "
                                              f"in flight was abandoned: {exc})")
        run.settle_spans()

    def finish(self, run: Run) -> QualityResult:
        """quality.json, the judge sheets and the reports."""
        assert self.eval_set is not None
        run.ended()
        judge = self.options.judge if self.options.judge and self.options.judge.base_url else None
        summary = write_quality_reports(run.dir, run.store, self.eval_set, run.manifest, judge)
        point_latest(run.dir, run.reports_root)
        return QualityResult(run.dir, summary)

    @property
    def total(self) -> int:
        return sum(len(c.turns) for c in self.cases)

    def _on_turn(self, key: int, turn: QualityTurn, verdict: Verdict, reason: str) -> None:
        self.done += 1
        if self.progress:
            self.progress(f"{turn.record_id} → {verdict.value}", self.done, self.total)


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
            record = e.data if isinstance(e.data, dict) else {}  # {record_id, proposal}, as propose_all kept it
            proposals[record["record_id"]] = Proposal.model_validate(record["proposal"])
    summary = quality_summary(store, records)
    notes = ended_reasons(manifest, store)
    if notes:
        summary.decision = Decision(decision="fail" if summary.decision.decision == "fail" else "undecided",
                                    reasons=[*notes, *summary.decision.reasons])
    sheets = build_sheets(records, eval_set, proposals)
    write_sheets(run_dir / "judge", sheets)
    (run_dir / "quality.json").write_text(quality_report(summary, records).model_dump_json(indent=2) + "\n",
                                          encoding="utf-8")
    data = build_report_data(store, summary.decision, manifest)
    write_reports(run_dir, data, summary)  # results.json, junit.xml and report.md as the gate writes them
    section = quality_section(summary, records, "judge/sheets.html")
    (run_dir / "report.html").write_text(html_report(data, [("Quality", section)]), encoding="utf-8")
    return summary


def propose_all(store: EvidenceStore, records: list[TurnRecord], eval_set: EvalSet, judge: JudgeOptions
                ) -> dict[str, Proposal]:
    """One proposal per answered case-turn, each stored as evidence (kind `judge_proposal`) as it arrives."""


    assert judge.base_url is not None
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
