"""The one derivation of T-code rows: from a run's stream and run record, a direct search, an upload,
a browser turn. Gate, quality, load and browser all call these; nothing else makes a T-code row.

Sources stay apart: `client` (the rig's clock), `browser` (the page's clock), `server` (the target's own
stamps and counters), `estimate` and `actual` (tokens and cost as the target split them). A value the
target did not report is left out, never guessed.
"""

from __future__ import annotations

from rig.clock import wall_ms
from rig.measure import labels
from rig.measure.events import Measure, RunDetail, SearchResult, Stage
from rig.measure.tcodes import IN_FLIGHT, PACE_ITL, PACE_TPOT, TOKENS_OUT, TCode
from rig.measure.transcript import RunTranscript

INTERNAL_STAGES = ("encode", "query", "expand")
RUN_COUNTERS = ("rounds", "model_requests", "tool_calls_proposed", "tool_calls_executed",
                "retrieval_model_requests", "embedding_requests")


def tcode(code: TCode, source: str, value: float, *, unit: str | None = None, label: str | None = None,
          run_id: str | None = None, scenario: str | None = None, ts_ms: float | None = None) -> Measure:
    """One T-code row; a timed code is in ms unless `unit` says otherwise (T7's retry count)."""
    return Measure(code=code.value, source=source, value=round(float(value), 3),
                   unit=unit or ("ms" if code.timed else "count"), run_id=run_id, label=label, scenario=scenario,
                   ts_ms=ts_ms)


def stream_measures(run: RunTranscript, scenario: str | None = None) -> list[Measure]:
    """T3, T4 and the end code on the client clock, from the events as they arrived."""
    out: list[Measure] = []
    origin = run.origin_ns
    status = run.first("status")
    if status is not None:
        out.append(tcode(TCode.T3, "client", (status.recv_ns - origin) / 1e6, run_id=run.run_id, scenario=scenario))
    answer = run.first_answer_token()
    if answer is not None:
        first = run.first_token()
        kind = first.kind if first is not None else "answer"
        out.append(tcode(TCode.T4, "client", (answer.recv_ns - origin) / 1e6, label=labels.first_text_kind(kind),
                         run_id=run.run_id, scenario=scenario))
    terminal = run.terminal
    if terminal is not None:
        body = terminal.state == "completed" and bool(run.answer.strip())
        out.append(tcode(run.end, "client", (terminal.recv_ns - origin) / 1e6, run_id=run.run_id, scenario=scenario,
                         label=None if body else labels.no_body(terminal.state, terminal.reason)))
    return out


def record_measures(detail: RunDetail, end: TCode = TCode.T5, scenario: str | None = None) -> list[Measure]:
    """What the target's run record states: its own times, state and reason, counters, tokens and cost."""
    out: list[Measure] = []
    rid = detail.run_id

    def add(code: TCode, value: float | None, *, source: str = "server", unit: str | None = None,
            label: str | None = None) -> None:
        if value is not None:
            out.append(tcode(code, source, value, unit=unit, label=label, run_id=rid, scenario=scenario))

    q, s, f = detail.queued_at_ms, detail.started_at_ms, detail.first_token_at_ms
    e, st = detail.ended_at_ms, detail.first_status_at_ms
    if q and st:
        add(TCode.T3, st - q)
    if q and f:
        add(TCode.T4, f - q)
    if q and e:
        add(end, e - q, label=None if detail.state == "completed" else labels.no_body(detail.state, detail.end_reason))
    if q and s:
        add(TCode.T7, s - q, label="queue")
    if s and e:
        add(TCode.T7, e - s, label="execution")
    add(TCode.T7, float(detail.retries or 0), unit="count", label="retries")
    add(TCode.T8, 1.0, label=labels.run_end(detail.state, detail.end_reason))
    for stage in detail.stages:
        out.extend(stage_measures(stage, run_id=rid, scenario=scenario))
    for name in RUN_COUNTERS:
        value = getattr(detail, name)
        if value is not None:
            add(TCode.T11, float(value), label=name)
    usage = detail.usage
    reported = usage.source or "server"
    add(TCode.T12, usage.input_tokens, source=reported, unit="tokens", label="input")
    add(TCode.T12, usage.output_tokens, source=reported, unit="tokens", label="output")
    add(TCode.T12, usage.estimated_input_tokens, source="estimate", unit="tokens", label="input")
    add(TCode.T12, usage.estimated_output_tokens, source="estimate", unit="tokens", label="output")
    add(TCode.T13, detail.cost.actual_usd, source="actual", unit="usd")
    add(TCode.T13, detail.cost.estimated_usd, source="estimate", unit="usd")
    return out


def stage_measures(stage: Stage, *, run_id: str | None = None, scenario: str | None = None,
                   suffix: str = "") -> list[Measure]:
    """T2 of a finished tool stage (`tool_call`) or internal stage (`stage:encode` …); nothing for others."""
    if not (stage.started_at_ms and stage.ended_at_ms):
        return []
    if stage.name == "internal_search":
        label = "tool_call"
    elif stage.name in INTERNAL_STAGES:
        label = f"stage:{stage.name}"
    else:
        return []
    return [tcode(TCode.T2, "server", stage.ended_at_ms - stage.started_at_ms, label=label + suffix, run_id=run_id,
                  scenario=scenario)]


def run_measures(run: RunTranscript, scenario: str | None = None) -> list[Measure]:
    """Every T-code row a run supports: the stream's (client, with T9 from a stop the rig sent) and the run
    record's (server).

    The run's end counts in T8 from the run record; only a run read without one counts its terminal
    event instead (source `client`), so no run is counted twice. Every row is stamped with the wall time
    at which the client saw the run end (its stream's last event, or the break).
    """
    out = stream_measures(run, scenario) + stop_measures(run, scenario) + pace_measures(run, scenario)
    if run.detail is not None:
        out += record_measures(run.detail, run.end, scenario)
    elif run.terminal is not None:
        t = run.terminal
        out.append(tcode(TCode.T8, "client", 1.0, label=labels.run_end(t.state, t.reason), run_id=run.run_id, scenario=scenario))
    recorded = run.detail is not None and (run.detail.usage.input_tokens or run.detail.usage.output_tokens)
    if run.usage is not None and not recorded:  # the stream's own usage report, where the record has none
        for label, value in (("input", run.usage.input_tokens), ("output", run.usage.output_tokens)):
            if value is not None:
                out.append(tcode(TCode.T12, "server", float(value), unit="tokens", label=label, run_id=run.run_id,
                                 scenario=scenario))
    if run.end_ns is not None:
        ended = wall_ms(run.end_ns)
        for m in out:
            m.ts_ms = ended
    return out


def pace_measures(run: RunTranscript, scenario: str | None = None) -> list[Measure]:
    """How fast a completed answer streamed once it began (client clock): `ITL`, the mean gap between its pieces
    after the first; `TPOT`, the same per output token (the target's reported output tokens when it gave them, else
    one per piece); and `tokens_out`, its output tokens (source `server` when reported, `client` when counted as
    pieces). Nothing for an answer of fewer than two pieces, or a run that did not complete."""
    terminal, stamps = run.terminal, run.answer_pieces_ns()
    if terminal is None or terminal.state != "completed" or len(stamps) < 2:
        return []
    span_ms = (stamps[-1] - stamps[0]) / 1e6
    reported = run.usage.output_tokens if run.usage is not None else None
    if not reported and run.detail is not None:
        reported = run.detail.usage.output_tokens
    tokens = int(reported) if reported else len(stamps)
    out = [Measure(code=PACE_ITL, source="client", value=round(span_ms / (len(stamps) - 1), 3), unit="ms",
                   run_id=run.run_id, scenario=scenario),
           Measure(code=TOKENS_OUT, source="server" if reported else "client", value=float(tokens), unit="tokens",
                   run_id=run.run_id, scenario=scenario)]
    if tokens >= 2:
        out.append(Measure(code=PACE_TPOT, source="client", value=round(span_ms / (tokens - 1), 3), unit="ms",
                           run_id=run.run_id, scenario=scenario))
    return out


def flight_measure(run: RunTranscript, scenario: str | None = None) -> Measure | None:
    """How long a run that never showed its end was in flight — its submit (or scheduled send) to the break — so its
    span, not the moment its break was seen, places it against a fault window (`rig.load.phases`)."""
    if run.end_ns is None:
        return None
    return Measure(code=IN_FLIGHT, source="client", value=round((run.end_ns - run.origin_ns) / 1e6, 3), unit="ms",
                   run_id=run.run_id, scenario=scenario, ts_ms=wall_ms(run.end_ns))


def search_measures(result: SearchResult, scenario: str | None = None) -> list[Measure]:
    """A direct call of the retrieval tool: its HTTP round trip (client), its stages, proposed vs executed."""
    out = [tcode(TCode.T2, "client", (result.received_ns - result.sent_ns) / 1e6, label="direct_search",
                 scenario=scenario)]
    for stage in result.stages:
        out.extend(stage_measures(stage, scenario=scenario))
    for label, count in (("tool_calls_proposed", result.proposed_calls), ("tool_calls_executed", result.executed_calls)):
        if count is not None:  # a target that reports no counts gives no row (never a guessed one)
            out.append(tcode(TCode.T11, "server", float(count), label=label, scenario=scenario))
    return out


def ingest_measures(label: str, client_ms: float | None, server_ms: float | None = None, status: str | None = None,
                    scenario: str | None = None) -> list[Measure]:
    """T1 of one file (client and, where the target stamped its stages, server) and its final status (T8)."""
    out: list[Measure] = []
    if client_ms is not None:
        out.append(tcode(TCode.T1, "client", client_ms, label=label, scenario=scenario))
    if server_ms is not None:
        out.append(tcode(TCode.T1, "server", server_ms, label=label, scenario=scenario))
    if status is not None:
        out.append(tcode(TCode.T8, "server", 1.0, label=labels.ingest(status), scenario=scenario))
    return out


def refusal_measures(measured_tokens: float | None, reason: str, scenario: str | None = None) -> list[Measure]:
    """A request the target refused before running it: the tokens it says it measured, and the refusal (T8)."""
    out = [tcode(TCode.T8, "server", 1.0, label=labels.refused(reason), scenario=scenario)]
    if measured_tokens is not None:
        out.insert(0, tcode(TCode.T12, "server", measured_tokens, unit="tokens", label="input:refused",
                            scenario=scenario))
    return out


def browser_measures(run_id: str | None, send_ms: float, t3: float | None, t4: float | None, t5: float | None,
                     server_first_token_ms: float | None = None, answer_ms: float | None = None,
                     scenario: str | None = None) -> list[Measure]:
    """Browser T3/T4/T5 (from the click on send, page clock) and browser T4 − the server's first token."""
    out = [tcode(code, "browser", value, run_id=run_id, scenario=scenario, ts_ms=send_ms)
           for code, value in ((TCode.T3, t3), (TCode.T4, t4), (TCode.T5, t5)) if value is not None]
    if server_first_token_ms is not None and answer_ms is not None:
        out.append(Measure(code="T4_browser_minus_server", source="browser", value=answer_ms - server_first_token_ms,
                           run_id=run_id, scenario=scenario, ts_ms=send_ms))
    return out


def send_lag_measure(scheduled_ns: int, submit_ns: int, *, run_id: str | None = None,
                     scenario: str | None = None) -> Measure:
    """Open-loop arrivals: scheduled send → actual send (not a T-code; every client time already includes it)."""
    return Measure(code="send_lag", source="client", value=round((submit_ns - scheduled_ns) / 1e6, 3), run_id=run_id,
                   scenario=scenario)


def stop_measures(run: RunTranscript, scenario: str | None = None) -> list[Measure]:
    """T9 of a stopped run on the client clock: the stop request → the stream's last event (`stop_to_end`)."""
    end = run.terminal.recv_ns if run.terminal is not None else run.end_ns
    if run.stop_ns is None or end is None:
        return []
    return [tcode(TCode.T9, "client", (end - run.stop_ns) / 1e6, label="stop_to_end", run_id=run.run_id,
                  scenario=scenario)]


def restart_measures(began_ns: int, ready_ns: int, first_good: RunTranscript | None = None,
                     scenario: str | None = None) -> list[Measure]:
    """T9 of a restart on the client clock: restart → ready, and restart → the first good run's end."""
    out = [tcode(TCode.T9, "client", (ready_ns - began_ns) / 1e6, label="restart_to_ready", scenario=scenario)]
    good = first_good.terminal if first_good is not None else None
    if good is not None and good.state == "completed":
        out.append(tcode(TCode.T9, "client", (good.recv_ns - began_ns) / 1e6, label="restart_to_first_good_run",
                         run_id=first_good.run_id if first_good else None, scenario=scenario))
    return out
