"""The web UI: one page and its script and style, served from the package's `static/` folder."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from workbench.errors import not_found

STATIC = Path(__file__).resolve().parent.parent / "static"
FILES = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}

router = APIRouter()


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})


@router.get("/ui/{name}", include_in_schema=False)
async def asset(name: str) -> FileResponse:
    if name not in FILES:
        raise not_found("ui file")
    return FileResponse(STATIC / name, media_type=FILES[name], headers={"Cache-Control": "no-cache"})
