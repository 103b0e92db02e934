"""The Chaos Toolkit actions and probes against the live workbench and a fault proxy, and the example experiment."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

from chaos import ctk
from chaos.llm_proxy import LlmFaultProxy
from tests.conftest import CHAOS_TOKEN, LiveWorkbench

EXPERIMENT = Path(__file__).resolve().parents[2] / "docs" / "ctk-experiment.json"


def test_target_actions_and_probes(live: LiveWorkbench) -> None:
    assert ctk.target_ready(live.url) is True
    assert ctk.target_ready("http://127.0.0.1:9") is False
    added = ctk.inject_target_fault(live.url, CHAOS_TOKEN, "internal_search", "error", times=1)
    try:
        faults = ctk.target_faults(live.url, CHAOS_TOKEN)
        assert [f["fault_id"] for f in faults] == [added["fault_id"]] and faults[0]["fired"] == 0
    finally:
        assert ctk.clear_target_faults(live.url, CHAOS_TOKEN) == {"cleared": 1}


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


def test_the_example_experiment_calls_real_functions_with_their_arguments() -> None:
    experiment = json.loads(EXPERIMENT.read_text())
    activities = (experiment["steady-state-hypothesis"]["probes"] + experiment["method"] + experiment["rollbacks"])
    for activity in activities:
        provider = activity["provider"]
        func = getattr(importlib.import_module(provider["module"]), provider["func"])
        inspect.signature(func).bind(**provider["arguments"])  # raises when an argument is unknown or missing
