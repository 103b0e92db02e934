"""Rows turned into protocol JSON."""

from __future__ import annotations

import sqlite3
from typing import Any

from workbench.clock import iso
from workbench.db import Database, loads

STAGE_ORDER = ("upload", "parse", "chunk", "index")


def document_view(db: Database, row: sqlite3.Row) -> dict[str, Any]:
    stages = {r["name"]: r for r in db.all("SELECT * FROM doc_stages WHERE doc_id=?", row["doc_id"])}
    out_stages = []
    for name in STAGE_ORDER:
        s = stages.get(name)
        if s is None:
            continue
        out_stages.append({"name": name, "started_at": iso(s["started_ms"]), "started_at_ms": s["started_ms"],
                           "ended_at": iso(s["ended_ms"]), "ended_at_ms": s["ended_ms"],
                           "ok": None if s["ok"] is None else bool(s["ok"]), "error": s["error"]})
    error = None
    if row["error_code"]:
        error = {"code": row["error_code"], "message": row["error_message"]}
    return {"doc_id": row["doc_id"], "project_id": row["project_id"], "paper_id": row["paper_id"],
            "filename": row["filename"], "title": row["title"], "sha256": row["sha256"], "bytes": row["bytes"],
            "status": row["status"], "pages_total": row["pages_total"], "pages_with_text": row["pages_with_text"],
            "error": error, "created_at": row["created_at"], "stages": out_stages}


def citation_view(row: sqlite3.Row) -> dict[str, Any]:
    return {"citation_id": row["citation_id"], "marker": row["marker"], "doc_id": row["doc_id"],
            "paper_id": row["paper_id"], "page": row["page"], "chunk_id": row["chunk_id"], "quote": row["quote"],
            "tool_call_id": row["tool_call_id"]}


def message_view(db: Database, row: sqlite3.Row) -> dict[str, Any]:
    cites = db.all("SELECT * FROM citations WHERE message_id=? ORDER BY rowid", row["message_id"])
    return {"message_id": row["message_id"], "parent_id": row["parent_id"], "branch_id": row["branch_id"],
            "role": row["role"], "content": row["content"], "citations": [citation_view(c) for c in cites],
            "run_id": row["run_id"], "scope": loads(row["scope"]), "created_at": row["created_at"]}
