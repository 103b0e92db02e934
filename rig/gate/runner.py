"""Running the selected cases: each ends in exactly one verdict, recorded as it happens.

A case that lacks a capability ends BLOCKED naming it; a target that stops answering ends the case U
and leaves the rest NOT_RUN; a status the case did not expect, or an answer the protocol does not allow,
is the target breaking a promise: FAIL with the exchange as evidence. An error in the rig itself ends
the case U with its traceback kept.
Finished cases are skipped on `--resume`, except one the rig itself cut short (its `interrupted` item: the grace after
a stop signal ran out while it was in flight), which runs again.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.adapters.models import protocol_violation
from rig.catalog.models import EvalSet
from rig.coverage import Exercise
from rig.coverage.recorder import CoverageRecorder
from rig.errors import (
    AnswerNeverEnded,
    CapabilityMissing,
    RigError,
    TargetHTTPError,
    TargetProtocolError,
    TargetStalled,
    TargetUnreachable,
)
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest
from rig.gate.browser_kit import browser_steps
from rig.gate.context import CaseContext
from rig.gate.registry import CaseSpec
from rig.interrupt import GraceExpired
from rig.jsonvalue import ForeignJson
from rig.target.session import TargetSession
from rig.target.showings import rejudge
from rig.telemetry.tracing import RigTracer, noop_tracer, trace_id_of
from rig.verdict import Item, Verdict, aggregate

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from rig.gate.browser_kit import BrowserKit

ProgressFn = Callable[[int, CaseSpec, Verdict | None], None]
INTERRUPTED = "interrupted"  # the item of a case the rig abandoned after a stop signal; `--resume` runs it again


@dataclass
class RunOutcome:
    target_down: str | None = None
    browser: Any = None
    verdicts: dict[tuple[int, int], tuple[Verdict, str]] = field(default_factory=dict)
    stopped: bool = False  # a stop request ended the run before every case ran
    abandoned: str = ""  # the case the stop's grace cut short, said in the run's decision
    coverage: CoverageRecorder = field(default_factory=CoverageRecorder)  # who the rig saw make each object


def run_cases(target: TargetSession, store: EvidenceStore, eval_set: EvalSet, corpus_dir: Path,
              manifest: CorpusManifest, specs: list[CaseSpec], *, repeat: int = 1,
              chaos_defaults: ForeignJson | None = None, progress: ProgressFn | None = None,
              browser: BrowserKit | str | None = None, tracer: RigTracer | None = None,
              stop: Callable[[], bool] | None = None) -> RunOutcome:
    """Run every selected case `repeat` times (skipping those already finished in the store).

    With `browser` (a kit, or the reason none could start) the cases that have a browser half run it too.
    Once `stop()` is true no further case starts (the one in flight finishes, or ends U `interrupted` when the stop's
    grace runs out: `rig.interrupt`); the rest stay unrecorded.
    Each case is a span of `tracer` (the no-op tracer by default) carrying its verdict, with its steps and
    runs under it.
    """
    outcome = RunOutcome()
    outcome.browser = browser
    _own_setup(outcome.coverage, target, store)
    tracer = tracer or noop_tracer()
    done = ran_cases(store)
    in_flight: tuple[int, int] | None = None
    try:
        for rep in range(1, repeat + 1):
            for spec in specs:
                case = eval_set.case(spec.case_id)
                if (rep, spec.case_id) in done:
                    row = next(c for c in store.cases(rep) if c.case_id == spec.case_id)
                    outcome.verdicts[(rep, spec.case_id)] = (row.verdict or Verdict.U, row.reason or "")
                    if progress:
                        progress(rep, spec, row.verdict)
                    continue
                if stop is not None and stop():
                    outcome.stopped = True
                    return outcome
                store.begin_case(rep, spec.case_id, spec.record_id, case.module, case.name)
                in_flight = (rep, spec.case_id)
                if outcome.target_down:
                    item = Item(name="not_run", verdict=Verdict.NOT_RUN, reason=outcome.target_down)
                    store.add_item(rep, spec.case_id, item)
                    verdict, reason = Verdict.NOT_RUN, outcome.target_down
                else:
                    verdict, reason = _traced(tracer, target, store, eval_set, corpus_dir, manifest, spec, rep,
                                              chaos_defaults, outcome)
                store.end_case(rep, spec.case_id, verdict, reason)
                in_flight = None
                outcome.verdicts[(rep, spec.case_id)] = (verdict, reason)
                if progress:
                    progress(rep, spec, verdict)
        outcome.verdicts.update(rejudge(store, target.showings))  # an absence the target showed later: FAIL
    except GraceExpired as exc:  # the operator's stop, carried out: the case in flight is the rig's U, run again later
        outcome.stopped = True
        if in_flight is not None:
            rep, case_id = in_flight
            reason = f"interrupted by the rig: {exc}; --resume runs it again"
            store.add_item(rep, case_id, Item(name=INTERRUPTED, verdict=Verdict.U, reason=reason))
            store.end_case(rep, case_id, Verdict.U, reason)
            outcome.verdicts[in_flight] = (Verdict.U, reason)
            outcome.abandoned = f"case {case_id} was abandoned in flight ({exc})"
    return outcome


def _own_setup(coverage: CoverageRecorder, target: TargetSession, store: EvidenceStore) -> None:
    """The setup's projects and uploads are A's and B's, as the rig made them; the uploads the setup made in this
    attempt (each in its ingest record) are the owner's uploads into their own projects, judged by case 6."""
    setup, names = target.setup, target.setup.usernames
    a, b = names.get("a", target.auth["a"].username), names.get("b", target.auth["b"].username)
    coverage.own(a, setup.project_a, setup.project_isolated, *setup.docs.values(), *setup.isolated.values())
    coverage.own(b, setup.project_b_shared, setup.project_b_private, setup.b_shared_doc, setup.b_private_doc)
    uploaded = [e for e in setup.ingest if e.t1_client_ms is not None]
    if uploaded and not store.evidence(kind="coverage"):  # a resumed run's setup reuses what the first one made
        store.add_evidence(None, None, "coverage", f"{len(uploaded)} upload(s) of the setup", [
            Exercise(op="upload", actor="owner", state="ended", status="2xx", item="setup (judged by case 6)"
                     ).model_dump()])


def ran_cases(store: EvidenceStore) -> set[tuple[int, int]]:
    """The case runs a resume keeps: finished with a verdict. One recorded NOT_RUN (the target was down, or could not
    be set up) never ran, and one the rig interrupted never finished: both run on the resume."""
    return {(c.rep, c.case_id) for c in store.cases() if c.status == "done" and c.verdict != Verdict.NOT_RUN
            and not (c.verdict == Verdict.U and any(i.name == INTERRUPTED for i in store.items(c.rep, c.case_id)))}


def _traced(tracer: RigTracer, target: TargetSession, store: EvidenceStore, eval_set: EvalSet,
            corpus_dir: Path, manifest: CorpusManifest, spec: CaseSpec, rep: int,
            chaos_defaults: ForeignJson | None, outcome: RunOutcome) -> tuple[Verdict, str]:
    with tracer.case_span(spec.case_id, spec.record_id, list(spec.codes), rep) as span:
        verdict, reason = _run_one(target, store, eval_set, corpus_dir, manifest, spec, rep, chaos_defaults,
                                   outcome, tracer, span)
        span.set_attribute("rig.verdict", verdict.value)
        span.set_attribute("rig.reason", reason[:500])
        store.set_case_trace(rep, spec.case_id, trace_id_of(span))
        return verdict, reason


def _run_one(target: TargetSession, store: EvidenceStore, eval_set: EvalSet, corpus_dir: Path,
             manifest: CorpusManifest, spec: CaseSpec, rep: int, chaos_defaults: ForeignJson | None,
             outcome: RunOutcome, tracer: RigTracer, span: Span) -> tuple[Verdict, str]:
    ctx = CaseContext(rep, eval_set.case(spec.case_id), store, target, eval_set, corpus_dir, manifest,
                      tracer=tracer, span=span, coverage=outcome.coverage)
    try:
        if spec.needs:
            ctx.require(*spec.needs)
        spec.fn(ctx)
        if outcome.browser is not None:
            _browser_half(ctx, outcome.browser)
    except Exception as exc:  # a bug in a case must not end the gate: judged by what it was (below)
        _judged(ctx, spec, exc, outcome)
    finally:
        ctx.accounts_item()  # every run the case read: its two accounts (stream, record, the rig's clock) agree
        try:
            ctx.reset_chaos(chaos_defaults)
        except RigError:
            pass
        ctx.close()
    return aggregate(ctx.items)


def _judged(ctx: CaseContext, spec: CaseSpec, exc: Exception, outcome: RunOutcome) -> None:
    """The item a case that ended by raising gets: BLOCKED for a missing capability, U for what the rig cannot
    tell from a fault of the target (a stop, a hang, a rate limit, its own error), FAIL for what the target showed."""
    if isinstance(exc, CapabilityMissing):
        ctx.item("precondition", Verdict.BLOCKED, f"missing capability: {exc.capability}"
                 + (f" ({exc.detail})" if exc.detail else ""))
    elif isinstance(exc, TargetUnreachable):
        ctx.item("target", Verdict.U, f"the target stopped answering: {exc.cause}")
        if not ctx.target.adapter.ready():
            outcome.target_down = f"target unreachable since case {spec.case_id}: {exc.cause}"
    elif isinstance(exc, AnswerNeverEnded):  # the stream so far is in the evidence (rig.target.runs)
        ctx.item("target", Verdict.U, f"answer never ended: {exc.message}")
    elif isinstance(exc, TargetStalled):
        ctx.evidence("error", f"deadline in case {spec.case_id}", {"error": str(exc)})
        ctx.item("target", Verdict.U, f"a deadline the rig cannot tell from a hang: {exc.message}")
    elif isinstance(exc, TargetHTTPError) and exc.status == 429:  # "not now": its rate limit, met by the rig (U)
        eid = ctx.evidence("exchange", f"{exc.method} {exc.path} → 429", {
            "method": exc.method, "path": exc.path, "status": 429, "message": str(exc),
            "retry_after_s": exc.retry_after_s})
        ctx.item("target", Verdict.U, f"the target limited the rig's request rate: {exc}", eid)
    elif isinstance(exc, TargetHTTPError):  # a status the case did not expect: the target broke a promise
        eid = ctx.evidence("exchange", f"{exc.method} {exc.path} → {exc.status}",
                           {"method": exc.method, "path": exc.path, "status": exc.status, "code": exc.code,
                            "message": str(exc), "details": exc.details})
        ctx.item("target", Verdict.FAIL, f"unexpected answer: {exc}", eid)
    elif isinstance(exc, TargetProtocolError):  # the target answered what its adapter's rules cannot read: its FAIL
        eid = ctx.evidence("exchange", f"protocol violation in {exc.operation or 'an answer'}",
                           {"error": str(exc), "operation": exc.operation, "exchange": exc.exchange})
        ctx.item("target", Verdict.FAIL, f"protocol violation: {exc}", eid)
    elif isinstance(exc, RigError):
        ctx.evidence("error", f"rig error in case {spec.case_id}", {"error": str(exc),
                                                                    "traceback": traceback.format_exc()})
        ctx.item("rig", Verdict.U, f"the rig could not complete the case: {exc}")
    elif violation := protocol_violation(exc):
        eid = ctx.evidence("exchange", "protocol violation", {"error": violation, "traceback": traceback.format_exc()})
        ctx.item("target", Verdict.FAIL, violation, eid)
    else:
        ctx.evidence("error", f"unexpected error in case {spec.case_id}", {"error": repr(exc),
                                                                           "traceback": traceback.format_exc()})
        ctx.item("rig", Verdict.U, f"unexpected {type(exc).__name__}: {exc}")


def _browser_half(ctx: CaseContext, browser: BrowserKit | str) -> None:
    """The case's browser step, when it has one: BLOCKED without a browser, U when the rig's driving fails."""

    step = browser_steps().get(ctx.case.case_id)
    if step is None:
        return
    if isinstance(browser, str):
        ctx.item("browser", Verdict.BLOCKED, f"no browser: {browser}")
        return
    try:
        browser.host.call(step(ctx, browser), timeout_s=240)
    except (TargetUnreachable, CapabilityMissing):
        raise
    except Exception as exc:  # a selector that never matched, a page that never loaded: unknown, not PASS
        ctx.evidence("error", f"browser step of case {ctx.case.case_id}", {"error": repr(exc)[:2000],
                                                                           "traceback": traceback.format_exc()})
        ctx.item("browser", Verdict.U, f"the browser step did not complete: {type(exc).__name__}: {str(exc)[:300]}")
    finally:
        try:
            browser.host.call(browser.close_users(), timeout_s=30)
        except Exception:
            pass
