"""Killing `rig quality` with SIGKILL and running `--resume` finishes the run; finished cases are not redone.

A case whose turns had not all finished runs again from its first turn: a follow-up needs its session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from rig.evidence import EvidenceStore
from tests.sigkill import kill_after


def test_sigkill_then_resume_finishes_the_quality_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "rig.cli", "quality", "--case", "专家", "--out", str(run_dir)]
    kill_after(cmd, run_dir, 12)
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    before = {c.record_id: c for c in store.cases() if c.status == "done"}
    store.close()
    assert 12 <= len(before) < 27
    resumed = subprocess.run([*cmd[:-2], "--resume", str(run_dir)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "COLUMNS": "200"})
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    after = {c.record_id: c for c in store.cases()}
    store.close()
    assert len(after) == 27 and all(c.status == "done" for c in after.values())
    turns: dict[str, list[str]] = defaultdict(list)
    for record_id in after:
        turns[record_id.rsplit("-", 1)[0]].append(record_id)
    for record_ids in turns.values():
        if all(r in before for r in record_ids):  # a case finished before the kill is kept as it was
            assert all(after[r].started_ms == before[r].started_ms for r in record_ids), record_ids
    assert (run_dir / "judge" / "sheets.html").exists() and (run_dir / "quality.json").exists()
