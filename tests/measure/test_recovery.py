"""T9 of stops and restarts is derived in one place, from the stamps the rig's clock put on the run and restart."""

from __future__ import annotations

from rig.adapters.models import TerminalEvent
from rig.measure.derive import restart_measures, stop_measures
from rig.measure.transcript import RunTranscript

MS = 1_000_000


def _ended(state: str, at_ns: int) -> RunTranscript:
    run = RunTranscript(run_id="r1", submit_ns=0)
    run.events.append(TerminalEvent(event="done", state=state, recv_ns=at_ns))
    return run


def test_a_stopped_run_counts_from_the_stop_to_its_last_event() -> None:
    run = _ended("stopped", 900 * MS)
    assert stop_measures(run) == []  # never stopped by the rig: nothing to count
    run.stop_ns = 400 * MS
    [t9] = stop_measures(run)
    assert (t9.code, t9.source, t9.label, t9.value, t9.run_id) == ("T9", "client", "stop_to_end", 500.0, "r1")


def test_a_restart_counts_to_ready_and_to_the_first_good_run_only_when_it_completed() -> None:
    rows = restart_measures(100 * MS, 1100 * MS, _ended("completed", 1600 * MS))
    assert [(m.label, m.value) for m in rows] == [("restart_to_ready", 1000.0), ("restart_to_first_good_run", 1500.0)]
    failed = restart_measures(100 * MS, 1100 * MS, _ended("failed", 1600 * MS))
    assert [m.label for m in failed] == ["restart_to_ready"]
