"""`chaos run docs/ctk-experiment.json` for real: Chaos Toolkit runs the rig's probes and actions against the
reference workbench; a seeded defect that fakes search results under tool errors makes it deviate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rig.adapters import WorkbenchAdapter
from rig.target.embedded import EmbeddedWorkbench
from tests.conftest import CHAOS_TOKEN

EXPERIMENT = Path(__file__).resolve().parents[2] / "docs" / "ctk-experiment.json"
CHAOS = str(Path(sys.executable).with_name("chaos"))


@pytest.fixture()
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[EmbeddedWorkbench, Path, dict[str, str]]]:
    wb = EmbeddedWorkbench(tmp_path / "wb", chaos_token=CHAOS_TOKEN, defects=list(request.param))
    wb.start()
    try:
        made = wb.add_accounts({"ctk-a": None, "ctk-b": None})
        config = tmp_path / "rig.yaml"
        config.write_text("\n".join([
            "target:", f"  url: {wb.url}", "  chaos_token_env: CTK_CHAOS_TOKEN", "accounts:",
            "  a: {username: ctk-a, password_env: CTK_PW_A}", "  b: {username: ctk-b, password_env: CTK_PW_B}", ""]))
        env = {"CTK_CHAOS_TOKEN": CHAOS_TOKEN, "CTK_PW_A": made["ctk-a"].password, "CTK_PW_B": made["ctk-b"].password,
               "RIG_CONFIG": str(config)}
        yield wb, tmp_path, env
    finally:
        wb.cleanup()


def chaos_run(tmp: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    journal = tmp / "journal.json"
    done = subprocess.run([CHAOS, "--no-version-check", "run", "--journal-path", str(journal), str(EXPERIMENT)],
                          capture_output=True, text=True, timeout=600, cwd=tmp, env={**os.environ, **env})
    assert journal.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return done, json.loads(journal.read_text(encoding="utf-8"))


def probe_output(journal: dict[str, Any], phase: str, name: str) -> dict[str, Any]:
    (found,) = [p for p in journal["steady_states"][phase]["probes"] if p["activity"]["name"] == name]
    return found


@pytest.mark.parametrize("target", [()], indirect=True, ids=["clean"])
def test_the_experiment_passes_on_the_clean_workbench_and_its_journal_matches_the_target(
        target: tuple[EmbeddedWorkbench, Path, dict[str, str]]) -> None:
    wb, tmp, env = target
    done, journal = chaos_run(tmp, env)
    assert done.returncode == 0 and journal["status"] == "completed" and journal["deviated"] is False, done.stdout
    before, after = (probe_output(journal, p, "answer-grounded")["output"] for p in ("before", "after"))
    assert before["grounded"] and after["grounded"]
    # a normal answer cites pages of the paper, each quote on its page
    paged = [c for c in before["citations"] if c["page"] is not None]
    assert paged and all(c["on_page"] is True for c in paged)
    searched_before, searched_after = (probe_output(journal, p, "search-truthful")["output"] for p in ("before", "after"))
    assert searched_before["truthful"] and any(r["ok"] and r["hits"] for r in searched_before["results"])
    # with the tool failing, searches and the agent's tool calls say they failed: no result reported ok
    assert searched_after["truthful"] and not any(r["ok"] for r in searched_after["results"])
    assert after["tool_results"] and not any(t["ok"] for t in after["tool_results"])
    # the rollback ran and the target agrees with the journal about the runs and the faults
    assert [r["activity"]["name"] for r in journal["rollbacks"]] == ["clear-faults"]
    adapter = WorkbenchAdapter(wb.url, chaos_token=CHAOS_TOKEN)
    try:
        auth = adapter.login("ctk-a", env["CTK_PW_A"])
        for seen in (before, after):
            assert adapter.run(auth, seen["run_id"]).state == seen["state"]
        assert adapter.chaos("GET", "faults") == []
    finally:
        adapter.close()


@pytest.mark.parametrize("target", [("fake_tool_success",)], indirect=True, ids=["fake_tool_success"])
def test_a_seeded_defect_that_fakes_search_results_makes_it_deviate(
        target: tuple[EmbeddedWorkbench, Path, dict[str, str]]) -> None:
    _, tmp, env = target
    done, journal = chaos_run(tmp, env)
    assert journal["deviated"] is True, done.stdout[-2000:]  # the hypothesis held before and not after the method
    assert done.returncode != 0  # `chaos run` exits non-zero on deviation: a pipeline step fails
    assert probe_output(journal, "before", "search-truthful")["tolerance_met"] is True
    after = probe_output(journal, "after", "search-truthful")
    assert after["tolerance_met"] is False
    # the evidence says why: a failed search reported ok, with a hit whose text is not on the page it names
    (result,) = after["output"]["results"]
    assert result["ok"] and result["hits"] and not any(h["on_page"] for h in result["hits"]), after["output"]
    assert [r["activity"]["name"] for r in journal["rollbacks"]] == ["clear-faults"]
