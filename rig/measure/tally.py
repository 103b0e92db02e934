"""The one error ratio of a load run: every task a user attempted, and the ones that did not finish.

A run with an end counts once: failed unless it completed or the user stopped it on purpose. Every error row that
stands for a task without such an end counts once, failed: a refused submission, a stream that broke before its
end (`stream_broken`), a failed login, a crash in the rig's own code (`rig_error`), an export or search the target
refused. A task that worked without being a run (an export, a direct search) leaves a `task` row and counts once,
finished. So the headline never leaves a failed task out, and never counts one twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel

from rig.measure import labels
from rig.measure.events import Measure

SESSION_TURN = "session_turn"


class Tally(BaseModel):
    """Attempts and failures of a set of tasks."""

    attempts: int = 0
    failed: int = 0
    rig_errors: int = 0  # tasks the rig itself broke (never the target's failure: the run is undecided)

    @property
    def error_ratio(self) -> float | None:
        return self.failed / self.attempts if self.attempts else None


def tally(ends: Counter[str], ended_runs: set[str], errors: Iterable[Measure], tasks: Iterable[Measure]) -> Tally:
    """Tally runs by their ends, error rows not tied to an ended run, and finished non-run tasks."""
    completed = sum(n for label, n in ends.items() if labels.completed(label))
    on_purpose = sum(ends.get(label, 0) for label in labels.ON_PURPOSE)
    runs = sum(ends.values())
    unfinished = [m for m in errors if not (m.run_id and m.run_id in ended_runs)]
    failed_tasks = sum(int(m.value) for m in unfinished)
    rig = sum(int(m.value) for m in unfinished if labels.rigs_own(m.label))
    done_tasks = sum(int(m.value) for m in tasks)
    return Tally(attempts=runs + failed_tasks + done_tasks, failed=runs - completed - on_purpose + failed_tasks,
                 rig_errors=rig)


def turn_row(turn: int, run_id: str, scenario: str) -> Measure:
    """Which question of its session a run answered (1 for the first): what a T4 that grows with the session's
    length is fitted against (`soak.T4_ms_per_turn`)."""
    return Measure(code=SESSION_TURN, source="client", value=float(turn), unit="count", run_id=run_id,
                   scenario=scenario)


def task_row(scenario: str) -> Measure:
    """A task that finished without being a run (an export, a direct search): one attempt, not failed."""
    return Measure(code="task", source="client", value=1.0, unit="count", label=scenario, scenario=scenario)
