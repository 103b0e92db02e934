"""结果带出 — copying and exporting (reliability case 33)."""

from __future__ import annotations

from rig.adapters import Message, Session
from rig.errors import CapabilityMissing
from rig.gate import CaseContext, case
from rig.verdict import Verdict
from scenarios.reliability.steps import saved_answer


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


@case(33, "可靠性-33-1", papers=("quality:用户-4", "P13"))
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
    current = saved_answer(ctx, session, runs[-1].run_id, item="copy_matches_answer")
    if current is None:
        return
    e = ctx.observe("copy of the current answer", {"copied": current.content, "streamed": runs[-1].answer})
    ctx.item("copy_matches_answer", current.content == runs[-1].answer and bool(current.content.strip()),
             "the saved answer equals what was streamed", e,
             seen={"saved_chars": len(current.content), "streamed_chars": len(runs[-1].answer),
                   "equal": current.content == runs[-1].answer})
    # A second branch: regenerate the last answer, so the export has a branch to leave out.
    original = current
    regenerated = None
    if not ctx.lacks("other_branch_left_out", "regenerate"):  # the items per format below name it for each export
        regen = ctx.regenerate(ctx.a, original.message_id, opened.session_id)
        session = ctx.adapter.session(ctx.a, opened.session_id)
        regenerated = saved_answer(ctx, session, regen.run_id, item="other_branch_left_out")
        if regenerated is None:
            return
    branch = current_branch(session)
    ctx.observe("current branch", {"current_leaf": session.current_leaf, "messages": [m.message_id for m in branch],
                                   "other_branch_answer": original.message_id if regenerated else None})
    for fmt in ctx.caps.export:
        _check_export(ctx, fmt, opened.session_id, branch, marker, original if regenerated else None, regenerated)


def _cited(messages: list[Message]) -> set[tuple[str, int | None]]:
    """Citations as an export can state them: the paper (or the document where it has none) and the page."""
    return {(c.paper_id or c.doc_id, c.page) for m in messages for c in m.citations}


def _check_export(ctx: CaseContext, fmt: str, session_id: str, branch: list[Message], marker: str,
                  other_branch: Message | None, regenerated: Message | None) -> None:
    """One export format read back by the rig (through the adapter) and held to the session's own facts: the
    current branch's messages, their text, each citation's paper and page, this session only. A format the rig
    cannot read is U naming it, never a pass."""
    exported = ctx.adapter.export(ctx.a, session_id, fmt)
    e = ctx.evidence("export", f"export {fmt}", {"content_type": exported.content_type, "text": exported.text})
    try:
        read = ctx.adapter.read_export(exported)
    except CapabilityMissing as exc:
        ctx.item(f"{fmt}_readable", Verdict.U, f"the rig cannot read the {fmt} export back ({exc.capability}): its "
                 "promises (pages, branch, owner, citations) stay unchecked", e)
        return
    ids = [m.message_id for m in read.messages]
    on_branch = [m.message_id for m in branch]
    texts = {m.message_id: m.content.strip() for m in read.messages}
    changed = [m.message_id for m in branch if m.message_id in texts and texts[m.message_id] != m.content.strip()]
    ctx.item(f"{fmt}_complete", ids == on_branch and not changed,
             f"every message of the current branch is in the {fmt} export, word for word", e,
             seen={"exported": len(ids), "on_branch": len(branch), "missing": [i for i in on_branch if i not in ids][:5],
                   "extra": [i for i in ids if i not in on_branch][:5], "text_differs": changed[:5]})
    exported_cites, session_cites = _cited(read.messages), _cited(branch)
    ctx.item(f"{fmt}_sources_match", exported_cites == session_cites,
             f"the {fmt} export names the same papers and pages as the session's citations", e,
             seen={"only_in_export": sorted(map(str, exported_cites - session_cites))[:6],
                   "only_in_session": sorted(map(str, session_cites - exported_cites))[:6]})
    sessions = {(m.model_extra or {}).get("session_id", read.session_id) for m in read.messages}
    isolated = read.session_id in ("", session_id) and sessions <= {session_id, ""} and marker not in exported.text
    ctx.item(f"{fmt}_no_other_session", isolated, "nothing from the user's other session", e,
             seen={"export_session": read.session_id, "sessions_in_export": sorted(map(str, sessions)),
                   "other_session_question_present": marker in exported.text})
    if other_branch is not None and regenerated is not None:
        ctx.item(f"{fmt}_other_branch_left_out", other_branch.message_id not in ids and regenerated.message_id in ids,
                 "the export holds the current branch's (regenerated) answer, not the other branch's", e,
                 seen={"regenerated_exported": regenerated.message_id in ids,
                       "other_branch_answer_exported": other_branch.message_id in ids})
