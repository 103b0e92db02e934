"""A run as the rig observed it: events with client receive times, the run record, and its T-codes.

T3/T4/T5/T6 are taken on the client clock from the submit (just before the request was written); the
server's own stamps are kept apart with `source="server"`. A run that ended without a body is not a T5:
it is counted apart with its state and reason.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from rig.adapters.models import Event, RunDetail, TerminalEvent, TokenEvent
from rig.evidence import Measure


class RunTranscript(BaseModel):
    run_id: str
    session_id: str | None = None
    question: str = ""
    revision: bool = False
    submit_ns: int
    accepted_ns: int = 0
    scheduled_ns: int | None = None
    events: list[Event] = Field(default_factory=list)
    detail: RunDetail | None = None
    end_ns: int | None = None

    @property
    def terminal(self) -> TerminalEvent | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, TerminalEvent) else None

    @property
    def answer(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TokenEvent) and e.kind == "answer")

    @property
    def origin_ns(self) -> int:
        """Where client times count from: the scheduled send when there was a schedule, else the submit."""
        return self.scheduled_ns if self.scheduled_ns is not None else self.submit_ns

    def first(self, name: str) -> Event | None:
        return next((e for e in self.events if e.event == name), None)

    def first_token(self) -> TokenEvent | None:
        return next((e for e in self.events if isinstance(e, TokenEvent)), None)

    def first_answer_token(self) -> TokenEvent | None:
        return next((e for e in self.events if isinstance(e, TokenEvent) and e.kind == "answer"), None)

    def timeline(self) -> list[dict[str, object]]:
        """Events with client (ms after submit) and server times side by side, tokens folded."""
        out: list[dict[str, object]] = []
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

    def measures(self, scenario: str | None = None) -> list[Measure]:
        """Every T-code this run supports (client and server sources kept apart)."""
        out: list[Measure] = []

        def add(code: str, source: str, value: float | None, unit: str = "ms", label: str | None = None) -> None:
            if value is not None:
                out.append(Measure(code=code, source=source, value=round(value, 3), unit=unit, run_id=self.run_id,
                                   label=label, scenario=scenario))

        origin = self.origin_ns
        status = self.first("status")
        add("T3", "client", (status.recv_ns - origin) / 1e6 if status else None)
        first_token = self.first_token()
        answer_token = self.first_answer_token()
        if answer_token is not None:
            kind = first_token.kind if first_token else "answer"
            add("T4", "client", (answer_token.recv_ns - origin) / 1e6, label=f"first_text_kind={kind}")
        terminal = self.terminal
        end_code = "T6" if self.revision else "T5"
        if terminal is not None and self.end_ns is not None:
            total = (terminal.recv_ns - origin) / 1e6
            if terminal.state == "completed" and self.answer.strip():
                add(end_code, "client", total)
            else:
                add(end_code, "client", total, label=f"no_body:{terminal.state}/{terminal.reason}")
        if self.scheduled_ns is not None:
            add("send_lag", "client", (self.submit_ns - self.scheduled_ns) / 1e6)
        d = self.detail
        if d is None:
            return out
        if d.queued_at_ms and d.first_status_at_ms:
            add("T3", "server", d.first_status_at_ms - d.queued_at_ms)
        if d.queued_at_ms and d.first_token_at_ms:
            add("T4", "server", d.first_token_at_ms - d.queued_at_ms)
        if d.queued_at_ms and d.ended_at_ms:
            add(end_code, "server", d.ended_at_ms - d.queued_at_ms,
                label=None if d.state == "completed" else f"no_body:{d.state}/{d.end_reason}")
        if d.queued_at_ms and d.started_at_ms:
            add("T7", "server", d.started_at_ms - d.queued_at_ms, label="queue")
        if d.started_at_ms and d.ended_at_ms:
            add("T7", "server", d.ended_at_ms - d.started_at_ms, label="execution")
        add("T7", "server", float(d.retries or 0), unit="count", label="retries")
        add("T8", "server", 1.0, unit="count", label=f"{d.state}/{d.end_reason}")
        for stage in d.stages:
            if stage.name == "internal_search" and stage.started_at_ms and stage.ended_at_ms:
                add("T2", "server", stage.ended_at_ms - stage.started_at_ms, label="tool_call")
            elif stage.name in ("encode", "query", "expand") and stage.started_at_ms and stage.ended_at_ms:
                add("T2", "server", stage.ended_at_ms - stage.started_at_ms, label=f"stage:{stage.name}")
        for name in ("rounds", "model_requests", "tool_calls_proposed", "tool_calls_executed",
                     "retrieval_model_requests", "embedding_requests"):
            value = getattr(d, name)
            if value is not None:
                add("T11", "server", float(value), unit="count", label=name)
        u = d.usage
        source = u.source or "server"
        add("T12", source, u.input_tokens, unit="tokens", label="input")
        add("T12", source, u.output_tokens, unit="tokens", label="output")
        add("T12", "estimate", u.estimated_input_tokens, unit="tokens", label="input")
        add("T12", "estimate", u.estimated_output_tokens, unit="tokens", label="output")
        add("T13", "actual", d.cost.actual_usd, unit="usd")
        add("T13", "estimate", d.cost.estimated_usd, unit="usd")
        return out
