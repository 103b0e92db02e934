"""Simulated runs as a load run's rows tell them: when each was submitted and ended, and how it ended.

Every row of a run carries the wall time at which the client saw the run end (`ts_ms`); its end code (T5, T6
or T9 on the client clock) gives how long it took, so its submit time follows. Chaos analysis, the split of a
run's errors into fault windows, recovery and steady state, and the reports read runs this one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rig.measure import labels
from rig.measure.events import Measure
from rig.measure.tcodes import IN_FLIGHT

END_CODES = ("T5", "T6", "T9")
TERMINAL = ("completed", "stopped", "failed", "interrupted")


@dataclass
class RunView:
    """One simulated run as the samples tell it."""

    run_id: str
    end_ms: float = 0.0
    duration_ms: float | None = None
    t4_ms: float | None = None
    t5_ms: float | None = None
    server_end: str | None = None
    client_end: str | None = None
    broken: bool = False
    resumed_from: str | None = None
    labels: list[str] = field(default_factory=list)

    @property
    def submit_ms(self) -> float:
        return self.end_ms - (self.duration_ms or 0.0)

    @property
    def end(self) -> str | None:
        return self.server_end or self.client_end

    @property
    def completed(self) -> bool:
        return labels.completed(self.end)


def run_views(measures: list[Measure]) -> dict[str, RunView]:
    runs: dict[str, RunView] = {}
    for m in measures:
        if m.case_id is not None or not m.run_id or m.ts_ms is None:
            continue
        r = runs.setdefault(m.run_id, RunView(m.run_id))
        r.end_ms = max(r.end_ms, m.ts_ms)
        if m.code in END_CODES and m.unit == "ms" and m.source == "client":
            r.duration_ms = m.value
            if not labels.without_body(m.label):
                r.t5_ms = m.value
        elif m.code == "T4" and m.source == "client":
            r.t4_ms = m.value
        elif m.code == "T8":
            if m.source == "server":
                r.server_end = m.label
            else:
                r.client_end = m.label
        elif m.code == IN_FLIGHT and r.duration_ms is None:  # a run that never showed its end: its span all the same
            r.duration_ms = m.value
        elif m.code == "error" and labels.stream_failed(m.label):
            r.broken = True
        elif m.code == "resume_link":
            r.resumed_from = m.label
    return runs
