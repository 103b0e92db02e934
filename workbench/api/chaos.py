"""Test-only control: faults and runtime settings. 404 unless a chaos token is configured."""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError

from workbench.auth import services
from workbench.chaos import FaultSpec
from workbench.errors import ApiError, not_found
from workbench.schemas import SettingsPatch

router = APIRouter(prefix="/api/v1/_chaos")


def _guard(request: Request) -> None:
    svc = services(request)
    expected = svc.config.chaos_token
    if not expected:
        raise not_found("path")
    given = request.headers.get("x-chaos-token", "")
    if not hmac.compare_digest(given, expected):
        raise ApiError(403, "chaos_token_invalid", "X-Chaos-Token is missing or wrong")


@router.post("/faults")
async def add_fault(spec: FaultSpec, request: Request) -> dict[str, str]:
    _guard(request)
    return {"fault_id": services(request).faults.add(spec).fault_id}


@router.delete("/faults")
async def clear_faults(request: Request) -> dict[str, int]:
    _guard(request)
    svc = services(request)
    count = len(svc.faults.list())
    svc.faults.clear()
    return {"cleared": count}


@router.get("/faults")
async def list_faults(request: Request) -> list[dict[str, Any]]:
    _guard(request)
    return [{"fault_id": f.fault_id, **f.spec.model_dump(), "fired": f.fired, "exhausted": f.exhausted}
            for f in services(request).faults.list()]


@router.put("/settings")
async def put_settings(patch: SettingsPatch, request: Request) -> dict[str, Any]:
    _guard(request)
    svc = services(request)
    merged = svc.settings.model_dump() | patch.model_dump(exclude_none=True)
    try:
        new = type(svc.settings).model_validate(merged)
    except ValidationError as exc:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
        raise ApiError(422, "invalid_settings", "settings out of range", {"errors": errors}) from None
    for key, value in new.model_dump().items():
        setattr(svc.settings, key, value)
    return svc.settings.model_dump()


@router.get("/settings")
async def get_settings(request: Request) -> dict[str, Any]:
    _guard(request)
    return services(request).settings.model_dump()
