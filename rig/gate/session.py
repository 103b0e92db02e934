"""`rig gate` end to end on the run lifecycle (`rig.run`): its options, the target, the cases, the decision."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field, field_validator

from rig import events
from rig.browser.host import BrowserHost
from rig.browser.selectors import load_selectors
from rig.catalog import eval_set_sha256, load_eval_set
from rig.catalog.models import EvalSet
from rig.clock import now_iso, parse_duration
from rig.compare.baseline import resolve_baseline
from rig.config import RigConfig
from rig.errors import BrowserUnavailable, ConfigError, RigError
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.gate.browser_kit import BrowserKit
from rig.gate.finish import finish_gate, load_observed
from rig.gate.heartbeat import StreamHeartbeat
from rig.gate.metrics_push import push_gate_results
from rig.gate.registry import CaseSpec, all_cases
from rig.gate.runner import ran_cases, run_cases
from rig.interrupt import DEFAULT_GRACE_S, graceful_stop
from rig.measure.aggregate import observed
from rig.plugins import load_extensions
from rig.policy import Decision, load_policy
from rig.report import build_report_data
from rig.report.data import ReportData
from rig.run import (
    Flag,
    OnOptions,
    OutputChoice,
    PolicyChoice,
    PushChoice,
    Resumable,
    Run,
    TargetChoice,
    TelemetryChoice,
    perform,
)
from rig.runmanifest import DecisionInputs, RunManifest, read_manifest
from rig.target.setup import ISOLATED, SetupNeeds, needs_of
from rig.verdict import Item, Verdict

Progress = Callable[[str, int, int], None]


def parse_case_ids(text: str) -> list[int]:
    """`1-5,20,27` → [1, 2, 3, 4, 5, 20, 27]; anything else a ValueError saying which part."""
    out: list[int] = []
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise ValueError("no case given (for example 1-5,20)")
    for part in filter(None, parts):
        lo, dash, hi = part.partition("-")
        if not lo.strip().isdigit() or (dash and not hi.strip().isdigit()):
            raise ValueError(f"{part!r} is not a case number or a range such as 1-5")
        a, b = int(lo), int(hi) if dash else int(lo)
        if b < a:
            raise ValueError(f"the range {part} runs backwards (write {b}-{a})")
        out.extend(range(a, b + 1))
    return out


def positive_seconds(value: object) -> object:
    """A duration option's text (`30m`, `90s`, `90`) in seconds; more than 0 is the field's own check."""
    if isinstance(value, str):
        seconds = parse_duration(value)
        if seconds <= 0:
            raise ValueError(f"{value!r} is no time at all: it must be longer than 0 s")
        return seconds
    return value


class GateOptions(TargetChoice, OutputChoice, Resumable, PolicyChoice, TelemetryChoice, PushChoice):
    """What `rig gate` was asked to do."""

    PANEL: ClassVar[str] = "Gate"
    cases: Annotated[list[int] | None, Flag("Case ids, e.g. 1-5,20,27.", cli_type=str | None)] = None
    modules: Annotated[list[str] | None, Flag("Only these modules (repeatable).", names=("--module",))] = None
    repeat: Annotated[int, Field(ge=1), Flag("Run every case N times; verdicts must not flip.")] = 1
    deadline_s: Annotated[float | None, Field(gt=0), Flag(
        "The whole gate's time limit, e.g. 30m: no case starts after it (the one in flight ends); the run is then "
        "undecided and --resume completes it.", names=("--deadline",), cli_type=str | None)] = None
    grace_s: Annotated[float, Field(gt=0), Flag(
        "After a first Ctrl-C/SIGTERM, how long the case in flight may take to end before the rig abandons it "
        "(recorded U 'interrupted', which --resume runs again).", names=("--grace",), cli_type=str,
        cli_default="2m")] = DEFAULT_GRACE_S
    eval_set: Annotated[Path | None, Flag("Another eval set file of the same schema.")] = None
    load: Annotated[Path | None, Flag("A finished rig load run: its numbers meet the policy's thresholds.")] = None
    browser: Annotated[bool, Flag("Also run cases 1, 5, 17, 20, 22, 27–30 in headless Chromium.")] = False
    selectors: Annotated[Path | None, Flag("Selector map of the target's UI (YAML; the workbench's by default).")
                         ] = None
    otlp_listen: Annotated[str | None, Flag(
        "HOST:PORT where the gate receives the target's spans (case 34); configure the target's OTLP exporter to "
        "http://HOST:PORT/v1/traces. Default: a free loopback port (embedded target only).")] = None

    @field_validator("cases", mode="before")
    @classmethod
    def _cases(cls, v: object) -> object:
        return parse_case_ids(v) if isinstance(v, str) else v

    @field_validator("deadline_s", "grace_s", mode="before")
    @classmethod
    def _seconds(cls, v: object) -> object:
        return positive_seconds(v)


@dataclass
class GateResult:
    decision: Decision
    run_dir: Path
    data: ReportData
    setup_error: RigError | None = None  # the gate could not set the target up: every case NOT_RUN, saying why

    @classmethod
    def read(cls, run_dir: Path, decision: Decision) -> GateResult:
        """A finished gate run rebuilt from its directory (evidence store and manifest), for `decision`."""
        store = EvidenceStore(run_dir / "evidence.sqlite3")
        try:
            data = build_report_data(store, decision, read_manifest(run_dir))
        finally:
            store.close()
        return cls(decision, run_dir, data)


def select_cases(options: GateOptions) -> list[CaseSpec]:
    specs = all_cases()
    chosen = list(specs.values())
    if options.cases:
        unknown = sorted(set(options.cases) - set(specs))
        if unknown:
            raise ConfigError(f"no such case(s): {unknown}", fix="case ids are 1–38 (rig cases lists them)")
        chosen = [specs[c] for c in sorted(set(options.cases))]
    if options.modules:
        chosen = [s for s in chosen if s.module in options.modules]
        if not chosen:
            raise ConfigError(f"no case in module(s) {options.modules}",
                              fix="modules: " + ", ".join(sorted({s.module for s in specs.values()})))
    return chosen


def setup_needs(specs: list[CaseSpec], eval_set: EvalSet) -> SetupNeeds:
    """What the selected cases need uploaded, together (a case that declares nothing needs everything)."""
    _, manifest = ensure_corpus()
    out = SetupNeeds()
    for spec in specs:
        tokens = spec.papers if spec.papers is not None else ("*", "B", *ISOLATED, "isolated:P32")
        out = out.union(needs_of(tokens, manifest, eval_set.allowed_papers))
    return out


def run_gate(options: GateOptions, progress: Progress | None = None) -> GateResult:
    """Run the gate; raises RigError (exit 2) when it cannot even start."""
    return perform(GateRun(options, progress))


class GateRun(OnOptions[GateOptions]):
    """`rig gate` on the run lifecycle: check the options, run the selected cases, decide."""

    kind = "gate"

    def __init__(self, options: GateOptions, progress: Progress | None = None) -> None:
        self.options = options
        self.progress = progress
        self.ends_at = time.monotonic() + options.deadline_s if options.deadline_s else None  # setup counts too
        self.config: RigConfig | None = None
        self.eval_set: EvalSet | None = None
        self.specs: list[CaseSpec] = []
        self.setup_error: RigError | None = None
        self.done = 0


    def prepare(self) -> RunManifest:
        """Config, policy, eval set, cases, baseline and the load to judge: all read before anything starts."""
        o = self.options
        self.config = o.rig_config()
        load_extensions()  # the installed plug-ins' `rig.events` listeners
        policy = load_policy(o.policy)
        self.eval_set = load_eval_set(o.eval_set)
        self.specs = select_cases(o)
        baseline = _baseline(o, self.config)  # a bad baseline stops the gate before it starts anything
        if o.load is not None:
            load_observed(o.load)  # so does a load run the thresholds cannot read
        return RunManifest(kind="gate", started_at=now_iso(), eval_set_sha256=eval_set_sha256(o.eval_set),
                           policy=policy, defects=o.defects, cases=[s.case_id for s in self.specs], repeat=o.repeat,
                           decision_inputs=DecisionInputs(load=str(o.load) if o.load else None,
                                                          baseline=str(baseline) if baseline else None))

    def execute(self, run: Run) -> None:
        """Open the target (a failure is recorded for finish), then run every case, a stop signal or the deadline
        letting the case in flight end first."""
        o, eval_set = self.options, self.eval_set
        assert eval_set is not None
        if run.resumed and o.cases is None and not o.modules and run.manifest.cases:  # the same run's selection
            self.options = o = o.model_copy(update={"cases": run.manifest.cases, "repeat": run.manifest.repeat})
            self.specs = select_cases(o)
        listen = o.otlp_listen or (self.config.target.otlp_listen if self.config else None)
        _, tracer = run.spans(listen=listen, export=o.otlp_endpoint)
        try:
            target = run.open_target(self.config, progress=self.progress, needs=setup_needs(self.specs, eval_set))
        except Exception as exc:  # the target could not be set up (or the rig broke doing it): nothing can run
            self.setup_error = exc if isinstance(exc, RigError) else run.crashed(exc)
            return
        assert target.corpus is not None  # open_target sets the corpus up
        browser = self._browser(run, target.adapter.base_url) if o.browser else None
        with graceful_stop(o.grace_s) as stop:  # a first Ctrl-C/SIGTERM lets the case in flight end, then reports

            def over() -> bool:
                if stop:
                    stop.settle()  # no case is in flight now: the grace is over
                    return True
                return self.ends_at is not None and time.monotonic() > self.ends_at

            beat = StreamHeartbeat(lambda text: self.progress(text, self.done, self.total) if self.progress else None)
            with events.case_started.listening(beat.on_case), events.run_event.listening(beat.on_event):
                outcome = run_cases(target, run.store, eval_set, target.corpus_dir, target.corpus, self.specs,
                                    repeat=o.repeat, chaos_defaults=target.chaos_defaults, progress=self._on_case,
                                    browser=browser, tracer=tracer, stop=over)
        run.settle_spans()  # the rig's spans and the target's are in the store before the report reads them
        if outcome.target_down:
            run.store.set_meta("target_down", outcome.target_down)
        if outcome.stopped:  # `rig report` keeps saying so
            why = stop.reason if stop else f"the gate's deadline of {o.deadline_s:.0f} s passed: no case started after it"
            cut = f"; {outcome.abandoned}" if outcome.abandoned else ""
            run.store.set_meta("stopped", f"{why} ({self.done} of {self.total} case runs done{cut})")

    def finish(self, run: Run) -> GateResult:
        """The decision and the reports (results.json, report.html, junit.xml), the run history and the push."""
        if self.setup_error is not None:
            return self._setup_failed(run, self.setup_error)
        run.ended()
        decision, data = finish_gate(run.dir, run.store, run.manifest)
        run.publish(decision.decision, observed(run.store.measures()))
        if self.options.pushgateway:
            push_gate_results(self.options.pushgateway, data, data.decision, run.dir.name)
        return GateResult(data.decision, run.dir, data)

    @property
    def total(self) -> int:
        return len(self.specs) * self.options.repeat

    def _on_case(self, rep: int, spec: CaseSpec, verdict: Verdict | None) -> None:
        self.done += 1
        if self.progress:
            self.progress(f"case {spec.case_id} ({spec.module}) → {verdict.value if verdict else '?'}"
                          + (f" [rep {rep}]" if self.options.repeat > 1 else ""), self.done, self.total)

    def _browser(self, run: Run, base_url: str) -> BrowserKit | str:
        """The gate's one browser (closed with the run), or the reason there is none (its items end BLOCKED)."""
        if self.progress:
            self.progress("starting the browser", self.done, self.total)
        selectors = load_selectors(self.options.selectors)  # a bad map is a ConfigError: fix it, don't run half a gate
        try:
            host = BrowserHost()
        except BrowserUnavailable as exc:
            return str(exc)
        run.on_close(host.close)
        return BrowserKit(host=host, selectors=selectors, base_url=base_url, run_dir=run.dir)

    def _setup_failed(self, run: Run, error: RigError) -> GateResult:
        """Setting the target up failed: the cause (with the exchange, for a protocol gap) goes to the evidence
        store, every selected case is NOT_RUN saying why, and the reports are written — undecided, exit 2."""
        store, eval_set = run.store, self.eval_set
        assert eval_set is not None
        store.add_evidence(None, None, "setup_error", f"setup failed: {error.message}"[:200], {
            "error": error.message, "fix": error.fix, "operation": getattr(error, "operation", None),
            "exchange": getattr(error, "exchange", None)})
        reason = f"not run: the target could not be set up: {error.message}"
        ran = ran_cases(store)
        for rep in range(1, self.options.repeat + 1):
            for spec in (s for s in self.specs if (rep, s.case_id) not in ran):
                case = eval_set.case(spec.case_id)
                store.begin_case(rep, spec.case_id, spec.record_id, case.module, case.name)
                store.add_item(rep, spec.case_id, Item(name="setup", verdict=Verdict.NOT_RUN, reason=reason))
                store.end_case(rep, spec.case_id, Verdict.NOT_RUN, reason)
        store.set_meta("setup_failed", f"setup failed: {error}")
        run.ended()
        decision, data = finish_gate(run.dir, store, run.manifest)
        return GateResult(decision, run.dir, data, setup_error=error)


def _baseline(options: GateOptions, config: RigConfig | None) -> Path | None:
    if not options.baseline:
        return None

    target = "embedded" if config is None else config.target.url
    return resolve_baseline(options.baseline, "gate", target, options.reports_root)
