"""Health, readiness, Prometheus metrics, and the target's declared capabilities."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from workbench import PROTOCOL_VERSION, __version__
from workbench.auth import services

router = APIRouter()


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    svc = services(request)
    checks = {"database": False, "ingest_worker": svc.ingest.alive}
    try:
        svc.db.one("SELECT 1")
        checks["database"] = True
    except Exception:
        pass
    ready = all(checks.values()) and not svc.runs.shutting_down
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    return Response(generate_latest(services(request).metrics.registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/api/v1/capabilities")
async def capabilities(request: Request) -> dict[str, Any]:
    svc = services(request)
    return {
        "protocol": PROTOCOL_VERSION, "version": __version__, "code_version": svc.code_version,
        "scope_rule": "(scope ∪ attachments) ∩ readable",
        "stream": "sse", "stop": "server", "export": ["md", "json"], "direct_search": True,
        "model_config": True, "chaos": bool(svc.config.chaos_token), "summaries": True, "branches": True,
    }
