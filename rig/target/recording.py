"""Recording what a case or case-turn does: every exchange, observation, run and item goes to the store.

Evidence keeps three things apart: what the rig tried and what the target said (`http` exchanges),
what the rig observed by its own independent reading (`observation`), and runs as streamed (`run`).
The gate's cases and the quality workload's turns both record through `RecordingContext`.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import Span

from rig.adapters.base import Adapter, Exchange
from rig.adapters.capabilities import Capabilities
from rig.adapters.models import Auth, Event, Resumed, RunDetail, SessionOpened
from rig.clock import now_ns
from rig.errors import CapabilityMissing
from rig.evidence import EvidenceStore
from rig.measure.derive import run_measures
from rig.measure.events import Measure
from rig.measure.tcodes import TCode
from rig.measure.transcript import RunTranscript
from rig.target.session import TargetSession
from rig.telemetry.tracing import RigTracer, trace_id_of, traceparent_of
from rig.verdict import Item, Verdict

MAX_BODY = 6000
SLOW_PROXY_FIRST_MS, SLOW_PROXY_CHUNK_MS = 400.0, 60.0  # a model stream slowed by the rig's LLM proxy
SLOW_SETTINGS = {"token_delay_ms": 25, "first_token_delay_ms": 40}  # the same through a target's own control


def _clip(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= MAX_BODY else {"truncated": True, "head": text[:MAX_BODY]}


class RecordingContext:
    """What every executed case or case-turn records with: the store, the target, a span, and its key.

    `key` is the case's row in the evidence store (a reliability case id, or a quality turn's ordinal);
    `span` is the case's span (from `tracer.case_span`): steps and runs hang under it, and the target's
    spans under those. With telemetry off the tracer is the no-op one and nothing else changes.
    """

    def __init__(self, rep: int, key: int, store: EvidenceStore, target: TargetSession, *, tracer: RigTracer,
                 span: Span) -> None:
        self.rep = rep
        self.key = key
        self.store = store
        self.target = target
        self.items: list[Item] = []
        self.sessions: list[str] = []
        self.tracer = tracer
        self.span = span
        self.trace_id = trace_id_of(span)
        self._run_spans: dict[str, Span] = {}
        self._chaos_used = False
        self._proxy_rules: list[str] = []
        self._recorder = self._record_exchange
        target.adapter.recorders.append(self._recorder)

    @property
    def adapter(self) -> Adapter:
        return self.target.adapter

    @property
    def a(self) -> Auth:
        return self.target.auth["a"]

    @property
    def b(self) -> Auth:
        return self.target.auth["b"]

    @property
    def caps(self) -> Capabilities:
        return self.target.caps

    # -- recording ---------------------------------------------------------------------------------------
    def close(self) -> None:
        for span in self._run_spans.values():  # runs the case never read to their end
            span.end()
        self._run_spans.clear()
        if self._recorder in self.target.adapter.recorders:
            self.target.adapter.recorders.remove(self._recorder)

    def _record_exchange(self, ex: Exchange) -> None:
        self.store.add_evidence(self.rep, self.key, "http", f"{ex.method} {ex.path} → {ex.status}", {
            "account": ex.account, "method": ex.method, "path": ex.path, "status": ex.status, "error": ex.error,
            "request": _clip(ex.request_body), "response": _clip(ex.response_body),
            "duration_ms": round((ex.received_ns - ex.sent_ns) / 1e6, 3)})
        self.tracer.step(self.span, ex.method, ex.path, ex.status, ex.sent_ns, ex.received_ns, ex.account, ex.error)

    def evidence(self, kind: str, title: str, data: Any) -> int:
        return self.store.add_evidence(self.rep, self.key, kind, title, data)

    def observe(self, title: str, data: Any) -> int:
        """What the rig found by its own reading (not what the target said)."""
        return self.evidence("observation", title, data)

    def item(self, name: str, ok: bool | None | Verdict, reason: str, *evidence_ids: int,
             required: bool = True, needs: tuple[str, ...] = (), seen: dict[str, Any] | None = None) -> Item:
        """Record one item; with `needs`, a capability the target lacks makes it BLOCKED naming it.

        `reason` with `seen` is the promise, and `seen` what was observed: PASS reads "<promise> (seen: …)",
        FAIL reads "expected <promise>; seen: …", so a FAIL never reads like a PASS."""
        missing = self.caps.missing(*needs)
        verdict = ok if isinstance(ok, Verdict) else Verdict.of(ok)
        if missing:
            verdict, reason = Verdict.BLOCKED, f"missing capability: {', '.join(missing)}"
        elif seen is not None:
            reason = with_seen(reason, verdict, seen)
        item = Item(name=name, verdict=verdict, reason=reason, evidence_ids=list(evidence_ids), required=required)
        self.items.append(item)
        self.store.add_item(self.rep, self.key, item)
        return item

    def measures(self, measures: list[Measure]) -> None:
        for m in measures:
            m.rep, m.case_id = self.rep, self.key
            m.scenario = m.scenario or f"case{self.key}"
        self.store.add_measures(measures)

    def lacks(self, name: str, *capabilities: str) -> bool:
        """True (and item `name` recorded BLOCKED, naming them) when the target lacks any of `capabilities`:
        the caller skips that part, and the case's other items still run and count."""
        missing = self.caps.missing(*capabilities)
        if missing:
            self.item(name, Verdict.BLOCKED, f"missing capability: {', '.join(missing)}")
        return bool(missing)

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """A part of the case: an operation inside it that the target lacks (`CapabilityMissing`) ends item
        `name` BLOCKED naming it, and the case goes on with its other parts."""
        try:
            yield
        except CapabilityMissing as exc:
            self.item(name, Verdict.BLOCKED, f"missing capability: {exc.capability}"
                      + (f" ({exc.detail})" if exc.detail else ""))

    def declared(self, name: str, capability: str, present: bool, reason: str, *evidence_ids: int,
                 seen: dict[str, Any] | None = None) -> Item:
        """A field the protocol asks for: BLOCKED when the target does not declare `capability`, FAIL when it
        declares it and the field is absent, PASS when it is there."""
        if self.caps.missing(capability):
            return self.item(name, Verdict.BLOCKED, f"missing capability: {capability}", *evidence_ids)
        return self.item(name, present, reason if present else f"declared ({capability}) but absent: {reason}",
                         *evidence_ids, seen=seen)

    def require(self, *capabilities: str) -> None:
        """End the case BLOCKED when the target lacks any of these capabilities."""
        missing = self.caps.missing(*capabilities)
        if missing:
            raise CapabilityMissing(", ".join(missing))

    # -- operations that record themselves ------------------------------------------------------------------
    def traceparent(self) -> str:
        """A `traceparent` in the case's trace, under the case span."""
        return traceparent_of(self.span)

    @contextmanager
    def _run_span(self, question: str) -> Iterator[tuple[str, Any]]:
        """A `rig.run` span for a run about to be submitted: yields its traceparent and a setter of run.id."""
        span = self.tracer.child("rig.run", self.span, **{"rig.case_id": self.key,
                                                          "rig.question_chars": len(question)})

        def bind(run_id: str) -> None:
            span.set_attribute("run.id", run_id)
            self._run_spans[run_id] = span

        try:
            yield traceparent_of(span), bind
        except BaseException:
            span.end()
            raise

    def open_session(self, auth: Auth, doc_ids: list[str], attachments: list[str] | None = None) -> SessionOpened:
        """A session on the target, or — on a target without sessions — a conversation the adapter keeps."""
        opened = self.adapter.open_session(auth, self.target.setup.project_a, doc_ids, attachments)
        self.sessions.append(opened.session_id)
        return opened

    def submit(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None) -> RunTranscript:
        with self._run_span(content) as (traceparent, bind):
            sub = self.adapter.ask(auth, session_id, content, parent_id=parent_id, traceparent=traceparent)
            bind(sub.run_id)
        return RunTranscript(run_id=sub.run_id, session_id=session_id, question=content, submit_ns=sub.submit_ns,
                             accepted_ns=sub.accepted_ns)

    def read(self, auth: Auth, run: RunTranscript, *, revision: bool = False,
             end_code: TCode | None = None) -> RunTranscript:
        """Read the stream to its end, fetch the run record, and record both with the run's T-codes
        (`end_code` names the end time's code when it is not T5/T6, e.g. T9 for a resumed run)."""
        for event in self.adapter.events(auth, run.run_id, last_event_id=run.events[-1].id if run.events else None):
            run.events.append(event)
        run.end_ns = now_ns()
        run.revision = run.revision or revision
        run.end_code = end_code or run.end_code
        return self.finish(auth, run)

    def finish(self, auth: Auth, run: RunTranscript) -> RunTranscript:
        """The run's record (where the target keeps one) with the run, its timeline and T-codes as evidence; a
        target without run records leaves `run.detail` None, and the stream's end is all that is known."""
        if not self.caps.missing("run_detail"):
            run.detail = self.run_detail(auth, run.run_id)
        end = (f"{run.detail.state}/{run.detail.end_reason}" if run.detail is not None else
               f"{run.terminal.state}/{run.terminal.reason} (stream" + (f", {run.ended_by_rig})" if run.ended_by_rig
                                                                      else ")") if run.terminal else "no end seen")
        self.evidence("run", f"run {run.run_id}: {end}", {
            "run_id": run.run_id, "session_id": run.session_id, "question": run.question,
            "timeline": run.timeline(), "answer": run.answer,
            "trace_id": run.detail.trace_id if run.detail is not None else None,
            "record": "target" if run.detail is not None else "none: the stream is all there is"})
        self.measures(run_measures(run))
        span = self._run_spans.pop(run.run_id, None)
        if span is not None:
            span.set_attribute("rig.run.state", end)
            span.end()
        return run

    def chat(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
             revision: bool = False) -> RunTranscript:
        """Ask and read the answer to its end."""
        return self.read(auth, self.submit(auth, session_id, content, parent_id=parent_id), revision=revision)

    def regenerate(self, auth: Auth, message_id: str, session_id: str) -> RunTranscript:
        with self._run_span(f"regenerate {message_id}") as (traceparent, bind):
            sub = self.adapter.regenerate(auth, message_id, traceparent=traceparent)
            bind(sub.run_id)
        run = RunTranscript(run_id=sub.run_id, session_id=session_id, question=f"regenerate {message_id}",
                            submit_ns=sub.submit_ns, accepted_ns=sub.accepted_ns)
        return self.read(auth, run)

    def stop(self, auth: Auth, run: RunTranscript) -> None:
        """Ask the target to stop `run`, stamping when (its T9 `stop_to_end` counts from here)."""
        run.stop_ns = now_ns()
        self.adapter.stop(auth, run.run_id)

    def resume(self, auth: Auth, run_id: str, session_id: str | None) -> tuple[Resumed, RunTranscript]:
        """Resume a stopped run: the target's answer, and the linked run's transcript, to `read` (its end is T9,
        counted from the resume request)."""
        began = now_ns()
        resumed = self.adapter.resume(auth, run_id)
        return resumed, RunTranscript(run_id=resumed.run_id, session_id=session_id, question=f"resume {run_id}",
                                      submit_ns=began, end_code=TCode.T9)

    def stream_until(self, auth: Auth, run: RunTranscript, predicate: Any) -> Generator[Event, None, None]:
        """Read events into the transcript until `predicate(event)` holds; returns the open iterator."""
        stream = self.adapter.events(auth, run.run_id)
        for event in stream:
            run.events.append(event)
            if predicate(event):
                return stream
        return stream

    def run_detail(self, auth: Auth | None, run_id: str) -> RunDetail:
        detail = self.adapter.run(auth, run_id)
        self.store.add_run(self.rep, self.key, detail.model_dump(mode="json"))
        return detail

    # -- test-only control ----------------------------------------------------------------------------------
    def chaos(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        self.require("chaos")
        self._chaos_used = True
        return self.adapter.chaos(method, path, body)

    def fault(self, point: str, mode: str, **extra: Any) -> str:
        spec = {"point": point, "mode": mode, **extra}
        fault_id = str(self.chaos("POST", "faults", spec)["fault_id"])
        self.evidence("fault", f"fault {point}/{mode} injected", {**spec, "fault_id": fault_id})
        return fault_id

    @contextmanager
    def settings(self, **values: Any) -> Iterator[None]:
        """Runtime settings changed for a block (restored after it, and again at the end of the case)."""
        before = self.chaos("GET", "settings")
        self.chaos("PUT", "settings", values)
        self.evidence("settings", "runtime settings changed", {"before": before, "changed": values})
        try:
            yield
        finally:
            self.chaos("PUT", "settings", before)

    # -- fault fixtures: the rig's own model proxy first, the target's test-only control only when it is the way
    @contextmanager
    def slow_model(self) -> Iterator[Fixture]:
        """The model's stream slowed for the block (stop and disconnect cases need a run still streaming);
        yields the fixture used (`rig_proxy` or `target_control`), which is kept as evidence."""
        proxy = self.target.model_proxy
        if proxy is not None:
            ids = [proxy.add({"mode": "first_token_delay", "delay_ms": SLOW_PROXY_FIRST_MS}),
                   proxy.add({"mode": "slow_body", "delay_ms": SLOW_PROXY_CHUNK_MS})]
            self.evidence("fixture", "model slowed through the rig's LLM proxy",
                          {"fixture": "rig_proxy", "first_token_ms": SLOW_PROXY_FIRST_MS, "chunk_ms": SLOW_PROXY_CHUNK_MS})
            try:
                yield Fixture("rig_proxy", "the model slowed", rule_ids=ids[:1])
            finally:
                for rule in ids:
                    proxy.remove(rule)
            return
        if not self.caps.chaos:
            raise CapabilityMissing("slow_model", detail="no target.model_proxy in rig.yaml and no test-only control")
        with self.settings(**SLOW_SETTINGS):
            self.evidence("fixture", "model slowed through the target's test-only control", {"fixture": "target_control"})
            yield Fixture("target_control", "the model slowed")

    def model_fault(self, mode: str, **extra: Any) -> Fixture:
        """One model request answered with a fault (`empty`, `status`, `no_usage` …): through the rig's LLM proxy
        when configured, else the target's own `llm` fault point; returns the fixture used."""
        proxy = self.target.model_proxy
        if proxy is not None:
            rule = {"mode": mode, "times": 1, **extra}
            rule_id = proxy.add(rule)
            self._proxy_rules.append(rule_id)
            self.evidence("fault", f"model {mode} through the rig's LLM proxy", {"fixture": "rig_proxy", **rule,
                                                                                   "rule_id": rule_id})
            return Fixture("rig_proxy", f"model {mode}", rule_ids=[rule_id])
        return Fixture("target_control", f"model {mode}", fault_ids=[self.fault("llm", mode, times=1, **extra)])

    def retrieval_fault(self, mode: str, *, times: int | None = 1, delay_ms: float | None = None,
                        status: int = 500) -> Fixture:
        """The target's retrieval tool faulted: `error`, `slow` (delay_ms), `empty` or `reset`.

        Through the rig's LLM proxy where the target embeds its retrieval queries there (`model_proxy.embeddings`),
        else through the target's own `internal_search` fault point; neither is CapabilityMissing."""
        proxy = self.target.model_proxy
        if proxy is not None and proxy.embeddings:
            modes: dict[str, dict[str, Any]] = {"error": {"mode": "status", "status": status}, "empty": {"mode": "empty"},
                                                "reset": {"mode": "reset"},
                                                "slow": {"mode": "latency", "delay_ms": delay_ms}}
            rule: dict[str, Any] = {"endpoint": "embeddings", "times": times, **modes[mode]}
            rule_id = proxy.add({k: v for k, v in rule.items() if v is not None})
            self._proxy_rules.append(rule_id)
            self.evidence("fault", f"retrieval {mode} through the rig's LLM proxy (the target's query embeddings)",
                          {"fixture": "rig_proxy", **rule, "rule_id": rule_id})
            return Fixture("rig_proxy", f"retrieval {mode} (embeddings)", rule_ids=[rule_id])
        if not self.caps.chaos:
            raise CapabilityMissing("chaos", detail="no test-only control, and no target.model_proxy with embeddings: "
                                    "true through which the rig could fault the target's retrieval")
        spec: dict[str, Any] = {"times": times} if times else {}
        if delay_ms is not None:
            spec["delay_ms"] = delay_ms
        point_mode = {"error": "error", "slow": "delay", "empty": "empty", "reset": "error"}[mode]
        return Fixture("target_control", f"retrieval {mode}",
                       fault_ids=[self.fault("internal_search", point_mode, **spec)])

    def lift(self, fixture: Fixture) -> None:
        """End a fixture's proxy rules now, before the case goes on (they would otherwise last to its end)."""
        proxy = self.target.model_proxy
        for rule_id in fixture.rule_ids:
            if proxy is not None and rule_id in self._proxy_rules:
                proxy.remove(rule_id)
                self._proxy_rules.remove(rule_id)

    def fired(self, fixture: Fixture) -> int | None:
        """How often the fixture's rules or faults fired so far (None when the fixture cannot say)."""
        proxy = self.target.model_proxy
        if fixture.rule_ids and proxy is not None:
            return sum(proxy.fired(r) for r in fixture.rule_ids)
        if fixture.fault_ids and self.caps.chaos:
            faults = self.adapter.chaos("GET", "faults") or []
            return sum(int(f.get("fired", 0)) for f in faults if str(f.get("fault_id")) in fixture.fault_ids)
        return None

    def took_effect(self, fixture: Fixture, *items: str) -> bool:
        """Whether the fixture reached the target (its fired counter > 0), kept as evidence; when it did not,
        each of `items` is U saying so — a fault that never happened decides nothing."""
        fired = self.fired(fixture)
        e = self.observe(f"{fixture.what}: took effect?", {"fixture": fixture.kind, "what": fixture.what,
                                                          "fired": fired})
        if fired == 0:
            for name in items:
                self.item(name, Verdict.U, f"the fixture ({fixture.what}, {fixture.kind}) did not take effect: it "
                          "fired 0 times, so the target never met the fault", e)
            return False
        return True

    def reset_chaos(self, defaults: dict[str, Any] | None) -> None:
        """Clear the case's model-proxy rules, and faults and default settings when it used the control."""
        proxy = self.target.model_proxy
        while proxy is not None and self._proxy_rules:
            proxy.remove(self._proxy_rules.pop())
        if not self._chaos_used:
            return
        self.adapter.chaos("DELETE", "faults")
        if defaults:
            self.adapter.chaos("PUT", "settings", defaults)


@dataclass
class Fixture:
    """A fault the rig arranged for an item: the way it went in (`rig_proxy`, `target_control`, `rig_process`,
    `rig_derived`), what it does, and the proxy rules or target faults whose fired counters tell its effect."""

    kind: str
    what: str
    rule_ids: list[str] = field(default_factory=list)
    fault_ids: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.kind


def with_seen(promise: str, verdict: Verdict, seen: dict[str, Any]) -> str:
    """An item's reason from its promise and what was observed (values, ids, pages, states)."""
    shown = "; ".join(f"{k} {_short(v)}" for k, v in seen.items())
    if verdict == Verdict.FAIL:
        return f"expected {promise}; seen: {shown}"
    if verdict == Verdict.U:
        return f"could not tell whether {promise}; seen: {shown}"
    return f"{promise} (seen: {shown})"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 160 else text[:157] + "..."
