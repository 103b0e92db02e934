"""Schedule files and the fault vocabulary: what is accepted, and the errors for what is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from chaos.schedule import load_schedule
from rig.cli.main import app
from rig.errors import ConfigError
from rig.faults import Fault

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "chaos.example.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_schedule_is_valid_and_ordered() -> None:
    s = load_schedule(EXAMPLE)
    assert [step.name for step in s.method] == ["tool-errors", "restart"]
    assert s.method[0].at_s == 5 and s.method[0].ends_s == 15
    assert [p.probe for p in s.hypothesis.probes] == ["ready", "run_completes"]
    s.check_fits(60)
    with pytest.raises(ConfigError, match="restart"):
        s.check_fits(20)


@pytest.mark.parametrize(("text", "message"), [
    ("title: x\nmethod: []\n", "method"),
    ("title: x\nmethod:\n  - {name: a, at: 1s, fault: {via: target, point: internal_search, mode: error}}\n",
     "give a duration"),
    ("title: x\nmethod:\n  - {name: a, at: 1s, duration: 2s, fault: {via: restart, mode: kill}}\n", "no duration"),
    ("title: x\nmethod:\n  - {name: a, at: 1s, duration: 2s, fault: {via: target, point: nowhere, mode: error}}\n",
     "needs point"),
    ("title: x\nmethod:\n  - {name: a, at: soon, duration: 2s, fault: {via: llm_proxy, mode: empty}}\n", "soon"),
    ("title: x\nmethod:\n  - {name: a, at: 1s, duration: 2s, fault: {via: llm_proxy, mode: latency}}\n", "delay_ms"),
    ("title: [\n", "not valid YAML"),
])
def test_bad_schedules_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_schedule(write(tmp_path, text))


def test_one_vocabulary_over_all_channels() -> None:
    assert Fault(via="target", point="internal_search", mode="error", times=2).target_spec() == {
        "point": "internal_search", "mode": "error", "times": 2}
    rule = Fault(via="llm_proxy", mode="status", status=429, retry_after_s=1, probability=0.2).proxy_rule()
    assert (rule.mode, rule.status, rule.probability, rule.path) == ("status", 429, 0.2, "*")
    assert Fault(via="http_proxy", point="/api/v1/tools/*", mode="latency", delay_ms=5).proxy_rule().path == \
        "/api/v1/tools/*"
    assert Fault(via="restart", mode="kill").label == "process/kill"
    with pytest.raises(ValueError, match="modes"):
        Fault(via="http_proxy", mode="empty")
    with pytest.raises(ValueError, match="probability"):
        Fault(via="target", point="llm", mode="error", probability=0.5)


def test_cli_validate_and_a_bad_schedule_exits_2(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["chaos", "validate", str(EXAMPLE), "--duration", "60s"])
    assert ok.exit_code == 0 and "tool-errors" in ok.output
    bad = runner.invoke(app, ["load", "--chaos", str(write(tmp_path, "title: x\n")), "--duration", "5s"])
    assert bad.exit_code == 2 and "method" in bad.output
