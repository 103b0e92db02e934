"""`rig report DIR` finishes a run that was killed: no process of it is left, and the rebuilt outputs hold exactly
what its evidence store holds, marked as ended early and never better than "undecided"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.measure.aggregate import run_ends
from rig.quality.summary import turn_records
from rig.report.data import store_verdicts
from tests.rig.test_lifeline import nothing_left
from tests.sigkill import finished_rows, kill_after, kill_when, signal_when

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)

RIG = [sys.executable, "-m", "rig.cli"]


def _report(run_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RIG, "report", str(run_dir)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def test_a_killed_gate_is_finished_from_its_evidence(tmp_path: Path) -> None:
    run_dir = tmp_path / "gate"
    group = kill_after([*RIG, "gate", "--cases", "1-12", "--out", str(run_dir)], run_dir, 3)
    nothing_left(run_dir, group)
    done = _report(run_dir)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "ended early" in done.stdout
    results = json.loads((run_dir / "results.json").read_text())
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        verdicts, _ = store_verdicts(store)
    finally:
        store.close()
    assert {c["case_id"]: c["verdict"] for c in results["cases"]} == {v.case_id: v.verdict.value for v in verdicts}
    assert results["decision"] == "undecided" and any("ended early" in r for r in results["reasons"])
    assert json.loads((run_dir / "manifest.json").read_text())["ended_early"]


def test_a_killed_distributed_load_run_is_finished_from_its_evidence(tmp_path: Path) -> None:
    run_dir = tmp_path / "load"
    rig = subprocess.Popen([*RIG, "load", "--users", "4", "--workers", "2", "--duration", "60s", "--out", str(run_dir)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def runs_recorded() -> bool:
        if not (run_dir / "evidence.sqlite3").exists():
            return False
        store = EvidenceStore(run_dir / "evidence.sqlite3")
        try:
            return sum(run_ends(store.measures("T8")).values()) >= 5
        finally:
            store.close()

    kill_when(rig, runs_recorded, 180.0, lambda: "the load never recorded a run")
    nothing_left(run_dir, rig.pid)
    done = _report(run_dir)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    summary = json.loads((run_dir / "load.json").read_text())
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        ends = run_ends([m for m in store.measures("T8") if m.case_id is None])
    finally:
        store.close()
    assert summary["runs"] == sum(ends.values()) >= 5 and summary["end_states"] == dict(ends)
    assert summary["duration_s"] < 60, "an early end is measured to the last evidence, not the planned minute"
    assert (run_dir / "report.html").exists()


def test_a_killed_quality_run_is_finished_from_its_evidence(tmp_path: Path) -> None:
    run_dir = tmp_path / "quality"
    group = kill_after([*RIG, "quality", "--out", str(run_dir)], run_dir, 2)  # all 75 turns: killed mid-run
    nothing_left(run_dir, group)
    done = _report(run_dir)
    assert done.returncode in (1, 2), done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((run_dir / "quality.json").read_text())
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        finished, recorded = len(store.done_cases()), [r.record_id for r in turn_records(store)]
    finally:
        store.close()
    # every turn the store recorded is in quality.json (a turn can be recorded just before its case row is closed)
    assert [t["record_id"] for t in report["turns"]] == recorded and len(recorded) >= finished >= 2
    decision = report["summary"]["decision"]
    assert decision["decision"] in ("undecided", "fail") and "ended early" in decision["reasons"][0], decision


def test_one_sigterm_ends_a_quality_run_after_its_case_in_flight(tmp_path: Path) -> None:
    run_dir = tmp_path / "quality"
    code, out = signal_when([*RIG, "quality", "--out", str(run_dir)], lambda: finished_rows(run_dir) >= 2)
    assert code == 2, out[-3000:]
    decision = json.loads((run_dir / "quality.json").read_text())["summary"]["decision"]
    assert decision["decision"] == "undecided" and "stopped by SIGTERM" in decision["reasons"][0], decision
