"""The test-only control exists only with a chaos token, and needs that token on every call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rig.target.embedded import EmbeddedWorkbench
from tests.conftest import LiveWorkbench


def test_without_a_configured_token_the_control_paths_do_not_exist(tmp_path: Path) -> None:
    with EmbeddedWorkbench(tmp_path / "wb") as target:
        target.start()
        import httpx

        for method, path in [("GET", "faults"), ("POST", "faults"), ("DELETE", "faults"), ("PUT", "settings")]:
            r = httpx.request(method, f"{target.url}/api/v1/_chaos/{path}", headers={"x-chaos-token": "x"},
                              json={"point": "llm", "mode": "error"})
            assert r.status_code == 404, (method, path)


def test_a_wrong_or_missing_token_is_refused(live: LiveWorkbench) -> None:
    for headers in ({}, {"x-chaos-token": "wrong"}):
        r = live.adapter.request(None, "GET", "/api/v1/_chaos/faults", headers=headers, raise_for_status=False)
        assert r.status_code == 403 and r.json()["error"]["code"] == "chaos_token_invalid"


def test_faults_are_listed_with_how_often_they_fired_and_cleared(live: LiveWorkbench) -> None:
    try:
        added = live.adapter.chaos("POST", "faults", {"point": "query", "mode": "delay", "delay_ms": 1, "times": 2})
        for _ in range(3):
            live.adapter.search(live.auth_a, live.corpus.project_id, ["badge"])
        listed = live.adapter.chaos("GET", "faults")
        assert [(f["fault_id"], f["fired"], f["exhausted"]) for f in listed] == [(added["fault_id"], 2, True)]
        settings = live.adapter.chaos("PUT", "settings", {"max_rounds": 3})
        assert settings["max_rounds"] == 3
        bad = live.adapter.request(None, "PUT", "/api/v1/_chaos/settings", json={"max_rounds": 0},
                                   headers={"x-chaos-token": live.adapter.chaos_token or ""}, raise_for_status=False)
        assert bad.status_code == 422
    finally:
        live.adapter.chaos("DELETE", "faults")
        live.adapter.chaos("PUT", "settings", {"max_rounds": 6})
    assert live.adapter.chaos("GET", "faults") == []


def test_defects_are_refused_without_a_chaos_token(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "workbench", "serve", "--data", str(tmp_path), "--port", "0",
                             "--defect", "scope_leak"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "need --chaos-token" in result.stderr
    listing = subprocess.run([sys.executable, "-m", "workbench", "defects"], capture_output=True, text=True)
    assert "scope_leak" in listing.stdout and "api_key_leak" in listing.stdout
