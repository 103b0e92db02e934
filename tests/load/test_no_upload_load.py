"""A target that takes no uploads (a library its operators manage) can be loaded: the rig uploads nothing, says so in
the run's evidence, and asks the eval set's questions in sessions that name no document."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from rig.evidence import EvidenceStore
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.target.embedded import EmbeddedWorkbench

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _config(tmp: Path, url: str) -> Path:
    body = {"extends": str(DOCS / "http-target.rig.yaml"), "target": {"url": url, "http": {"upload": None}},
            "accounts": {"a": {"username": "nu-a", "password_env": "RIG_NU_PW_A"},
                         "b": {"username": "nu-b", "password_env": "RIG_NU_PW_B"}}}
    path = tmp / "no-upload.rig.yaml"
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    return path


def test_a_load_runs_on_a_target_that_takes_no_uploads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    passwords = {"nu-a": f"pw-{uuid.uuid4().hex[:12]}", "nu-b": f"pw-{uuid.uuid4().hex[:12]}"}
    monkeypatch.setenv("RIG_NU_PW_A", passwords["nu-a"])
    monkeypatch.setenv("RIG_NU_PW_B", passwords["nu-b"])
    target = EmbeddedWorkbench(tmp_path / "wb")
    target.start()
    try:
        for name, password in passwords.items():
            target.add_account(name, password)
        result = run_load(LoadOptions(target=target.url, config=_config(tmp_path, target.url), users=2, spawn_rate=2,
                                      duration_s=8, think_min_s=0.1, think_max_s=0.2, out=tmp_path / "load",
                                      reports_root=tmp_path))
    finally:
        target.stop()
    summary = result.summary
    assert summary is not None and summary.runs > 0 and summary.completed_runs > 0
    store = EvidenceStore(tmp_path / "load" / "evidence.sqlite3")
    try:
        said = [e.title for e in store.evidence(kind="setup")]
        plan = store.meta("plan")
    finally:
        store.close()
    assert "the target takes no uploads: no paper of the rig's is on it" in said
    assert plan["paper_sets"] and all(s["doc_ids"] == [] for s in plan["paper_sets"])
    assert plan["ingest_files"] == []
