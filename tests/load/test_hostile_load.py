"""`rig load` against hostile streams (the workbench's load-path defects, taken in turn by its streams): an answer
that never ends, one event of 50 MiB, 50 MiB without a line end. Each stream is stopped — at the reader's cap or the
answer budget — and drained within bounds, the run counts as failed in the headline error ratio although the
target's record says it completed, and a load in which no answer arrived whole is never green."""

from __future__ import annotations

import json
from pathlib import Path

from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.measure import labels

HOSTILE = ["answer_never_ends", "giant_event", "no_line_end"]


def test_hostile_streams_end_counted_and_the_load_is_never_green(tmp_path: Path) -> None:
    result = run_load(LoadOptions(defects=HOSTILE, users=3, spawn_rate=3, duration_s=10, think_min_s=0.1,
                                  think_max_s=0.2, out=tmp_path / "load", reports_root=tmp_path))
    summary = result.summary
    assert summary is not None
    assert result.decision.decision == "undecided" and result.decision.exit_code == 2
    assert "no answer of" in result.decision.reasons[0] and "was delivered whole" in result.decision.reasons[0]
    assert summary.runs > 0 and summary.delivered_runs == 0
    assert {labels.STREAM_TOO_LARGE, labels.NEVER_ENDED} <= set(summary.errors_by_reason)
    assert summary.error_ratio > 0.5  # every run failed; only searches and exports worked
    written = json.loads((tmp_path / "load" / "load.json").read_text(encoding="utf-8"))
    assert written["delivered_runs"] == 0 and written["error_ratio"] == summary.error_ratio
    assert (tmp_path / "load" / "report.html").exists()
