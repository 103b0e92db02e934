"""A pre-release run killed in its gate part: nothing of it is left running, and `--resume` keeps the finished
load part as it was, resumes the gate without redoing its finished cases, and writes the whole report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.prerelease import PrereleaseOptions, run_prerelease
from tests.rig.test_lifeline import nothing_left
from tests.sigkill import finished_rows, kill_when

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)

SCHEDULE = """
title: a short window of tool errors
method:
  - {name: tool-errors, at: 2s, duration: 3s, fault: {via: target, point: internal_search, mode: error}}
rollbacks:
  - {name: clear-everything, action: clear_all}
"""
OPTIONS = dict(users=4, workers=1, browsers=0, duration_s=10, gate_cases=[1, 2, 5, 12, 13, 17],
               quality_cases=["专家-01", "用户-04"], gate_browser=False)


def test_a_demo_killed_in_its_gate_resumes_keeping_its_finished_parts(tmp_path: Path) -> None:
    run_dir = tmp_path / "demo"
    schedule = tmp_path / "chaos.yaml"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    OPTIONS["chaos"] = str(schedule)
    code = (f"from pathlib import Path\nfrom rig.prerelease import PrereleaseOptions, run_prerelease\n"
            f"run_prerelease(PrereleaseOptions(out=Path({str(run_dir)!r}), reports_root=Path({str(tmp_path)!r}), "
            f"**{OPTIONS!r}))\n")
    log = (tmp_path / "demo.log").open("wb")
    demo = subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    kill_when(demo, lambda: finished_rows(run_dir / "gate") >= 2, 240.0,
              lambda: (tmp_path / "demo.log").read_text()[-3000:])
    nothing_left(run_dir, demo.pid)
    load_json = (run_dir / "load" / "load.json").read_bytes()
    store = EvidenceStore(run_dir / "gate" / "evidence.sqlite3")
    before = {c.case_id: c.started_ms for c in store.cases() if c.status == "done"}
    store.close()

    result = run_prerelease(PrereleaseOptions(resume=run_dir, reports_root=tmp_path, **OPTIONS))  # type: ignore[arg-type]
    assert (run_dir / "load" / "load.json").read_bytes() == load_json, "the finished load part is kept as it was"
    store = EvidenceStore(run_dir / "gate" / "evidence.sqlite3")
    after = {c.case_id: c for c in store.cases()}
    store.close()
    assert sorted(after) == [1, 2, 5, 12, 13, 17]
    assert all(after[c].started_ms == started for c, started in before.items()), "finished cases are not redone"
    numbers = json.loads((run_dir / "prerelease.json").read_text())
    assert numbers["gate"]["decision"] == result.gate.decision.decision
    assert (run_dir / "quality" / "quality.json").exists() and (run_dir / "report.html").exists()
