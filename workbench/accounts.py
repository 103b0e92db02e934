"""Creating accounts directly in a data directory."""

from __future__ import annotations

from pathlib import Path

from workbench.clock import stamp
from workbench.db import Database
from workbench.ids import new_id
from workbench.security import hash_password


def add_user(data_dir: Path, username: str, password: str) -> str:
    """Create `username` (or reset its password); returns its user id."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db = Database(data_dir / "workbench.sqlite3")
    try:
        created, _ = stamp()
        with db.tx() as conn:
            row = conn.execute("SELECT user_id FROM users WHERE username=?", (username,)).fetchone()
            if row:
                conn.execute("UPDATE users SET pw_hash=? WHERE user_id=?", (hash_password(password), row["user_id"]))
                return str(row["user_id"])
            user_id = new_id("usr")
            conn.execute("INSERT INTO users(user_id, username, pw_hash, created_at) VALUES(?,?,?,?)",
                         (user_id, username, hash_password(password), created))
            return user_id
    finally:
        db.close()
