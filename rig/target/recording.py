"""Recording what a case or case-turn does: every exchange, observation, run and item goes to the store.

`RecordingContext` is what the gate's cases and the quality workload's turns record through. It joins three parts,
each in its own module: items and evidence (`rig.target.items`), run helpers (`rig.target.runs`) and fault
fixtures (`rig.target.faults`).
"""

from __future__ import annotations

from rig import events
from rig.target.faults import FaultFixtures, Fixture
from rig.target.items import with_seen
from rig.target.runs import RunRecording

__all__ = ["Fixture", "RecordingContext", "with_seen"]


class RecordingContext(RunRecording, FaultFixtures):
    """Items and evidence, run helpers and fault fixtures, over one store, target, span and key."""

    def close(self) -> None:
        """End what the case left open and stop recording the adapter's exchanges."""
        self.end_run_spans()
        if self._record_exchange in events.exchange.listeners:
            events.exchange.remove_listener(self._record_exchange)
