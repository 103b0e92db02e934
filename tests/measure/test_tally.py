"""The one error ratio counts a run whose answer never arrived whole as failed — once — whatever the target's record
says of it; a run that ended failed is not counted a second time for its broken stream."""

from __future__ import annotations

from collections import Counter

from rig.measure import labels
from rig.measure.events import Measure
from rig.measure.tally import counted_errors, tally


def _error(reason: str, run_id: str | None = None) -> Measure:
    return Measure(code="error", source="client", value=1.0, unit="count", run_id=run_id, label=reason)


ENDS = {"r1": "completed/completed", "r2": "completed/completed", "r3": "failed/internal_error",
        "r4": labels.USER_STOP}


def test_a_stream_failure_of_a_completed_run_counts_it_failed_once() -> None:
    errors = [_error(labels.STREAM_TOO_LARGE, "r1"), _error(labels.STREAM_TOO_LARGE, "r1")]
    counted = tally(Counter(ENDS.values()), ENDS, errors, [])
    assert (counted.attempts, counted.failed) == (4, 2)  # r3 failed by its end, r1 by its stream


def test_a_failed_run_is_not_counted_again_for_its_broken_stream() -> None:
    counted = tally(Counter(ENDS.values()), ENDS, [_error(labels.STREAM_BROKEN, "r3")], [])
    assert (counted.attempts, counted.failed) == (4, 1)


def test_a_stopped_run_whose_answer_never_ended_is_a_failure_not_a_stop() -> None:
    counted = tally(Counter(ENDS.values()), ENDS, [_error(labels.NEVER_ENDED, "r4")], [])
    assert (counted.attempts, counted.failed) == (4, 2)


def test_errors_without_a_counted_end_count_once_each() -> None:
    errors = [_error("http_503"), _error(labels.STREAM_BROKEN, "r9"), _error("stop:http_500", "r2")]
    assert [m.label for m in counted_errors(errors, ENDS)] == ["http_503", labels.STREAM_BROKEN]
    counted = tally(Counter(ENDS.values()), ENDS, errors, [])
    assert (counted.attempts, counted.failed) == (6, 3)
