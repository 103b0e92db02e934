"""The one error ratio of a load run: every task a user attempted, and the ones that did not finish.

A run with an end counts once: failed unless it completed or the user stopped it on purpose — and failed too when
its stream did not deliver the answer whole (broke off, an event past the reader's cap, an answer past the answer
budget) even where the target's record says it completed: the user never got it. Every error row that stands for a
task without such an end counts once, failed: a refused submission, a stream that broke before any end, a failed
login, a crash in the rig's own code (`rig_error`), an export or search the target refused. A task that worked
without being a run (an export, a direct search) leaves a `task` row and counts once, finished. So the headline
never leaves a failed task out, and never counts one twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

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


def counted_errors(errors: Iterable[Measure], ended_runs: Mapping[str, str]) -> list[Measure]:
    """The error rows that are failures of their own: those not tied to a run whose end was counted, and a stream
    failure of a run whose end would not count as failed (completed, or stopped on purpose) — once per run."""
    out: list[Measure] = []
    undelivered: set[str] = set()
    for m in errors:
        end = ended_runs.get(m.run_id) if m.run_id else None
        if not (m.run_id and m.run_id in ended_runs):
            out.append(m)
        elif labels.stream_failed(m.label) and (labels.completed(end) or labels.on_purpose(end)) \
                and m.run_id not in undelivered:
            undelivered.add(m.run_id)
            out.append(m)
    return out


def tally(ends: Counter[str], ended_runs: Mapping[str, str], errors: Iterable[Measure], tasks: Iterable[Measure]
          ) -> Tally:
    """Tally runs by their ends (`ended_runs`: each counted run's end label), the error rows that are failures of
    their own (`counted_errors`), and finished non-run tasks."""
    completed = sum(n for label, n in ends.items() if labels.completed(label))
    on_purpose = sum(ends.get(label, 0) for label in labels.ON_PURPOSE)
    runs = sum(ends.values())
    counted = counted_errors(errors, ended_runs)
    undelivered = sum(1 for m in counted if m.run_id and m.run_id in ended_runs)
    failed_tasks = sum(int(m.value) for m in counted if not (m.run_id and m.run_id in ended_runs))
    rig = sum(int(m.value) for m in counted if labels.rigs_own(m.label))
    done_tasks = sum(int(m.value) for m in tasks)
    return Tally(attempts=runs + failed_tasks + done_tasks,
                 failed=runs - completed - on_purpose + undelivered + failed_tasks, rig_errors=rig)


def turn_row(turn: int, run_id: str, scenario: str) -> Measure:
    """Which question of its session a run answered (1 for the first): what a T4 that grows with the session's
    length is fitted against (`soak.T4_ms_per_turn`)."""
    return Measure(code=SESSION_TURN, source="client", value=float(turn), unit="count", run_id=run_id,
                   scenario=scenario)


def task_row(scenario: str) -> Measure:
    """A task that finished without being a run (an export, a direct search): one attempt, not failed."""
    return Measure(code="task", source="client", value=1.0, unit="count", label=scenario, scenario=scenario)
