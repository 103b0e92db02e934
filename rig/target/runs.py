"""Run helpers that record themselves: sessions opened, questions asked, streams read to their end, run records
fetched, stops and resumes stamped on the rig's clock; each run's transcript, timeline and T-codes go to the store,
under a `rig.run` span in the case's trace."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.trace import Span

from rig import events
from rig.adapters.models import Auth, Event, Resumed, RunDetail, SessionOpened, TerminalEvent
from rig.clock import now_ns
from rig.errors import AnswerNeverEnded
from rig.measure.derive import run_measures
from rig.measure.tcodes import TCode
from rig.measure.transcript import RunTranscript
from rig.target.accounts import RunAccounts, run_accounts
from rig.target.items import ItemRecording
from rig.telemetry.tracing import traceparent_of
from rig.verdict import Item


class RunRecording(ItemRecording):
    """Operations on the target's runs that record what they did."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._run_spans: dict[str, Span] = {}  # runs submitted and not yet read to their end
        self.accounts: dict[str, RunAccounts] = {}  # each run read to its end: the facts both its channels told
        self._run_evidence: dict[str, int] = {}  # run id → its `run` evidence row

    def accounts_item(self) -> Item | None:
        """Item `accounts_agree` over every run the case read to its end: each fact its stream (or the rig's clock)
        and its record both told, told the same (rig.target.accounts); none where no fact was told twice."""
        told = [a for a in self.accounts.values() if a.compared]
        if not told:
            return None
        split = [d for a in told for d in a.disagreements]
        facts = sorted({f for a in told for f in a.compared})
        if not split:
            return self.item("accounts_agree", True, f"{len(told)} run(s): stream, record and the rig's clock agree "
                             f"on {', '.join(facts)}")
        e = self.evidence("accounts", f"{len(split)} fact(s) told two ways", [d.model_dump() for d in split])
        shown = "; ".join(f"run {d.run_id} {d.fact}: {d.one}, but {d.other}" for d in split[:3])
        runs = [self._run_evidence[r] for r in dict.fromkeys(d.run_id for d in split) if r in self._run_evidence]
        return self.item("accounts_agree", False, f"the target's two accounts of a run disagree: {shown}"
                         + (f" (and {len(split) - 3} more)" if len(split) > 3 else ""), e, *runs)

    def end_run_spans(self) -> None:
        """End the spans of runs the case never read to their end."""
        for span in self._run_spans.values():
            span.end()
        self._run_spans.clear()

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
        run = RunTranscript(run_id=sub.run_id, session_id=session_id, question=content, submit_ns=sub.submit_ns,
                            accepted_ns=sub.accepted_ns, sent_trace_id=traceparent.split("-")[1])
        self.target.links.add(run)
        return run

    def read(self, auth: Auth, run: RunTranscript, *, revision: bool = False,
             end_code: TCode | None = None) -> RunTranscript:
        """Read the stream to its end, fetch the run record, and record both with the run's T-codes
        (`end_code` names the end time's code when it is not T5/T6, e.g. T9 for a resumed run)."""
        stream = self.adapter.events(auth, run.run_id, last_event_id=run.events[-1].id if run.events else None)
        for event in self._within_budget(run, stream):
            run.events.append(event)
            events.run_event.fire(run_id=run.run_id, event=event)
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
        run.evidence_id = self.evidence("run", f"run {run.run_id}: {end}", {
            "run_id": run.run_id, "session_id": run.session_id, "question": run.question,
            "timeline": run.timeline(), "answer": run.answer,
            "trace_id": run.detail.trace_id if run.detail is not None else None,
            "record": "target" if run.detail is not None else "none: the stream is all there is"})
        self.measures(run_measures(run))
        self._run_evidence[run.run_id] = run.evidence_id
        paged = sum(h.page is not None for c in run.detail.tool_calls for h in c.hits) if run.detail else 0
        if paged:
            self.showed("hit_pages", f"run {run.run_id}'s record: {paged} hit(s) with pages", run.evidence_id)
        self.accounts[run.run_id] = run_accounts(run, self.caps)  # read again: its later reading counts
        self.target.links.add(run)
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
                            submit_ns=sub.submit_ns, accepted_ns=sub.accepted_ns, sent_trace_id=traceparent.split("-")[1])
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
        for event in self._within_budget(run, stream):
            run.events.append(event)
            events.run_event.fire(run_id=run.run_id, event=event)
            if predicate(event):
                return stream
        return stream

    def _within_budget(self, run: RunTranscript, stream: Iterator[Event]) -> Iterator[Event]:
        """`stream`'s events until the answer budget is spent without an end: then the stream is closed, what came
        is kept as evidence, and AnswerNeverEnded makes the case U."""
        budget = self.target.answer_budget
        began, count = time.monotonic(), 0
        for event in stream:
            count += 1
            spent = time.monotonic() - began
            if (count > budget.events or spent > budget.seconds) and not isinstance(event, TerminalEvent):
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
                run.end_ns = now_ns()
                self.evidence("run", f"run {run.run_id}: the answer never ended", {
                    "run_id": run.run_id, "session_id": run.session_id, "question": run.question,
                    "events_read": count, "seconds": round(spent, 3),
                    "budget": budget.model_dump(), "answer_head": run.answer[:2000],
                    "last_events": [e.model_dump(mode="json") for e in run.events[-5:]]})
                raise AnswerNeverEnded(run.run_id, count, spent, f"{budget.events} events, {budget.seconds:.0f} s")
            yield event

    def run_detail(self, auth: Auth | None, run_id: str) -> RunDetail:
        detail = self.adapter.run(auth, run_id)
        self.store.add_run(self.rep, self.key, detail.model_dump(mode="json"))
        return detail
