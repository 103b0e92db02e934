"""Does it leak: a soak holds a load and fits, per resource, a slope with an interval over the hold.

Series: the target's resident memory, open file descriptors and run slots in use (from its /metrics, sampled each
second by the master; slots at their floor per 10 s — the level they fall back to between runs), and the client's
T4 and T5 per run. Each slope is a least-squares fit per hour, its interval a seeded pairs bootstrap. A slope
**drifts** when its whole interval lies beyond the policy's bound (`soak.rss_mb_per_h < 100` …: the defaults below
unless the policy says otherwise), is **flat** when the whole interval lies within it, and **unclear** otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from rig.evidence import EvidenceStore
from rig.measure.thresholds import Threshold
from rig.results.soak import Slope, SoakAnalysis
from rig.stats import nearest_rank

# the most each may rise per hour of steady load unless the policy says otherwise
DEFAULT_BOUNDS = {"soak.rss_mb_per_h": 200.0, "soak.fds_per_h": 100.0, "soak.slots_per_h": 2.0,
                  "soak.T4_ms_per_h": 2000.0, "soak.T5_ms_per_h": 5000.0}
WARMUP_SHARE = 0.2  # the start of the hold left out: caches fill, pools grow
FLOOR_BUCKET_MS = 10_000.0


def fit(points: Sequence[tuple[float, float]]) -> float | None:
    """Least-squares slope of value on time (ms), per hour (None with fewer than three points or no spread)."""
    n = len(points)
    if n < 3:
        return None
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    if sxx == 0:
        return None
    sxy = sum((t - mx) * (v - my) for t, v in points)
    return sxy / sxx * 3_600_000.0


def slope_interval(points: Sequence[tuple[float, float]], *, alpha: float = 0.10, resamples: int = 500,
                   seed: int = 0) -> tuple[float, float, float] | None:
    """(slope, low, high) per hour: the fit and its (1 − α) pairs-bootstrap interval."""
    observed = fit(points)
    if observed is None:
        return None
    rng = random.Random(seed)
    draws = sorted(d for d in (fit(rng.choices(points, k=len(points))) for _ in range(resamples)) if d is not None)
    if not draws:
        return None
    return observed, nearest_rank(draws, 100 * alpha / 2), nearest_rank(draws, 100 * (1 - alpha / 2))


def _floors(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    buckets: dict[int, list[tuple[float, float]]] = {}
    for t, v in points:
        buckets.setdefault(int(t // FLOOR_BUCKET_MS), []).append((t, v))
    return [(min(p[0] for p in pts), min(p[1] for p in pts)) for _, pts in sorted(buckets.items())]


def soak_analysis(store: EvidenceStore, start_ms: float, end_ms: float, thresholds: list[Threshold]
                  ) -> SoakAnalysis:
    """Every series' slope over the hold after its warm-up, judged against the policy's bounds."""
    warm = start_ms + (end_ms - start_ms) * WARMUP_SHARE
    bounds = dict(DEFAULT_BOUNDS)
    for t in thresholds:
        if t.key in bounds and t.op in ("<", "<="):
            bounds[t.key] = t.value

    def series(name: str, scale: float = 1.0) -> list[tuple[float, float]]:
        return [(r["ts_ms"], r["value"] * scale) for r in store.series(name) if warm <= r["ts_ms"] <= end_ms]

    runs = [m for m in store.measures() if m.case_id is None and m.source == "client" and m.unit == "ms"
            and m.ts_ms is not None and warm <= m.ts_ms <= end_ms]
    candidates = [
        ("soak.rss_mb_per_h", "target memory", "MiB", series("target_rss_bytes", 1 / 2**20)),
        ("soak.fds_per_h", "target open files", "fds", series("target_open_fds")),
        ("soak.slots_per_h", "run slots in use (floor per 10 s)", "slots", _floors(series("target_slots_in_use"))),
        ("soak.T4_ms_per_h", "T4 per run", "ms", [(m.ts_ms or 0.0, m.value) for m in runs if m.code == "T4"]),
        ("soak.T5_ms_per_h", "T5 per run", "ms", [(m.ts_ms or 0.0, m.value) for m in runs if m.code == "T5"]),
    ]
    out = SoakAnalysis(warmup_s=round((warm - start_ms) / 1000, 1), hold_s=round((end_ms - warm) / 1000, 1))
    for i, (key, name, unit, pts) in enumerate(candidates):
        slope = Slope(key=key, series=name, unit=unit, points=len(pts), bound=bounds[key])
        got = slope_interval(pts, seed=i)
        if got is not None:
            slope.per_hour, slope.low, slope.high = (round(v, 3) for v in got)
            if slope.low > bounds[key]:
                slope.call, slope.why = "drifts", f"rises {slope.per_hour:.4g} {unit}/h (interval {slope.low:.4g}–" \
                    f"{slope.high:.4g}), past the {bounds[key]:g} {unit}/h allowed"
            elif slope.high <= bounds[key]:
                slope.call, slope.why = "flat", f"within {bounds[key]:g} {unit}/h (interval up to {slope.high:.4g})"
            else:
                slope.call, slope.why = "unclear", f"interval {slope.low:.4g}–{slope.high:.4g} {unit}/h straddles " \
                    f"the {bounds[key]:g} allowed"
        out.slopes.append(slope)
    return out
