"""Creating accounts directly in a data directory."""

from __future__ import annotations

from pathlib import Path

from workbench.clock import stamp
from workbench.db import Database
from workbench.ids import new_id
from workbench.security import hash_password


def seal(data_dir: Path) -> list[str]:
    """Remove from a stopped server's data directory what a shared copy must not hold: the key that encrypts API
    keys at rest, the API keys it encrypted, password hashes and login tokens. A later `serve` makes a new key;
    `user add` sets passwords again. Returns what was removed."""
    removed = []
    key = data_dir / "secret.key"
    if key.exists():
        key.unlink()
        removed.append("secret.key")
    db_path = data_dir / "workbench.sqlite3"
    if db_path.exists():
        db = Database(db_path)
        try:
            with db.tx() as conn:
                conn.execute("UPDATE users SET pw_hash=''")
                conn.execute("DELETE FROM tokens")
                conn.execute("UPDATE model_configs SET api_key_enc=NULL")
            removed += ["password hashes", "login tokens", "encrypted API keys"]
        finally:
            db.close()
    return removed


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
