"""Per-user model configuration; the API key is never returned in plain text."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from workbench.auth import User, current_user, services
from workbench.modelconfig import save_config, user_config
from workbench.schemas import ModelConfigIn

router = APIRouter(prefix="/api/v1")


@router.get("/me/model-config")
async def get_config(request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    return user_config(svc, user.user_id).public(leak_key="api_key_leak" in svc.defects)


@router.put("/me/model-config")
async def put_config(body: ModelConfigIn, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    config = save_config(svc, user.user_id, body.provider, body.model, body.base_url, body.api_key)
    return config.public(leak_key="api_key_leak" in svc.defects)
