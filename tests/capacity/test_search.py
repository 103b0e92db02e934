"""The search over offered load: doubling to a bracket, bisecting to one step, and stopping where it must."""

from __future__ import annotations

from collections.abc import Callable

from rig.capacity.search import capacity_search, conclude
from rig.results.capacity import CapacityStep, ClientHealth, ResourceReading, SloCheck


def _target(knee: int, *, collapse_at: int | None = None, starved_at: int | None = None
            ) -> tuple[Callable[[int], CapacityStep], list[int]]:
    """A deployment that holds up to `knee` users (a slot limit there), collapses at `collapse_at`."""
    asked: list[int] = []

    def run_step(users: int) -> CapacityStep:
        asked.append(users)
        step = CapacityStep(index=len(asked), users=users, started_ms=0, window_start_ms=0, window_end_ms=1)
        step.resources = [ResourceReading(name="run slots", source="target /metrics", peak=min(users, knee),
                                          limit=knee, at_limit=users >= knee, first_at_limit_ms=1.0)]
        check = SloCheck(text="T4.p95 < 300ms", key="T4.p95", observed=100.0 if users <= knee else 900.0)
        check.call = "holds" if users <= knee else "breaks"
        step.slos = [check]
        step.call = "holds" if users <= knee else "breaks"
        if collapse_at is not None and users >= collapse_at:
            step.call = "collapsed"
        if starved_at is not None and users >= starved_at:
            step.call, step.client = "client_saturated", ClientHealth(saturated=True, why="loop lag")
        return step

    return run_step, asked


def _search(run_step: Callable[[int], CapacityStep], **kw: int) -> object:
    return capacity_search(run_step, start=kw.get("start", 1), max_users=kw.get("max_users", 64),
                           max_steps=kw.get("max_steps", 12), time_left=lambda: 1e9, step_cost_s=1.0)


def test_it_brackets_by_doubling_then_bisects_to_the_knee() -> None:
    run_step, asked = _target(5)
    result = conclude(_search(run_step))  # type: ignore[arg-type]
    assert asked == [1, 2, 4, 8, 6, 5]
    assert (result.holds, result.breaks, result.verdict) == (5, 6, "found")
    assert result.first_broken == ["T4.p95 < 300ms"] and result.saturating == "run slots"
    assert result.saturating_at == 5
    assert result.answer.startswith("holds 5 researchers with 90% confidence; at 6 users T4.p95 < 300ms broke first")


def test_a_collapse_is_a_step_that_did_not_hold_and_the_search_goes_on_below_it() -> None:
    run_step, asked = _target(3, collapse_at=4)
    result = conclude(_search(run_step))  # type: ignore[arg-type]
    assert asked == [1, 2, 4, 3] and (result.holds, result.breaks) == (3, 4)


def test_a_saturated_client_ends_the_search_undecided() -> None:
    run_step, asked = _target(50, starved_at=8)
    result = conclude(_search(run_step))  # type: ignore[arg-type]
    assert asked == [1, 2, 4, 8] and result.verdict == "undecided"
    assert "client was saturated at 8 users" in result.answer


def test_every_step_holding_up_to_the_maximum_is_a_lower_bound() -> None:
    run_step, asked = _target(100)
    result = conclude(_search(run_step, max_users=10))  # type: ignore[arg-type]
    assert asked == [1, 2, 4, 8, 10] and result.verdict == "above_max" and result.holds == 10
    assert result.answer.startswith("holds at least 10 researchers")


def test_the_search_stops_at_its_step_limit_and_says_so() -> None:
    run_step, asked = _target(5)
    result = conclude(_search(run_step, max_steps=3))  # type: ignore[arg-type]
    assert asked == [1, 2, 4] and result.stopped_because == "the step limit (3 steps)"
    assert result.verdict == "above_max" and "stopped at the step limit" in result.answer


def test_nothing_holding_is_undecided_not_zero() -> None:
    run_step, _ = _target(0)
    result = conclude(_search(run_step))  # type: ignore[arg-type]
    assert result.holds is None and result.breaks == 1 and result.verdict == "undecided"
