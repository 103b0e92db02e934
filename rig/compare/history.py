"""The run history: a small SQLite index of finished runs under the reports folder (`history.sqlite3`), by
kind, target and version, so `--baseline last-pass` and `rig history` can find earlier runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from pydantic import BaseModel

from rig.runmanifest import RunManifest

SCHEMA = """CREATE TABLE IF NOT EXISTS runs(run_dir TEXT PRIMARY KEY, kind TEXT NOT NULL, target TEXT NOT NULL,
  target_version TEXT, started_at TEXT, ended_at TEXT, decision TEXT NOT NULL, headlines TEXT NOT NULL)"""


class HistoryRow(BaseModel):
    run_dir: str
    kind: str
    target: str
    target_version: str | None
    started_at: str | None
    decision: str
    headlines: dict[str, float | None]  # `T4.p95` … of the run


def target_key(manifest: RunManifest) -> str:
    """Runs of the embedded workbench share one key (its port changes every run); others are keyed by URL."""
    return "embedded" if manifest.target_embedded else (manifest.target_url or "unknown")


class History:
    def __init__(self, reports_root: Path) -> None:
        self.path = reports_root / "history.sqlite3"

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute(SCHEMA)
        return conn

    def record(self, run_dir: Path, manifest: RunManifest, decision: str, headlines: dict[str, float | None]) -> None:
        """Add (or replace, after a resume) one finished run."""
        with self._connect() as conn:
            conn.execute("INSERT OR REPLACE INTO runs VALUES(?,?,?,?,?,?,?,?)",
                         (str(run_dir.resolve()), manifest.kind, target_key(manifest), manifest.target_version,
                          manifest.started_at, manifest.ended_at, decision, json.dumps(headlines)))

    def rows(self, kind: str | None = None, target: str | None = None) -> list[HistoryRow]:
        """Runs, oldest first, optionally of one kind and target."""
        if not self.path.exists():
            return []
        sql, args = "SELECT * FROM runs WHERE 1=1", list[str]()
        if kind:
            sql, args = sql + " AND kind=?", [*args, kind]
        if target:
            sql, args = sql + " AND target=?", [*args, target]
        with self._connect() as conn:
            found = conn.execute(sql + " ORDER BY started_at, rowid", args).fetchall()
        return [HistoryRow(run_dir=r["run_dir"], kind=r["kind"], target=r["target"], target_version=r["target_version"],
                           started_at=r["started_at"], decision=r["decision"], headlines=json.loads(r["headlines"]))
                for r in found]

    def last_pass(self, kind: str, target: str | None) -> Path | None:
        """The newest run of `kind` on `target` that passed (or was recorded, for load runs without thresholds)."""
        for row in reversed(self.rows(kind, target)):
            if row.decision in ("pass", "recorded") and (Path(row.run_dir) / "manifest.json").exists():
                return Path(row.run_dir)
        return None


def record_history(root: Path, run_dir: Path, manifest: RunManifest, decision: str,
                   observed: dict[str, float | None]) -> None:
    """Index a finished run for `rig history` and `--baseline last-pass`; failing to index never fails a run."""
    headlines = {k: v for k, v in observed.items() if k.split(".")[-1] in ("p50", "p95") and "@" not in k}
    try:
        History(root).record(run_dir, manifest, decision, headlines)
    except (OSError, sqlite3.Error):
        pass
