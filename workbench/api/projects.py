"""Projects, members, documents (upload, status, original file, page text)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import PurePath
from typing import Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import FileResponse

from workbench.access import readable_project_ids, require_document, require_project
from workbench.auth import User, current_user, services
from workbench.clock import now_ms, stamp
from workbench.errors import ApiError, not_found
from workbench.ids import new_id
from workbench.schemas import MemberIn, ProjectIn
from workbench.views import document_view

router = APIRouter(prefix="/api/v1")
MAX_UPLOAD_BYTES = 64 * 1024 * 1024


def title_from_filename(filename: str) -> str:
    """`32_Author_2016_Title- Sub.pdf` → `Title- Sub` (the eval set's file naming); else the stem."""
    stem = PurePath(filename).stem
    parts = stem.split("_")
    return "_".join(parts[3:]) if len(parts) >= 4 and parts[0].isdigit() else stem


@router.post("/projects")
async def create_project(body: ProjectIn, request: Request, user: User = Depends(current_user)) -> dict[str, str]:
    svc = services(request)
    project_id = new_id("prj")
    created, _ = stamp()
    with svc.db.tx() as conn:
        conn.execute("INSERT INTO projects(project_id, owner_id, name, created_at) VALUES(?,?,?,?)",
                     (project_id, user.user_id, body.name, created))
    return {"project_id": project_id}


@router.get("/projects")
async def list_projects(request: Request, user: User = Depends(current_user)) -> list[dict[str, Any]]:
    svc = services(request)
    ids = readable_project_ids(svc.db, user.user_id)
    rows = svc.db.all("SELECT * FROM projects ORDER BY created_at")
    return [{"project_id": r["project_id"], "name": r["name"], "owner": r["owner_id"] == user.user_id,
             "created_at": r["created_at"]} for r in rows if r["project_id"] in ids]


@router.post("/projects/{project_id}/members")
async def add_member(project_id: str, body: MemberIn, request: Request,
                     user: User = Depends(current_user)) -> dict[str, str]:
    svc = services(request)
    require_project(svc.db, user.user_id, project_id, owner=True)
    member = svc.db.one("SELECT user_id FROM users WHERE username=?", body.username)
    if member is None:
        raise not_found("user")
    with svc.db.tx() as conn:
        conn.execute("INSERT OR IGNORE INTO members(project_id, user_id) VALUES(?,?)", (project_id, member["user_id"]))
    return {"project_id": project_id, "user_id": member["user_id"]}


@router.post("/projects/{project_id}/documents")
async def upload(project_id: str, request: Request, file: UploadFile = File(...),
                 paper_id: str | None = Form(None), user: User = Depends(current_user)) -> dict[str, str]:
    svc = services(request)
    received = getattr(request.state, "received_ms", now_ms())
    require_project(svc.db, user.user_id, project_id, owner=True)
    if "rate_limit" in svc.dialects:
        refusal = svc.dialect_state.upload_refusal(user.user_id, time.monotonic())
        if refusal is not None:
            raise ApiError(429, "rate_limited", "too many uploads: try again later", headers=refusal)
    data = await file.read()
    if len(data) > MAX_UPLOAD_BYTES:
        raise ApiError(413, "file_too_large", f"uploads are limited to {MAX_UPLOAD_BYTES} bytes",
                       {"limit_bytes": MAX_UPLOAD_BYTES, "bytes": len(data)})
    if not data:
        raise ApiError(400, "empty_file", "the uploaded file is empty")
    sha = hashlib.sha256(data).hexdigest()
    filename = file.filename or "upload.pdf"
    if "duplicate_names" in svc.dialects and svc.db.one(
            "SELECT doc_id FROM documents WHERE owner_id=? AND filename=?", user.user_id, filename) is not None:
        raise ApiError(409, "duplicate_document", f"{filename} was already uploaded by this account",
                       {"filename": filename})
    path = svc.files_dir / sha
    if not path.exists():
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.rename(path)
    doc_id = new_id("doc")
    created, created_ms = stamp()
    with svc.db.tx() as conn:
        conn.execute("INSERT INTO documents(doc_id, project_id, owner_id, paper_id, filename, title, sha256, bytes, "
                     "status, created_at, created_ms) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                     (doc_id, project_id, user.user_id, paper_id, filename, title_from_filename(filename), sha,
                      len(data), "queued", created, created_ms))
        conn.execute("INSERT INTO doc_stages(doc_id, name, seq, started_ms, ended_ms, ok) VALUES(?,?,?,?,?,1)",
                     (doc_id, "upload", 1, received, now_ms()))
    if "upload_refusal" in svc.dialects:  # the dialect: ingest inside the request, a refusal is its answer
        await asyncio.to_thread(svc.ingest.process_now, doc_id)
        row = svc.db.one("SELECT status, error_code, error_message FROM documents WHERE doc_id=?", doc_id)
        if row is not None and row["status"] == "failed":
            raise ApiError(500, row["error_code"] or "ingest_failed", row["error_message"] or "ingest failed")
        return {"doc_id": doc_id, "sha256": sha, "status": row["status"] if row else "queued"}
    svc.ingest.submit(doc_id)
    return {"doc_id": doc_id, "sha256": sha, "status": "queued"}


@router.get("/projects/{project_id}/documents")
async def list_documents(project_id: str, request: Request, user: User = Depends(current_user)) -> list[dict[str, Any]]:
    svc = services(request)
    require_project(svc.db, user.user_id, project_id)
    rows = svc.db.all("SELECT * FROM documents WHERE project_id=? ORDER BY created_ms", project_id)
    return [document_view(svc.db, r) for r in rows]


@router.get("/documents/{doc_id}")
async def get_document(doc_id: str, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    return document_view(svc.db, require_document(svc.db, user.user_id, doc_id))


@router.get("/documents/{doc_id}/file")
async def download(doc_id: str, request: Request, user: User = Depends(current_user)) -> FileResponse:
    svc = services(request)
    if "cross_user_file" in svc.defects:
        row = svc.db.one("SELECT * FROM documents WHERE doc_id=?", doc_id)
        if row is None:
            raise not_found("document")
    else:
        row = require_document(svc.db, user.user_id, doc_id)
    return FileResponse(svc.files_dir / row["sha256"], media_type="application/pdf", filename=row["filename"])


@router.get("/documents/{doc_id}/pages/{page}")
async def page_text(doc_id: str, page: int, request: Request, user: User = Depends(current_user)) -> dict[str, Any]:
    svc = services(request)
    require_document(svc.db, user.user_id, doc_id)
    row = svc.db.one("SELECT page, kind, text FROM pages WHERE doc_id=? AND page=?", doc_id, page)
    if row is None:
        raise not_found("page")
    return {"page": row["page"], "kind": row["kind"], "text": row["text"]}


