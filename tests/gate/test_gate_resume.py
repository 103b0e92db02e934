"""Killing the rig with SIGKILL mid-gate and running `--resume` finishes the run; nothing finished is redone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rig.evidence import EvidenceStore
from tests.sigkill import kill_after


def test_sigkill_then_resume_finishes_without_redoing(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "rig.cli", "gate", "--cases", "1-12", "--out", str(run_dir)]
    kill_after(cmd, run_dir, 4)
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    before = {c.case_id: c for c in store.cases() if c.status == "done"}
    evidence_before = {e.id: e.title for e in store.evidence()}
    stale_pid = store.meta("target_pid")
    store.close()
    assert 4 <= len(before) < 12
    resumed = subprocess.run([*cmd[:-2], "--resume", str(run_dir)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "COLUMNS": "200"})
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    after = {c.case_id: c for c in store.cases()}
    assert sorted(after) == list(range(1, 13)) and all(c.status == "done" for c in after.values())
    for case_id, row in before.items():
        assert after[case_id].started_ms == row.started_ms and after[case_id].verdict == row.verdict, case_id
    evidence_after = {e.id: e.title for e in store.evidence()}
    assert all(evidence_after.get(i) == t for i, t in evidence_before.items()), "evidence from before the kill is kept"
    store.close()
    assert not Path(f"/proc/{stale_pid}").exists() or b"workbench" not in Path(f"/proc/{stale_pid}/cmdline").read_bytes()
    manifest = (run_dir / "manifest.json").read_text()
    assert '"resumed_at": [' in manifest
