"""Every load run knows its client's headroom: the seconds a Locust process was past its CPU or loop-lag limit are
kept for the time axis, and on a saturated client a threshold on a T-code is undecided — saying why and naming the
workers it needs — while a threshold the client cannot bend (the error rate) still decides."""

from __future__ import annotations

from rig.load.finish import decide_load
from rig.load.headroom import client_health, past_limits
from rig.measure.events import Measure
from rig.measure.thresholds import check
from rig.policy import Policy
from rig.results.load import LoadSummary, TCodeStats, observed_for_policy
from rig.stats import Summary


def _sample(code: str, value: float, ts: float, origin: str = "w1") -> Measure:
    return Measure(code=code, source="client", value=value, unit="%" if code == "client_cpu" else "ms", ts_ms=ts,
                   origin=origin)


def _summary(error_ratio: float, client_lag_ms: float) -> LoadSummary:
    stats = TCodeStats(code="T4", source="client", **Summary(count=20, p50=120.0, p95=300.0, max=400.0).model_dump())
    samples = [_sample("loop_lag", client_lag_ms, 1000.0 * i) for i in range(1, 11)]
    samples += [_sample("client_cpu", 40.0, 1000.0 * i) for i in range(1, 11)]
    return LoadSummary(t_codes={"T4": stats}, by_source={}, throughput_rps=1.0, runs=20, completed_runs=20,
                       delivered_runs=20, requests=40, requests_per_s=2.0, error_ratio=error_ratio, errors_by_reason={},
                       login_failures=0, end_states={"completed/completed": 20}, send_lag={"count": 0}, workers=0,
                       users=2, duration_s=20.0, samples_by_origin={}, locust={},
                       client=client_health(samples, 0.0, 11_000.0))


def _decide(summary: LoadSummary, *thresholds: str) -> tuple[str, list[str]]:
    policy = Policy.model_validate({"thresholds": list(thresholds)})
    summary.thresholds = check(policy.thresholds, observed_for_policy(summary))
    decision = decide_load(summary, policy)
    return decision.decision, decision.reasons


def test_the_seconds_past_a_limit_are_merged_spans() -> None:
    samples = [_sample("loop_lag", v, 1000.0 * i) for i, v in enumerate([1, 80, 90, 2, 70], start=1)]
    samples.append(_sample("client_cpu", 95.0, 5000.0))
    assert past_limits(samples, 90.0, 50.0) == [(1000.0, 3000.0), (4000.0, 5000.0)]


def test_a_timing_threshold_on_a_saturated_client_is_undecided_and_says_why() -> None:
    decision, reasons = _decide(_summary(0.0, client_lag_ms=120.0), "T4.p95 < 1s")
    assert decision == "undecided"
    assert "'T4.p95 < 1s' observed 300 ms, but the client was saturated" in reasons[0]
    assert "--workers" in reasons[0]
    _, calm = _decide(_summary(0.0, client_lag_ms=2.0), "T4.p95 < 1s")
    assert calm == ["every required case passed and every threshold holds"]


def test_a_saturated_client_still_fails_a_target_on_its_errors() -> None:
    decision, reasons = _decide(_summary(0.2, client_lag_ms=120.0), "T4.p95 < 1s", "error_rate < 1%")
    assert decision == "fail"
    assert any("error_rate" in r for r in reasons) and any("client was saturated" in r for r in reasons)


def test_a_soak_timing_that_drifts_on_a_saturated_client_is_undecided_while_a_leak_still_fails() -> None:
    from rig.results.soak import Slope, SoakAnalysis

    def slope(key: str) -> Slope:
        return Slope(key=key, series=key, unit="ms", points=9, slope=99.0, low=90.0, high=110.0, bound=10.0,
                     call="drifts", why="rises 99 ms per hour")

    starved = _summary(0.0, client_lag_ms=120.0)
    starved.soak = SoakAnalysis(warmup_s=1.0, hold_s=10.0, slopes=[slope("soak.T4_ms_per_turn")])
    decision, reasons = _decide(starved)
    assert decision == "undecided" and "the drift may be its own" in reasons[0]
    starved.soak.slopes.append(slope("soak.rss_mb_per_h"))
    assert _decide(starved)[0] == "fail"  # memory the target holds is no client's doing
    calm = _summary(0.0, client_lag_ms=2.0)
    calm.soak = SoakAnalysis(warmup_s=1.0, hold_s=10.0, slopes=[slope("soak.T4_ms_per_turn")])
    assert _decide(calm)[0] == "fail"


def test_the_answers_pace_is_a_timing_a_saturated_client_cannot_judge() -> None:
    summary = _summary(0.0, client_lag_ms=120.0)
    summary.t_codes["ITL"] = TCodeStats(code="ITL", source="client", **Summary(count=20, p50=9.0, p95=12.0).model_dump())
    decision, reasons = _decide(summary, "ITL.p95 < 1ms")
    assert decision == "undecided" and "'ITL.p95 < 1ms' observed 12 ms, but the client was saturated" in reasons[0]
