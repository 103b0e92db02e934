"""Soak: a steady load held, each resource's slope per hour fitted with an interval; a seeded leak drifts past its
bound and fails the run, the clean workbench does not."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.load.finish import decide_load
from rig.load.options import LoadOptions
from rig.load.session import LoadResult, run_load
from rig.load.soak import DEFAULT_BOUNDS, EPISODE_MS, PER, fit, slope_interval, soak_analysis
from rig.measure.events import Measure
from rig.policy import Policy
from rig.results.load import LoadSummary


def test_the_slope_is_per_hour_and_its_interval_contains_it() -> None:
    rising = [(t * 1000.0, 10.0 + t * 0.5) for t in range(60)]  # half a unit a second
    assert fit(rising) == pytest.approx(1800.0)
    observed, low, high = slope_interval(rising) or (0, 0, 0)
    assert low <= observed <= high and observed == pytest.approx(1800.0)
    assert fit([(0.0, 1.0), (1000.0, 1.0)]) is None  # too few points to fit
    noisy = [(t * 1000.0, 5.0 + (1 if t % 2 else -1)) for t in range(60)]
    _, low, high = slope_interval(noisy) or (0, 0, 0)
    assert low < 0 < high  # a flat, noisy series: the interval straddles zero
    by_turn = [(turn, 400.0 + 150.0 * turn + jitter) for turn in (1, 2, 3) for jitter in (-20.0, 0.0, 20.0)]
    assert fit(by_turn, PER["turn"]) == pytest.approx(150.0)  # ms per question of the session


def test_a_slow_stretch_of_the_hold_weighs_as_one_episode_not_as_many_points() -> None:
    def hold(episode: bool) -> list[tuple[float, float]]:  # 36 s of T5 samples, 10 a second, ±40 ms of noise
        rng = random.Random(1)
        return [(t * 100.0, 170.0 + rng.gauss(0, 40) + ((100.0 if t >= 280 else 0.0) if episode else 100.0 * t / 360))
                for t in range(360)]

    def width(points: list[tuple[float, float]], episode_ms: float | None) -> float:
        _, low, high = slope_interval(points, seed=2, episode_ms=episode_ms) or (0, 0, 0)
        return high - low

    # the last 8 s 100 ms slower: drawn point by point the interval claims a trend it cannot know from one episode
    assert width(hold(True), EPISODE_MS) > 3 * width(hold(True), None)
    # the same rise spread over the hold is a trend either way: its interval stays narrow and past a 5 s/h bound
    assert width(hold(False), EPISODE_MS) < 1.5 * width(hold(False), None)
    assert (slope_interval(hold(False), seed=2) or (0, 0, 0))[1] > 5000


def test_a_policy_bounds_each_slope_in_its_own_unit() -> None:
    from rig.measure.thresholds import Threshold, unit_of

    per_turn = Threshold.parse("soak.T4_ms_per_turn < 80")
    assert per_turn.key == "soak.T4_ms_per_turn" and unit_of(per_turn.metric, per_turn.stat) == "/turn"
    per_hour = Threshold.parse("soak.rss_mb_per_h < 100")
    assert unit_of(per_hour.metric, per_hour.stat) == "/h"


def test_the_report_draws_each_series_with_its_fitted_line() -> None:
    from rig.report.soak_section import soak_html
    from rig.results.soak import Slope, SoakAnalysis

    drifting = Slope(key="soak.T4_ms_per_turn", series="T4 by the question of its session", unit="ms", per="turn",
                     points=3, slope=150.0, low=140.0, high=160.0, bound=50.0, call="drifts",
                     plot=[(1.0, 500.0), (2.0, 650.0), (3.0, 800.0)], fit=[(1.0, 500.0), (3.0, 800.0)])
    html = soak_html(SoakAnalysis(warmup_s=9.0, hold_s=36.0, slopes=[drifting, Slope(
        key="soak.fds_per_h", series="target open files (floor per 5 s)", unit="fds", points=0, bound=100.0)]))
    assert html.count("<svg") == 1  # no chart without data
    assert "samples" in html and "fitted slope" in html and "question of the session" in html  # legend, x axis
    assert "150 ms/turn" in html


@pytest.mark.slow
@pytest.mark.parametrize(("defects", "drifting", "extra"), [
    ([], set(), {"mix": {"late_stop": 3}}),
    # two defects a run, each pair on exactly its own two slopes (no leak shows on another's slope)
    (["memory_per_stream", "t4_per_turn"], {"soak.rss_mb_per_h", "soak.T4_ms_per_turn"}, {}),
    (["fd_per_turn", "stop_race_slot"], {"soak.fds_per_h", "soak.slots_per_h"}, {"slots": 64}),  # the default mix
    # races a stop with an end now and then
], ids=["clean", "memory_per_stream+t4_per_turn", "fd_per_turn+stop_race_slot"])
def test_a_leak_drifts_past_its_bound_and_fails_the_run(tmp_path: Path, defects: list[str], drifting: set[str],
                                                         extra: dict[str, object]) -> None:
    def hold(name: str) -> LoadResult:
        return run_load(LoadOptions(users=6, soak=True, duration_s=45, think_min_s=0.1, think_max_s=0.3,
                                    defects=defects, out=tmp_path / name, **extra))

    result = hold("run")
    if result.summary and result.summary.soak and any(s.machine for s in result.summary.soak.slopes):
        result = hold("again")  # the rig could not tell the target's drift from a busier machine's: once more
    soak = result.summary.soak if result.summary else None
    assert soak is not None and {s.key for s in soak.drifting} == drifting, soak
    assert (result.decision.decision == "fail") == bool(drifting), result.decision
    if drifting:
        assert any("soak:" in r for r in result.decision.reasons)
        assert all(s.plot and len(s.fit) == 2 for s in soak.drifting)  # drawn with its fitted line
    assert "<h2>Soak</h2>" in (result.run_dir / "report.html").read_text(encoding="utf-8")


def test_slots_count_only_beyond_the_rigs_own_runs_in_flight() -> None:
    """A slowing target holds more slots for the same closed-loop users (more runs in flight): not a leak. A slot held
    with no run of the rig's in flight is."""
    from rig.load.soak import _beyond_runs, _floors

    spans = [(t * 1000.0, t * 1000.0 + 400.0 + 40.0 * t) for t in range(60)]  # runs longer and longer, overlapping
    busier = [(t * 250.0, float(sum(1 for a, b in spans if a <= t * 250.0 <= b))) for t in range(240)]
    assert fit(_floors(_beyond_runs(busier, spans))) == 0.0  # exactly the runs in flight: nothing beyond them
    leaking = [(t, v + t // 10_000) for t, v in busier]  # one more slot lost every 10 s
    assert (fit(_floors(_beyond_runs(leaking, spans))) or 0.0) > 100.0


def _timed_store(tmp_path: Path, t4: Callable[[float, int], float], turns: Callable[[int, int], int],
                 fds: Callable[[float], float] = lambda t: 20.0,
                 tokens: Callable[[float, int], float] | None = None) -> EvidenceStore:
    """A 100 s hold of 6 closed-loop users, a run each per second (T4 = `t4(seconds, question)`, T5 = T4 + 500 ms, its
    session's question `turns(user, n)` for the user's n-th run), and the target's descriptors `fds(seconds)`; with
    `tokens(seconds, user)`, each answer that long (`tokens_out`), T5 2 ms longer per token."""
    store = EvidenceStore(tmp_path / "evidence.sqlite3")
    t0, rows = 1_000_000.0, []
    for n in range(100):
        for user in range(6):
            sec = n + user / 6
            run, turn = f"r{user}-{n}", turns(user, n)
            value = t4(sec, turn)
            length = tokens(sec, user) if tokens else 0.0
            end = t0 + 1000 * sec + value + 500 + 2 * length
            rows += [Measure(code="T4", source="client", value=value, unit="ms", ts_ms=end, run_id=run),
                     Measure(code="T5", source="client", value=value + 500 + 2 * length, unit="ms", ts_ms=end,
                             run_id=run),
                     Measure(code="session_turn", source="client", value=turn, unit="n", ts_ms=end, run_id=run)]
            if tokens:
                rows.append(Measure(code="tokens_out", source="client", value=length, unit="n", ts_ms=end, run_id=run))
    store.add_measures(rows)
    store.add_series("target_open_fds", [(t0 + 250.0 * i, fds(i / 4)) for i in range(400)])
    return store


def _slopes(store: EvidenceStore) -> dict[str, str]:
    return {s.key: s.call for s in soak_analysis(store, 1_000_000.0, 1_101_000.0, []).slopes}


def test_each_timing_slope_says_one_thing(tmp_path: Path) -> None:
    """T4 is fitted on the clock and the session's question together: sessions that grow over the hold (each
    question 150 ms slower; one user starts a new session every 20 questions, another every 40 …, most never) drift
    per question and stay flat per hour; a target slowing by the hour (40 ms more each second) while sessions start
    again every five questions drifts per hour and stays flat per question. Fitted one by one, the growing sessions
    would also have drifted per hour."""
    growing = _timed_store(tmp_path / "g", lambda sec, turn: 300.0 + 150.0 * turn,
                           lambda user, n: n % (20 + 20 * user) + 1)
    calls = _slopes(growing)
    assert calls["soak.T4_ms_per_turn"] == "drifts" and calls["soak.T4_ms_per_h"] == "flat", calls
    assert calls["soak.T5_ms_per_h"] == "flat", calls
    ticks = [(m.ts_ms or 0.0, m.value) for m in growing.measures() if m.code == "T4"]
    assert (fit(ticks) or 0.0) > DEFAULT_BOUNDS["soak.T4_ms_per_h"], "one by one, the clock's slope would drift"
    slowing = _timed_store(tmp_path / "s", lambda sec, turn: 300.0 + 40.0 * sec, lambda user, n: n % 5 + 1)
    calls = _slopes(slowing)
    assert calls["soak.T4_ms_per_h"] == "drifts" and calls["soak.T4_ms_per_turn"] == "flat", calls


def test_longer_answers_late_in_the_hold_are_not_a_target_slowing(tmp_path: Path) -> None:
    """Later questions drawing longer answers (100 tokens more each 10 s, 2 ms a token, each user its own length) end
    their runs later without the target slowing: T5 held at the answer's length is flat per hour; a store without the
    lengths drifts (what a clean soak once said)."""
    def longer(sec: float, user: int) -> float:
        return 100.0 + 10.0 * sec + 40.0 * ((user * 7 + int(sec)) % 5)

    with_lengths = _slopes(_timed_store(tmp_path / "l", lambda sec, turn: 300.0, lambda user, n: n % 5 + 1,
                                        tokens=longer))
    assert with_lengths["soak.T5_ms_per_h"] == "flat", with_lengths
    store = _timed_store(tmp_path / "n", lambda sec, turn: 300.0, lambda user, n: n % 5 + 1, tokens=longer)
    rows = [m for m in store.measures() if m.code != "tokens_out"]
    bare = EvidenceStore(tmp_path / "bare.sqlite3")
    bare.add_measures(rows)
    assert _slopes(bare)["soak.T5_ms_per_h"] == "drifts"


def test_a_count_drifts_only_past_what_the_rigs_own_runs_hold(tmp_path: Path) -> None:
    """Descriptors beyond the rig's runs in flight rising by three over the hold (six runs in flight at once) are
    unclear, saying a longer hold decides; rising by one every second they drift."""
    few = _slopes(_timed_store(tmp_path / "few", lambda sec, turn: 300.0, lambda user, n: 1,
                               fds=lambda sec: 20.0 + (3 if sec > 60 else 0)))
    assert few["soak.fds_per_h"] == "unclear", few
    many = _slopes(_timed_store(tmp_path / "many", lambda sec, turn: 300.0, lambda user, n: 1,
                                fds=lambda sec: 20.0 + sec))
    assert many["soak.fds_per_h"] == "drifts", many


def _machine_store(tmp_path: Path, others: Callable[[float], float]) -> EvidenceStore:
    """A 60 s hold, every second: the target's slots rising 1 per 10 s, the machine's busy cores = the rig's client
    (0.4 core), a local target (0.5 core) and `others(t)`."""
    store = EvidenceStore(tmp_path / "evidence.sqlite3")
    t0 = 1_000_000.0
    ts = [t0 + 1000.0 * i for i in range(61)]
    store.add_series("machine_cores", [(t0, 2.0)])
    store.add_series("target_slots_in_use", [(t, i / 10) for i, t in enumerate(ts)])
    store.add_series("target_cpu", [(t, 0.5) for t in ts])
    store.add_series("machine_busy_cores", [(t, 0.9 + others((t - t0) / 1000)) for t in ts])
    store.add_measures([Measure(code="client_cpu", source="client", value=40.0, unit="%", ts_ms=t) for t in ts])
    return store


def test_a_drift_on_a_machine_that_got_busier_is_unclear_and_the_run_undecided(tmp_path: Path) -> None:
    """Slots held rise over the hold either way; with the machine's other load steady that is the target's drift
    (FAIL), with other programs taking a core more from the middle on it is the rig's "cannot tell" — unclear,
    naming the machine, and the run undecided — never a leak nor a pass. Memory drifts are the target's whatever."""
    quiet = soak_analysis(_machine_store(tmp_path / "q", lambda t: 0.05), 1_000_000.0, 1_060_000.0, [],
                          target_local=True)
    slots = next(s for s in quiet.slopes if s.key == "soak.slots_per_h")
    assert quiet.environment is not None and quiet.environment.steady, quiet.environment
    assert slots.call == "drifts" and not slots.machine
    busy = soak_analysis(_machine_store(tmp_path / "b", lambda t: 0.05 if t < 30 else 1.05), 1_000_000.0,
                         1_060_000.0, [], target_local=True)
    slots = next(s for s in busy.slopes if s.key == "soak.slots_per_h")
    assert busy.environment is not None and not busy.environment.steady
    assert busy.environment.others_first == pytest.approx(0.05, abs=0.01)
    assert busy.environment.others_last == pytest.approx(1.05, abs=0.01)
    assert slots.call == "unclear" and "rose from 0.05 to 1.05 cores" in slots.machine
    summary = LoadSummary(t_codes={}, by_source={}, throughput_rps=1.0, runs=10, completed_runs=10, requests=20,
                          requests_per_s=0.3, error_ratio=0.0, errors_by_reason={}, login_failures=0,
                          end_states={"completed/completed": 10}, send_lag={"count": 0}, workers=0, users=2,
                          duration_s=60.0, samples_by_origin={}, locust={}, soak=busy)
    decision = decide_load(summary, Policy())
    assert decision.decision == "undecided" and any("cannot be told from the machine's" in r for r in decision.reasons)
    remote = soak_analysis(_machine_store(tmp_path / "r", lambda t: 0.05), 1_000_000.0, 1_060_000.0, [],
                           target_local=False)
    assert remote.environment is not None and remote.environment.others_first == pytest.approx(0.55, abs=0.01), \
        "a remote target's CPU is not this machine's: it stays in the others' share"
