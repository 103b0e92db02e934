"""Creating runs: a new question, a regeneration (new branch) or a resume from a checkpoint."""

from __future__ import annotations

import sqlite3
from typing import Any

from workbench.agent import AgentLoop, RunPlan, new_detail
from workbench.conversation import build_input
from workbench.db import dumps, loads
from workbench.ids import new_id
from workbench.modelconfig import user_config
from workbench.runs import LiveRun
from workbench.services import Services


def titles_of(svc: Services, scope: list[str]) -> dict[str, str]:
    if not scope:
        return {}
    rows = svc.db.all(f"SELECT doc_id, title FROM documents WHERE doc_id IN ({','.join('?' * len(scope))})", *scope)
    return {r["doc_id"]: r["title"] for r in rows}


def start_run(svc: Services, session: sqlite3.Row, user_id: str, question: sqlite3.Row, branch_id: str, *,
              traceparent: str | None = None, resume_from: str | None = None,
              resume_state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Plan, record (state `queued`) and start a run answering `question` on `branch_id`."""
    scope = loads(session["scope"]) or []
    model_input = build_input(svc, session["session_id"], branch_id, question["parent_id"], question["content"],
                              question["message_id"], scope)
    plan = RunPlan(session_id=session["session_id"], user_id=user_id, project_id=session["project_id"],
                   user_message_id=question["message_id"], branch_id=branch_id, scope=scope,
                   messages=model_input.messages, included_summary_id=model_input.included_summary_id,
                   included_message_ids=model_input.included_message_ids, model=user_config(svc, user_id),
                   titles=titles_of(svc, scope), resume_state=resume_state, traceparent=traceparent)
    run_id = new_id("run")
    detail = new_detail(run_id, plan, svc.settings.max_rounds, resume_from, "")
    run = LiveRun(detail)
    loop = AgentLoop(svc, run, plan)
    with svc.db.tx() as conn:
        conn.execute("INSERT INTO runs(run_id, session_id, user_id, state, end_reason, data, created_ms) "
                     "VALUES(?,?,?,?,?,?,?)", (run_id, session["session_id"], user_id, "queued", None,
                                               dumps(detail), detail["queued_at_ms"]))
        conn.execute("UPDATE messages SET run_id=COALESCE(run_id, ?) WHERE message_id=?",
                     (run_id, question["message_id"]))
    svc.runs.start(run, loop)
    return detail


def new_branch_id() -> str:
    return new_id("br")
