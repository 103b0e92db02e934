"""The direct entry of the retrieval tool."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from workbench.access import require_project
from workbench.auth import User, current_user, services
from workbench.errors import ApiError
from workbench.schemas import SearchIn
from workbench.search import internal_search
from workbench.stages import StageLog
from workbench.tracing import ToolTrace

router = APIRouter(prefix="/api/v1")


@router.post("/tools/internal_search")
async def search(body: SearchIn, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    require_project(svc.db, user.user_id, body.project_id)
    if "search_down_after_corrupt" in svc.defects and svc.db.one(
            "SELECT 1 FROM documents WHERE project_id=? AND status='failed'", body.project_id):
        raise ApiError(503, "search_unavailable", "the index is being rebuilt after a failed document")
    history = [h.model_dump() for h in body.history] if body.history else None
    traceparent = request.headers.get("traceparent")
    if traceparent and "direct_call_unspanned" not in svc.defects:  # the caller's trace: stages, executions as spans
        tool_trace = ToolTrace(svc, traceparent)
        with tool_trace.active():
            outcome = await internal_search(svc, user_id=user.user_id, project_id=body.project_id,
                                            queries=body.queries, scope=body.scope, history=history,
                                            stages=StageLog(svc.metrics, tool_trace), executions=tool_trace)
    else:
        outcome = await internal_search(svc, user_id=user.user_id, project_id=body.project_id, queries=body.queries,
                                        scope=body.scope, history=history)
    return {**outcome.to_api(), "embedding_requests": outcome.embedding_requests,
            "retrieval_model_requests": outcome.retrieval_model_requests}
