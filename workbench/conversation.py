"""What a run's model sees: the system prompt, the branch's history (or its summary) and the question."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from workbench.db import dumps, loads
from workbench.services import Services

SYSTEM_PROMPT = (
    "你是文献工作台的研究助手。只根据 internal_search 返回的资料作答；每个论断后用 [编号] 标注所依据的检索结果；"
    "资料中没有依据时明确说“未找到依据”，不要编造来源或数字。\n已选资料：\n"
)


@dataclass
class ModelInput:
    messages: list[dict[str, Any]]
    included_summary_id: str | None
    included_message_ids: list[str]
    papers: list[dict[str, Any]] = field(default_factory=list)


def branch_path(svc: Services, session_id: str, leaf_id: str | None) -> list[sqlite3.Row]:
    """Messages from the root to `leaf_id` (inclusive), following parent links."""
    if leaf_id is None:
        return []
    if "branch_mixing" in svc.defects:
        rows = svc.db.all("SELECT * FROM messages WHERE session_id=? ORDER BY seq", session_id)
        leaf = next((r for r in rows if r["message_id"] == leaf_id), None)
        return [r for r in rows if leaf is None or r["seq"] <= leaf["seq"]]
    by_id = {r["message_id"]: r for r in svc.db.all("SELECT * FROM messages WHERE session_id=?", session_id)}
    path = []
    node = by_id.get(leaf_id)
    while node is not None:
        path.append(node)
        node = by_id.get(node["parent_id"]) if node["parent_id"] else None
    return list(reversed(path))


def scope_papers(svc: Services, scope: list[str]) -> list[dict[str, Any]]:
    if not scope:
        return []
    marks = ",".join("?" * len(scope))
    rows = svc.db.all(f"SELECT doc_id, paper_id, title, sha256 FROM documents WHERE doc_id IN ({marks}) "
                      "ORDER BY paper_id, doc_id", *scope)
    return [dict(r) for r in rows]


def build_input(svc: Services, session_id: str, branch_id: str, parent_id: str | None, question: str,
                question_id: str, scope: list[str]) -> ModelInput:
    """System prompt + (latest summary on this branch + later messages | whole history) + the question."""
    history = branch_path(svc, session_id, parent_id)
    ids = {m["message_id"] for m in history}
    summary = None
    for row in svc.db.all("SELECT * FROM summaries WHERE session_id=? ORDER BY seq DESC", session_id):
        if row["covers_until_message_id"] in ids:
            summary = row
            break
    if summary is not None:
        cut = next(i for i, m in enumerate(history) if m["message_id"] == summary["covers_until_message_id"])
        history = history[cut + 1:]
    papers = scope_papers(svc, scope)
    system = SYSTEM_PROMPT + "\n".join(f"- [{p['doc_id']}] {p['paper_id'] or '-'} 《{p['title']}》" for p in papers)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    if summary is not None:
        messages.append({"role": "system", "content": f"此前对话的摘要：{summary['text']}"})
    for m in history:
        messages.append({"role": m["role"], "content": m["content"]})
    messages.append({"role": "user", "content": question})
    return ModelInput(messages, summary["summary_id"] if summary else None,
                      [m["message_id"] for m in history] + [question_id], papers)


def digest(messages: list[dict[str, Any]]) -> str:
    """sha256 of the exact messages a model request carried."""
    return hashlib.sha256(dumps(messages).encode()).hexdigest()


def history_scopes(svc: Services, session_id: str) -> set[str]:
    """Every document any message of the session was scoped to (used only by a seeded defect)."""
    out: set[str] = set()
    for row in svc.db.all("SELECT scope FROM messages WHERE session_id=?", session_id):
        out.update(loads(row["scope"]) or [])
    return out
