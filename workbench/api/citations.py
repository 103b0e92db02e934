"""Citation locate: physical page, match state, highlights only for a unique match."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from workbench.auth import User, current_user, services
from workbench.citations import locate
from workbench.errors import not_found

router = APIRouter(prefix="/api/v1")


@router.get("/citations/{citation_id}/locate")
async def locate_citation(citation_id: str, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    row = svc.db.one("SELECT c.* FROM citations c JOIN messages m ON m.message_id=c.message_id JOIN sessions s "
                     "ON s.session_id=m.session_id WHERE c.citation_id=? AND s.user_id=?", citation_id, user.user_id)
    if row is None:
        raise not_found("citation")
    return locate(svc, dict(row))
