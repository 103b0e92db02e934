"""Summaries of long histories, branches from regeneration, and scope changes between turns."""

from __future__ import annotations

from tests.conftest import LiveWorkbench
from tests.workbench.helpers import ask, settings

COMPARE = ("请比较《互补还是替代：事前控制与事后救济对平台型电商企业声誉的影响研究》和"
           "《Reputation and Regulations- Evidence from eBay》，先说明研究对象。")


def test_summary_is_made_after_the_answer_and_feeds_the_next_run(live: LiveWorkbench) -> None:
    with settings(live, summary_trigger_tokens=60):
        first = ask(live, ["P13", "P32"], COMPARE)
        summaries = [e for e in first.events if e.event == "summary"]
        assert summaries, "the history was over the trigger"
        session = live.adapter.session(live.auth_a, first.session_id)
        answer = next(m for m in session.messages if m.role == "assistant")
        summary = session.summaries[0]
        assert summary.covers_until_message_id == answer.message_id
        assert summary.created_at and answer.created_at and summary.created_at >= answer.created_at
        names = [e.event for e in first.events]
        assert names.index("summary") < names.index("done")
        second = ask(live, [], "请继续先前的比较，压缩到120–180字。", session_id=first.session_id)
        assert second.detail.state == "completed"
        model_input = second.detail.model_input[0]
        assert model_input.included_summary_id == summary.summary_id
        assert answer.message_id not in model_input.included_message_ids
        kept = live.adapter.session(live.auth_a, first.session_id)
        assert {m.message_id for m in session.messages} <= {m.message_id for m in kept.messages}, "originals kept"


def test_regenerate_makes_a_branch_and_follow_ups_see_only_their_branch(live: LiveWorkbench) -> None:
    first = ask(live, ["P32"], "2.9%指什么？")
    session = live.adapter.session(live.auth_a, first.session_id)
    original = next(m for m in session.messages if m.role == "assistant")
    regen = live.adapter.regenerate(live.auth_a, original.message_id)
    list(live.adapter.events(live.auth_a, regen.run_id))
    session = live.adapter.session(live.auth_a, first.session_id)
    answers = [m for m in session.messages if m.role == "assistant"]
    alternative = next(m for m in answers if m.run_id == regen.run_id)
    assert alternative.branch_id == regen.branch_id != original.branch_id
    assert alternative.parent_id == original.parent_id
    follow = ask(live, [], "压缩为一句话。", session_id=first.session_id, parent_id=alternative.message_id)
    included = follow.detail.model_input[0].included_message_ids
    assert alternative.message_id in included and original.message_id not in included
    session = live.adapter.session(live.auth_a, first.session_id)
    follow_answer = next(m for m in session.messages if m.run_id == follow.run_id and m.role == "assistant")
    assert follow_answer.branch_id == alternative.branch_id
    exported = live.adapter.export(live.auth_a, first.session_id, "json")
    import json

    ids = [m["message_id"] for m in json.loads(exported.text)["messages"]]
    assert alternative.message_id in ids and follow_answer.message_id in ids and original.message_id not in ids


def test_scope_change_filters_new_retrieval_and_keeps_history_scopes(live: LiveWorkbench) -> None:
    p21, p32 = live.corpus.doc("P21"), live.corpus.doc("P32")
    first = ask(live, ["P21", "P32"], "保修和买家保护分别怎样影响声誉溢价？")
    cited_first = {c.doc_id for m in live.adapter.session(live.auth_a, first.session_id).messages
                   for c in m.citations}
    assert cited_first == {p21, p32}
    changed = live.adapter.set_scope(live.auth_a, first.session_id, [p32])
    assert changed.effective_scope == [p32]
    second = ask(live, [], "只保留买家保护那篇，重写一段。", session_id=first.session_id)
    assert all(h.doc_id == p32 for c in second.detail.tool_calls for h in c.hits)
    session = live.adapter.session(live.auth_a, first.session_id)
    new_answer = next(m for m in session.messages if m.run_id == second.run_id and m.role == "assistant")
    assert new_answer.citations and {c.doc_id for c in new_answer.citations} == {p32}
    old_answer = next(m for m in session.messages if m.run_id == first.run_id and m.role == "assistant")
    assert set(old_answer.scope or []) == {p21, p32}, "history keeps the scope each answer had"
    assert {c.doc_id for c in old_answer.citations} == {p21, p32}
