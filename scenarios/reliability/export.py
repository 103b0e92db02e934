"""结果带出 — copying and exporting (reliability case 33)."""

from __future__ import annotations

from rig.gate.context import CaseContext
from rig.gate.registry import case
from scenarios.reliability.steps import answers


@case(33, "可靠性-33-1")
def copy_and_export(ctx: CaseContext) -> None:
    """After user case 4's three turns, copy the current answer and export the session (each format offered).

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
             "the saved answer equals what was streamed", e)
    branch = [m for m in session.messages]
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
                ctx.item(f"{fmt}_complete", complete, f"every message of the current branch is in the {fmt} export", e2)
                ctx.item(f"{fmt}_sources_match", same_sources, "exported sources match the session's citations", e2)
                ctx.item(f"{fmt}_no_other_session", isolated, "nothing from the user's other session", e2)
            continue
        else:
            complete = all(m.content.splitlines()[0] in exported.text for m in branch if m.content)
            paper_ids = {c.paper_id for m in branch for c in m.citations if c.paper_id}
            same_sources = all(p in exported.text for p in paper_ids)
            isolated = marker not in exported.text
        ctx.item(f"{fmt}_complete", complete, f"every message of the current branch is in the {fmt} export", e2)
        ctx.item(f"{fmt}_sources_match", same_sources, "exported sources match the session's citations", e2)
        ctx.item(f"{fmt}_no_other_session", isolated, "nothing from the user's other session", e2)
