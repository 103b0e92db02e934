"""History summarisation: after an answer is saved, a long branch gets a summary that later runs use."""

from __future__ import annotations

from typing import Any

from workbench.clock import stamp
from workbench.conversation import branch_path
from workbench.ids import new_id
from workbench.services import Services
from workbench.text import count_tokens, split_sentences


def summarise_text(messages: list[dict[str, Any]]) -> str:
    """An extractive summary: each question, and the first point of each answer."""
    parts = []
    for m in messages:
        if m["role"] == "user":
            parts.append(f"用户问：{m['content'][:120]}")
        else:
            body = [s for s in split_sentences(m["content"].replace("根据所选资料：", "")) if s.strip()]
            if body:
                parts.append(f"回答要点：{body[0][:160]}")
    return "；".join(parts)


def maybe_summarise(svc: Services, session_id: str, branch_id: str, answer_id: str) -> dict[str, Any] | None:
    """Summarise the branch up to `answer_id` when its history since the last summary is over the trigger."""
    path = branch_path(svc, session_id, answer_id)
    covered = {r["covers_until_message_id"] for r in svc.db.all("SELECT covers_until_message_id FROM summaries "
                                                                 "WHERE session_id=?", session_id)}
    start = 0
    for i, m in enumerate(path):
        if m["message_id"] in covered:
            start = i + 1
    pending = [dict(m) for m in path[start:]]
    if sum(count_tokens(m["content"]) for m in pending) <= svc.settings.summary_trigger_tokens:
        return None
    created, _ = stamp()
    summary = {"summary_id": new_id("sum"), "covers_until_message_id": answer_id,
               "text": summarise_text(pending), "created_at": created}
    with svc.db.tx() as conn:
        seq = svc.db.next_seq(conn, "summaries")
        conn.execute("INSERT INTO summaries(summary_id, session_id, branch_id, covers_until_message_id, text, "
                     "created_at, seq) VALUES(?,?,?,?,?,?,?)", (summary["summary_id"], session_id, branch_id,
                                                                answer_id, summary["text"], created, seq))
        if "summary_drops_originals" in svc.defects:
            ids = [m["message_id"] for m in pending if m["message_id"] != answer_id]
            conn.executemany("DELETE FROM messages WHERE message_id=?", [(i,) for i in ids])
    return summary
