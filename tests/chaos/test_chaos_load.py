"""A load run with a chaos schedule: a tool error window, then the workbench killed at t=10 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.load.options import LoadOptions
from rig.load.session import run_load

SCHEDULE = """
title: tool errors, then a restart
steady-state-hypothesis:
  title: the target answers
  probes:
    - {name: target-ready, probe: ready}
    - {name: a-question-completes, probe: run_completes, timeout_s: 30}
method:
  - {name: tool-errors, at: 3s, duration: 4s, fault: {via: target, point: internal_search, mode: error}}
  - {name: restart, at: 10s, fault: {via: restart, mode: kill}}
"""


@pytest.mark.slow
def test_restart_under_load_interrupts_runs_loses_nothing_and_measures_recovery(tmp_path: Path) -> None:
    path = tmp_path / "schedule.yaml"
    path.write_text(SCHEDULE, encoding="utf-8")
    options = LoadOptions(users=6, spawn_rate=6, duration_s=25, think_min_s=0.3, think_max_s=0.8,
                          token_delay_ms=15, out=tmp_path / "run", chaos=path)
    result = run_load(options)  # the chaos plug-in follows the run through rig.events, as under `rig load --chaos`
    summary = json.loads((result.run_dir / "load.json").read_text())
    windows = {w["step"]: w for w in summary["chaos"]["windows"]}
    assert set(windows) == {"tool-errors", "restart"}

    tool = windows["tool-errors"]
    assert tool["ends_in_window"].get("failed/tool_error", 0) >= 1
    assert tool["rolled_back"]["fired"] >= 1 and tool["recovery_s"] is not None

    restart = windows["restart"]
    assert restart["applied"]["old_pid"] != restart["applied"]["new_pid"]
    assert restart["interrupted"] >= 1, "no run was in flight when the target was killed"
    assert restart["lost"] == 0, f"runs without a terminal state: {restart['lost_runs']}"
    assert set(restart["other_ends"]) <= {"completed/completed"}  # only runs that finished just before the kill
    committed = restart["committed"]
    assert committed["checked"] > 0 and committed["present"] == committed["checked"] and committed["lost"] == 0
    assert restart["ready_s"] > 0 and restart["recovery_s"] >= restart["ready_s"]
    for link in restart["resumed"]:
        assert link["from"] in restart["interrupted_runs"]

    store = EvidenceStore(result.run_dir / "evidence.sqlite3")
    try:
        # every interrupted run is marked server_restart by the target itself
        ends = {m.run_id: m.label for m in store.measures("T8") if m.source == "server"}
        assert all(ends[r] == "interrupted/server_restart" for r in restart["interrupted_runs"])
        spans = [s for s in store.spans() if s.name.startswith("rig.chaos")]
        assert sorted(s.attributes["rig.chaos.step"] for s in spans) == ["restart", "tool-errors"]
    finally:
        store.close()
    hypothesis = summary["chaos"]["hypothesis"]
    assert all(p["ok"] for p in hypothesis["before"]) and all(p["ok"] for p in hypothesis["after"])
    html = (result.run_dir / "report.html").read_text()
    assert "restart restart" in html and "first good run" in html and "interrupted (marked server_restart): " \
        f"{restart['interrupted']}" in html


def test_a_load_run_that_fails_after_the_schedule_started_leaves_nothing_of_it_running(tmp_path: Path) -> None:
    """`load_closed` fires however the run ended: the schedule's metrics endpoint is shut and its state dropped."""
    import httpx

    from chaos import load_hook
    from rig import events
    from rig.errors import RigError
    from rig.load.context import LoadContext
    from rig.plugins import load_extensions

    load_extensions()  # the chaos plug-in's listeners come first, as under `rig load --chaos`
    path = tmp_path / "schedule.yaml"
    path.write_text(SCHEDULE, encoding="utf-8")
    seen: dict[str, str] = {}

    def fail_after_the_schedule(run: LoadContext) -> None:
        seen["metrics"] = str(run.store.meta("chaos_metrics"))
        seen["served"] = httpx.get(seen["metrics"], timeout=5).text
        raise RigError("a listener refused the run after the schedule started")

    options = LoadOptions(users=1, duration_s=30, out=tmp_path / "run", chaos=path)
    with events.load_starting.listening(fail_after_the_schedule), pytest.raises(RigError, match="refused the run"):
        run_load(options)
    assert "rig_chaos" in seen["served"], "the schedule served its metrics while the run was up"
    with pytest.raises(httpx.TransportError):
        httpx.get(seen["metrics"], timeout=2)
    assert load_hook._RUNNING == {}
