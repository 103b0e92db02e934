"""Run events (SSE with Last-Event-ID replay), run detail, stop, resume."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from workbench.access import require_run, require_session
from workbench.auth import User, current_user, optional_user, services
from workbench.checkpoints import changed_parts, latest_checkpoint, signature_parts
from workbench.db import loads
from workbench.errors import ApiError, not_found
from workbench.modelconfig import user_config
from workbench.runs import TERMINAL
from workbench.runstart import start_run
from workbench.schemas import StopIn
from workbench.services import Services

router = APIRouter(prefix="/api/v1")
RESUMABLE = {"stopped", "interrupted", "failed"}


async def _chain(first: list[Any], rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The events already taken from `rest`, then the rest of them."""
    for item in first:
        yield item
    if first and first[-1][1] in ("done", "error"):
        return
    async for item in rest:
        yield item


SAVE_AFTER_END_S = 0.3  # saved_after_end: how long after the terminal event the answer is written


def _sse(event_id: int, event: str, data: dict[str, Any]) -> bytes:
    return f"id: {event_id}\nevent: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


HOSTILE = frozenset({"answer_never_ends", "giant_event", "no_line_end"})  # defects of the stream itself
HOSTILE_BYTES = 50 * 2**20  # the giant event's and the endless line's size
HOSTILE_EVENTS = 10**7  # the never-ending answer's bound (a reader that never stops still ends the loop)


_TURNS = itertools.count()  # with several hostile defects, the streams take them in turn


async def _hostile(defects: frozenset[str], event_id: int, data: dict[str, Any]) -> AsyncIterator[bytes]:
    """What a hostile stream sends after the first answer piece: pieces without end, one giant event, or bytes
    without a line end (several defects: each stream the next of them); the run itself goes on as usual (its record
    and saved answer are right)."""
    chosen = sorted(defects)
    defect = chosen[next(_TURNS) % len(chosen)]
    if defect == "answer_never_ends":
        for i in range(HOSTILE_EVENTS):
            yield _sse(event_id + 1 + i, "token", {**data, "text": f"w{i} "})
            if i % 64 == 0:
                await asyncio.sleep(0)  # the server still serves everyone else
        return
    yield b"event: token\ndata: " if defect == "giant_event" else b""
    piece = b"x" * 65536
    for _ in range(HOSTILE_BYTES // len(piece)):
        yield piece
        await asyncio.sleep(0)
    yield b"\n\n"


@router.get("/runs/{run_id}/events")
async def events(run_id: str, request: Request) -> StreamingResponse:
    svc = services(request)
    if "unauth_run_events" in svc.defects:
        require_run(svc.db, None, run_id)
    else:
        require_run(svc.db, current_user(request).user_id, run_id)
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id") or "0"
    try:
        after = int(raw)
    except ValueError:
        raise ApiError(400, "invalid_last_event_id", "Last-Event-ID must be an integer event id") from None
    if "replay_repeats_last" in svc.defects and after > 0:
        after -= 1

    source = svc.runs.events(run_id, after)
    held: list[Any] = []
    if "late_stream" in svc.dialects:  # the dialect: nothing is sent, not even headers, until the answer begins
        async for item in source:
            if item is not None:
                held.append(item)
                if item[1] in ("token", "done", "error"):
                    break

    async def stream() -> AsyncIterator[bytes]:
        ended = saved = False
        try:
            yield b"retry: 1000\n\n"
            async for item in _chain(held, source):
                if item is None:
                    yield b": keep-alive\n\n"
                    continue
                event_id, event, data = item
                if event in ("queued", "status") and "no_status" in svc.dialects:
                    continue  # the dialect: the stream starts with the first answer piece
                if event in ("done", "error") and data.get("state") == "stopped" and \
                        "stream_end_contradicts" in svc.defects:
                    event, data = "done", {**data, "state": "completed", "reason": "completed"}
                yield _sse(event_id, event, data)
                if event == "token" and svc.defects.names & HOSTILE:
                    async for hostile in _hostile(svc.defects.names & HOSTILE, event_id, data):
                        yield hostile
                ended = event in ("done", "error")
            ended = True
            if "saved_after_end" in svc.dialects:  # the dialect: the answer is saved after its end was sent
                await asyncio.sleep(SAVE_AFTER_END_S)
                yield b": saved\n\n"
                svc.dialect_state.saved(run_id)
            saved = True
        finally:
            if "saved_after_end" in svc.dialects and ended and not saved:
                svc.dialect_state.lost(run_id)  # the reader left at the end: the answer was never saved
            live = svc.runs.live.get(run_id)
            if not ended and live is not None and ("disconnect_cancels" in svc.defects
                                                   or "stop_disconnect" in svc.dialects):
                svc.runs.stop(live, "user_stop")

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/runs/{run_id}")
async def run_detail(run_id: str, request: Request) -> dict[str, Any]:
    svc = services(request)
    if "no_run_records" in svc.dialects:
        raise ApiError(404, "not_found", "no such route: this server keeps no run records")
    user = optional_user(request)
    if "unauth_run_detail" in svc.defects:
        require_run(svc.db, None, run_id)
    else:
        if user is None:
            raise ApiError(401, "unauthenticated", "log in first: the token is missing, expired or revoked")
        require_run(svc.db, user.user_id, run_id)
    detail = svc.runs.detail(run_id)
    if detail is None:
        raise not_found("run")
    if "trace_id_unlinked" in svc.defects and detail.get("trace_id"):
        detail = {**detail, "trace_id": hashlib.sha256(run_id.encode()).hexdigest()[:32]}
    if "run_record_null_state" in svc.defects and detail.get("state") in ("completed", "stopped", "failed"):
        detail = {**detail, "state": None}
    if "tool_count_inflated" in svc.defects and detail.get("tool_calls"):
        detail = {**detail, "tool_calls_proposed": (detail.get("tool_calls_proposed") or 0) + 1,
                  "tool_calls_executed": (detail.get("tool_calls_executed") or 0) + 1}
    return _record_defects(svc, detail)


def _record_defects(svc: Services, detail: dict[str, Any]) -> dict[str, Any]:
    """The seeded defects that rewrite what a run record says of itself (trust nothing, part 3)."""
    defects = svc.defects
    if "first_token_backdated" in defects and detail.get("first_token_at_ms") and detail.get("queued_at_ms"):
        stamp = detail["queued_at_ms"] - 1500
        detail = {**detail, "first_token_at_ms": stamp,
                  "first_token_at": dt.datetime.fromtimestamp(stamp / 1000, dt.UTC).isoformat()}
    if "model_input_drops_history" in defects:
        detail = {**detail, "model_input": [{**mi, "included_message_ids": mi["included_message_ids"][-1:]}
                                            for mi in detail.get("model_input") or []]}
    if "model_input_unlisted_results" in defects:
        detail = {**detail, "model_input": [{**mi, "tool_call_ids": []} for mi in detail.get("model_input") or []]}
    if "foreign_project_hits_unpaged" in defects and detail.get("session_id"):
        row = svc.db.one("SELECT project_id FROM sessions WHERE session_id=?", detail["session_id"])
        home = row["project_id"] if row else None
        projects = {r["doc_id"]: r["project_id"] for r in svc.db.all("SELECT doc_id, project_id FROM documents")}
        detail = {**detail, "tool_calls": [{**c, "hits": [{**h, "page": None} if projects.get(h["doc_id"]) != home
                                                          else h for h in c.get("hits") or []]}
                                           for c in detail.get("tool_calls") or []]}
    return detail


@router.post("/runs/{run_id}/stop", status_code=202)
async def stop(run_id: str, request: Request, body: StopIn | None = None,
               user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    if "stop_disconnect" in svc.dialects:
        raise ApiError(404, "not_found", "no such route: close the event stream to stop a run")
    row = require_run(svc.db, None if "foreign_stop" in svc.defects else user.user_id, run_id)
    live = svc.runs.live.get(run_id)
    if live is None or live.detail["state"] in TERMINAL:
        if "stop_race_slot" in svc.defects and live is not None and live.holds_slot:
            live.holds_slot = False  # the seeded defect: the slot is dropped, never returned to the pool
        detail = svc.runs.detail(run_id) or {}
        if "late_stop_rewrites" in svc.defects and detail:
            svc.runs.rewrite_end(run_id, "stopped", "user_stop")
            return {"run_id": run_id, "stop_requested": True}
        raise ApiError(409, "run_not_active", "the run has already ended",
                       {"state": detail.get("state"), "end_reason": detail.get("end_reason")})
    if "stop_drops_citations" in svc.defects:
        with svc.db.tx() as conn:
            conn.execute("DELETE FROM citations WHERE message_id IN (SELECT message_id FROM messages WHERE "
                         "session_id=?)", (row["session_id"],))
    svc.runs.stop(live, "user_stop")
    return {"run_id": run_id, "stop_requested": True}


@router.post("/runs/{run_id}/resume", status_code=201)
async def resume(run_id: str, request: Request, user: User = Depends(current_user)) -> JSONResponse:
    svc = services(request)
    row = require_run(svc.db, user.user_id, run_id)
    detail = loads(row["data"])
    if row["state"] not in RESUMABLE or run_id in svc.runs.live:
        raise ApiError(409, "not_resumable", f"a run in state {row['state']} cannot be resumed",
                       {"state": row["state"]})
    again = svc.db.one("SELECT run_id FROM runs WHERE json_extract(data, '$.resume_from')=? ORDER BY created_ms",
                       run_id)
    if again is not None:  # one continuation per stopped run: a second resume names the first
        raise ApiError(409, "already_resumed", "this run was already resumed; continue from that run",
                       {"run_id": again["run_id"]})
    checkpoint = latest_checkpoint(svc, run_id)
    if checkpoint is None and "resume_without_checkpoint_restarts" in svc.defects:
        checkpoint = {"checkpoint_id": None, "parts": {}, "state": None}
    elif checkpoint is None:
        raise ApiError(409, "no_checkpoint", "the run stopped before its first complete tool cycle; start a new "
                       "question instead", {"checkpoints": []})
    session = require_session(svc.db, user.user_id, row["session_id"])
    current = signature_parts(svc, loads(session["scope"]) or [], user_config(svc, user.user_id).version_tag)
    reasons = changed_parts(checkpoint["parts"], current) if checkpoint["parts"] else []
    if reasons and "stale_checkpoint_resumes" not in svc.defects:
        raise ApiError(409, "checkpoint_invalid", "the checkpoint no longer matches; start the question again",
                       {"reasons": reasons, "checkpoint_id": checkpoint["checkpoint_id"],
                        "checkpoint": checkpoint["parts"], "current": current})
    question = svc.db.one("SELECT * FROM messages WHERE message_id=?", detail["user_message_id"])
    if question is None:
        raise not_found("question")
    state = None if "resume_searches_again" in svc.defects else checkpoint["state"]
    new = start_run(svc, session, user.user_id, question, detail["branch_id"], resume_from=run_id,
                    resume_state=state, traceparent=request.headers.get("traceparent"))
    return JSONResponse({"run_id": new["run_id"], "resume_from": run_id,
                         "checkpoint_id": checkpoint["checkpoint_id"]}, status_code=201)
