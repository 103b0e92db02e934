"""`rig gate` end to end: run directory, target, accounts, corpus, cases, decision and reports."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from rig.browser.host import BrowserHost
from rig.browser.selectors import load_selectors
from rig.catalog import eval_set_sha256, load_eval_set
from rig.catalog.models import EvalSet
from rig.clock import now_iso
from rig.compare.baseline import resolve_baseline
from rig.compare.history import record_history
from rig.config import RigConfig, load_config
from rig.errors import BrowserUnavailable, ConfigError, RigError
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.gate.browser_kit import BrowserKit
from rig.gate.finish import finish_gate, load_observed
from rig.gate.metrics_push import push_gate_results
from rig.gate.registry import CaseSpec, all_cases
from rig.gate.runner import ran_cases, run_cases
from rig.interrupt import DEFAULT_GRACE_S, graceful_stop
from rig.measure.aggregate import observed
from rig.plugins import load_extensions
from rig.policy import Decision, load_policy
from rig.redact import Redactor
from rig.report import build_report_data
from rig.report.data import ReportData
from rig.report.write import point_latest
from rig.run_end import resuming
from rig.rundir import release, run_directory
from rig.runmanifest import DecisionInputs, RunManifest, read_manifest, write_manifest
from rig.target.embedded import EmbeddedWorkbench
from rig.target.open import open_target
from rig.target.session import TargetSession
from rig.target.setup import ISOLATED, SetupNeeds, needs_of
from rig.target.spans import keep_spans, settle_target_spans
from rig.telemetry.otlp_receiver import start_receiver
from rig.telemetry.tracing import RigTracer, configured_endpoints
from rig.verdict import Item, Verdict

if TYPE_CHECKING:
    from rig.gate.browser_kit import BrowserKit

Progress = Callable[[str, int, int], None]


class GateOptions(BaseModel):
    target: str | None = None
    config: Path | None = None
    cases: list[int] | None = None
    modules: list[str] | None = None
    repeat: int = Field(1, ge=1)
    deadline_s: float | None = Field(None, gt=0)  # no case starts after this long; the rest are recorded as not run
    grace_s: float = Field(DEFAULT_GRACE_S, gt=0)  # after a first stop signal, the case in flight's most time
    out: Path | None = None
    resume: Path | None = None
    policy: Path | None = None
    eval_set: Path | None = None
    defects: list[str] = Field(default_factory=list)
    reports_root: Path = Path("reports")
    load: Path | None = None  # a finished `rig load` run whose load.json the policy's thresholds also judge
    browser: bool = False  # also run the browser halves of cases 1, 5, 17, 20, 22, 27–30
    selectors: Path | None = None  # the target UI's selector map (the workbench's by default)
    pushgateway: str | None = None  # push verdict counts and the decision here at the end
    otlp_endpoint: str | None = None  # also export the rig's spans here (OTLP/HTTP), besides the evidence store
    otlp_listen: str | None = None  # HOST:PORT of the gate's span receiver (a target's exporter is told this)
    baseline: str | None = None  # a run directory, or `last-pass`: also decide against it (rig.compare.baseline)


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
            data = build_report_data(store, decision, read_manifest(run_dir).model_dump(mode="json"))
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
    ends_at = time.monotonic() + options.deadline_s if options.deadline_s else None  # setup counts too
    if options.target and not options.config:
        raise ConfigError("--target needs --config rig.yaml (accounts, chaos token, restart command)",
                          fix="write a rig.yaml (see docs/rig.example.yaml) and pass --config")
    config: RigConfig | None = load_config(options.config) if options.config else None
    if config and options.target:
        config.target.url = options.target
    load_extensions()  # the installed plug-ins' `rig.events` listeners
    policy = load_policy(options.policy)
    eval_set = load_eval_set(options.eval_set)
    specs = select_cases(options)
    baseline = _baseline(options, config)  # a bad baseline stops the gate before it starts anything
    if options.load is not None:
        load_observed(options.load)  # so does a load run the thresholds cannot read
    run_dir = run_directory("gate", out=options.out, reports_root=options.reports_root, resume=options.resume)
    redactor = Redactor()
    if options.resume:
        manifest = read_manifest(run_dir)
        store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
        resuming(manifest, store, now_iso())
        defects = manifest.defects
        if options.cases is None and not options.modules and manifest.cases:  # the same run: its own selection
            options = options.model_copy(update={"cases": manifest.cases, "repeat": manifest.repeat})
            specs = select_cases(options)
    else:
        manifest = RunManifest(kind="gate", started_at=now_iso(), eval_set_sha256=eval_set_sha256(options.eval_set),
                               policy=policy, defects=options.defects,
                               decision_inputs=DecisionInputs(load=str(options.load) if options.load else None,
                                                              baseline=str(baseline) if baseline else None),
                               cases=[s.case_id for s in specs], repeat=options.repeat)
        write_manifest(run_dir, manifest)  # first, before any evidence: a run that fails at once still says what it is
        store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
        defects = options.defects
    receiver = start_receiver(options.otlp_listen or (config.target.otlp_listen if config else None))
    stop_keeping = keep_spans(store, receiver)
    tracer = RigTracer(configured_endpoints(receiver.endpoint, options.otlp_endpoint), run_name=run_dir.name)
    embedded = None
    opened: TargetSession | None = None
    browser: BrowserKit | str | None = None
    try:
        started: list[EmbeddedWorkbench] = []
        try:
            opened = open_target(config, run_dir, store, redactor, receiver, manifest, defects, started, progress,
                                 needs=setup_needs(specs, eval_set))
        except Exception as exc:  # the target could not be set up (or the rig broke doing it): nothing can run
            return _setup_failed(options, specs, eval_set, store, manifest, run_dir, exc)
        finally:
            embedded = started[0] if started else None
        target, corpus_dir, corpus_manifest, defaults = opened, opened.corpus_dir, opened.corpus, opened.chaos_defaults
        assert corpus_manifest is not None  # open_target sets the corpus up
        total = len(specs) * options.repeat
        counter = {"n": 0}

        def on_case(rep: int, spec: CaseSpec, verdict: Verdict | None) -> None:
            counter["n"] += 1
            if progress:
                progress(f"case {spec.case_id} ({spec.module}) → {verdict.value if verdict else '?'}"
                         + (f" [rep {rep}]" if options.repeat > 1 else ""), counter["n"], total)

        if options.browser:
            if progress:
                progress("starting the browser", counter["n"], total)
            browser = _start_browser(options, target.adapter.base_url, run_dir)

        def over() -> bool:
            if stop:
                stop.settle()  # no case is in flight now: the grace is over
                return True
            return ends_at is not None and time.monotonic() > ends_at

        with graceful_stop(options.grace_s) as stop:  # a first Ctrl-C/SIGTERM lets the case in flight end, then reports
            outcome = run_cases(target, store, eval_set, corpus_dir, corpus_manifest, specs,
                                repeat=options.repeat, chaos_defaults=defaults, progress=on_case, browser=browser,
                                tracer=tracer, stop=over)
        tracer.flush()  # the rig's spans are in the evidence store before the report reads them
        if embedded is not None:
            settle_target_spans(store, receiver)
            store.set_meta("target_pid", embedded.pid)
        if outcome.target_down:
            store.set_meta("target_down", outcome.target_down)
        if outcome.stopped:  # `rig report` keeps saying so
            why = stop.reason if stop else f"the gate's deadline of {options.deadline_s:.0f} s passed: no case started after it"
            cut = f"; {outcome.abandoned}" if outcome.abandoned else ""
            store.set_meta("stopped", f"{why} ({counter['n']} of {total} case runs done{cut})")
        manifest.ended_at = now_iso()
        write_manifest(run_dir, manifest)
        decision, data = finish_gate(run_dir, store, manifest)
        point_latest(run_dir, options.reports_root)
        record_history(options.reports_root, run_dir, manifest, decision.decision, observed(store.measures()))
        if options.pushgateway:

            push_gate_results(options.pushgateway, data, data.decision, run_dir.name)
        return GateResult(data.decision, run_dir, data)
    except RigError:
        raise
    except Exception as exc:  # a bug of the rig's own: undecided, its traceback kept in the run directory
        raise rig_crash(run_dir, store, exc) from None
    finally:
        if browser is not None and not isinstance(browser, str):
            browser.host.close()
        tracer.close()
        if embedded is not None:
            embedded.stop()  # its last spans are exported on shutdown, while the receiver still listens
        if opened is not None:
            opened.close_fixtures()
        receiver.stop()
        stop_keeping()
        store.close()
        release(run_dir)


def rig_crash(run_dir: Path, store: EvidenceStore, exc: BaseException) -> RigError:
    """A crash of the rig itself: its traceback to `rig-error.log` in the run directory and to the evidence store;
    the error to report (exit 2, undecided — never the target's failure)."""
    trace = "".join(traceback.format_exception(exc))
    log = run_dir / "rig-error.log"
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"{now_iso()}\n{trace}\n")
    try:
        store.add_evidence(None, None, "rig_error", f"{type(exc).__name__}: {exc}"[:200], {"traceback": trace})
    except Exception:  # the store itself may be what broke; the log file has it
        pass
    return RigError(f"the rig itself failed: {type(exc).__name__}: {str(exc)[:200]}",
                    fix=f"nothing was decided about the target; the traceback is in {log} — please report it")


def _setup_failed(options: GateOptions, specs: list[CaseSpec], eval_set: EvalSet, store: EvidenceStore,
                  manifest: RunManifest, run_dir: Path, exc: Exception) -> GateResult:
    """Setting the target up failed: the cause (with the exchange, for a protocol gap) goes to the evidence store,
    every selected case is NOT_RUN saying why, and the reports are written — undecided, exit 2."""
    error = exc if isinstance(exc, RigError) else rig_crash(run_dir, store, exc)
    store.add_evidence(None, None, "setup_error", f"setup failed: {error.message}"[:200], {
        "error": error.message, "fix": error.fix, "operation": getattr(error, "operation", None),
        "exchange": getattr(error, "exchange", None)})
    reason = f"not run: the target could not be set up: {error.message}"
    ran = ran_cases(store)
    for rep in range(1, options.repeat + 1):
        for spec in specs:
            if (rep, spec.case_id) in ran:
                continue
            case = eval_set.case(spec.case_id)
            store.begin_case(rep, spec.case_id, spec.record_id, case.module, case.name)
            store.add_item(rep, spec.case_id, Item(name="setup", verdict=Verdict.NOT_RUN, reason=reason))
            store.end_case(rep, spec.case_id, Verdict.NOT_RUN, reason)
    store.set_meta("setup_failed", f"setup failed: {error}")
    manifest.ended_at = now_iso()
    write_manifest(run_dir, manifest)
    decision, data = finish_gate(run_dir, store, manifest)
    return GateResult(decision, run_dir, data, setup_error=error)


def _baseline(options: GateOptions, config: RigConfig | None) -> Path | None:
    if not options.baseline:
        return None

    target = "embedded" if config is None else config.target.url
    return resolve_baseline(options.baseline, "gate", target, options.reports_root)


def _start_browser(options: GateOptions, base_url: str, run_dir: Path) -> BrowserKit | str:
    """The gate's one browser, or the reason there is none (the browser items then end BLOCKED)."""

    selectors = load_selectors(options.selectors)  # a bad map is a ConfigError: fix it, don't run half a gate
    try:
        host = BrowserHost()
    except BrowserUnavailable as exc:
        return str(exc)
    return BrowserKit(host=host, selectors=selectors, base_url=base_url, run_dir=run_dir)
