"""输入边界 — input bounds (reliability case 36)."""

from __future__ import annotations

from contextlib import nullcontext

from rig.errors import TargetHTTPError
from rig.gate import CaseContext, case
from rig.measure import RunTranscript, refusal_measures
from scenarios.reliability.steps import run_ended

REQUIREMENT = "最后的要求：请在回答的第一句写出编号 RIG-36-MARKER。"


@case(36, "可靠性-36-1", codes=("T8", "T12"), papers=("P32",))
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
    budget = None
    if fixture == "rig_proxy":  # every model request carrying this input is over the budget, not just the first
        budget = ctx.model_fault("status", status=400, match="RIG-36-MARKER", times=None)
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
        if budget is None or ctx.took_effect(budget, "explicit_limit", "no_silent_truncation"):
            _accepted(ctx, run, opened.session_id, fixture)
    if budget is not None:
        ctx.lift(budget)  # the budget was this input's: the normal question after it is asked without it
    after: RunTranscript = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    ended = run_ended(after)
    ctx.item("next_request_ok", None if ended is None else ended == "completed", f"next run ended {ended}",
             *after.evidence)


def _accepted(ctx: CaseContext, run: RunTranscript, session_id: str, fixture: str) -> None:
    """The over-budget input was taken: the run must end failed, saying why — in its record, or, where the target
    keeps none, in its own stream (an end the rig only inferred from a closed stream says nothing)."""
    d = run.detail
    state: str | None
    if d is not None:
        state, reason, said = d.state, d.end_reason, True
    else:
        state = run.terminal.state if run.terminal else None
        reason = run.terminal.reason if run.terminal else None
        said = run.terminal is not None and not run.ended_by_rig
    e = ctx.observe("accepted over-budget input", {"state": state, "end_reason": reason, "answer": run.answer[:500],
                                                   "ended_by": "target" if said else run.ended_by_rig,
                                                   "record": d is not None})
    failed_explicitly = said and state == "failed" and (reason == "input_too_long" or not ctx.caps.end_reasons)
    ctx.item("explicit_limit", failed_explicitly, f"run ended {state}/{reason} ({fixture})", e,
             needs=() if fixture != "long_input" else ("input_budget",),
             seen={"ended": f"{state}/{reason}", "said_by": "target" if said else run.ended_by_rig})
    if failed_explicitly:
        ctx.item("no_silent_truncation", True, "the run failed saying so: nothing completed on a cut input", e)
        return
    if ctx.lacks("no_silent_truncation", "sessions"):  # the input as the target stored it cannot be read
        return
    stored = [m for m in ctx.adapter.session(ctx.a, session_id).messages if m.role == "user"]
    kept_requirement = bool(stored) and REQUIREMENT in stored[-1].content
    ctx.item("no_silent_truncation", state == "completed" and kept_requirement,
             "the stored input lost its final requirement" if not kept_requirement else "input kept whole", e)
