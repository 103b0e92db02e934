"""The first SIGTERM (or a terminal's Ctrl-C, which reaches only the rig) lets the case in flight end and writes the
reports ("undecided", exit 2); a second one stops at once, and `rig report` finishes what the store holds;
`--resume` completes the same selection of cases."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rig.waiting import wait_until
from tests.sigkill import finished_rows, running_case, signal_when

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)

RIG = [sys.executable, "-m", "rig.cli"]


def _start(run_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([*RIG, "gate", "--cases", "1-12", "--out", str(run_dir)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"})


def test_one_sigterm_finishes_the_case_in_flight_and_writes_the_reports(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code, out = signal_when([*RIG, "gate", "--cases", "1-12", "--out", str(run_dir)],
                            lambda: finished_rows(run_dir) >= 2)
    assert code == 2, out[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["decision"] == "undecided"
    assert any("stopped by SIGTERM" in r for r in results["reasons"]), results["reasons"]
    assert 2 <= len(results["cases"]) < 12 and all(c["verdict"] != "NOT_RUN" for c in results["cases"])


def test_a_second_sigterm_stops_at_once_and_rig_report_finishes_the_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rig = _start(run_dir)
    try:
        assert wait_until(lambda: finished_rows(run_dir) >= 2, 180.0, interval_s=0.05)
        rig.send_signal(signal.SIGTERM)
        assert rig.stdout is not None
        for line in rig.stdout:  # the first one was taken: it says so, and a second one now stops at once
            if "send it again to stop at once" in line:
                break
        rig.send_signal(signal.SIGTERM)
        rig.communicate(timeout=60)
    finally:
        if rig.poll() is None:
            rig.kill()
    assert rig.returncode != 0
    done = subprocess.run([*RIG, "report", str(run_dir)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["decision"] == "undecided" and len(results["cases"]) >= 2
    assert any("ended early" in r for r in results["reasons"]), results["reasons"]


def test_ctrl_c_at_the_terminal_reaches_only_the_rig_and_resume_completes_the_run(tmp_path: Path) -> None:
    """A terminal's Ctrl-C goes to the rig's whole process group; the embedded workbench, in a session of its own,
    keeps serving the case in flight, so no case ends U for a target the rig itself took down."""
    run_dir = tmp_path / "run"
    rig = subprocess.Popen([*RIG, "gate", "--cases", "1-5", "--out", str(run_dir)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"},
                           start_new_session=True)
    try:
        assert wait_until(lambda: finished_rows(run_dir) >= 2, 180.0, interval_s=0.05)
        os.killpg(rig.pid, signal.SIGINT)  # what the terminal does: every process of the foreground group
        out, _ = rig.communicate(timeout=180)
    finally:
        if rig.poll() is None:
            rig.kill()
    assert rig.returncode == 2, out[-3000:]
    first = json.loads((run_dir / "results.json").read_text())
    assert first["decision"] == "undecided" and 2 <= len(first["cases"]) <= 5
    assert {c["verdict"] for c in first["cases"]} == {"PASS"}, [(c["case_id"], c["reason"]) for c in first["cases"]]
    resumed = subprocess.run([*RIG, "gate", "--resume", str(run_dir)], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-2000:]
    final = json.loads((run_dir / "results.json").read_text())
    assert final["decision"] == "pass" and len(final["cases"]) == 5
    assert {c["case_id"]: c["verdict"] for c in final["cases"]} == {i: "PASS" for i in range(1, 6)}
    again = subprocess.run([*RIG, "report", str(run_dir)], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert json.loads((run_dir / "results.json").read_text())["reasons"] == final["reasons"]


def test_a_case_that_outlives_the_grace_is_the_rigs_u_and_resume_runs_it_again(tmp_path: Path) -> None:
    """With the grace cut to a millisecond, the case in flight at the stop is abandoned: U "interrupted by the rig",
    never the target's FAIL; the reports are written (exit 2), and `--resume` runs that case again to PASS. The case
    stopped is 22 (closing the page mid-answer, the longest of the gate: seconds, not the tenths of most), so the
    stop reaches it in flight however busy the machine is."""
    run_dir = tmp_path / "run"
    code, out = signal_when([*RIG, "gate", "--cases", "3,22", "--grace", "0.001s", "--out", str(run_dir)],
                            lambda: running_case(run_dir) == 22, signal.SIGINT)
    assert code == 2, out[-3000:]
    first = {c["case_id"]: c for c in json.loads((run_dir / "results.json").read_text())["cases"]}
    assert first[3]["verdict"] == "PASS", first
    assert first[22]["verdict"] == "U" and "interrupted by the rig" in first[22]["reason"], first
    resumed = subprocess.run([*RIG, "gate", "--resume", str(run_dir)], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-2000:]
    final = json.loads((run_dir / "results.json").read_text())
    assert {c["case_id"]: c["verdict"] for c in final["cases"]} == {3: "PASS", 22: "PASS"}, final["cases"]
