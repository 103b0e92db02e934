"""SIGTERM mid-run: the users finish what they are doing, every run the store holds is counted in a complete
load.json, and the run decides "undecided" saying why (exit 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.measure.aggregate import run_ends
from tests.schema_check import assert_valid
from tests.sigkill import signal_when

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)


def _runs(run_dir: Path) -> int:
    if not (run_dir / "evidence.sqlite3").exists():
        return 0
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        return sum(run_ends([m for m in store.measures("T8") if m.case_id is None]).values())
    finally:
        store.close()


def test_sigterm_mid_stream_gives_a_complete_load_json(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code, out = signal_when([sys.executable, "-m", "rig.cli", "load", "--users", "4", "--workers", "2", "--duration",
                             "90s", "--think", "0.2-0.5", "--out", str(run_dir)], lambda: _runs(run_dir) >= 5)
    assert code == 2, out[-3000:]
    assert "stopped by SIGTERM" in out, out[-3000:]
    assert_valid("load", run_dir / "load.json")
    summary = json.loads((run_dir / "load.json").read_text())
    assert summary["runs"] == _runs(run_dir) >= 5
    assert summary["duration_s"] < 90, "throughput is per second of the run that happened"
    assert (run_dir / "report.html").exists()
