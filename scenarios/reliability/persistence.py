"""会话持久化 — session persistence (reliability cases 17–19)."""

from __future__ import annotations

import json

from rig.adapters import Message, RunDetail, Session, TokenEvent
from rig.gate import CaseContext, case, kept, snapshot
from scenarios.reliability.steps import UNLINKED_TRIED, attempt, run_ended, saved_answer, wait_terminal


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
    runs = [ctx.chat(ctx.a, opened.session_id, turn.prompt, revision=i > 0).run_id for i, turn in enumerate(turns)]
    before = ctx.adapter.session(ctx.a, opened.session_id)
    saved = snapshot(ctx, [opened.session_id], runs)
    reloaded = ctx.adapter.session(ctx.a, opened.session_id)
    ctx.adapter.logout(ctx.a)
    auth = ctx.target.relogin("a")
    after = ctx.adapter.session(auth, opened.session_id)
    e = ctx.observe("session before and after", {"before": _shape(before), "after": _shape(after),
                                                  "session_id": opened.session_id})
    ctx.item("reload_identical", _shape(reloaded) == _shape(before), "a reload shows the same session", e,
             seen={"messages_before": len(before.messages), "messages_reloaded": len(reloaded.messages)})
    texts = [(m.message_id, m.content) for m in before.messages] == [(m.message_id, m.content) for m in after.messages]
    unsaved = [r for r in runs if saved_answer(ctx, before, r) is None]
    if unsaved:  # the subject is missing: what the rig could not find is not what the target changed
        ctx.could_not("saved_text_equal", f"find the saved answers of runs {unsaved}", UNLINKED_TRIED, e)
    else:
        ctx.item("saved_text_equal", texts and len(before.messages) == 2 * len(turns),
                 "the saved questions and answers read the same after the reload and re-login", e,
                 seen={"messages_before": len(before.messages), "messages_after": len(after.messages),
                       "texts_equal": texts})
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
    kept(ctx, saved, "re-login", auth=auth)
    more = ctx.chat(auth, opened.session_id, "再用一句话总结。", revision=True)
    ended = run_ended(more)
    ctx.item("can_continue", None if ended is None else ended == "completed" and bool(more.answer.strip()),
             "a further turn in the session ends completed with an answer", *more.evidence,
             seen={"ended": ended, "answer_chars": len(more.answer),
                   "from": "run record" if more.detail is not None else "stream"})


def _history_complete(ctx: CaseContext, session: Session, parent_id: str, detail: RunDetail, evidence: int) -> None:
    """The list of messages a model input carried names every one of the branch it answers (the path from the
    first message to the one it follows), not only none of another branch's: a history it claims to have sent,
    short of what it sent, is a list that passes for having no wrong member."""
    by_id = {m.message_id: m for m in session.messages}
    path: list[str] = []
    current: str | None = parent_id
    while current is not None and current in by_id and current not in path:
        path.append(current)
        current = by_id[current].parent_id
    included = {i for mi in detail.model_input for i in mi.included_message_ids}
    missing = [m for m in reversed(path) if m not in included]
    ctx.item("history_complete", bool(path) and not missing, "the follow-up's model input lists every message of "
             "the branch it follows", evidence, needs=("run_model_input",),
             seen={"branch_messages": len(path), "not_listed": missing[:4]})


@case(18, "可靠性-18-1", papers=("P13", "P32"))
def regenerate_branches(ctx: CaseContext) -> None:
    """Regenerate an answer, then ask a follow-up on the new branch.

    Expects: the new branch is distinguishable; the follow-up's history and citations belong to the
    current branch and nothing of the other branch's answer is mixed in. Evidence: branch ids, the
    model input actually used, citation mapping.
    """
    ctx.require("sessions")
    ctx.require("regenerate")  # (named apart: a target with sessions but no regenerate lacks regenerate)
    opened = ctx.open_session(ctx.a, [ctx.doc("P13"), ctx.doc("P32")])
    first = ctx.chat(ctx.a, opened.session_id, "一篇说互补，一篇又像替代，我是不是读矛盾了？")
    session = ctx.adapter.session(ctx.a, opened.session_id)
    original = saved_answer(ctx, session, first.run_id, item="branch_distinguishable")
    if original is None:
        return
    saved = snapshot(ctx, [opened.session_id], [first.run_id])
    regen = ctx.regenerate(ctx.a, original.message_id, opened.session_id)
    kept(ctx, saved, "regenerate", may_change=("export",))  # the current branch, which exports hold, moved
    session = ctx.adapter.session(ctx.a, opened.session_id)
    alternative = saved_answer(ctx, session, regen.run_id, item="branch_distinguishable")
    if alternative is None:
        return
    e = ctx.observe("branches", {"original": (original.message_id, original.branch_id),
                                 "regenerated": (alternative.message_id, alternative.branch_id),
                                 "same_question": original.parent_id == alternative.parent_id})
    ctx.item("branch_distinguishable", alternative.branch_id != original.branch_id and
             alternative.parent_id == original.parent_id, "a new branch under the same question", e,
             seen={"branches": (original.branch_id, alternative.branch_id),
                   "parents": (original.parent_id, alternative.parent_id)})
    follow = ctx.chat(ctx.a, opened.session_id, "改成两三句话，保留区别和出处。", parent_id=alternative.message_id,
                      revision=True)
    if follow.detail is None:  # a target without run records: what the follow-up saw and cited is not told
        ctx.lacks("history_current_branch", "run_detail")
        ctx.lacks("citations_current_branch", "run_detail")
        return
    included = [i for mi in follow.detail.model_input for i in mi.included_message_ids]
    e2 = ctx.observe("follow-up model input", {"included_message_ids": included})
    ctx.item("history_current_branch", alternative.message_id in included and original.message_id not in included,
             "the follow-up saw the regenerated answer, not the original", e2, needs=("run_model_input",),
             seen={"regenerated_in_input": alternative.message_id in included,
                   "original_in_input": original.message_id in included})
    _history_complete(ctx, session, alternative.message_id, follow.detail, e2)
    session = ctx.adapter.session(ctx.a, opened.session_id)
    follow_answer = saved_answer(ctx, session, follow.run_id, item="citations_current_branch")
    if follow_answer is None:
        return
    own_calls = {c.tool_call_id for c in follow.detail.tool_calls}
    other = [c.citation_id for c in follow_answer.citations if c.tool_call_id not in own_calls]
    e3 = ctx.observe("follow-up citations", {"branch": follow_answer.branch_id, "foreign": other})
    ctx.item("citations_current_branch", follow_answer.branch_id == alternative.branch_id and not other,
             "the follow-up's citations come from its own run on this branch", e3,
             seen={"branch": follow_answer.branch_id, "expected_branch": alternative.branch_id, "foreign_citations": other})
    _regenerate_while_running(ctx, opened.session_id, original)


def _regenerate_while_running(ctx: CaseContext, session_id: str, original: Message) -> None:
    """The edge: an answer regenerated while another run of the same session is still running. The contract: it is
    accepted, on a branch of its own under the answer's question; the running run goes on in its own branch; neither
    sees the other's messages."""
    if ctx.lacks("regenerate_while_running", "run_detail", "run_model_input"):
        return
    with ctx.part("regenerate_while_running"):  # holding a run in flight needs the slow-model fixture
        _regenerate_beside(ctx, session_id, original)


def _regenerate_beside(ctx: CaseContext, session_id: str, original: Message) -> None:
    with ctx.slow_model():
        running = ctx.submit(ctx.a, session_id, "再说明一次两篇的区别。", parent_id=original.message_id)
        stream = ctx.stream_until(ctx.a, running, lambda e: isinstance(e, TokenEvent))
        regen = attempt(lambda: ctx.adapter.regenerate(ctx.a, original.message_id))
        running.events.extend(stream)
    ctx.finish(ctx.a, running)
    regen_run = json.loads(regen.body).get("run_id") if regen.status == 200 else None
    if regen_run:
        wait_terminal(ctx, regen_run)
    session = ctx.adapter.session(ctx.a, session_id)
    by_run = {m.run_id: m for m in session.messages if m.role == "assistant"}
    mine, theirs = by_run.get(regen_run), by_run.get(running.run_id)
    question = next((m.message_id for m in session.messages if m.role == "user" and theirs is not None
                     and m.message_id == theirs.parent_id), None)
    d = ctx.adapter.run(ctx.a, regen_run) if regen_run else None
    included = [i for mi in (d.model_input if d else []) for i in mi.included_message_ids]
    e = ctx.observe("regenerate while a run of the session runs", {
        "status": regen.status, "regenerated": regen_run, "running": running.run_id,
        "running_ended": running.detail.state if running.detail else None,
        "branches": (mine.branch_id if mine else None, theirs.branch_id if theirs else None),
        "regenerated_parent": mine.parent_id if mine else None, "included": included})
    ok = (regen.status == 200 and mine is not None and theirs is not None and mine.parent_id == original.parent_id
          and mine.branch_id != theirs.branch_id and running.detail is not None
          and running.detail.state == "completed" and question not in included)
    ctx.item("regenerate_while_running", ok, "accepted on a branch of its own under the same question; the running "
             "run ended completed on its branch; neither saw the other's messages", e,
             seen={"status": regen.status, "running_ended": running.detail.state if running.detail else None,
                   "same_question": (mine.parent_id == original.parent_id) if mine else None,
                   "branches_apart": (mine.branch_id != theirs.branch_id) if mine and theirs else None,
                   "saw_the_other_question": question in included})


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
            e0 = ctx.observe("the session after the history passed the summary trigger",
                             {"session_id": opened.session_id, "summaries": [], "messages": len(session.messages),
                              "trigger_tokens": 200})
            ctx.item("summary_triggered", False, "no summary was made although the history passed the trigger", e0)
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
