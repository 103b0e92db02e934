"""Ownership and permission checks. Anything that is not the caller's answers 404 with no content."""

from __future__ import annotations

import sqlite3

from workbench.db import Database
from workbench.errors import not_found


def readable_project_ids(db: Database, user_id: str) -> set[str]:
    """Projects the user owns or is a member of."""
    rows = db.all("SELECT project_id FROM projects WHERE owner_id=? UNION SELECT project_id FROM members "
                  "WHERE user_id=?", user_id, user_id)
    return {r["project_id"] for r in rows}


def readable_doc_ids(db: Database, user_id: str) -> set[str]:
    """Documents in projects the user may read."""
    rows = db.all("SELECT d.doc_id FROM documents d WHERE d.project_id IN (SELECT project_id FROM projects WHERE "
                  "owner_id=? UNION SELECT project_id FROM members WHERE user_id=?)", user_id, user_id)
    return {r["doc_id"] for r in rows}


def require_project(db: Database, user_id: str, project_id: str, *, owner: bool = False) -> sqlite3.Row:
    row = db.one("SELECT * FROM projects WHERE project_id=?", project_id)
    if row is None:
        raise not_found("project")
    if row["owner_id"] == user_id:
        return row
    if not owner and db.one("SELECT 1 FROM members WHERE project_id=? AND user_id=?", project_id, user_id):
        return row
    raise not_found("project")


def require_document(db: Database, user_id: str, doc_id: str) -> sqlite3.Row:
    row = db.one("SELECT * FROM documents WHERE doc_id=?", doc_id)
    if row is None or row["project_id"] not in readable_project_ids(db, user_id):
        raise not_found("document")
    return row


def require_session(db: Database, user_id: str, session_id: str) -> sqlite3.Row:
    row = db.one("SELECT * FROM sessions WHERE session_id=?", session_id)
    if row is None or row["user_id"] != user_id:
        raise not_found("session")
    return row


def require_run(db: Database, user_id: str | None, run_id: str) -> sqlite3.Row:
    row = db.one("SELECT * FROM runs WHERE run_id=?", run_id)
    if row is None or (user_id is not None and row["user_id"] != user_id):
        raise not_found("run")
    return row


def require_message(db: Database, user_id: str, message_id: str) -> sqlite3.Row:
    row = db.one("SELECT m.* FROM messages m JOIN sessions s ON s.session_id=m.session_id WHERE m.message_id=? "
                 "AND s.user_id=?", message_id, user_id)
    if row is None:
        raise not_found("message")
    return row
