"""The client's own headroom, in every load run and each capacity step: a load generator that is out of CPU, or
whose event loop wakes late, measures itself. Each Locust process that runs users reports its CPU share and its gevent
loop lag every second (`client_cpu`, `loop_lag`: rig.load.locust_hooks); a run or step where either passes its limit
is "client saturated", and the seconds past a limit are kept to be shown on the run's time axis."""

from __future__ import annotations

import math

from rig.measure.events import Measure
from rig.results.capacity import ClientHealth
from rig.stats import percentile

CPU_LIMIT_PCT = 90.0  # of one core: a Locust process is one gevent loop
LAG_LIMIT_MS = 50.0  # a 200 ms sleep that wakes this much late delays every stamp the process takes
WORKER_TARGET_PCT = 60.0  # the share a process should stay under when the search says how many workers it needs


def client_health(measures: list[Measure], start_ms: float, end_ms: float, *, cpu_limit_pct: float = CPU_LIMIT_PCT,
                  lag_limit_ms: float = LAG_LIMIT_MS) -> ClientHealth:
    """The busiest process's CPU and the loop lag's p95 in [start, end); saturated past either limit."""
    cpu = [m for m in measures if m.code == "client_cpu" and m.ts_ms is not None and start_ms <= m.ts_ms < end_ms]
    lag = [m.value for m in measures if m.code == "loop_lag" and m.ts_ms is not None and start_ms <= m.ts_ms < end_ms]
    if not cpu and not lag:
        return ClientHealth(why="no client sample in the step")
    by_process: dict[str, list[float]] = {}
    for m in cpu:
        by_process.setdefault(m.origin or "local", []).append(m.value)
    peak = max((sum(v) / len(v) for v in by_process.values()), default=None)  # each process's mean, the busiest
    lag_p95 = percentile(lag, 95) if lag else None
    out = ClientHealth(cpu_peak_pct=round(peak, 1) if peak is not None else None,
                       loop_lag_p95_ms=round(lag_p95, 1) if lag_p95 is not None else None,
                       processes=len(by_process))
    reasons = []
    if peak is not None and peak >= cpu_limit_pct:
        reasons.append(f"the busiest Locust process used {peak:.0f} % of a core (limit {cpu_limit_pct:.0f} %)")
    if lag_p95 is not None and lag_p95 >= lag_limit_ms:
        reasons.append(f"its event loop woke {lag_p95:.0f} ms late at p95 (limit {lag_limit_ms:.0f} ms)")
    if reasons:
        out.saturated = True
        needed = max(len(by_process) + 1, math.ceil(len(by_process) * (peak or 100.0) / WORKER_TARGET_PCT))
        out.why = "; ".join(reasons) + f" — run it again with --workers {needed} or more (--workers auto: one per core)"
    out.past_limits_ms = past_limits(cpu + [m for m in measures if m.code == "loop_lag" and m.ts_ms is not None
                                            and start_ms <= m.ts_ms < end_ms], cpu_limit_pct, lag_limit_ms)
    return out


def past_limits(samples: list[Measure], cpu_limit_pct: float, lag_limit_ms: float) -> list[tuple[float, float]]:
    """The seconds in which a process's CPU share or loop lag was past its limit, as [start, end) spans in ms (a sample
    stands for the second before it), adjacent ones merged."""
    spans: list[tuple[float, float]] = []
    for m in sorted(samples, key=lambda m: m.ts_ms or 0.0):
        limit = cpu_limit_pct if m.code == "client_cpu" else lag_limit_ms
        if m.ts_ms is None or m.value < limit:
            continue
        start, end = m.ts_ms - 1000.0, m.ts_ms
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans
