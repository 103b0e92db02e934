"""输入边界 — input bounds (reliability case 36)."""

from __future__ import annotations

from contextlib import nullcontext

from rig.errors import TargetHTTPError
from rig.gate.context import CaseContext
from rig.gate.registry import case
from rig.measure.derive import refusal_measures
from rig.measure.transcript import RunTranscript
from scenarios.reliability.steps import answer_of

REQUIREMENT = "最后的要求：请在回答的第一句写出编号 RIG-36-MARKER。"


@case(36, "可靠性-36-1", codes=("T8", "T12"))
def over_budget_message(ctx: CaseContext) -> None:
    """Tighten the budget (or send a long, locatable input), submit it, then send a normal question.

    Expects: an explicit failure or length limit, never a silent cut of the key requirement reported
    as completed; the next normal request still works. Evidence: the budget, the error, the next run.
    """
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    # The budget: tightened through the target's own control; else the model (behind the rig's proxy) refuses
    # this input as over its context; else an input long enough to pass any usual budget, with no budget known.
    fixture = "target_control" if ctx.caps.chaos else "rig_proxy" if ctx.target.model_proxy else "long_input"
    tight = ctx.settings(input_budget_tokens=300) if fixture == "target_control" else nullcontext()
    if fixture == "rig_proxy":
        ctx.model_fault("status", status=400, match="RIG-36-MARKER")
    body = "请解释买家保护与徽章的关系，并逐条列出证据。" * (30 if fixture != "long_input" else 800) + REQUIREMENT
    with tight:
        try:
            run = ctx.submit(ctx.a, opened.session_id, body)
            refused = None
        except TargetHTTPError as exc:
            run, refused = None, exc
    if refused is not None:
        e = ctx.observe("refused", {"status": refused.status, "code": refused.code, "details": refused.details})
        explicit = refused.status == 413 or refused.code == "input_too_long"
        ctx.item("explicit_limit", explicit, f"{refused.status} {refused.code} {refused.details}", e)
        ctx.item("no_silent_truncation", True if explicit else None, "nothing was run with a cut input", e,
                 seen={"refused": f"{refused.status} {refused.code}", "run_started": False})
        if isinstance(refused.details, dict) and "measured_tokens" in refused.details:
            ctx.measures(refusal_measures(float(refused.details["measured_tokens"]), "input_too_long"))
    else:
        assert run is not None
        ctx.read(ctx.a, run)
        d = run.detail
        assert d is not None
        answer = answer_of(ctx, opened.session_id, run.run_id)
        e = ctx.observe("accepted over-budget input", {"state": d.state, "end_reason": d.end_reason,
                                                       "answer": answer.content if answer else None})
        failed_explicitly = d.state == "failed" and (d.end_reason == "input_too_long" or not ctx.caps.end_reasons)
        ctx.item("explicit_limit", failed_explicitly, f"run ended {d.state}/{d.end_reason} ({fixture})", e,
                 needs=() if fixture != "long_input" else ("input_budget",))
        stored = [m for m in ctx.adapter.session(ctx.a, opened.session_id).messages if m.role == "user"]
        kept_requirement = bool(stored) and REQUIREMENT in stored[-1].content
        ctx.item("no_silent_truncation", failed_explicitly or (d.state == "completed" and kept_requirement),
                 "the stored input lost its final requirement" if not kept_requirement else "input kept whole", e)
    after: RunTranscript = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    ctx.item("next_request_ok", after.detail is not None and after.detail.state == "completed",
             f"next run ended {after.detail.state if after.detail else None}")
