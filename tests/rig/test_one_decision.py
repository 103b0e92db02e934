"""One decision per run: `rig report` on a finished run decides exactly as the run did — the gate judged against a
load run's numbers, a load run against its thresholds, a quality run — because both end through the workload's one
finish function, reading the inputs the manifest names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rig.measure.aggregate import TCodeStats
from rig.results.load import LoadSummary
from rig.stats import Summary

RIG = [sys.executable, "-m", "rig.cli"]


def _rig(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RIG, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200"})


def _decided(path: Path) -> tuple[str, list[str]]:
    data = json.loads(path.read_text())
    return data["decision"], data["reasons"]


def _load_dir(tmp: Path) -> Path:
    """A finished load run's load.json whose T4 p95 no threshold of 1 ms can hold (what `--load` judges)."""
    stats = TCodeStats(code="T4", source="client", **Summary(count=20, p50=120.0, p95=300.0, max=400.0).model_dump())
    summary = LoadSummary(t_codes={"T4": stats}, by_source={}, throughput_rps=1.0, runs=20, completed_runs=20,
                          requests=40, requests_per_s=2.0, error_ratio=0.0, errors_by_reason={}, login_failures=0,
                          end_states={"completed/completed": 20}, send_lag={"count": 0}, workers=0, users=2,
                          duration_s=20.0, samples_by_origin={}, locust={})
    out = tmp / "load"
    out.mkdir()
    (out / "load.json").write_text(summary.model_dump_json())
    return out


def test_rig_report_reproduces_a_gate_judged_with_a_load_run(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('required: all\nthresholds:\n  - "T4.p95 < 1ms at 2 users"\n')
    run = tmp_path / "gate"
    live = _rig("gate", "--cases", "1,2", "--policy", str(policy), "--load", str(_load_dir(tmp_path)), "--out", str(run))
    assert live.returncode == 1, live.stdout[-2000:] + live.stderr[-2000:]
    decided = _decided(run / "results.json")
    assert decided[0] == "fail" and any("T4.p95" in r and "2 users" in r for r in decided[1])
    again = _rig("report", str(run))
    assert again.returncode == 1, again.stdout + again.stderr
    assert _decided(run / "results.json") == decided


def test_rig_report_reproduces_a_load_runs_decision(tmp_path: Path) -> None:
    """One threshold that holds and one that cannot: `rig report` decides the same, threshold by threshold."""
    policy = tmp_path / "policy.yaml"
    policy.write_text('thresholds:\n  - "error_rate < 50%"\n  - "T4.p95 < 1ms"\n')
    run = tmp_path / "load"
    live = _rig("load", "--users", "2", "--duration", "6s", "--policy", str(policy), "--out", str(run))
    assert live.returncode in (1, 2), live.stdout[-2000:] + live.stderr[-2000:]  # fails, or undecided on a busy client
    from rig.evidence import EvidenceStore

    def decision() -> dict[str, object]:
        store = EvidenceStore(run / "evidence.sqlite3")
        try:
            return dict(store.meta("decision"))
        finally:
            store.close()

    decided = decision()
    again = _rig("report", str(run))
    assert again.returncode == live.returncode, again.stdout + again.stderr
    assert decision() == decided


def test_rig_report_reproduces_a_quality_runs_decision(tmp_path: Path) -> None:
    run = tmp_path / "quality"
    live = _rig("quality", "--case", "用户-04", "--out", str(run))
    assert live.returncode in (0, 1, 2), live.stdout[-2000:] + live.stderr[-2000:]
    decided = _decided(run / "results.json")
    again = _rig("report", str(run))
    assert again.returncode == live.returncode and _decided(run / "results.json") == decided
