"""Checkpoints after each completed tool cycle, signed over what a resume depends on."""

from __future__ import annotations

import hashlib
from typing import Any

from workbench import PROMPT_VERSION
from workbench.clock import stamp
from workbench.db import dumps, loads
from workbench.ids import new_id
from workbench.services import Services

REASONS = {"materials": "materials_changed", "model_config": "model_config_changed", "code": "code_changed",
           "prompt": "code_changed"}


def signature_parts(svc: Services, scope: list[str], model_version: str) -> dict[str, Any]:
    """The facts a checkpoint is valid for: documents in scope (by sha256), model config, code, prompt."""
    rows = svc.db.all(f"SELECT doc_id, sha256 FROM documents WHERE doc_id IN ({','.join('?' * len(scope))})",
                      *scope) if scope else []
    return {"materials": sorted(f"{r['doc_id']}:{r['sha256']}" for r in rows), "model_config": model_version,
            "code": svc.code_version, "prompt": PROMPT_VERSION}


def sign(parts: dict[str, Any]) -> str:
    return hashlib.sha256(dumps(parts).encode()).hexdigest()


def save_checkpoint(svc: Services, run_id: str, round_no: int, parts: dict[str, Any],
                    state: dict[str, Any]) -> dict[str, Any]:
    """Commit a checkpoint; returns its public record."""
    created, _ = stamp()
    record = {"checkpoint_id": new_id("ckp"), "round": round_no, "created_at": created, "signature": sign(parts)}
    with svc.db.tx() as conn:
        conn.execute("INSERT INTO checkpoints(checkpoint_id, run_id, round, created_at, signature, parts, state) "
                     "VALUES(?,?,?,?,?,?,?)", (record["checkpoint_id"], run_id, round_no, created,
                                                record["signature"], dumps(parts), dumps(state)))
    return record


def latest_checkpoint(svc: Services, run_id: str) -> dict[str, Any] | None:
    row = svc.db.one("SELECT * FROM checkpoints WHERE run_id=? ORDER BY round DESC, created_at DESC LIMIT 1", run_id)
    if row is None:
        return None
    return {"checkpoint_id": row["checkpoint_id"], "round": row["round"], "signature": row["signature"],
            "parts": loads(row["parts"]), "state": loads(row["state"])}


def changed_parts(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Protocol reasons for every part that differs (materials_changed, model_config_changed, code_changed)."""
    return sorted({REASONS[k] for k in REASONS if old.get(k) != new.get(k)})
