"""Does it leak: a soak holds a load and fits, per resource, a slope with an interval over the hold.

Series: the target's resident memory, open file descriptors and run slots in use (from its /metrics, sampled each
second by the master; descriptors and slots each as those held beyond the rig's own runs in flight at that second
(each holds a slot and its stream's connection), at their floor per 5 s — a target that slows holds more of both
for the same closed-loop users, and that is not a leak), and the client's
T4 and T5 per run, per hour; and T4 against the question of its session it answered (`session_turn`), per
question: a target that slows as a session grows. Each slope is a least-squares fit, its interval a seeded bootstrap
that draws the clock's points in 3 s stretches (a slow few seconds are one episode, not many points); a timing is
fitted on the clock and on the question of its session together (`fit_partial`), so that
each of its two slopes says one thing: sessions that grow over the hold are not a target slowing by the hour, and a
target slowing by the hour is not one slowing per question; T5 also holds the answer's length (`tokens_out`) fixed
(`_held`): longer answers end later without the target slowing. A slope
**drifts** when its whole interval lies beyond the policy's bound (`soak.rss_mb_per_h < 100` …: the defaults below
unless the policy says otherwise), is **flat** when the whole interval lies within it, and **unclear** otherwise.
A count (descriptors, slots) drifts only when its least rise over the hold is more than the rig's own runs could
hold at once (`COUNTED`): each run's connection and slot outlive the rig's view of the run by a moment at the
target, so a rise of a few over a short hold cannot be told from the runs' own comings and goings.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any, Literal

from rig.evidence import EvidenceStore
from rig.load.environment import MOVED_BY_MACHINE, environment_during
from rig.load.runviews import run_views
from rig.measure.events import Measure
from rig.measure.tally import SESSION_TURN
from rig.measure.tcodes import TOKENS_OUT
from rig.measure.thresholds import Threshold
from rig.results.soak import Slope, SoakAnalysis
from rig.stats import nearest_rank

# the most each may rise per hour of steady load unless the policy says otherwise
DEFAULT_BOUNDS = {"soak.rss_mb_per_h": 200.0, "soak.fds_per_h": 100.0, "soak.slots_per_h": 2.0,
                  "soak.T4_ms_per_h": 2000.0, "soak.T5_ms_per_h": 5000.0, "soak.T4_ms_per_turn": 50.0}
PER = {"h": 3_600_000.0, "turn": 1.0}  # a slope per hour of ms on the clock, or per question of a session
Per = Literal["h", "turn"]
Interval = tuple[float, float, float]  # a slope, its low and its high
WARMUP_SHARE = 0.2  # the start of the hold left out: caches fill, pools grow
FLOOR_BUCKET_MS = 5_000.0
PLOT_POINTS = 240
COLLINEAR_R2 = 0.99 ** 2  # clock and question moving together this closely cannot be told apart: fitted one by one
COUNTED = ("soak.fds_per_h", "soak.slots_per_h")  # counts, whose resolution is the rig's own runs in flight
EPISODE_MS = 3_000.0  # points this close on the clock share the target's moment: resampled together


def _resample(points: Sequence[Any], rng: random.Random, episode_ms: float | None) -> list[Any]:
    """A bootstrap draw: points drawn with replacement — or, with `episode_ms` (x on the clock, in ms), whole stretches
    of that length, so a slow few seconds (a pause, a burst) weigh as one episode, not as so many independent points."""
    if not episode_ms:
        return rng.choices(points, k=len(points))
    stretches: dict[int, list[Any]] = {}
    for p in points:
        stretches.setdefault(int(p[0] // episode_ms), []).append(p)
    groups = list(stretches.values())
    return [p for group in rng.choices(groups, k=len(groups)) for p in group]


def fit(points: Sequence[tuple[float, float]], per: float = PER["h"]) -> float | None:
    """Least-squares slope of value on x, times `per` (x in ms: per hour, by default); None with fewer than three
    points or no spread."""
    n = len(points)
    if n < 3:
        return None
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    if sxx == 0:
        return None
    sxy = sum((t - mx) * (v - my) for t, v in points)
    return sxy / sxx * per


def _held(points: Sequence[tuple[float, ...]]) -> list[tuple[float, float, float]]:
    """(x, z, value) rows with a fourth column w held fixed: each of x, z and value less its least-squares line on w
    (Frisch–Waugh: slopes on x and z fitted on these are theirs in the fit on x, z and w together)."""
    n = len(points)
    mw = sum(p[2] for p in points) / n
    sww = sum((p[2] - mw) ** 2 for p in points)
    if sww == 0:
        return [(p[0], p[1], p[3]) for p in points]
    cols = []
    for i in (0, 1, 3):
        mean = sum(p[i] for p in points) / n
        b = sum((p[2] - mw) * (p[i] - mean) for p in points) / sww
        cols.append([p[i] - b * (p[2] - mw) for p in points])
    return list(zip(*cols, strict=True))


def fit_partial(points: Sequence[tuple[float, ...]], per_x: float = PER["h"], per_z: float = PER["turn"]
                ) -> tuple[float, float] | None:
    """Least-squares slopes of value on x and on z fitted together — each the slope with the other held fixed —
    times `per_x` and `per_z`; rows (x, z, value), or (x, z, w, value) with w held fixed too. None with fewer than four
    points, or where x and z do not vary apart (|r| > 0.99)."""
    n = len(points)
    if n < 4:
        return None
    if len(points[0]) == 4:
        points = _held(points)
    mx, mz, my = (sum(p[i] for p in points) / n for i in range(3))
    sxx = sum((x - mx) ** 2 for x, _, _ in points)
    szz = sum((z - mz) ** 2 for _, z, _ in points)
    sxz = sum((x - mx) * (z - mz) for x, z, _ in points)
    if sxx == 0 or szz == 0 or sxz * sxz > COLLINEAR_R2 * sxx * szz:
        return None
    sxy = sum((x - mx) * (v - my) for x, _, v in points)
    szy = sum((z - mz) * (v - my) for _, z, v in points)
    det = sxx * szz - sxz * sxz
    return (sxy * szz - szy * sxz) / det * per_x, (szy * sxx - sxy * sxz) / det * per_z


def partial_intervals(points: Sequence[tuple[float, ...]], *, alpha: float = 0.10, resamples: int = 500,
                      seed: int = 0, episode_ms: float | None = EPISODE_MS) -> tuple[Interval, Interval] | None:
    """`fit_partial`'s two slopes (per hour, per question), each with its (1 − α) bootstrap interval, drawn by
    `episode_ms` stretches of the clock (`_resample`)."""
    observed = fit_partial(points)
    if observed is None:
        return None
    rng = random.Random(seed)
    draws = [d for d in (fit_partial(_resample(points, rng, episode_ms)) for _ in range(resamples)) if d is not None]
    if not draws:
        return None
    out: list[Interval] = []
    for i in (0, 1):
        ordered = sorted(d[i] for d in draws)
        out.append((observed[i], nearest_rank(ordered, 100 * alpha / 2), nearest_rank(ordered, 100 * (1 - alpha / 2))))
    return out[0], out[1]


def slope_interval(points: Sequence[tuple[float, float]], *, per: float = PER["h"], alpha: float = 0.10,
                   resamples: int = 500, seed: int = 0, episode_ms: float | None = EPISODE_MS
                   ) -> tuple[float, float, float] | None:
    """(slope, low, high): the fit and its (1 − α) bootstrap interval; a slope on the clock (`per` an hour) is drawn
    by `episode_ms` stretches (`_resample`), one on anything else by pairs."""
    observed = fit(points, per)
    if observed is None:
        return None
    rng = random.Random(seed)
    draws = sorted(d for d in (fit(_resample(points, rng, episode_ms if per == PER["h"] else None), per)
                               for _ in range(resamples))
                   if d is not None)
    if not draws:
        return None
    return observed, nearest_rank(draws, 100 * alpha / 2), nearest_rank(draws, 100 * (1 - alpha / 2))


def _floors(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    buckets: dict[int, list[tuple[float, float]]] = {}
    for t, v in points:
        buckets.setdefault(int(t // FLOOR_BUCKET_MS), []).append((t, v))
    return [(min(p[0] for p in pts), min(p[1] for p in pts)) for _, pts in sorted(buckets.items())]


def _beyond_runs(slots: list[tuple[float, float]], spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Each slot sample less the rig's runs in flight at that moment, each run a (submit, end) span in wall ms
    (never below zero: a queued run holds none). Sorted starts and ends count the runs in flight at a time."""
    starts, ends = sorted(a for a, _ in spans), sorted(b for _, b in spans)
    return [(t, max(0.0, v - (bisect_right(starts, t) - bisect_left(ends, t)))) for t, v in slots]


def soak_analysis(store: EvidenceStore, start_ms: float, end_ms: float, thresholds: list[Threshold], *,
                  target_local: bool = False) -> SoakAnalysis:
    """Every series' slope over the hold after its warm-up, judged against the policy's bounds; a drift the machine
    could have caused (timings, slots, while it was not steady: rig.load.environment) is unclear, saying why."""
    warm = start_ms + (end_ms - start_ms) * WARMUP_SHARE
    bounds = dict(DEFAULT_BOUNDS)
    for t in thresholds:
        if t.key in bounds and t.op in ("<", "<="):
            bounds[t.key] = t.value

    def series(name: str, scale: float = 1.0) -> list[tuple[float, float]]:
        return [(p.ts_ms, p.value * scale) for p in store.series(name) if warm <= p.ts_ms <= end_ms]

    measures = store.measures()
    runs = [m for m in measures if m.case_id is None and m.source == "client" and m.unit == "ms"
            and m.ts_ms is not None and warm <= m.ts_ms <= end_ms]
    turn_of = {m.run_id: m.value for m in measures if m.code == SESSION_TURN and m.run_id}
    # each of the rig's runs in flight holds a run slot and its stream's connection at the target: a target that
    # slows holds more of both for the same closed-loop users, which is not a leak
    flights = [(v.submit_ms, v.end_ms) for v in run_views(measures).values() if v.duration_ms is not None]
    timed = {code: [(m.ts_ms or 0.0, m.value) for m in runs if m.code == code] for code in ("T4", "T5")}
    by_turn = {code: [(m.ts_ms or 0.0, turn_of[m.run_id], m.value) for m in runs if m.code == code
                      and m.run_id in turn_of] for code in ("T4", "T5")}
    t4_joint = partial_intervals(by_turn["T4"], seed=3)
    t5_joint, t5_held = _t5_fit(runs, turn_of, {m.run_id: m.value for m in measures if m.code == TOKENS_OUT and m.run_id},
                                by_turn["T5"])
    candidates: list[tuple[str, str, str, Per, list[tuple[float, float]], Interval | None]] = [
        ("soak.rss_mb_per_h", "target memory", "MiB", "h", series("target_rss_bytes", 1 / 2**20), None),
        ("soak.fds_per_h", "target open files beyond the rig's streams in flight (floor per 5 s)", "fds", "h",
         _floors(_beyond_runs(series("target_open_fds"), flights)), None),
        ("soak.slots_per_h", "run slots held beyond the rig's runs in flight (floor per 5 s)", "slots", "h",
         _floors(_beyond_runs(series("target_slots_in_use"), flights)), None),
        ("soak.T4_ms_per_h", "T4 per run" + (", its session's question held fixed" if t4_joint else ""), "ms", "h",
         timed["T4"], t4_joint[0] if t4_joint else None),
        ("soak.T5_ms_per_h", "T5 per run" + (f", {t5_held} held fixed" if t5_joint else ""), "ms", "h",
         timed["T5"], t5_joint[0] if t5_joint else None),
        ("soak.T4_ms_per_turn", "T4 by the question of its session" + (", the clock held fixed" if t4_joint else ""),
         "ms", "turn", [(z, v) for _, z, v in by_turn["T4"]], t4_joint[1] if t4_joint else None),
    ]
    machine = environment_during(store, measures, warm, end_ms, target_local=target_local)
    out = SoakAnalysis(warmup_s=round((warm - start_ms) / 1000, 1), hold_s=round((end_ms - warm) / 1000, 1),
                       environment=machine)
    held_at_once = max(1, _most_at_once(flights))
    for i, (key, name, unit, per, pts, joint) in enumerate(candidates):
        slope = _judge(Slope(key=key, series=name, unit=unit, per=per, points=len(pts), bound=bounds[key]),
                       joint or slope_interval(pts, per=PER[per], seed=i))
        if key in COUNTED:
            _within_own_runs(slope, out.hold_s, held_at_once)
        if slope.call == "drifts" and key in MOVED_BY_MACHINE and not machine.steady:
            slope.call, slope.machine = "unclear", machine.why
            slope.why += f", but {machine.why}: the target's drift cannot be told from the machine's"
        _plot(slope, [((x - warm) / 1000.0, y) for x, y in pts] if per == "h" else pts)
        out.slopes.append(slope)
    return out


def _t5_fit(runs: list[Measure], turn_of: dict[str, float], length_of: dict[str, float],
            by_turn: list[tuple[float, float, float]]) -> tuple[tuple[Interval, Interval] | None, str]:
    """T5's two slopes holding its session's question fixed, and the answer's length too where ≥ 80 % of runs have it:
    a hold whose later questions draw longer answers ends its runs later without the target slowing."""
    rows: list[tuple[float, ...]] = [(m.ts_ms or 0.0, turn_of[m.run_id], length_of[m.run_id], m.value)
                                     for m in runs if m.code == "T5" and m.run_id in turn_of and m.run_id in length_of]
    if rows and len(rows) >= 0.8 * len(by_turn):
        return partial_intervals(rows, seed=4), "its session's question and answer's length"
    return partial_intervals(by_turn, seed=4), "its session's question"


def _within_own_runs(slope: Slope, hold_s: float, held_at_once: int) -> None:
    """A count that drifts only by as much as the rig's own runs held at once is unclear: a longer hold decides."""
    if slope.call == "drifts" and slope.low is not None:
        least = slope.low * hold_s / 3600
        if least <= held_at_once:
            slope.call = "unclear"
            slope.why += (f", but its least rise over the {hold_s:g} s hold is {least:.1f} {slope.unit}, no more than "
                          f"the {held_at_once} the rig's own runs held at once: a longer hold decides")


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most of the rig's runs in flight at one moment."""
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def _plot(slope: Slope, points: list[tuple[float, float]]) -> None:
    """What the report draws of a slope: its points, thinned to PLOT_POINTS, and the line of the slope judged through
    their centre (its two ends)."""
    if not points:
        return
    step = max(1, len(points) // PLOT_POINTS)
    slope.plot = [(round(x, 3), round(y, 3)) for x, y in points[::step]]
    if slope.slope is None:
        return
    per_x = slope.slope / (3600.0 if slope.per == "h" else 1.0)  # the judged slope, per second or per question
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    lo, hi = min(x for x, _ in points), max(x for x, _ in points)
    slope.fit = [(round(x, 3), round(my + per_x * (x - mx), 3)) for x in (lo, hi)]


def _judge(slope: Slope, got: tuple[float, float, float] | None) -> Slope:
    """The call on one slope: past its bound (drifts), within it (flat), or straddling it (unclear)."""
    if got is None or slope.bound is None:
        return slope
    slope.slope, slope.low, slope.high = (round(v, 3) for v in got)
    unit, bound = f"{slope.unit}/{slope.per}", slope.bound
    if slope.low > bound:
        slope.call, slope.why = "drifts", f"rises {slope.slope:.4g} {unit} (interval {slope.low:.4g}–" \
            f"{slope.high:.4g}), past the {bound:g} {unit} allowed"
    elif slope.high <= bound:
        slope.call, slope.why = "flat", f"within {bound:g} {unit} (interval up to {slope.high:.4g})"
    else:
        slope.call, slope.why = "unclear", f"interval {slope.low:.4g}–{slope.high:.4g} {unit} straddles the " \
            f"{bound:g} allowed"
    return slope
