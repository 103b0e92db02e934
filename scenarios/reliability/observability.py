"""观测记录 — observability (reliability cases 34–35)."""

from __future__ import annotations

from rig.gate import CaseContext, case
from rig.measure import RunTranscript, search_measures
from rig.telemetry import ReceivedSpan, run_roots, subtree
from rig.verdict import Verdict

EXPECTED_SPANS = ("chat ", "execute_tool ")  # under the run's root: its model calls and tool executions (GenAI names)


def _spans(ctx: CaseContext, trace_id: str, run_id: str) -> list[ReceivedSpan]:
    """The target's spans of one run (the subtree under the root carrying its `run.id`), once that root (which ends
    last) arrived."""
    receiver = ctx.target.receiver
    receiver.wait_for(lambda spans: bool(run_roots([s for s in spans if s.trace_id == trace_id], run_id)), 10.0)
    # The target's own spans: not its Langfuse export, not the rig's spans that share the trace.
    spans = [s for s in receiver.trace(trace_id) if s.scope not in ("langfuse-sdk", "rig")]
    return subtree(spans, {s.span_id for s in run_roots(spans, run_id)})


def _target_spans(ctx: CaseContext) -> list[ReceivedSpan]:
    """Spans the target itself sent (not the rig's own, not a Langfuse export)."""
    return [s for s in ctx.target.receiver.spans if s.scope not in ("langfuse-sdk", "rig")]


def _check_run(ctx: CaseContext, run: RunTranscript, label: str) -> list[str]:
    """Missing or mismatching fields between the run record and its spans."""
    d = run.detail
    assert d is not None
    problems = []
    if not d.trace_id:
        return ["run has no trace_id"]
    spans = _spans(ctx, d.trace_id, run.run_id)
    roots = run_roots(spans, run.run_id)
    if not roots:
        problems.append(f"{label}: no span carries run.id={run.run_id} in trace {d.trace_id}")
    names = [s.name for s in spans]
    for want in EXPECTED_SPANS:
        if d.trace_complete and not any(n.startswith(want) for n in names):
            problems.append(f"{label}: trace says complete but has no '{want.strip()}' span")
    chats = [s for s in spans if s.name.startswith("chat ")]
    used = sum(int(s.attributes.get("gen_ai.usage.input_tokens", 0)) for s in chats)
    if d.trace_complete and used != (d.usage.input_tokens or 0):
        problems.append(f"{label}: spans report {used} input tokens, the run record {d.usage.input_tokens}")
    tool_ids = {s.attributes.get("gen_ai.tool.call.id") for s in spans
                if s.name.startswith("execute_tool")}
    if d.trace_complete and tool_ids != {c.tool_call_id for c in d.tool_calls}:
        problems.append(f"{label}: tool spans {sorted(map(str, tool_ids))} differ from the record's calls")
    for stage in d.stages:
        if stage.started_at_ms is None or stage.ended_at_ms is None:
            problems.append(f"{label}: stage {stage.name} lacks start or end")
    return problems


@case(34, "可靠性-34-1", codes=("T2", "T8", "T11", "T12"), papers=("quality:专家-1", "quality:用户-4"))
def local_detail_and_cloud(ctx: CaseContext) -> None:
    """Run expert case 1 and user case 4 with normal research tracing; read the actual evidence records.

    Expects: run, trace and spans can be linked; fine stages are judged from the deployment's own
    detail, cloud sync is not assumed complete, and missing fields are named honestly.
    Evidence: stage logs, evidence ids and hashes, and the spans received.
    """
    expert = ctx.eval_set.quality_case("专家", 1)[0]
    result = ctx.adapter.search(ctx.a, ctx.target.setup.project_a, [expert.prompt],
                                [ctx.doc(p) for p in expert.allowed_paper_ids])
    stages_ok = all(s.started_at_ms is not None and s.ended_at_ms is not None for s in result.stages)
    e0 = ctx.observe("expert 1 tool stages", [s.model_dump() for s in result.stages])
    ctx.declared("tool_stage_fields", "search_stages", stages_ok and bool(result.stages),
                 "encode/query/expand carry start and end", e0,
                 seen={"stages": [(s.name, s.started_at_ms is not None, s.ended_at_ms is not None) for s in result.stages]})
    ctx.measures(search_measures(result))
    if ctx.lacks("run_trace_span_linked", "trace_ids"):  # no trace id on any run record to join
        _cloud_sync(ctx)
        return
    turns = ctx.eval_set.quality_case("用户", 4)
    opened = ctx.open_session(ctx.a, [ctx.doc(p) for p in turns[0].allowed_paper_ids])
    problems: list[str] = []
    silent = False
    runs: list[RunTranscript] = []
    for i, t in enumerate(turns):
        run = ctx.chat(ctx.a, opened.session_id, t.prompt, revision=i > 0)
        runs.append(run)
        if silent:
            continue
        checked = _check_run(ctx, run, f"user4 turn {i + 1}")
        if not _target_spans(ctx):  # told nothing of the receiver, the target cannot send to it: not its fault
            silent = True
            continue
        problems += checked
        spans = ctx.target.receiver.trace(run.detail.trace_id or "") if run.detail else []
        ctx.evidence("trace", f"spans of run {run.run_id}", [{"name": s.name, "span_id": s.span_id,
                                                             "parent": s.parent_span_id, "scope": s.scope}
                                                            for s in spans])
    _provenance(ctx, opened.session_id, runs)
    endpoint = ctx.target.receiver.endpoint
    e = ctx.observe("run ↔ trace ↔ span linkage", {"problems": problems, "receiver": endpoint,
                                                    "target_spans": len(_target_spans(ctx))})
    if silent:
        ctx.item("run_trace_span_linked", Verdict.U,
                 f"no span from the target reached the rig's receiver at {endpoint}: configure the target's OTLP "
                 "exporter to it (rig gate --otlp-listen HOST:PORT, or target.otlp_listen)", e, needs=("trace_ids",))
    else:
        ctx.item("run_trace_span_linked", not problems,
                 f"{len(turns)} runs: spans join their traces and match the records ({len(_target_spans(ctx))} spans)"
                 if not problems else "; ".join(problems[:3]), e, needs=("trace_ids",))
    _cloud_sync(ctx)


def _provenance(ctx: CaseContext, session_id: str, runs: list[RunTranscript]) -> None:
    """Missing fields marked honestly: each figure says whether it was measured or estimated, and an "actual" one is
    one the target could have measured — when the provider reported no usage (a `no_usage` model fault), the usage is
    an estimate and no cost is actual."""
    if ctx.lacks("figures_say_provenance", "run_usage"):
        ctx.lacks("estimate_when_provider_silent", "run_usage")
        return
    silent_run: RunTranscript | None = None
    with ctx.part("estimate_when_provider_silent"):
        fixture = ctx.model_fault("no_usage")
        silent_run = ctx.chat(ctx.a, session_id, "2.9%指什么？", revision=True)
        if ctx.took_effect(fixture, "estimate_when_provider_silent") and silent_run.detail is not None:
            u = silent_run.detail.usage
            ctx.item("estimate_when_provider_silent", u.source == "estimate", "a run whose provider reported no "
                     "usage says its usage is an estimate", *silent_run.evidence,
                     seen={"usage_source": u.source, "input_tokens": u.input_tokens})
    read = [r for r in [*runs, *([silent_run] if silent_run else [])] if r.detail is not None]
    wrong = {r.run_id: why for r in read if (why := _unproven(r))}
    e = ctx.observe("each run's usage and cost, with their provenance", {
        r.run_id: {"usage": r.detail.usage.model_dump(), "cost": r.detail.cost.model_dump()} for r in read
        if r.detail is not None})
    ctx.item("figures_say_provenance", bool(read) and not wrong, "every run's usage names its source (provider or "
             "estimate) and a cost is actual only from provider usage, or said unknown", e,
             seen={"runs": len(read), "wrong": dict(list(wrong.items())[:3])})


def _unproven(run: RunTranscript) -> str:
    """What is wrong with the provenance of a run's figures ("" when nothing)."""
    assert run.detail is not None
    usage, cost = run.detail.usage, run.detail.cost
    if usage.source not in ("provider", "estimate"):
        return f"usage names no source ({usage.source!r})"
    if cost.actual_usd is not None and usage.source != "provider":
        return f"an actual cost ({cost.actual_usd}) from estimated usage"
    if cost.actual_usd is None and not cost.unknown:
        return "no actual cost and nothing said unknown"
    return ""


def _cloud_sync(ctx: CaseContext) -> None:
    cloud = any(s.scope == "langfuse-sdk" for s in ctx.target.receiver.spans)
    ctx.item("cloud_sync", Verdict.NA if not cloud else Verdict.PASS,
             "no Langfuse configured for this deployment" if not cloud else "Langfuse observations received",
             required=False)


@case(35, "可靠性-35-1", codes=("T8", "T11", "T12"), papers=("P32",))
def incomplete_record_keeps_evidence(ctx: CaseContext) -> None:
    """Lower the trace budget (a safe truncation fixture, answers untouched) and inspect what was kept.

    Expects: trace_complete=false is true to reality; saved checkpoints and evidence stay readable;
    missing parts are U rather than voiding or passing the whole case. Evidence: where it was cut,
    the completeness flag, what scoring lacks.
    """
    if ctx.lacks("trace_cut", "trace_ids", "chaos"):  # the safe fixture cuts the run's trace inside the target
        return
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    question = "2.9%指什么？"
    full = ctx.chat(ctx.a, opened.session_id, question)
    with ctx.settings(trace_budget_spans=3):
        cut = ctx.chat(ctx.a, opened.session_id, question)
    assert full.detail is not None and cut.detail is not None
    spans = _spans(ctx, cut.detail.trace_id or "", cut.run_id)
    e = ctx.observe("truncated trace", {"trace_complete": cut.detail.trace_complete, "spans_received": len(spans),
                                        "full_run_spans": len(_spans(ctx, full.detail.trace_id or "", full.run_id))})
    ctx.item("flag_truthful", cut.detail.trace_complete is False, f"trace_complete={cut.detail.trace_complete}", e)
    ctx.item("answer_untouched", cut.answer == full.answer and cut.detail.state == "completed",
             "the same question gives the same answer with the cut trace", e,
             seen={"same_answer": cut.answer == full.answer, "cut_run_state": cut.detail.state})
    readable = bool(cut.detail.checkpoints) and bool(cut.detail.tool_calls)
    ctx.item("evidence_readable", readable, "checkpoints and tool records are still readable", e,
             seen={"checkpoints": len(cut.detail.checkpoints), "tool_calls": len(cut.detail.tool_calls)})
    ctx.item("scoring_of_missing_parts", Verdict.U, "span-level scoring of the cut run is missing (recorded as U)",
             e, required=False)
