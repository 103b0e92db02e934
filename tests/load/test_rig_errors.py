"""A crash in the rig's own code is the rig's: counted as `rig_error`, never left out of the error ratio, and the
run undecided — in a load run and in a gate's setup (exit 2, the traceback in the run directory, not on the
console)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.ports import free_port
from rig.target.embedded import EmbeddedWorkbench

PASSWORD = f"pw-{uuid.uuid4().hex[:10]}"


def _config(tmp: Path, url: str, adapter: str) -> Path:
    path = tmp / "rig.yaml"
    path.write_text(f"""target:
  url: {url}
  adapter: {adapter}
accounts:
  a: {{username: crash-a, password_env: RIG_CRASH_PW}}
  b: {{username: crash-b, password_env: RIG_CRASH_PW}}
""")
    return path


@pytest.fixture()
def workbench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EmbeddedWorkbench:
    monkeypatch.setenv("RIG_CRASH_PW", PASSWORD)
    target = EmbeddedWorkbench(tmp_path / "wb")
    target.start()
    target.add_account("crash-a", PASSWORD)
    target.add_account("crash-b", PASSWORD)
    return target


def test_a_crash_in_a_load_user_is_a_counted_rig_error_and_the_run_is_undecided(workbench: EmbeddedWorkbench,
                                                                              tmp_path: Path) -> None:
    with workbench:
        config = _config(tmp_path, workbench.url, "tests.load.crashing:CrashingAdapter")
        result = run_load(LoadOptions(target=workbench.url, config=config, users=2, duration_s=8,
                                      think_min_s=0.1, think_max_s=0.2, out=tmp_path / "load",
                                      metrics_port=free_port()))
    s = result.summary
    assert s is not None
    crashes = {k: v for k, v in s.errors_by_reason.items() if k.startswith("rig_error")}
    assert crashes == {"rig_error:ZeroDivisionError": s.rig_errors} and s.rig_errors >= 1, s.errors_by_reason
    steady = s.phases.steady  # no fault windows: every task is steady, and counted there as in the headline
    assert steady.failed >= s.rig_errors and steady.attempts >= s.runs + s.rig_errors
    assert s.error_ratio == pytest.approx(steady.failed / steady.attempts) and s.error_ratio > 0
    assert result.decision.decision == "undecided"
    assert any("rig_error" in r for r in result.decision.reasons)
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "load").glob("locust*.log"))
    assert "seeded crash in the rig's load user" in logs  # its traceback kept


def test_a_crash_in_the_gate_setup_exits_2_with_its_traceback_in_the_run_directory(
        workbench: EmbeddedWorkbench, tmp_path: Path) -> None:
    with workbench:
        config = _config(tmp_path, workbench.url, "tests.load.crashing:CrashingSetupAdapter")
        done = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--target", workbench.url, "--config",
                               str(config), "--cases", "1", "--out", str(tmp_path / "run")], capture_output=True,
                              text=True, timeout=240, env={**os.environ, "COLUMNS": "200"})
    console = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in console, console
    assert "the rig itself failed: KeyError" in console
    log = (tmp_path / "run" / "rig-error.log").read_text()
    assert "Traceback" in log and "seeded crash in the rig's setup" in log
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [c["verdict"] for c in results["cases"]] == ["NOT_RUN"]
