"""Two accounts of one run must agree: what its stream said, what its record says, and the rig's own clock.

A target tells some facts twice: how a run ended (the stream's last event and the record), which tool calls it made
(the stream's cards and the record's list), which trace the run belongs to (the caller's `traceparent` and the
record), how many tokens it used (a stream's usage report and the record), and when it did things (the record's
stamps, which cannot precede the request that caused them nor follow the rig's receipt of what they stamp). A check
that takes either account passes a target whose accounts contradict each other; here every fact that the target's
capabilities say both channels carry is held to both, and a disagreement names both accounts.

The clock's tolerance is `CLOCK_TOLERANCE_MS`: how far a target's wall clock may stand from the rig's and still be
believed (the same host, or hosts kept in step by NTP, are well inside it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field

from rig.adapters.capabilities import Capabilities
from rig.clock import wall_ms
from rig.measure.events import RunDetail, StatusEvent, TokenEvent, ToolCallEvent, UsageEvent
from rig.measure.transcript import RunTranscript

CLOCK_TOLERANCE_MS = 500.0


class Disagreement(BaseModel):
    """One fact of one run told two ways."""

    run_id: str
    fact: str  # end, trace, tool_calls, usage, <stamp>_at
    one: str  # what the first account says, naming its channel
    other: str


class RunAccounts(BaseModel):
    """The facts of one run that both channels told, and where they disagree."""

    run_id: str
    compared: list[str] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)


def run_accounts(run: RunTranscript, caps: Capabilities, *, tolerance_ms: float = CLOCK_TOLERANCE_MS
                 ) -> RunAccounts:
    """Every fact of `run` that its stream (or the rig's own stamps) and its record both tell, compared."""
    out = RunAccounts(run_id=run.run_id)
    d = run.detail
    if d is None:
        return out
    _end(run, d, caps, out)
    if not caps.missing("trace_ids") and run.sent_trace_id and d.trace_id:
        _compare(out, "trace", f"the caller's traceparent: trace {run.sent_trace_id}",
                 f"the run record: trace {d.trace_id}", run.sent_trace_id == d.trace_id)
    if not caps.missing("run_tool_calls", "stream_tool_cards") and run.terminal is not None and \
            run.ended_by_rig is None:
        streamed = sorted({e.tool_call_id for e in run.events if isinstance(e, ToolCallEvent)})
        recorded = sorted({c.tool_call_id for c in d.tool_calls})
        _compare(out, "tool_calls", f"the stream's tool cards: {streamed}", f"the run record: {recorded}",
                 streamed == recorded)
    usage = next((e for e in reversed(run.events) if isinstance(e, UsageEvent)), None)
    if not caps.missing("run_usage") and usage is not None:
        said = (usage.input_tokens, usage.output_tokens)
        kept = (d.usage.input_tokens, d.usage.output_tokens)
        _compare(out, "usage", f"the stream's usage: {said[0]} in, {said[1]} out",
                 f"the run record: {kept[0]} in, {kept[1]} out",
                 all(a is None or b is None or a == b for a, b in zip(said, kept, strict=True)))
    if not caps.missing("run_timings"):
        _stamps(run, d, out, tolerance_ms)
    return out


def _compare(out: RunAccounts, fact: str, one: str, other: str, agree: bool) -> None:
    out.compared.append(fact)
    if not agree:
        out.disagreements.append(Disagreement(run_id=out.run_id, fact=fact, one=one, other=other))


def _end(run: RunTranscript, d: RunDetail, caps: Capabilities, out: RunAccounts) -> None:
    """The stream's terminal event against the record's end, where both ended, the target (not the rig) wrote the
    stream's end, and the target keeps ends in the protocol's words (`end_reasons`): a record that only says it is
    done leaves its state to the adapter's reading, which is not the target's second account."""
    end = run.terminal
    if end is None or run.ended_by_rig is not None or not d.terminal or not end.state or caps.missing("end_reasons"):
        return
    reasons = end.reason is not None and d.end_reason is not None
    said = f"{end.state}/{end.reason}" if reasons else end.state
    kept = f"{d.state}/{d.end_reason}" if reasons else d.state
    _compare(out, "end", f"the stream's {end.event} event: {said}", f"the run record: {kept}", said == kept)


def _stamps(run: RunTranscript, d: RunDetail, out: RunAccounts, tolerance_ms: float) -> None:
    """Each of the record's stamps against the rig's clock: none before the rig sent the request that started the
    run, and none after the rig received what it stamps (the first status, the first answer token, the end)."""
    if run.submit_ns <= 0:
        return
    sent = wall_ms(run.submit_ns)
    first_status = next((e for e in run.events if isinstance(e, StatusEvent)), None)
    first_token = next((e for e in run.events if isinstance(e, TokenEvent) and e.kind == "answer" and e.text), None)
    received = {"first_status_at": first_status.recv_ns if first_status else None,
                "first_token_at": first_token.recv_ns if first_token else None,
                "ended_at": run.terminal.recv_ns if run.terminal is not None and run.ended_by_rig is None else None}
    for name in ("queued_at", "started_at", "first_status_at", "first_token_at", "ended_at"):
        stamp = getattr(d, f"{name}_ms")
        if stamp is None:
            continue
        got = received.get(name)
        late = got is not None and stamp > wall_ms(got) + tolerance_ms
        _compare(out, name, f"the run record: {name} {_iso(stamp)}",
                 f"the rig's clock: request sent {_iso(sent)}" + (f", {name.removesuffix('_at').replace('_', ' ')} "
                                                                  f"received {_iso(wall_ms(got))}" if got else "")
                 + f" (tolerance {tolerance_ms:.0f} ms)", not late and stamp >= sent - tolerance_ms)


def _iso(epoch_ms: float) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
