"""The Chaos Toolkit actions and probes against the live workbench and a fault proxy, and the example experiment."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

from chaos import ctk
from chaos.llm_proxy import LlmFaultProxy
from rig.errors import RigError
from tests.conftest import CHAOS_TOKEN, LiveWorkbench

EXPERIMENT = Path(__file__).resolve().parents[2] / "docs" / "ctk-experiment.json"


def test_target_actions_and_probes_go_through_the_configured_adapter(live: LiveWorkbench, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "rig.yaml"
    config.write_text("\n".join(["target:", f"  url: {live.url}", "  chaos_token_env: CTK_TOKEN", "accounts:",
                                 f"  a: {{username: {live.a.username}, password_env: CTK_A}}",
                                 f"  b: {{username: {live.b.username}, password_env: CTK_B}}", ""]))
    monkeypatch.setenv("CTK_TOKEN", CHAOS_TOKEN)
    monkeypatch.setenv("CTK_A", live.a.password)
    monkeypatch.setenv("CTK_B", live.b.password)
    assert ctk.target_ready(str(config)) is True
    down = tmp_path / "down.yaml"
    down.write_text(config.read_text().replace(live.url, "http://127.0.0.1:9"))
    assert ctk.target_ready(str(down)) is False
    added = ctk.inject_target_fault(str(config), "internal_search", "error", times=1)
    try:
        faults = ctk.target_faults(str(config))
        assert [f["fault_id"] for f in faults] == [added["fault_id"]] and faults[0]["fired"] == 0
    finally:
        assert ctk.clear_target_faults(str(config)) == {"cleared": 1}
    monkeypatch.delenv("CTK_TOKEN")
    with pytest.raises(RigError):  # without its token the target's chaos control is not there
        ctk.target_faults(str(config))


def test_proxy_actions_and_probes() -> None:
    proxy = LlmFaultProxy("mock")
    url = proxy.start()
    try:
        rule = ctk.add_proxy_rule(url, "status", status=503, times=1)
        assert rule.startswith("rule_")
        import httpx

        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{url}/v1/chat/completions", json=body).status_code == 503
        log = ctk.proxy_requests(url)
        assert log[0]["faults"] == ["status"] and log[0]["status"] == 503
        assert ctk.clear_proxy_rules(url) == 1
    finally:
        proxy.stop()


def test_every_activity_of_the_example_experiment_names_a_real_function_that_takes_its_arguments() -> None:
    """What Chaos Toolkit would resolve before it runs anything: the module, the function, the keyword arguments
    (the functions themselves run in the tests above)."""
    experiment = json.loads(EXPERIMENT.read_text())
    activities = (experiment["steady-state-hypothesis"]["probes"] + experiment["method"] + experiment["rollbacks"])
    wrong = []
    for activity in activities:
        provider = activity["provider"]
        func = getattr(importlib.import_module(provider["module"]), provider["func"], None)
        if not callable(func):
            wrong.append(f"{provider['func']}: no such function")
            continue
        try:
            inspect.signature(func).bind(**provider["arguments"])
        except TypeError as exc:  # an argument the function does not take, or one it needs and is not given
            wrong.append(f"{provider['func']}: {exc}")
    assert activities and wrong == []
