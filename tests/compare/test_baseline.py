"""Deciding against a baseline: relative rules, `last-pass` from the run history, and `rig history`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rig import events
from rig.compare.baseline import BaselineRule
from rig.compare.history import History
from rig.errors import ConfigError
from rig.gate.session import GateOptions, run_gate
from rig.load.context import LoadContext
from rig.load.options import LoadOptions
from rig.load.session import run_load

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)


def test_rules_parse_factors_margins_and_no_new_fail() -> None:
    rule = BaselineRule.parse("T4.p95 <= baseline * 1.10")
    assert (rule.metric, rule.factor, rule.limit(1000.0)) == ("T4.p95", 1.10, pytest.approx(1100.0))
    assert BaselineRule.parse("error_rate <= baseline + 0.5%").limit(0.01) == pytest.approx(0.015)
    assert BaselineRule.parse("T5.p50 < baseline + 0.2s").limit(100.0) == pytest.approx(300.0)
    assert BaselineRule.parse("no new FAIL").metric is None
    with pytest.raises(ValueError, match="not of the form"):
        BaselineRule.parse("T4 should be fast")


def test_a_load_run_slower_than_its_last_passing_baseline_fails_by_rule(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("baseline:\n  - T4.p50 <= baseline * 1.10\n  - error_rate <= baseline + 5%\n")
    root = tmp_path / "reports"

    def slower(run: LoadContext) -> None:
        run.adapter.chaos("PUT", "settings", {"first_token_delay_ms": 400, "token_delay_ms": 20})

    def options(name: str, baseline: str | None) -> LoadOptions:
        return LoadOptions(users=4, spawn_rate=4, duration_s=10, out=root / name, reports_root=root, policy=policy,
                           think_min_s=0.1, think_max_s=0.3, fetch_detail=False, baseline=baseline)

    base = run_load(options("base", None))
    assert base.decision.decision == "recorded"
    assert History(root).last_pass("load", "embedded") == (root / "base").resolve()
    with events.load_starting.listening(slower):
        slow = run_load(options("slow", "last-pass"))
    assert slow.decision.decision == "fail" and slow.decision.exit_code == 1
    assert any(r.startswith("T4.p50 <= baseline * 1.10:") for r in slow.decision.reasons), slow.decision.reasons
    shown = subprocess.run([sys.executable, "-m", "rig.cli", "history", "--reports-root", str(root), "--kind", "load",
                            "--codes", "T4.p50"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "recorded" in shown.stdout and "fail" in shown.stdout, shown.stdout


def test_a_gate_against_a_baseline_fails_on_a_new_fail_and_names_it(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    base = run_gate(GateOptions(out=root / "clean", reports_root=root, cases=[5]))
    assert base.decision.decision == "pass"
    broken = run_gate(GateOptions(out=root / "broken", reports_root=root, cases=[5], defects=["logout_keeps_token"],
                                  baseline=str(root / "clean")))
    assert broken.decision.decision == "fail"
    assert any("no new FAIL: new FAIL in 可靠性-05-1" in r for r in broken.decision.reasons), broken.decision.reasons


def test_last_pass_without_history_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no passing gate run"):
        run_gate(GateOptions(out=tmp_path / "run", reports_root=tmp_path / "empty", cases=[5], baseline="last-pass"))
