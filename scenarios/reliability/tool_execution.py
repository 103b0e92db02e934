"""工具执行 — tool execution (reliability cases 12–16)."""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Span

from rig.adapters import Hit, RunDetail, SearchResult, ToolCallEvent, ToolResultEvent
from rig.gate import CaseContext, case
from rig.measure import RunTranscript, search_measures
from rig.pdftext import page_texts, squash
from rig.target import Fixture
from rig.telemetry import ReceivedSpan, subtree, trace_id_of, traceparent_of
from rig.waiting import wait_while_moving
from scenarios.reliability.steps import answer_of, model_calls_ended

P32_QUESTION = "根据《Reputation and Regulations- Evidence from eBay》，2.9%指什么？用两句话解释并引用。"


def mapping_problems(run: RunTranscript, detail: RunDetail, *, stream_cards: bool = True) -> list[str]:
    """Tool calls, results, model input and (where the target streams them) tool cards that do not answer
    each other."""
    problems = []
    calls = {c.tool_call_id: c for c in detail.tool_calls}
    for c in detail.tool_calls:
        for h in c.hits:
            if h.result_tool_call_id not in (None, c.tool_call_id):
                problems.append(f"hit {h.chunk_id} of {c.tool_call_id} answers {h.result_tool_call_id}")
    for mi in detail.model_input:
        orphans = [t for t in mi.tool_call_ids if t not in calls]
        if orphans:
            problems.append(f"round {mi.round} model input carries results of unknown calls {orphans}")
    stream_calls = [str(e.data.get("tool_call_id")) for e in run.events if e.event == "tool_call"]
    if stream_cards and sorted(stream_calls) != sorted(calls):
        problems.append(f"stream announced {stream_calls}, record holds {sorted(calls)}")
    for e in run.events:
        if isinstance(e, ToolResultEvent):
            record = calls.get(e.tool_call_id)
            if record is None:
                problems.append(f"stream result for unknown call {e.tool_call_id}")
            elif record.ok != e.ok or len(record.hits) != e.hits:
                problems.append(f"stream card of {e.tool_call_id} ({e.ok}, {e.hits} hits) differs from the record "
                                f"({record.ok}, {len(record.hits)} hits)")
    return problems


def unlisted_results(detail: RunDetail) -> list[str]:
    """Results the record says went back to a round whose model input does not list them: the list of results a
    model input carried must name every one (`tool_call_ids`), not only name no stranger."""
    fed = {mi.round: set(mi.tool_call_ids) for mi in detail.model_input}
    return [f"round {c.returned_to_round} model input omits {c.tool_call_id}, returned to it"
            for c in detail.tool_calls if c.executed and c.returned_to_round in fed
            and c.tool_call_id not in fed[c.returned_to_round]]


def self_reports(run: RunTranscript, detail: RunDetail) -> dict[str, dict[str, Any]]:
    """The counters a run record states about its own work next to what the rig saw of that work in the stream
    (each tool call announced with its queries, each result card): {counter: {stated, seen, agrees}}."""
    calls = [e for e in run.events if isinstance(e, ToolCallEvent)]
    ok_search_cards = [e for e in run.events if isinstance(e, ToolResultEvent) and e.ok
                       and any(c.tool_call_id == e.tool_call_id and c.name == "internal_search" for c in calls)]

    def queries(call: ToolCallEvent) -> int:
        if call.name != "internal_search":
            return 1
        asked = (call.data.get("args") or {}).get("queries") or []
        return max(1, len([q for q in asked if str(q).strip()]))

    proposed = sum(queries(c) for c in calls)
    out: dict[str, dict[str, Any]] = {"tool_calls": {"stated": len(detail.tool_calls), "seen": len(calls)}}
    if detail.tool_calls_proposed is not None:
        out["tool_calls_proposed"] = {"stated": detail.tool_calls_proposed, "seen": proposed}
    if detail.tool_calls_executed is not None:  # merged queries run once: between the calls that worked and all
        out["tool_calls_executed"] = {"stated": detail.tool_calls_executed,
                                      "seen": f"{len(ok_search_cards)}..{proposed}"}
    for name, row in out.items():
        if name == "tool_calls_executed":
            row["agrees"] = len(ok_search_cards) <= row["stated"] <= proposed
        else:
            row["agrees"] = row["stated"] == row["seen"]
    return out


def citation_problems(ctx: CaseContext, run: RunTranscript, detail: RunDetail) -> list[str]:
    answer = answer_of(ctx, run.session_id or "", run.run_id)
    calls = {c.tool_call_id: {h.chunk_id for h in c.hits} for c in detail.tool_calls if c.ok}
    out = []
    for c in answer.citations if answer else []:
        if c.chunk_id is None:
            continue
        if c.tool_call_id not in calls or c.chunk_id not in calls[c.tool_call_id]:
            out.append(f"citation {c.citation_id} names chunk {c.chunk_id} not returned by call {c.tool_call_id}")
    return out


@case(12, "可靠性-12-1", codes=("T11",), papers=("quality:专家-1", "quality:用户-4"))
def calls_and_results_correspond(ctx: CaseContext) -> None:
    """Run expert case 1 (direct tool) and user case 4 (chat), tying every tool_call_id to its result.

    Expects: every result goes back to the right call, no orphan or crossed result, no wrong source;
    the stream's cards and the model's input are checked separately. Evidence: calls, results as the
    model saw them, and the final model input.
    """
    expert = ctx.eval_set.quality_case("专家", 1)[0]
    scope = [ctx.doc(p) for p in expert.allowed_paper_ids]
    result = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, [expert.prompt], scope)
    direct_ok = [r.tool_call_id for r in result.results] == result.tool_call_ids and all(
        h.doc_id in scope for r in result.results for h in r.hits)
    e = ctx.observe("expert 1 direct call", {"tool_call_ids": result.tool_call_ids,
                                             "results": [(r.tool_call_id, r.query, len(r.hits)) for r in result.results]})
    ctx.item("direct_results_mapped", direct_ok, "each result names its call and stays in scope", e,
             needs=("search_calls", "scope"),
             seen={"calls": result.tool_call_ids, "result_calls": [r.tool_call_id for r in result.results],
                   "hits_outside_scope": sum(h.doc_id not in scope for r in result.results for h in r.hits)})
    # "no wrong source" holds apart from call ids: a target whose direct call names none is still held to its scope
    outside = [(r.query[:40], ctx.paper_of(h.doc_id)) for r in result.results for h in r.hits if h.doc_id not in scope]
    hits = sum(len(r.hits) for r in result.results)
    ctx.item("direct_results_in_scope", (not outside) if hits else None, "every hit of the direct call comes from "
             "the papers it was scoped to", e, needs=("scope",), seen={"hits": hits, "outside_scope": outside[:4]})
    if ctx.lacks("chat_results_mapped", "run_tool_calls"):  # the chat half reads each run's record of its calls
        return
    user = ctx.eval_set.quality_case("用户", 4)
    opened = ctx.open_session(ctx.a, [ctx.doc(p) for p in user[0].allowed_paper_ids])
    problems, cite_problems, unlisted, executed = [], [], [], 0
    reports: list[dict[str, dict[str, Any]]] = []
    for i, turn in enumerate(user):
        run = ctx.chat(ctx.a, opened.session_id, turn.prompt, revision=i > 0)
        assert run.detail is not None
        problems += mapping_problems(run, run.detail, stream_cards=not ctx.caps.missing("stream_tool_cards"))
        unlisted += unlisted_results(run.detail)
        cite_problems += citation_problems(ctx, run, run.detail)
        executed += len(run.detail.tool_calls)
        reports.append(self_reports(run, run.detail))
    e2 = ctx.observe("user 4 call/result mapping", {"turns": len(user), "tool_calls": executed,
                                                    "problems": problems})
    ctx.item("chat_results_mapped", executed > 0 and not problems,
             f"{executed} call(s) across {len(user)} turns" + (f"; {problems[:3]}" if problems else ""), e2)
    e5 = ctx.observe("results returned to each round vs the round's model input", {"omitted": unlisted})
    ctx.item("model_input_lists_every_result", executed > 0 and not unlisted, "each round's model input names every "
             "tool result the record says was returned to it", e2, e5, needs=("run_model_input",),
             seen={"tool_calls": executed, "omitted": unlisted[:3]})
    e3 = ctx.observe("citations traced to their calls", {"problems": cite_problems})
    ctx.item("citations_from_their_calls", not cite_problems, "every citation names a chunk its call returned", e3,
             seen={"problems": cite_problems[:3]})
    # What the record says it did is checked against what the stream showed it doing, never taken on its word.
    e4 = ctx.observe("run records' own counters vs the stream", {"turns": reports})
    disagree = {f"turn{i + 1}.{name}": {"stated": row["stated"], "seen": row["seen"]}
                for i, report in enumerate(reports) for name, row in report.items() if not row["agrees"]}
    ctx.item("self_reports_agree", bool(reports) and not disagree, "each run record's counts of its tool calls "
             "(made, proposed, executed) agree with the calls and results the stream showed", e4,
             needs=("stream_tool_cards",), seen={"disagree": disagree})


def _ranked(hits: list[Hit]) -> list[tuple[str, float]]:
    """A result's hits as the rig compares them: chunk and score, in order."""
    return [(h.chunk_id, round(h.score or 0, 4)) for h in hits]


@case(13, "可靠性-13-1", codes=("T2", "T11"), papers=("P32",))
def merged_queries(ctx: CaseContext) -> None:
    """Send two internal_search queries in one call (plus a repeat of the first) through the direct entry.

    Expects: after any merging the questions and scope are kept, every result maps back to its query,
    and proposed vs executed calls are both recorded. Evidence: arguments before/after and results.
    """
    if ctx.lacks("merged_call", "search_calls"):  # merging is judged by the calls the entry reports: none here
        return
    scope = [ctx.doc("P32")]
    queries = ["买家保护实施后声誉徽章溢价如何变化", "徽章还剩多少信号价值", "买家保护实施后声誉徽章溢价如何变化"]
    call_span = ctx.tracer.child("rig.direct_search", ctx.span, **{"rig.case_id": ctx.key})
    try:  # in the case's trace: a target that sends spans shows what the call did
        result = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, queries, scope,
                                    traceparent=traceparent_of(call_span))
    finally:
        call_span.end()
    ctx.measures(search_measures(result))
    e = ctx.observe("merged call", {"queries": queries, "proposed": result.proposed_calls,
                                    "executed": result.executed_calls,
                                    "results": [(r.tool_call_id, r.query, [h.chunk_id for h in r.hits])
                                                for r in result.results]})
    ctx.item("counts_recorded", result.proposed_calls == 3 and 1 <= (result.executed_calls or 0) <= 3,
             f"proposed {result.proposed_calls}, executed {result.executed_calls}", e)
    ctx.item("queries_kept", [r.query for r in result.results] == queries, "every query comes back with its result", e,
             seen={"queries_returned": [r.query for r in result.results]})
    outside = sorted({ctx.paper_of(h.doc_id) for r in result.results for h in r.hits if h.doc_id not in scope})
    ctx.item("scope_kept", not outside, "no hit outside P32", e, seen={"papers_outside_scope": outside},
             needs=("scope",))
    # Each query alone is the reference for its part of the merged answer: results swapped between queries
    # whose hits share chunks still differ from it in order or score.
    solo = {q: ctx.adapter.search(ctx.a, ctx.target.setup.project_a, [q], scope).results[0] for q in dict.fromkeys(queries)}
    e2 = ctx.observe("each query alone", {q: [(h.chunk_id, round(h.score or 0, 4)) for h in r.hits] for q, r in solo.items()})

    differ = [r.query for r in result.results if r.query in solo and _ranked(r.hits) != _ranked(solo[r.query].hits)]
    ctx.item("results_map_back", [r.tool_call_id for r in result.results] == result.tool_call_ids and not differ,
             "results follow their calls; each query's hits equal the same query sent alone", e, e2,
             seen={"result_calls": [r.tool_call_id for r in result.results], "calls": result.tool_call_ids,
                   "queries_whose_hits_differ_from_alone": differ})
    _self_report_checked(ctx, queries, result, call_span, e)


def _self_report_checked(ctx: CaseContext, queries: list[str], result: SearchResult, call_span: Span,
                         evidence: int) -> None:
    """The entry's own counts against the rig's observation: different answers need different executions, so the
    distinct result sets bound `executed_calls` from below and the queries sent bound `proposed_calls`; and where the
    target sends spans of the call, one `execute_tool` span per executed call and one `stage <name>` per stage."""
    distinct = {tuple((h.chunk_id, h.doc_id) for h in r.hits) for r in result.results}
    executed = result.executed_calls or 0
    ctx.item("executed_calls_possible", result.proposed_calls == len(queries) and len(distinct) <= executed
             <= len(queries), "proposed calls are the queries sent; executed calls at least the distinct answers "
             "returned and at most the calls proposed", evidence,
             seen={"proposed": result.proposed_calls, "queries": len(queries), "executed": executed,
                   "distinct_answers": len(distinct)})
    receiver = ctx.target.receiver
    parent = f"{call_span.get_span_context().span_id:016x}"
    trace_id = trace_id_of(call_span)

    def roots() -> list[ReceivedSpan]:
        return [s for s in receiver.trace(trace_id) if s.parent_span_id == parent and s.scope != "rig"]

    wait_while_moving(lambda: bool(roots()), lambda: len(receiver.spans), 5.0)  # while spans arrive, not a clock
    if not roots() and _sends_spans(ctx) and not _later_run_exported(ctx) and not roots():
        ctx.could_not("self_report_matches_spans", "tell whether the target exports spans of the direct call",
                      "a run asked after the call, whose spans did not arrive either", evidence)
        return
    if not roots():  # BLOCKED if it never sent a span; FAIL when it exported later work and not this call's
        ctx.absent("self_report_matches_spans", "target_spans", "the target sent no span of the direct call to the "
                   f"rig's receiver (trace {trace_id})", evidence)
        return
    mine = subtree([s for s in receiver.trace(trace_id) if s.scope != "rig"], {s.span_id for s in roots()})
    executions = [s for s in mine if s.name.startswith("execute_tool")]
    stage_spans = sorted(s.name.removeprefix("stage ") for s in mine if s.name.startswith("stage "))
    stages = sorted(st.name for st in result.stages)
    e = ctx.evidence("trace", "the target's spans of the direct call", [
        {"name": s.name, "span_id": s.span_id, "parent": s.parent_span_id} for s in mine])
    ctx.item("self_report_matches_spans", len(executions) == executed and (stage_spans == stages or not stage_spans),
             "the entry's executed_calls and stage list agree with its own spans of the call", evidence, e,
             seen={"executed_calls": executed, "execution_spans": len(executions), "stages": stages,
                   "stage_spans": stage_spans})


def _sends_spans(ctx: CaseContext) -> bool:
    """Whether the target has sent the rig's receiver any span of its own in this gate."""
    return any(s.scope not in ("rig", "langfuse-sdk") for s in ctx.target.receiver.spans)


def _later_run_exported(ctx: CaseContext) -> bool:
    """Ask one question after the direct call and wait (while spans arrive) for that run's root span: a target
    exports spans in the order its work ended, so the later run's arriving while the call's did not is what the
    target sent, not the rig's timing. False (undecided) on a target the rig cannot ask."""
    if ctx.caps.missing("ask"):
        return False
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    marker = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    receiver = ctx.target.receiver
    return bool(wait_while_moving(
        lambda: any(s.attributes.get("run.id") == marker.run_id and s.scope != "rig" for s in receiver.spans),
        lambda: len(receiver.spans), 10.0))


@case(14, "可靠性-14-1", codes=("T8",), papers=("P32",))
def tool_error_is_handled(ctx: CaseContext) -> None:
    """Make the first search fail (injected error), then let it recover; ask the P32 question.

    Expects: the error is recognisable; the system retries or states the limit by its real mechanism,
    and never claims evidence it did not get. Evidence: the fault, the error returned, the answer.
    The fault goes in through the target's retrieval: the rig's LLM proxy fails the query's embeddings where
    the target embeds through it (fixture rig_proxy), else the target's own `internal_search` fault point.
    """
    items = ("error_recognisable", "stream_cards_match_record", "no_invented_evidence", "follow_up_behaviour")
    fixture = None
    with ctx.part("tool_fault"):  # every item rests on an error injected into the retrieval
        fixture = ctx.retrieval_fault("error", times=1)
    if fixture is None:
        return
    proxy = ctx.target.model_proxy
    since = proxy.last_seq() if proxy is not None else 0
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run = ctx.chat(ctx.a, opened.session_id, P32_QUESTION)
    if not ctx.took_effect(fixture, *items):
        return
    if run.detail is None:  # no run record: the rig's proxy saw what the retrieval did, the stream how it ended
        _tool_error_without_record(ctx, run, fixture, since)
        return
    first = run.detail.tool_calls[0] if run.detail.tool_calls else None
    e = ctx.observe("first tool result", {"fixture": fixture.kind, "first": first.model_dump() if first else None})
    ctx.item("error_recognisable", first is not None and first.ok is False and bool(first.error),
             "the failed retrieval is recognisable in the run record", e,
             seen={"first_call_ok": first.ok if first else None, "error": first.error if first else None,
                   "calls_recorded": len(run.detail.tool_calls)})
    # The tool cards the stream showed are a second entry point to the same facts: they must agree with the record.
    cards = {ev.tool_call_id: (ev.ok, bool((ev.data or {}).get("error"))) for ev in run.events
             if isinstance(ev, ToolResultEvent)}
    record = {c.tool_call_id: (c.ok, bool(c.error)) for c in run.detail.tool_calls}
    e_cards = ctx.observe("tool cards streamed vs the run record", {"stream": cards, "record": record})
    disagree = {k: {"stream": cards.get(k), "record": v} for k, v in record.items() if cards.get(k) != v}
    ctx.item("stream_cards_match_record", bool(record) and not disagree,
             "each streamed tool card shows the same outcome (ok, error) as the run record", e_cards,
             needs=("stream_tool_cards",), seen={"calls": len(record), "disagree": disagree})
    ok_calls = [c for c in run.detail.tool_calls if c.ok]
    problems = citation_problems(ctx, run, run.detail)
    answer = answer_of(ctx, opened.session_id, run.run_id)
    cites = answer.citations if answer else []
    honest = bool(ok_calls) or not cites
    e2 = ctx.observe("behaviour after the error", {"retried": len(run.detail.tool_calls) > 1,
                                                  "ok_calls": len(ok_calls), "citations": len(cites),
                                                  "state": run.detail.state, "reason": run.detail.end_reason,
                                                  "answer": run.answer[:300], "problems": problems})
    ctx.item("no_invented_evidence", honest and not problems, "citations only from successful calls", e2,
             seen={"ok_calls": len(ok_calls), "citations": len(cites), "problems": problems[:3]})
    # Stating the limit by the real mechanism: the record ends tool_error (or, where the target has no end
    # reasons, failed); an answer that reads like an empty search after a failed one hides the error.
    stated = run.detail.end_reason == "tool_error" if ctx.caps.end_reasons else run.detail.state == "failed"
    ctx.item("follow_up_behaviour", bool(ok_calls) or stated,
             "retried and recovered, or ended stating the tool error", e2,
             seen={"successful_calls": len(ok_calls), "ended": f"{run.detail.state}/{run.detail.end_reason}"})


def _tool_error_without_record(ctx: CaseContext, run: RunTranscript, fixture: Fixture, since: int) -> None:
    """Case 14 on a target that keeps no run record: whether it retried is what its retrieval requests after the
    failed one show (the rig's proxy log); whether it said so is its own stream's end (never the rig's inference)."""
    ctx.lacks("error_recognisable", "run_tool_calls")
    ctx.lacks("stream_cards_match_record", "stream_tool_cards")
    calls = model_calls_ended(ctx, since, endpoint="embeddings") or []
    failed = [c for c in calls if set(c.rules or ()) & set(fixture.rule_ids)]
    after = [c for c in calls if failed and c.seq > failed[0].seq and c.outcome == "ok"]
    stated = run.terminal is not None and run.terminal.state == "failed" and not run.ended_by_rig
    cites = run.citations()
    e = ctx.observe("behaviour after the error (the proxy's retrieval log, the stream's end)", {
        "retrieval_requests": [(c.seq, c.outcome, c.status) for c in calls],
        "went_on_after_the_failure": len(after), "stream_end": run.terminal.data if run.terminal else None,
        "citations": len(cites), "answer": run.answer[:300]})
    ctx.item("no_invented_evidence", bool(after) or not cites, "citations only where retrieval worked", e,
             seen={"retrieval_after_failure_ok": len(after), "citations": len(cites)})
    ctx.item("follow_up_behaviour", bool(after) or stated, "retried and recovered, or ended stating the tool error",
             e, seen={"retrieval_after_failure_ok": len(after), "ended": f"{run.terminal.state}/{run.terminal.reason}"
                      if run.terminal else None, "said_by": "target" if stated else run.ended_by_rig})


@case(15, "可靠性-15-1", codes=("T8",), papers=("P32",))
def expansion_failure_keeps_chunk(ctx: CaseContext) -> None:
    """Request P32 evidence while the expansion stage fails.

    Expects: if it falls back to the original chunk, the source is still right and nothing is passed
    off as expanded; answer quality is judged separately. Evidence: the chunk, the expansion error,
    the final evidence.
    """
    if ctx.lacks("expand_fault", "expansion", "chaos"):  # an error injected in the target's own expansion stage
        return
    scope = [ctx.doc("P32")]
    normal = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, ["2.9%"], scope)
    ctx.fault("expand", "error", times=1)
    degraded = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, ["2.9%"], scope)
    stage = next((s for s in degraded.stages if s.name == "expand"), None)
    hits = degraded.results[0].hits
    e = ctx.observe("expansion failed", {"stage": stage.model_dump() if stage else None,
                                         "hits": [(h.chunk_id, h.page, h.expanded) for h in hits],
                                         "normal_expanded": [h.expanded for h in normal.results[0].hits]})
    ctx.item("failure_recorded", stage is not None and stage.ok is False, "the expand stage reports its error", e,
             seen={"expand_stage": (stage.ok, stage.error) if stage else None})
    ctx.item("no_fake_expansion", bool(hits) and not any(h.expanded for h in hits), "no hit claims expansion", e,
             seen={"hits": len(hits), "claiming_expansion": sum(bool(h.expanded) for h in hits)})

    pages = page_texts(ctx.fixture_path(paper_id="P32"))
    correct = [h for h in hits if h.doc_id == scope[0] and h.page and squash(h.text) in squash(pages[h.page - 1])]
    e2 = ctx.observe("original chunks on their true pages (rig's reading)", {"correct": len(correct), "all": len(hits)})
    ctx.item("source_correct", bool(hits) and len(correct) == len(hits), "each chunk is verbatim on its page", e2,
             seen={"verbatim_on_page": f"{len(correct)}/{len(hits)}"})


@case(16, "可靠性-16-1", codes=("T8", "T11"), papers=("P32",))
def last_round_and_empty_answer(ctx: CaseContext) -> None:
    """Two variants recorded apart: the last outer round (limit tightened) and an empty model answer.

    Expects: the last round stops offering tools and ends truthfully; an empty answer is a failure,
    never `completed`. Evidence: rounds, tool definitions per round, end reasons.
    """
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    if not ctx.lacks("last_round", "run_detail"):  # rounds and the tools offered in each: a run record's
        with ctx.part("last_round"):  # the round limit is set through the target's control; the empty answer is not
            with ctx.settings(max_rounds=1):
                limited = ctx.chat(ctx.a, opened.session_id, P32_QUESTION)
            d = limited.detail
            assert d is not None
            last = d.rounds_detail[-1] if d.rounds_detail else None
            e = ctx.observe("last-round variant", {"rounds": d.rounds, "max_rounds": d.max_rounds,
                                                   "rounds_detail": [r.model_dump() for r in d.rounds_detail],
                                                   "state": d.state, "end_reason": d.end_reason})
            ctx.item("last_round_tools_withheld", last is not None and last.tools_offered in (False, []) and
                     not d.tool_calls, f"last round offered tools: {last.tools_offered if last else None}", e)
            ctx.item("last_round_honest_end", d.end_reason == "max_rounds" and d.state in ("completed", "failed"),
                     f"ended {d.state}/{d.end_reason}", e)
    fixture = ctx.model_fault("empty")
    empty = ctx.chat(ctx.a, opened.session_id, P32_QUESTION)
    if not ctx.took_effect(fixture, "empty_answer_failed"):
        return
    # how the run ended: its record, else the terminal event the target itself sent on the stream
    d2 = empty.detail
    said = (d2.state, d2.end_reason, "run record") if d2 is not None else \
        (empty.terminal.state, empty.terminal.reason, f"the stream's `{empty.terminal.event}` event") \
        if empty.terminal is not None and empty.ended_by_rig is None else None
    e2 = ctx.observe("empty-answer variant", {"ended": said, "answer": empty.answer, "fixture": fixture.kind,
                                              "stream_end": empty.ended_by_rig})
    if empty.answer.strip():  # the emptied reply was not the answer's (a target may ask its model more than once)
        ctx.could_not("empty_answer_failed", "give the target an empty model answer",
                      f"an empty reply to one model call ({fixture}); the target still answered "
                      f"{len(empty.answer.strip())} characters, so the emptied call was not the one that answers", e2,
                      *empty.evidence)
        return
    if said is None:  # the stream closed with no end of the target's own, and no record says how the run ended
        ctx.could_not("empty_answer_failed", "read how the run with an empty answer ended",
                      "the run record (the target keeps none), then the stream's terminal event (it sent none: "
                      f"{empty.ended_by_rig})", e2, *empty.evidence)
        return
    state, reason, source = said
    failed = state == "failed" and (reason == "empty_answer" or not ctx.caps.end_reasons)
    ctx.item("empty_answer_failed", failed, f"an empty model answer ({fixture}) ended {state}/{reason}", e2,
             *empty.evidence, seen={"from": source})
