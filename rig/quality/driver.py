"""Running one quality case turn by turn: every turn ends in a recorded state, whatever happens.

A turn that lacks a capability ends BLOCKED naming it; a target that stops answering, or an error in the
rig, ends the turn U with its cause kept, and the case's later turns end NOT_RUN (they depend on it).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rig.catalog.models import EvalSet, QualityTurn
from rig.errors import AnswerNeverEnded, CapabilityMissing, RigError, TargetProtocolError, TargetUnreachable
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest
from rig.jsonvalue import ForeignJson
from rig.quality.context import QualityContext
from rig.target.session import TargetSession
from rig.telemetry.tracing import RigTracer, noop_tracer, trace_id_of
from rig.verdict import Item, Verdict, aggregate


class TurnStopped(Exception):
    """A turn could not complete; the case's later turns are not run."""


@dataclass
class QualityCase:
    """The turns of one eval-set case (`用户-04` → turns 1–3) and how its scenario runs them."""

    prefix: str
    case_id: int
    kind: str
    turns: list[tuple[int, QualityTurn]]  # (store key, turn)

    @property
    def label(self) -> str:
        return f"{self.prefix}-{self.case_id:02d}"


TurnDone = Callable[[int, QualityTurn, Verdict, str], None]


@dataclass
class CaseDriver:
    case: QualityCase
    target: TargetSession
    store: EvidenceStore
    tracer: RigTracer = field(default_factory=noop_tracer)
    chaos_defaults: ForeignJson | None = None  # the target's own chaos settings, restored after each case
    on_turn: TurnDone | None = None
    eval_set: EvalSet | None = None
    corpus: CorpusManifest | None = None
    corpus_dir: Path | None = None
    target_down: str | None = None
    finished: set[int] = field(default_factory=set)

    @contextmanager
    def turn(self, index: int) -> Iterator[QualityContext]:
        """The context of turn `index` (0-based); its verdict is stored when the block ends."""
        key, turn = self.case.turns[index]
        self.store.begin_case(1, key, turn.record_id, turn.sheet, turn.name)
        with self.tracer.case_span(key, turn.record_id, turn.performance_codes, 1) as span:
            self.store.set_case_trace(1, key, trace_id_of(span))
            ctx = QualityContext(key, turn, self.store, self.target, tracer=self.tracer, span=span,
                                 corpus_dir=self.corpus_dir)
            stop: str | None = None
            try:
                yield ctx
            except CapabilityMissing as exc:
                ctx.item("precondition", Verdict.BLOCKED, f"missing capability: {exc.capability}")
                stop = f"turn {turn.turn} was blocked"
            except TargetUnreachable as exc:
                ctx.item("target", Verdict.U, f"the target stopped answering: {exc.cause}")
                if not self.target.adapter.ready():
                    self.target_down = f"target unreachable since {turn.record_id}: {exc.cause}"
                stop = f"turn {turn.turn} lost the target"
            except AnswerNeverEnded as exc:  # the stream so far is in the evidence (rig.target.runs)
                ctx.item("target", Verdict.U, f"answer never ended: {exc.message}")
                stop = f"turn {turn.turn}'s answer never ended"
            except TargetProtocolError as exc:  # an answer its adapter's rules cannot read: the target's FAIL
                eid = ctx.evidence("exchange", f"protocol violation in {exc.operation or 'an answer'}",
                                   {"error": str(exc), "operation": exc.operation, "exchange": exc.exchange})
                ctx.item("target", Verdict.FAIL, f"protocol violation: {exc}", eid)
                stop = f"turn {turn.turn} got an answer the protocol does not allow"
            except RigError as exc:
                ctx.evidence("error", f"rig error in {turn.record_id}", {"error": str(exc),
                                                                         "traceback": traceback.format_exc()})
                ctx.item("rig", Verdict.U, f"the rig could not complete the turn: {exc}")
                stop = f"turn {turn.turn} did not complete"
            except Exception as exc:  # a bug must not end the run: the turn is U with its traceback
                ctx.evidence("error", f"unexpected error in {turn.record_id}", {
                    "error": repr(exc), "traceback": traceback.format_exc()})
                ctx.item("rig", Verdict.U, f"unexpected {type(exc).__name__}: {exc}")
                stop = f"turn {turn.turn} did not complete"
            finally:
                try:
                    ctx.reset_chaos(self.chaos_defaults)  # faults and settings a fixture changed, as the gate does
                except RigError:
                    pass
                ctx.close()
                verdict, reason = aggregate(ctx.items)
                span.set_attribute("rig.verdict", verdict.value)
                self.store.end_case(1, key, verdict, reason)
                self.finished.add(index)
                if self.on_turn:
                    self.on_turn(key, turn, verdict, reason)
            if stop:
                raise TurnStopped(stop)

    def run(self, scenario: Callable[[CaseDriver], None]) -> None:
        """Run the case's scenario; turns it never reached end NOT_RUN with the reason."""
        reason = self.target_down
        if reason is None:
            try:
                scenario(self)
            except TurnStopped as exc:
                reason = f"not run: {exc}"
        for index, (key, turn) in enumerate(self.case.turns):
            if index in self.finished:
                continue
            why = reason or self.target_down or "the scenario ended before this turn"
            self.store.begin_case(1, key, turn.record_id, turn.sheet, turn.name)
            self.store.add_item(1, key, Item(name="not_run", verdict=Verdict.NOT_RUN, reason=why))
            self.store.end_case(1, key, Verdict.NOT_RUN, why)
            if self.on_turn:
                self.on_turn(key, turn, Verdict.NOT_RUN, why)
