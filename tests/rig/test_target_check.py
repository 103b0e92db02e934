"""`rig target check`: every declared operation exercised once, before any gate. On the reference workbench every
row is ok; described in YAML with a dialect, what it lacks is absent and names the cases it costs; an operation
whose answer its rules cannot read fails the check (exit 2) with the exchange that did it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from rig.target.embedded import EmbeddedWorkbench

DOCS = Path(__file__).resolve().parents[2] / "docs"
PASSWORDS = {"RIG_CHECK_PW_A": f"pw-a-{uuid.uuid4().hex[:10]}", "RIG_CHECK_PW_B": f"pw-b-{uuid.uuid4().hex[:10]}"}


@pytest.fixture(scope="module")
def workbench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedWorkbench]:
    target = EmbeddedWorkbench(tmp_path_factory.mktemp("check") / "wb",
                               extra_args=["--dialect", "no_run_records", "--dialect", "stop_disconnect"])
    target.start()
    try:
        target.add_account("check-a", PASSWORDS["RIG_CHECK_PW_A"])
        target.add_account("check-b", PASSWORDS["RIG_CHECK_PW_B"])
        yield target
    finally:
        target.stop()


def _config(tmp: Path, url: str, http: dict[str, object] | None = None) -> Path:
    body = {"extends": str(DOCS / "targets" / "dialects" / "no_run_records.rig.yaml"),
            "target": {"url": url, "http": {"stop": "disconnect", **(http or {})}},
            "accounts": {"a": {"username": "check-a", "password_env": "RIG_CHECK_PW_A"},
                         "b": {"username": "check-b", "password_env": "RIG_CHECK_PW_B"}}}
    path = tmp / "rig.yaml"
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    return path


def _check(*args: str) -> tuple[int, dict[str, object]]:
    done = subprocess.run([sys.executable, "-m", "rig.cli", "target", "check", "--json", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **PASSWORDS})
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {"stderr": done.stderr}


def test_the_embedded_workbench_offers_every_operation(tmp_path: Path) -> None:
    code, result = _check()
    rows = {r["operation"]: r for r in result["rows"]}  # type: ignore[union-attr]
    assert code == 0 and result["ok"] is True, result
    assert {r["outcome"] for r in rows.values()} <= {"ok", "skipped"}
    assert rows["run"]["outcome"] == "ok" and rows["run"]["request"].startswith("GET ")
    assert rows["events (the answer's stream)"]["extracted"].endswith("ended completed/completed")
    assert result["missing"] == {} and len(result["load_accounts"]) == 2  # type: ignore[arg-type]


def test_a_dialect_shows_what_it_lacks_and_the_cases_that_need_it(workbench: EmbeddedWorkbench, tmp_path: Path
                                                                  ) -> None:
    code, result = _check("--config", str(_config(tmp_path, workbench.url)))
    rows = {r["operation"]: r for r in result["rows"]}  # type: ignore[union-attr]
    assert code == 0, result
    assert rows["run"]["outcome"] == "absent" and "run_detail" in rows["run"]["note"]
    assert rows["stop"]["gives"] == "stop=disconnect" and "stopped" in rows["stop"]["extracted"]
    assert rows["session (read back)"]["extracted"].endswith("the answer names its run")
    missing = result["missing"]
    assert isinstance(missing, dict) and 16 in missing["run_detail"] and 23 in missing["checkpoints"]
    assert "stop" not in missing and "sessions" not in missing


def test_an_answer_its_rules_cannot_read_fails_the_check_with_its_exchange(workbench: EmbeddedWorkbench,
                                                                           tmp_path: Path) -> None:
    broken = {"open_session": {"request": {"method": "POST", "path": "/api/v1/sessions",
                                           "json": {"project_id": "{project_id}", "scope": "{scope}"}},
                               "result": {"session_id": "no_such_field"}}}
    code, result = _check("--config", str(_config(tmp_path, workbench.url, broken)))
    failed = [r for r in result["rows"] if r["outcome"] == "failed"]  # type: ignore[union-attr]
    assert code == 2 and result["ok"] is False
    assert [r["operation"] for r in failed] == ["open_session"]
    assert failed[0]["status"] == "200" and failed[0]["exchange"]  # the answer it could not read, kept
