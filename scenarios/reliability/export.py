"""结果带出 — copying and exporting (reliability case 33)."""

from __future__ import annotations

from rig.adapters.models import Message, Session
from rig.gate.context import CaseContext
from rig.gate.registry import case
from scenarios.reliability.steps import answers


def current_branch(session: Session) -> list[Message]:
    """The messages from the root to the session's current leaf, by parent links (all of them when the target
    names no leaf: a target without branches has one)."""
    if not session.current_leaf:
        return list(session.messages)
    by_id = {m.message_id: m for m in session.messages}
    path: list[Message] = []
    node = by_id.get(session.current_leaf)
    while node is not None:
        path.append(node)
        node = by_id.get(node.parent_id) if node.parent_id else None
    return list(reversed(path))


@case(33, "可靠性-33-1")
def copy_and_export(ctx: CaseContext) -> None:
    """After user case 4's three turns, copy the current answer, regenerate it (a second branch) and export the
    session in each format offered: the export holds the current branch only.

    Expects: a clear scope, the text and the promised source information correspond, nothing from
    another session. (Word export is not required.) Evidence: copied text, exported files, the scope.
    """
    ctx.require("export")
    turns = ctx.eval_set.quality_case("用户", 4)
    other = ctx.open_session(ctx.a, [ctx.doc("P13")])
    marker = "体验品和搜寻品有什么不同？"
    ctx.chat(ctx.a, other.session_id, marker)
    opened = ctx.open_session(ctx.a, [ctx.doc(p) for p in turns[0].allowed_paper_ids])
    runs = [ctx.chat(ctx.a, opened.session_id, t.prompt, revision=i > 0) for i, t in enumerate(turns)]
    session = ctx.adapter.session(ctx.a, opened.session_id)
    current = answers(session, runs[-1].run_id)[0]
    e = ctx.observe("copy of the current answer", {"copied": current.content, "streamed": runs[-1].answer})
    ctx.item("copy_matches_answer", current.content == runs[-1].answer and bool(current.content.strip()),
             "the saved answer equals what was streamed", e,
             seen={"saved_chars": len(current.content), "streamed_chars": len(runs[-1].answer),
                   "equal": current.content == runs[-1].answer})
    # A second branch: regenerate the last answer, so the export has a branch to leave out.
    original = current
    regenerated = None
    if not ctx.lacks("other_branch_left_out", "regenerate"):
        regen = ctx.regenerate(ctx.a, original.message_id, opened.session_id)
        session = ctx.adapter.session(ctx.a, opened.session_id)
        regenerated = answers(session, regen.run_id)[0]
    branch = current_branch(session)
    ctx.observe("current branch", {"current_leaf": session.current_leaf, "messages": [m.message_id for m in branch],
                                   "other_branch_answer": original.message_id if regenerated else None})
    for fmt in ctx.caps.export:
        exported = ctx.adapter.export(ctx.a, opened.session_id, fmt)
        e2 = ctx.evidence("export", f"export {fmt}", {"content_type": exported.content_type, "text": exported.text})
        if fmt == "json":
            with ctx.part("json_export_read"):  # the adapter reads its target's JSON back into the rig's shape
                read = ctx.adapter.read_export(exported)
                ids = [m.message_id for m in read.messages]
                cited = {(c.doc_id, c.page) for m in read.messages for c in m.citations}
                complete = ids == [m.message_id for m in branch]
                same_sources = cited == {(c.doc_id, c.page) for m in branch for c in m.citations}
                sessions = {(m.model_extra or {}).get("session_id", read.session_id) for m in read.messages}
                isolated = read.session_id == opened.session_id and sessions <= {opened.session_id} and \
                    marker not in exported.text
                ctx.item(f"{fmt}_complete", complete, f"every message of the current branch is in the {fmt} export",
                         e2, seen={"exported": len(ids), "on_branch": len(branch),
                                   "missing": [m.message_id for m in branch if m.message_id not in ids][:5],
                                   "extra": [i for i in ids if i not in {m.message_id for m in branch}][:5]})
                ctx.item(f"{fmt}_sources_match", same_sources, "exported sources match the session's citations", e2,
                         seen={"exported": sorted(map(str, cited))[:8],
                               "session": sorted(map(str, {(c.doc_id, c.page) for m in branch for c in m.citations}))[:8]})
                ctx.item(f"{fmt}_no_other_session", isolated, "nothing from the user's other session", e2,
                         seen={"sessions_in_export": sorted(map(str, sessions)),
                               "other_session_question_present": marker in exported.text})
                if regenerated is not None:
                    ctx.item("other_branch_left_out", original.message_id not in ids and regenerated.message_id in ids,
                             "the export holds the current branch's (regenerated) answer, not the other branch's", e2,
                             seen={"regenerated_exported": regenerated.message_id in ids,
                                   "other_branch_answer_exported": original.message_id in ids})
            continue
        else:
            complete = all(m.content.splitlines()[0] in exported.text for m in branch if m.content)
            paper_ids = {c.paper_id for m in branch for c in m.citations if c.paper_id}
            same_sources = all(p in exported.text for p in paper_ids)
            isolated = marker not in exported.text
        ctx.item(f"{fmt}_complete", complete, f"every message of the current branch is in the {fmt} export", e2,
                 seen={"messages_on_branch": len(branch), "export_chars": len(exported.text)})
        ctx.item(f"{fmt}_sources_match", same_sources, "exported sources match the session's citations", e2,
                 seen={"papers_cited": sorted(paper_ids),
                       "absent_from_export": sorted(p for p in paper_ids if p not in exported.text)})
        ctx.item(f"{fmt}_no_other_session", isolated, "nothing from the user's other session", e2,
                 seen={"other_session_question_present": marker in exported.text})
