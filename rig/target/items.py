"""Items and evidence: what a case or case-turn records — exchanges, observations, items with their verdicts and
reasons, T-code rows — and how a capability the target lacks makes an item BLOCKED instead of failing it.

Evidence keeps three things apart: what the rig tried and what the target said (`http` exchanges), what the rig
observed by its own independent reading (`observation`), and runs as streamed (`run`, `rig.target.runs`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from opentelemetry.trace import Span

from rig import events
from rig.adapters.base import Adapter, Exchange
from rig.adapters.capabilities import Capabilities
from rig.adapters.models import Auth, Session
from rig.errors import CapabilityMissing
from rig.evidence import EvidenceStore
from rig.jsonvalue import JsonObject
from rig.measure.events import Measure
from rig.target.linking import LinkedAdapter
from rig.target.session import TargetSession
from rig.target.showings import Absence, Showing
from rig.telemetry.tracing import RigTracer, trace_id_of
from rig.verdict import Item, Verdict

MAX_BODY = 6000
UNNAMED = "undecided, not failed: the item named no evidence of what the target showed"
TARGET_SPANS = "target_spans"  # the target sends spans of its work to the rig's receiver


def _clip(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= MAX_BODY else {"truncated": True, "head": text[:MAX_BODY]}


class ItemRecording:
    """The store, the target, the case's span and its key; items, observations and T-code rows recorded there.

    `key` is the case's row in the evidence store (a reliability case id, or a quality turn's ordinal); `span` is
    the case's span (from `tracer.case_span`): steps and runs hang under it, and the target's spans under those.
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
        self._linked = LinkedAdapter(target.adapter, target.links, self._record_links)
        events.exchange.add_listener(self._record_exchange)

    @property
    def adapter(self) -> Adapter:
        """The target's adapter; sessions read through it have saved answers linked to the rig's runs."""
        return cast(Adapter, self._linked)

    def _record_links(self, session: Session, links: list[JsonObject]) -> None:
        self.observe(f"session {session.session_id}: {len(links)} saved answer(s) linked by the rig's correlation",
                     {"session_id": session.session_id, "links": links,
                      "how": "the target names no run on these messages: each is linked to the rig's run by the "
                             "answer text it streamed (text) or the question it answers, in order (question)"})

    @property
    def a(self) -> Auth:
        return self.target.auth["a"]

    @property
    def b(self) -> Auth:
        return self.target.auth["b"]

    @property
    def caps(self) -> Capabilities:
        return self.target.caps

    def _record_exchange(self, adapter: Adapter, exchange: Exchange) -> None:
        if adapter is not self.target.adapter:
            return
        ex = exchange
        self.store.add_evidence(self.rep, self.key, "http", f"{ex.method} {ex.path} → {ex.status}", {
            "account": ex.account, "method": ex.method, "path": ex.path, "status": ex.status, "error": ex.error,
            "request": _clip(ex.request_body), "response": _clip(ex.response_body),
            "duration_ms": round((ex.received_ns - ex.sent_ns) / 1e6, 3)})
        self.tracer.step(self.span, adapter.base_url, ex.method, ex.path, ex.status, ex.sent_ns, ex.received_ns,
                         ex.account, ex.error)

    def evidence(self, kind: str, title: str, data: Any) -> int:
        return self.store.add_evidence(self.rep, self.key, kind, title, data)

    def observe(self, title: str, data: Any) -> int:
        """What the rig found by its own reading (not what the target said)."""
        return self.evidence("observation", title, data)

    def item(self, name: str, ok: bool | None | Verdict, reason: str, *evidence_ids: int,
             required: bool = True, needs: tuple[str, ...] = (), seen: JsonObject | None = None) -> Item:
        """Record one item; with `needs`, a capability the target lacks makes it BLOCKED naming it.

        `reason` with `seen` is the promise, and `seen` what was observed: PASS reads "<promise> (seen: …)",
        FAIL reads "expected <promise>; seen: …", so a FAIL never reads like a PASS."""
        missing = self.caps.missing(*needs)
        verdict = ok if isinstance(ok, Verdict) else Verdict.of(ok)
        if missing:
            verdict, reason = Verdict.BLOCKED, f"missing capability: {', '.join(missing)}"
        elif seen is not None:
            reason = with_seen(reason, verdict, seen)
        if verdict == Verdict.FAIL and not evidence_ids:  # no FAIL without positive evidence, named
            verdict, reason = Verdict.U, f"{UNNAMED}: {reason}"
        item = Item(name=name, verdict=verdict, reason=reason, evidence_ids=list(evidence_ids), required=required)
        self.items.append(item)
        self.store.add_item(self.rep, self.key, item)
        return item

    def measures(self, measures: list[Measure]) -> None:
        for m in measures:
            m.rep, m.case_id = self.rep, self.key
            m.scenario = m.scenario or f"case{self.key}"
        self.store.add_measures(measures)

    def could_not(self, name: str, what: str, tried: str, *evidence_ids: int, required: bool = True) -> Item:
        """Item `name` U: the rig could not find or link what it needed (`what`), saying what it tried. Never a FAIL:
        what the rig could not find is not something the target showed."""
        return self.item(name, Verdict.U, f"could not {what} (tried: {tried})", *evidence_ids, required=required)

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

    def showed(self, capability: str, where: str, *evidence_ids: int) -> None:
        """Note that the target showed `capability` here (the gate keeps the first showing of each)."""
        self.target.showings.saw(capability, where, case_id=self.key,
                                 evidence_id=evidence_ids[0] if evidence_ids else None)

    def absent(self, name: str, capability: str, what: str, *evidence_ids: int) -> Item:
        """Item `name` for a piece of evidence the target did not produce here (`what`): BLOCKED when the target
        never showed `capability` in this gate, FAIL (the showing as evidence) when it did elsewhere — "absent" is
        decided per target, not per item (rig.target.showings)."""
        shown = self.target.showings.first(capability) or self._spans_shown(capability)
        if shown is None:  # so far: judged again when the gate's cases have run (rig.target.showings.rejudge)
            self.target.showings.missed(Absence(rep=self.rep, case_id=self.key, item=name, capability=capability,
                                                what=what))
            return self.item(name, Verdict.BLOCKED, f"missing capability: {capability} — {what}; the target showed "
                             "it nowhere in this gate", *evidence_ids)
        e = self.observe(f"{capability}: where the target showed it", shown.model_dump())
        return self.item(name, Verdict.FAIL, f"{what}, though the target showed {capability} elsewhere in this gate"
                         f" ({shown.where}" + (f", case {shown.case_id})" if shown.case_id is not None else ")"),
                         *evidence_ids, e, *([shown.evidence_id] if shown.evidence_id is not None else []))

    def _spans_shown(self, capability: str) -> Showing | None:
        """`target_spans` is shown by the receiver itself: any span the target (not the rig, not Langfuse) sent."""
        if capability != TARGET_SPANS:
            return None
        span = next((s for s in self.target.receiver.spans if s.scope not in ("rig", "langfuse-sdk")), None)
        if span is None:
            return None
        self.target.showings.saw(TARGET_SPANS, f"span '{span.name}' of trace {span.trace_id}")
        return self.target.showings.first(TARGET_SPANS)

    def declared(self, name: str, capability: str, present: bool, reason: str, *evidence_ids: int,
                 seen: JsonObject | None = None) -> Item:
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


def with_seen(promise: str, verdict: Verdict, seen: JsonObject) -> str:
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
