"""A load run's errors apart by cause: in the injected fault windows, in the recovery after them, in steady state.

The split is checked on rows laid out by hand (fast), and for real: a run under a chaos schedule on a clean
workbench keeps its steady error ratio at 0 while its windows fail runs, and the seeded defect `flaky_runs`
(one run in twenty fails, nothing injected) is caught by `error_rate.steady` under the same schedule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.load.options import LoadOptions
from rig.load.phases import split_by_phase
from rig.load.session import run_load
from rig.measure.events import Measure
from rig.policy import Threshold
from rig.ports import free_port
from rig.results.load import WindowSpan

POLICY = Path(__file__).resolve().parents[2] / "rig" / "prerelease" / "data" / "policy.yaml"


def _run(run_id: str, submit_s: float, end_s: float, end: str) -> list[Measure]:
    """The rows a finished run leaves: its end time (T5 on the client clock) and how it ended (T8)."""
    at = end_s * 1000
    return [Measure(code="T5", source="client", value=(end_s - submit_s) * 1000, run_id=run_id, ts_ms=at),
            Measure(code="T8", source="server", value=1, unit="count", label=end, run_id=run_id, ts_ms=at)]


def test_runs_are_placed_by_when_they_were_in_flight() -> None:
    rows = (_run("before", 0, 2, "completed/completed") + _run("bad-before", 1, 3, "failed/internal_error")
            + _run("in", 9, 11, "failed/tool_error") + _run("straddles", 14, 16, "completed/completed")
            + _run("still-down", 16, 17, "failed/tool_error") + _run("first-good", 17, 19, "completed/completed")
            + _run("after", 20, 21, "completed/completed"))
    rows.append(Measure(code="error", source="client", value=1, unit="count", label="http_503", scenario="ask",
                        ts_ms=10_500))  # a refused submission, inside the window
    phases = split_by_phase(rows, [WindowSpan(step="tool-errors", fault="target internal_search/error",
                                              started_ms=10_000, ended_ms=15_000)])
    assert (phases.in_fault.runs, phases.in_fault.failed, phases.in_fault.attempts) == (2, 2, 3)
    assert phases.in_fault.errors_by_reason == {"http_503": 1}
    assert (phases.recovery.runs, phases.recovery.failed) == (1, 1)  # failed before the first good run
    assert (phases.steady.runs, phases.steady.failed, phases.steady.error_ratio) == (4, 1, 0.25)
    window = phases.windows[0]
    assert window.recovered_ms == 19_000 and window.recovery_s == 4.0


def test_without_windows_everything_is_steady() -> None:
    phases = split_by_phase(_run("a", 0, 1, "completed/completed") + _run("b", 1, 2, "failed/empty_answer"), [])
    assert phases.steady.error_ratio == 0.5 and phases.in_fault.attempts == 0 and phases.in_fault.error_ratio is None


def test_policy_keys_for_the_phases() -> None:
    assert Threshold.parse("error_rate.steady < 1%").key == "error_rate.steady"
    assert Threshold.parse("recovery_s.p95 < 10s").value == 10_000


SCHEDULE = """
title: a tool-error window
steady-state-hypothesis:
  title: the target answers
  probes:
    - {name: target-ready, probe: ready, timeout_s: 30}
method:
  - {name: tool-errors, at: 4s, duration: 5s, fault: {via: target, point: internal_search, mode: error}}
rollbacks:
  - {name: clear-everything, action: clear_all}
"""


@pytest.mark.slow
@pytest.mark.parametrize("defects", [[], ["flaky_runs"]], ids=["clean", "flaky_runs"])
def test_error_rate_steady_tells_injected_faults_from_a_defect(defects: list[str], tmp_path: Path) -> None:
    schedule = tmp_path / "chaos.yaml"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    options = LoadOptions(users=6, duration_s=25, think_min_s=0.1, think_max_s=0.3, chaos=schedule, policy=POLICY,
                          defects=defects, token_delay_ms=5, out=tmp_path / "load", metrics_port=free_port())
    result = run_load(options)  # the chaos plug-in follows the run through rig.events, as under `rig load --chaos`
    s = result.summary
    assert s is not None and s.phases.windows and s.phases.in_fault.failed > 0
    assert s.error_ratio > 0.01, "the injected window alone pushes the whole run's ratio over the 1 % bar"
    steady_failing = [r for r in result.decision.reasons if "error_rate.steady" in r]
    if defects:
        assert (s.phases.steady.error_ratio or 0) >= 0.03
        assert result.decision.decision == "fail" and steady_failing, result.decision.reasons
    else:
        assert s.phases.steady.error_ratio == 0 and not steady_failing, result.decision.reasons


def test_a_run_broken_by_the_fault_belongs_to_its_window_though_its_break_was_seen_after_it() -> None:
    """In flight when the window opened, its break seen after the window closed (a restart that took a while): the
    window's, by the span it was in flight; a refused submission while the target was still coming back (before the
    first good run ended) is the recovery's, not steady state's."""
    rows = _run("before", 0, 2, "completed/completed") + _run("first-good", 16, 24, "completed/completed")
    rows += [Measure(code="in_flight", source="client", value=9_000, unit="ms", run_id="cut", ts_ms=18_000),
             Measure(code="error", source="client", value=1, unit="count", label="stream_broken", run_id="cut",
                     ts_ms=18_000),
             Measure(code="error", source="client", value=1, unit="count", label="unreachable", ts_ms=20_000)]
    phases = split_by_phase(rows, [WindowSpan(step="restart", fault="target restart", started_ms=10_000,
                                              ended_ms=15_000)])
    assert phases.in_fault.errors_by_reason == {"stream_broken": 1}
    assert phases.recovery.errors_by_reason == {"unreachable": 1}
    assert phases.steady.errors_by_reason == {} and phases.steady.failed == 0
