"""Judging a step from its runs: submitted after the warm-up, judged once ended, with intervals; lost runs and a
client that could not keep up are counted against the step, never for it."""

from __future__ import annotations

import random

from rig.capacity.judge import judge_step
from rig.compare.stats import percentile_interval, wilson_interval
from rig.load.headroom import client_health
from rig.measure.events import Measure
from rig.measure.thresholds import Threshold
from rig.results.capacity import CapacityStep

T4 = Threshold.parse("T4.p95 < 300ms")


def _run(rid: str, submit_ms: float, t4: float, *, ends: str = "completed/completed", duration: float = 900.0
         ) -> list[Measure]:
    end = submit_ms + duration
    rows = [Measure(code="T3", source="client", value=20.0, run_id=rid, ts_ms=submit_ms + 20),
            Measure(code="T8", source="client", value=1.0, unit="count", label=ends, run_id=rid, ts_ms=end),
            Measure(code="T5", source="client", value=duration, run_id=rid, ts_ms=end)]
    if t4:
        rows.append(Measure(code="T4", source="client", value=t4, run_id=rid, ts_ms=submit_ms + t4))
    return rows


def _step() -> CapacityStep:
    return CapacityStep(index=1, users=4, started_ms=0.0, window_start_ms=10_000.0, window_end_ms=70_000.0)


def test_a_step_holds_only_when_the_whole_interval_is_inside_the_slo() -> None:
    rng = random.Random(3)
    rows = [m for i in range(60) for m in _run(f"r{i}", 10_000 + i * 900, rng.uniform(40, 120))]
    rows += _run("warmup", 5_000, 5_000.0)  # submitted before the window: not this step's
    step = judge_step(rows, _step(), [T4])
    assert step.call == "holds" and step.runs == 60 and step.completed == 60
    check = step.slos[0]
    assert check.samples == 60 and check.high is not None and check.high < 300


def test_a_step_breaks_when_the_whole_interval_is_past_the_slo_and_is_unclear_in_between() -> None:
    slow = [m for i in range(40) for m in _run(f"s{i}", 10_000 + i * 1000, 900.0 + i)]
    assert judge_step(slow, _step(), [T4]).call == "breaks"
    few = [m for i in range(8) for m in _run(f"f{i}", 10_000 + i * 1000, 50.0)]
    unclear = judge_step(few, _step(), [T4])
    assert unclear.call == "unclear" and "8 samples" in unclear.why


def test_runs_that_never_end_are_lost_and_a_step_of_failures_has_collapsed() -> None:
    rows = [m for i in range(30) for m in _run(f"r{i}", 10_000 + i * 1000, 60.0)]
    rows += [Measure(code="T3", source="client", value=20.0, run_id=f"lost{i}", ts_ms=20_000 + i) for i in range(5)]
    step = judge_step(rows, _step(), [T4])
    assert step.unfinished == 5 and step.runs == 35 and step.error_ratio is not None and step.error_ratio > 0.1
    failing = [m for i in range(30) for m in _run(f"x{i}", 10_000 + i * 1000, 0.0, ends="failed/internal_error")]
    assert judge_step(failing, _step(), [T4]).call == "collapsed"


def test_runs_a_user_stopped_are_not_the_targets_errors() -> None:
    """stop_resume runs end stopped/user_stop on purpose: they count as runs, never as failures of the target."""
    rows = [m for i in range(40) for m in _run(f"r{i}", 10_000 + i * 1000, 60.0)]
    rows += [m for i in range(6) for m in _run(f"s{i}", 12_000 + i * 5000, 60.0, ends="stopped/user_stop")]
    step = judge_step(rows, _step(), [T4, Threshold.parse("error_rate < 10%")])
    assert step.runs == 46 and step.completed == 40 and step.error_ratio == 0.0, step
    assert step.call == "holds", step.why


def test_intervals_are_seeded_and_contain_what_they_estimate() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile_interval(values, 95, seed=1) == percentile_interval(values, 95, seed=1)
    observed, low, high = percentile_interval(values, 95) or (0, 0, 0)
    assert observed == 95 and low <= 95 <= high
    ratio, low, high = wilson_interval(0, 60) or (1, 1, 1)
    assert ratio == 0 and low == 0 and 0.03 < high < 0.05


def test_a_client_out_of_cpu_or_lagging_is_saturated_and_says_how_many_workers_it_needs() -> None:
    rows = [Measure(code="client_cpu", source="client", value=97.0, unit="%", ts_ms=1000 + i, origin="w1")
            for i in range(10)]
    rows += [Measure(code="loop_lag", source="client", value=2.0, ts_ms=1000 + i, origin="w1") for i in range(10)]
    health = client_health(rows, 0, 5000)
    assert health.saturated and "--workers 2" in health.why and health.processes == 1
    lagging = [Measure(code="loop_lag", source="client", value=120.0, ts_ms=1000 + i) for i in range(10)]
    assert client_health(lagging, 0, 5000).saturated
    calm = [Measure(code="client_cpu", source="client", value=20.0, unit="%", ts_ms=1000), *rows[10:]]
    assert not client_health(calm, 0, 5000).saturated


def test_overload_counts_shed_and_lost_load_and_times_the_recovery() -> None:
    from rig.capacity.overload import judge_overload

    over = CapacityStep(index=7, users=8, started_ms=0.0, window_start_ms=10_000.0, window_end_ms=70_000.0,
                        runs=20, unfinished=2, call="breaks")
    under = CapacityStep(index=8, users=2, started_ms=80_000.0, window_start_ms=83_000.0, window_end_ms=90_000.0,
                         call="holds")
    rows = [Measure(code="error", source="client", value=1.0, unit="count", label="http_503", ts_ms=20_000.0 + i)
            for i in range(5)]
    rows += _run("slow", 80_100.0, 900.0)  # the first run after the drop still waits
    rows += _run("back", 81_000.0, 80.0)  # … and this one is within the SLO again: recovered at its end
    checks = [Threshold.parse("overload.shed_ratio > 10%"), Threshold.parse("overload.lost_runs == 0"),
              Threshold.parse("recovery_s < 5s")]
    result = judge_overload(rows, over, under, [T4], checks)
    assert (result.refused, result.lost_runs, result.shed_ratio) == (5, 2, 0.2)
    assert result.recovery_s == (81_000.0 + 900.0 - 80_000.0) / 1000
    assert [c.call for c in result.checks] == ["holds", "breaks", "holds"]
