"""SQLite storage in WAL mode: the schema and a per-thread connection."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS users(user_id TEXT PRIMARY KEY, username TEXT UNIQUE NOT NULL, pw_hash TEXT NOT NULL,
  created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens(token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, created_ms REAL NOT NULL,
  expires_ms REAL NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS projects(project_id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS members(project_id TEXT NOT NULL, user_id TEXT NOT NULL, PRIMARY KEY(project_id, user_id));
CREATE TABLE IF NOT EXISTS documents(doc_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, owner_id TEXT NOT NULL,
  paper_id TEXT, filename TEXT NOT NULL, title TEXT NOT NULL, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL,
  status TEXT NOT NULL, pages_total INTEGER, pages_with_text INTEGER, error_code TEXT, error_message TEXT,
  created_at TEXT NOT NULL, created_ms REAL NOT NULL);
CREATE INDEX IF NOT EXISTS documents_project ON documents(project_id);
CREATE TABLE IF NOT EXISTS doc_stages(doc_id TEXT NOT NULL, name TEXT NOT NULL, seq INTEGER NOT NULL,
  started_ms REAL, ended_ms REAL, ok INTEGER, error TEXT, PRIMARY KEY(doc_id, name));
CREATE TABLE IF NOT EXISTS pages(doc_id TEXT NOT NULL, page INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
  PRIMARY KEY(doc_id, page));
CREATE TABLE IF NOT EXISTS chunks(chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, page INTEGER NOT NULL,
  seq INTEGER NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS sessions(session_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, project_id TEXT NOT NULL,
  scope TEXT NOT NULL, attachments TEXT NOT NULL, current_leaf TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages(message_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, parent_id TEXT,
  branch_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, run_id TEXT, scope TEXT NOT NULL,
  created_at TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id);
CREATE TABLE IF NOT EXISTS citations(citation_id TEXT PRIMARY KEY, message_id TEXT NOT NULL, marker INTEGER NOT NULL,
  doc_id TEXT NOT NULL, paper_id TEXT, page INTEGER, chunk_id TEXT, quote TEXT NOT NULL, tool_call_id TEXT,
  run_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS citations_message ON citations(message_id);
CREATE TABLE IF NOT EXISTS runs(run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, user_id TEXT NOT NULL,
  state TEXT NOT NULL, end_reason TEXT, data TEXT NOT NULL, created_ms REAL NOT NULL);
CREATE INDEX IF NOT EXISTS runs_state ON runs(state);
CREATE TABLE IF NOT EXISTS run_events(run_id TEXT NOT NULL, id INTEGER NOT NULL, event TEXT NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY(run_id, id));
CREATE TABLE IF NOT EXISTS checkpoints(checkpoint_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, round INTEGER NOT NULL,
  created_at TEXT NOT NULL, signature TEXT NOT NULL, parts TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS checkpoints_run ON checkpoints(run_id);
CREATE TABLE IF NOT EXISTS summaries(summary_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, branch_id TEXT NOT NULL,
  covers_until_message_id TEXT NOT NULL, text TEXT NOT NULL, created_at TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS model_configs(user_id TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
  base_url TEXT, api_key_enc BLOB, config_version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS locate_cache(cache_key TEXT PRIMARY KEY, result TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class Database:
    """One SQLite file; each thread gets its own connection (WAL lets readers and a writer overlap)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self.conn().executescript(SCHEMA)

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed on success, rolled back on error."""
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self.conn().execute(sql, args).fetchone()

    def all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.conn().execute(sql, args).fetchall()

    def next_seq(self, conn: sqlite3.Connection, name: str) -> int:
        """A monotonically increasing counter, inside the caller's transaction."""
        row = conn.execute("SELECT value FROM counters WHERE name=?", (name,)).fetchone()
        value = (row["value"] if row else 0) + 1
        conn.execute("INSERT INTO counters(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value=?",
                     (name, value, value))
        return value

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads(text: str | None) -> Any:
    return json.loads(text) if text else None
