"""会话持久化 — session persistence (reliability cases 17–19)."""

from __future__ import annotations

from rig.adapters.models import Session
from rig.gate.context import CaseContext
from rig.gate.registry import case
from scenarios.reliability.steps import answers


def _shape(session: Session) -> list[tuple[object, ...]]:
    return [(m.message_id, m.parent_id, m.branch_id, m.role, m.content,
             tuple((c.citation_id, c.doc_id, c.page, c.quote) for c in m.citations)) for m in session.messages]


@case(17, "可靠性-17-1", papers=("quality:专家-20",))
def refresh_and_relogin(ctx: CaseContext) -> None:
    """A completes the two turns of expert case 20, then reloads, logs out, logs in and reopens the session.

    Expects: saved text, citation targets and turn relations are the same, and the session can go on.
    Evidence: texts and source maps before and after, the session id.
    """
    turns = ctx.eval_set.quality_case("专家", 20)
    opened = ctx.open_session(ctx.a, [ctx.doc(p) for p in turns[0].allowed_paper_ids])
    for i, turn in enumerate(turns):
        ctx.chat(ctx.a, opened.session_id, turn.prompt, revision=i > 0)
    before = ctx.adapter.session(ctx.a, opened.session_id)
    reloaded = ctx.adapter.session(ctx.a, opened.session_id)
    ctx.adapter.logout(ctx.a)
    auth = ctx.target.relogin("a")
    after = ctx.adapter.session(auth, opened.session_id)
    e = ctx.observe("session before and after", {"before": _shape(before), "after": _shape(after),
                                                  "session_id": opened.session_id})
    ctx.item("reload_identical", _shape(reloaded) == _shape(before), "a reload shows the same session", e,
             seen={"messages_before": len(before.messages), "messages_reloaded": len(reloaded.messages)})
    texts = [(m.message_id, m.content) for m in before.messages] == [(m.message_id, m.content) for m in after.messages]
    ctx.item("saved_text_equal", texts and len(before.messages) == 2 * len(turns), f"{len(after.messages)} messages", e)
    cites = [(m.message_id, [(c.citation_id, c.doc_id, c.page) for c in m.citations]) for m in before.messages]
    ctx.item("citations_equal", cites == [(m.message_id, [(c.citation_id, c.doc_id, c.page) for c in m.citations])
                                          for m in after.messages], "citation targets unchanged", e,
             seen={"citations_before": sum(len(c) for _, c in cites),
                   "citations_after": sum(len(m.citations) for m in after.messages)})
    relations = [(m.message_id, m.parent_id, m.branch_id) for m in before.messages]
    ctx.item("turn_relations_equal", relations == [(m.message_id, m.parent_id, m.branch_id) for m in after.messages],
             "parent and branch links unchanged", e,
             seen={"changed": [r[0] for r, a in zip(relations, [(m.message_id, m.parent_id, m.branch_id)
                                                                 for m in after.messages], strict=False) if r != a][:5]})
    more = ctx.chat(auth, opened.session_id, "再用一句话总结。", revision=True)
    ctx.item("can_continue", more.detail is not None and more.detail.state == "completed",
             f"a further turn ended {more.detail.state if more.detail else None}")


@case(18, "可靠性-18-1", papers=("P13", "P32"))
def regenerate_branches(ctx: CaseContext) -> None:
    """Regenerate an answer, then ask a follow-up on the new branch.

    Expects: the new branch is distinguishable; the follow-up's history and citations belong to the
    current branch and nothing of the other branch's answer is mixed in. Evidence: branch ids, the
    model input actually used, citation mapping.
    """
    opened = ctx.open_session(ctx.a, [ctx.doc("P13"), ctx.doc("P32")])
    first = ctx.chat(ctx.a, opened.session_id, "一篇说互补，一篇又像替代，我是不是读矛盾了？")
    session = ctx.adapter.session(ctx.a, opened.session_id)
    original = answers(session, first.run_id)[0]
    regen = ctx.regenerate(ctx.a, original.message_id, opened.session_id)
    session = ctx.adapter.session(ctx.a, opened.session_id)
    alternative = answers(session, regen.run_id)[0]
    e = ctx.observe("branches", {"original": (original.message_id, original.branch_id),
                                 "regenerated": (alternative.message_id, alternative.branch_id),
                                 "same_question": original.parent_id == alternative.parent_id})
    ctx.item("branch_distinguishable", alternative.branch_id != original.branch_id and
             alternative.parent_id == original.parent_id, "a new branch under the same question", e,
             seen={"branches": (original.branch_id, alternative.branch_id),
                   "parents": (original.parent_id, alternative.parent_id)})
    follow = ctx.chat(ctx.a, opened.session_id, "改成两三句话，保留区别和出处。", parent_id=alternative.message_id,
                      revision=True)
    assert follow.detail is not None
    included = [i for mi in follow.detail.model_input for i in mi.included_message_ids]
    e2 = ctx.observe("follow-up model input", {"included_message_ids": included})
    ctx.item("history_current_branch", alternative.message_id in included and original.message_id not in included,
             "the follow-up saw the regenerated answer, not the original", e2, needs=("run_model_input",),
             seen={"regenerated_in_input": alternative.message_id in included,
                   "original_in_input": original.message_id in included})
    session = ctx.adapter.session(ctx.a, opened.session_id)
    follow_answer = answers(session, follow.run_id)[0]
    own_calls = {c.tool_call_id for c in follow.detail.tool_calls}
    other = [c.citation_id for c in follow_answer.citations if c.tool_call_id not in own_calls]
    e3 = ctx.observe("follow-up citations", {"branch": follow_answer.branch_id, "foreign": other})
    ctx.item("citations_current_branch", follow_answer.branch_id == alternative.branch_id and not other,
             "the follow-up's citations come from its own run on this branch", e3,
             seen={"branch": follow_answer.branch_id, "expected_branch": alternative.branch_id, "foreign_citations": other})


@case(19, "可靠性-19-1", codes=("T12",), papers=("quality:专家-20", "quality:用户-25"))
def real_summary(ctx: CaseContext) -> None:
    """Prepare as user case 25 says: expert 20's two turns, a real summary triggered, then user 25's prompt.

    Expects: the summary is made after the answer is saved; the next turn's input is the summary plus
    recent history; the original messages are kept (E6 is judged separately). A turn count does not
    stand in for a trigger. Evidence: summary text, what it covers, the main model request.
    """
    if ctx.lacks("summary_fixture", "summaries", "chaos"):  # a real summary, triggered through the target's control
        return
    turns = ctx.eval_set.quality_case("专家", 20)
    final = ctx.eval_set.quality_case("用户", 25)[0]
    opened = ctx.open_session(ctx.a, [ctx.doc(p) for p in turns[0].allowed_paper_ids])
    with ctx.settings(summary_trigger_tokens=200):
        runs = [ctx.chat(ctx.a, opened.session_id, t.prompt, revision=i > 0) for i, t in enumerate(turns)]
        written = [i for r in runs if r.detail for i in (r.detail.user_message_id, r.detail.message_id) if i]
        session = ctx.adapter.session(ctx.a, opened.session_id)
        if not session.summaries:
            ctx.item("summary_triggered", False, "no summary was made although the history passed the trigger")
            return
        summary = session.summaries[-1]
        covered = next((m for m in session.messages if m.message_id == summary.covers_until_message_id), None)
        e = ctx.observe("summary", {"summary": summary.model_dump(),
                                    "covered_message": covered.model_dump() if covered else None})
        after_save = covered is not None and (summary.created_at or "") >= (covered.created_at or "~")
        ctx.item("made_after_saving", after_save, "the summary is stamped after the answer it covers", e,
                 seen={"summary_at": summary.created_at, "covered_answer_at": covered.created_at if covered else None})
        final_run = ctx.chat(ctx.a, opened.session_id, final.prompt, revision=True)
    assert final_run.detail is not None
    mi = final_run.detail.model_input[0] if final_run.detail.model_input else None
    covered_ids = {m.message_id for m in session.messages[: session.messages.index(covered) + 1]} if covered else set()
    e2 = ctx.observe("next run's model input", mi.model_dump() if mi else None)
    ctx.item("input_is_summary_plus_recent", mi is not None and mi.included_summary_id == summary.summary_id and
             not (set(mi.included_message_ids) & covered_ids),
             "the request used the summary and only messages after it", e2,
             seen={"summary_used": mi.included_summary_id if mi else None, "expected_summary": summary.summary_id,
                   "covered_messages_sent": sorted(set(mi.included_message_ids) & covered_ids) if mi else None})
    kept = ctx.adapter.session(ctx.a, opened.session_id)
    lost = [i for i in written if i not in {m.message_id for m in kept.messages}]
    e3 = ctx.observe("messages written by the runs vs the session now", {"written": written, "lost": lost})
    ctx.item("originals_kept", bool(written) and not lost, f"{len(written)} messages written, {len(lost)} lost", e3)
