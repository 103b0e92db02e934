"""Sessions: scope (with the attachment rule), messages, regeneration into branches, export."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from workbench.access import readable_doc_ids, require_message, require_project, require_session
from workbench.auth import User, current_user, services
from workbench.clock import iso, stamp
from workbench.conversation import branch_path
from workbench.db import dumps, loads
from workbench.dialects import normalised_quote
from workbench.errors import ApiError, not_found
from workbench.exporting import export_json, export_markdown
from workbench.ids import new_id
from workbench.modelconfig import user_config
from workbench.runstart import new_branch_id, start_run
from workbench.schemas import MessageIn, SessionIn, SessionPatch
from workbench.security import token_hash
from workbench.services import Services
from workbench.text import count_tokens
from workbench.views import message_view

router = APIRouter(prefix="/api/v1")


def refuse_while_draining(svc: Services) -> None:
    if svc.runs.shutting_down:
        raise ApiError(503, "shutting_down", "the server is shutting down; retry against the restarted server")


def effective_scope(svc: Services, user_id: str, scope: list[str], attachments: list[str]
                    ) -> tuple[list[str], list[dict[str, str]]]:
    """(scope ∪ attachments) ∩ readable documents; everything else is dropped with its reason."""
    readable = readable_doc_ids(svc.db, user_id)
    effective: list[str] = []
    dropped: list[dict[str, str]] = []
    for doc_id in dict.fromkeys([*scope, *attachments]):
        if doc_id in readable or ("attachment_unreadable_kept" in svc.defects and doc_id in attachments):
            effective.append(doc_id)
        else:
            dropped.append({"doc_id": doc_id, "reason": "not_found_or_not_readable"})
    return effective, dropped


@router.post("/sessions")
async def create_session(body: SessionIn, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    require_project(svc.db, user.user_id, body.project_id)
    effective, dropped = effective_scope(svc, user.user_id, body.scope, body.attachments)
    session_id = new_id("ses")
    created, _ = stamp()
    with svc.db.tx() as conn:
        conn.execute("INSERT INTO sessions(session_id, user_id, project_id, scope, attachments, created_at) "
                     "VALUES(?,?,?,?,?,?)", (session_id, user.user_id, body.project_id, dumps(effective),
                                             dumps(body.attachments), created))
    return {"session_id": session_id, "effective_scope": effective, "dropped": dropped}


@router.get("/sessions")
async def list_sessions(request: Request, user: User = Depends(current_user)) -> list[dict[str, Any]]:
    """The caller's own sessions, newest first, each titled by its first question."""
    svc = services(request)
    rows = svc.db.all("SELECT s.session_id, s.project_id, s.created_at, (SELECT content FROM messages m WHERE "
                      "m.session_id=s.session_id AND m.role='user' ORDER BY seq LIMIT 1) AS title, (SELECT COUNT(*) "
                      "FROM messages m WHERE m.session_id=s.session_id) AS messages FROM sessions s WHERE s.user_id=? "
                      "ORDER BY s.created_at DESC, s.rowid DESC", user.user_id)
    return [{"session_id": r["session_id"], "project_id": r["project_id"], "created_at": r["created_at"],
             "title": (r["title"] or "")[:60], "messages": r["messages"]} for r in rows]


@router.get("/sessions/{session_id}")
async def get_session(session_id: str, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    s = require_session(svc.db, user.user_id, session_id)
    messages = svc.db.all("SELECT * FROM messages WHERE session_id=? ORDER BY seq", session_id)
    summaries = svc.db.all("SELECT * FROM summaries WHERE session_id=? ORDER BY seq", session_id)
    views = [message_view(svc.db, m) for m in messages
             if not (m["role"] == "assistant" and svc.dialect_state.is_lost(m["run_id"]))]
    if "relogin_drops_citations" in svc.defects:  # messages older than the caller's login lose their citations
        token = svc.db.one("SELECT created_ms FROM tokens WHERE token_hash=?", token_hash(user.token))
        since = iso(token["created_ms"]) if token else None
        views = [{**v, "citations": []} if since and v["created_at"] < since else v for v in views]
    if "no_run_ids" in svc.dialects:  # the dialect: saved messages name no run
        views = [{k: v for k, v in view.items() if k != "run_id"} for view in views]
    if "quotes_normalised" in svc.dialects:  # the dialect: quotes kept with their punctuation normalised
        views = [{**view, "citations": [{**c, "quote": normalised_quote(c["quote"])} for c in view["citations"]]}
                 for view in views]
    return {"session_id": session_id, "project_id": s["project_id"], "scope": loads(s["scope"]),
            "attachments": loads(s["attachments"]), "current_leaf": s["current_leaf"], "created_at": s["created_at"],
            "messages": views,
            "summaries": [{"summary_id": r["summary_id"], "branch_id": r["branch_id"],
                           "covers_until_message_id": r["covers_until_message_id"], "text": r["text"],
                           "created_at": r["created_at"]} for r in summaries]}


@router.patch("/sessions/{session_id}")
async def patch_session(session_id: str, body: SessionPatch, request: Request,
                        user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    s = require_session(svc.db, user.user_id, session_id)
    attachments = body.attachments if body.attachments is not None else loads(s["attachments"])
    effective, dropped = effective_scope(svc, user.user_id, body.scope, attachments)
    with svc.db.tx() as conn:
        conn.execute("UPDATE sessions SET scope=?, attachments=? WHERE session_id=?",
                     (dumps(effective), dumps(attachments), session_id))
    return {"effective_scope": effective, "dropped": dropped}


@router.post("/sessions/{session_id}/messages", status_code=202)
async def post_message(session_id: str, body: MessageIn, request: Request,
                       user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    s = require_session(svc.db, user.user_id, session_id)
    refuse_while_draining(svc)
    content = body.content
    measured = count_tokens(content)
    budget = svc.settings.input_budget_tokens
    if measured > budget:
        if "truncate_long_input" not in svc.defects:
            raise ApiError(413, "input_too_long", f"the message has {measured} tokens; the input budget is {budget}",
                           {"limit_tokens": budget, "measured_tokens": measured})
        while count_tokens(content) > budget:
            content = content[: int(len(content) * 0.9)]
    parent_id = body.parent_id if body.parent_id is not None else s["current_leaf"]
    branch_id = new_branch_id()
    if parent_id is not None:
        parent = svc.db.one("SELECT * FROM messages WHERE message_id=? AND session_id=?", parent_id, session_id)
        if parent is None:
            raise ApiError(404, "not_found", "parent message not found in this session")
        branch_id = parent["branch_id"]
    message_id = new_id("msg")
    created, _ = stamp()
    with svc.db.tx() as conn:
        seq = svc.db.next_seq(conn, "messages")
        conn.execute("INSERT INTO messages(message_id, session_id, parent_id, branch_id, role, content, scope, "
                     "created_at, seq) VALUES(?,?,?,?,?,?,?,?,?)", (message_id, session_id, parent_id, branch_id,
                                                                   "user", content, s["scope"], created, seq))
        conn.execute("UPDATE sessions SET current_leaf=? WHERE session_id=?", (message_id, session_id))
    question = svc.db.one("SELECT * FROM messages WHERE message_id=?", message_id)
    assert question is not None
    s = require_session(svc.db, user.user_id, session_id)
    detail = start_run(svc, s, user.user_id, question, branch_id, traceparent=request.headers.get("traceparent"))
    return {"run_id": detail["run_id"], "message_id": message_id, "branch_id": branch_id,
            "trace_id": detail["trace_id"]}


@router.post("/messages/{message_id}/regenerate", status_code=202)
async def regenerate(message_id: str, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    answer = require_message(svc.db, user.user_id, message_id)
    if answer["role"] != "assistant" or not answer["parent_id"]:
        raise ApiError(409, "not_regenerable", "only an answer to a question can be regenerated")
    question = svc.db.one("SELECT * FROM messages WHERE message_id=?", answer["parent_id"])
    if question is None:
        raise not_found("question")
    s = require_session(svc.db, user.user_id, answer["session_id"])
    branch_id = new_branch_id()
    detail = start_run(svc, s, user.user_id, question, branch_id, traceparent=request.headers.get("traceparent"))
    return {"run_id": detail["run_id"], "branch_id": branch_id, "trace_id": detail["trace_id"]}


@router.get("/sessions/{session_id}/export")
async def export(session_id: str, request: Request, format: str = "md",
                 user: User = Depends(current_user)) -> Response:
    svc = services(request)
    if "cross_user_export" in svc.defects:
        s = svc.db.one("SELECT * FROM sessions WHERE session_id=?", session_id)
        if s is None:
            raise not_found("session")
    else:
        s = require_session(svc.db, user.user_id, session_id)
    if format not in ("md", "json"):
        raise ApiError(400, "unsupported_format", "export formats are md and json", {"supported": ["md", "json"]})
    path = [dict(m) for m in branch_path(svc, session_id, s["current_leaf"])]
    if "export_all_branches" in svc.defects:
        path = [dict(m) for m in svc.db.all("SELECT * FROM messages WHERE session_id=? ORDER BY seq", session_id)]
    if "export_other_session" in svc.defects:
        others = svc.db.all("SELECT m.* FROM messages m JOIN sessions x ON x.session_id=m.session_id "
                            "WHERE x.user_id=? AND m.session_id<>? ORDER BY m.seq", s["user_id"], session_id)
        path += [dict(m) for m in others]
    leak = user_config(svc, s["user_id"]).public(leak_key=True) if "export_leaks_api_key" in svc.defects else None
    if format == "json":
        data = export_json(svc, dict(s), path)
        if leak:
            data["model_config"] = leak
        return JSONResponse(data)
    text = export_markdown(svc, dict(s), path)
    if leak:
        text += f"\n## Model\n\n{leak}\n"
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")


