"""A run as the rig observed it: events with client receive times, the run record, and its end.

Client times count from the submit (the client clock just before the request was written), or from the
scheduled send when the run had an arrival schedule. `rig.measure.derive.run_measures` turns a transcript
into T-code rows; every workload reads runs into this one shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from rig.jsonvalue import JsonObject
from rig.measure.citations import cite_sources
from rig.measure.events import (
    Citation,
    CitationEvent,
    Event,
    Message,
    RunDetail,
    TerminalEvent,
    TokenEvent,
    UsageEvent,
)
from rig.measure.sse import RawEvent
from rig.measure.tcodes import TCode

TAIL = 3  # the last events of a stream a load run types whatever their names (its end, a usage report before it)


class RunTranscript(BaseModel):
    run_id: str
    session_id: str | None = None
    question: str = ""
    revision: bool = False
    end_code: TCode | None = None  # the code of the run's end time (T5, T6 for a revision, T9 for a resume)
    submit_ns: int
    accepted_ns: int = 0
    scheduled_ns: int | None = None
    events: list[Event] = Field(default_factory=list)
    detail: RunDetail | None = None
    end_ns: int | None = None
    stop_ns: int | None = None  # when the client asked the target to stop this run
    error: str | None = None  # why the stream ended without a terminal event, when it did
    untyped: int = 0  # events read but not typed: a load run types what its measures read (`add_measured`)
    piece_ns: list[int] = Field(default_factory=list)  # stamps of answer pieces read but not typed (`add_measured`)
    evidence_id: int | None = None  # its `run` row in the evidence store, once recorded (items name it)
    sent_trace_id: str | None = None  # the trace of the `traceparent` the rig sent with the request that started it

    @property
    def evidence(self) -> tuple[int, ...]:
        """The run's evidence row to name in an item (`ctx.item(..., *run.evidence)`), none before it is recorded."""
        return (self.evidence_id,) if self.evidence_id is not None else ()

    def add_measured(self, raw: Sequence[RawEvent], typed: Callable[[RawEvent], Event]) -> None:
        """Type and keep what the stream's measures read (`rig.measure.derive.stream_measures`): the first event of
        each name, every token up to the first with answer text, and the last `TAIL` events (the end, and a usage
        report just before it). The others are counted in `untyped`: a load run reads hundreds of tokens per run, and
        typing each would cost more than reading it (gate and quality runs keep every event, typed). After the first
        answer text, an untyped event of a token's name is taken as an answer piece: its stamp is kept (`piece_ns`)
        for the pace of the answer (ITL, TPOT). `answer` then holds the text up to its first piece."""
        settled: set[str] = set()  # names whose later events no measure reads
        token_names: set[str] = set()
        answered = False
        skipped = 0
        pieces = self.piece_ns
        head, tail = raw[:-TAIL] if len(raw) > TAIL else [], raw[-TAIL:]
        for r in head:  # runs for every event of a load's run
            if r.parsed is None and r.event in settled:
                skipped += 1
                if answered and r.event in token_names:
                    pieces.append(r.recv_ns)
                continue
            event = typed(r)
            self.events.append(event)
            if isinstance(event, TokenEvent):
                token_names.add(r.event)
                if not answered and event.kind == "answer" and event.text.strip():
                    answered = True
                    settled |= token_names
            elif r.event not in token_names:
                settled.add(r.event)
        self.events.extend(typed(r) for r in tail)
        self.untyped += skipped

    @property
    def terminal(self) -> TerminalEvent | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, TerminalEvent) else None

    @property
    def answer(self) -> str:
        """The answer text of the kept events."""
        return "".join(e.text for e in self.events if isinstance(e, TokenEvent) and e.kind == "answer")

    @property
    def origin_ns(self) -> int:
        """Where client times count from: the scheduled send when there was a schedule, else the submit."""
        return self.scheduled_ns if self.scheduled_ns is not None else self.submit_ns

    @property
    def end(self) -> TCode:
        """The code of this run's end time."""
        return self.end_code or (TCode.T6 if self.revision else TCode.T5)

    @property
    def ended_by_rig(self) -> str | None:
        """Why the rig, not the target, wrote the run's end (`stream_end`: the stream closed with no terminal event;
        `client_disconnect`: the rig stopped it by closing the stream); None when the target's own event ended it."""
        terminal = self.terminal
        derived = terminal.data.get("derived") if terminal is not None else None
        return str(derived) if derived else None

    def citations(self) -> list[Citation]:
        """The answer's citations as the stream gave them: each source event, cited where the answer's `[n]`
        markers use it (quoting the claim before the marker) when the event carries no quote of its own."""
        sources = []
        for e in self.events:
            if isinstance(e, CitationEvent):
                fields = {k: v for k, v in e.data.items() if k in Citation.model_fields}
                sources.append(Citation.model_validate({"citation_id": e.citation_id or str(fields.get("marker")),
                                                        "doc_id": "", **fields}))
        return cite_sources(self.answer, sources, id_prefix=f"{self.run_id}:")

    def streamed_message(self) -> Message:
        """The answer as the stream delivered it, for a target that keeps no session to read it back from."""
        return Message(message_id=f"{self.run_id}:answer", role="assistant", content=self.answer,
                       citations=self.citations(), run_id=self.run_id, source="stream")

    def answer_pieces_ns(self) -> list[int]:
        """Receive stamps of the answer's pieces, in order: its typed answer tokens with text, and the untyped pieces
        of a load run (`piece_ns`)."""
        typed = [e.recv_ns for e in self.events if isinstance(e, TokenEvent) and e.kind == "answer"]
        return sorted(typed + self.piece_ns)

    @property
    def usage(self) -> UsageEvent | None:
        """The tokens the target reported on the stream, when it did (its last report)."""
        return next((e for e in reversed(self.events) if isinstance(e, UsageEvent)), None)

    def first(self, name: str) -> Event | None:
        return next((e for e in self.events if e.event == name), None)

    def first_token(self) -> TokenEvent | None:
        return next((e for e in self.events if isinstance(e, TokenEvent)), None)

    def first_answer_token(self) -> TokenEvent | None:
        return next((e for e in self.events if isinstance(e, TokenEvent) and e.kind == "answer"), None)

    def timeline(self) -> list[JsonObject]:
        """Events with client (ms after submit) and server times side by side, tokens folded."""
        out: list[JsonObject] = []  # evidence rows, shown unread
        tokens = 0
        for e in self.events:
            if isinstance(e, TokenEvent):
                tokens += 1
                if tokens > 1:
                    continue
            out.append({"id": e.id, "event": e.event, "client_ms": round((e.recv_ns - self.submit_ns) / 1e6, 3),
                        "server_ts_ms": e.server_ts_ms,
                        "data": {k: v for k, v in e.data.items() if k not in ("ts_ms", "text")}})
        if tokens > 1:
            out.append({"event": "token", "count": tokens})
        return out

