"""Beyond capacity and back: does the target shed load cleanly (refusing with 429/503) or queue until runs are
lost, and how long after the load falls back to what it held is it within its SLOs again.

The overload step offers more than the search found it holds; the step after it offers what held. Refused
submissions are shed load; runs submitted in the overload window that never end are lost; recovery is the time
from the lighter step's start to the end of the first run submitted after it that met every percentile SLO.
"""

from __future__ import annotations

from collections import Counter

from rig.capacity.judge import first_seen
from rig.load.runviews import run_views
from rig.measure.events import Measure
from rig.measure.tcodes import is_tcode
from rig.measure.thresholds import Threshold, unit_of
from rig.results.capacity import CapacityStep, Overload, SloCheck

SHED = ("http_429", "http_503")


def is_overload_threshold(t: Threshold) -> bool:
    """The thresholds the overload and recovery steps answer (`overload.shed_ratio`, `overload.lost_runs`,
    `recovery_s`), not each step's SLOs."""
    return t.metric in ("overload", "recovery_s")


def judge_overload(measures: list[Measure], over: CapacityStep, under: CapacityStep, slos: list[Threshold],
                   checks: list[Threshold]) -> Overload:
    rows = [m for m in measures if m.case_id is None]
    w0, w1 = over.window_start_ms, over.window_end_ms
    errors = Counter(m.label or "unknown" for m in rows if m.code == "error" and not m.run_id
                     and m.ts_ms is not None and w0 <= m.ts_ms < w1)
    refused = sum(n for label, n in errors.items() if label in SHED)
    out = Overload(users=over.users, refused=refused, runs=over.runs, lost_runs=over.unfinished,
                   errors={k: v for k, v in errors.items() if k not in SHED}, overload_call=over.call,
                   recovered_at_users=under.users, recovery_call=under.call)
    out.shed_ratio = round(refused / (refused + over.runs), 4) if refused + over.runs else 0.0
    views = run_views(rows)
    seen = first_seen(rows)
    per_run = [t for t in slos if is_tcode(t.metric)]
    good = sorted((r for r in views.values() if r.completed and seen.get(r.run_id, r.submit_ms) >= under.started_ms
                   and all(_run_meets(rows, r.run_id, t) for t in per_run)), key=lambda r: r.end_ms)
    if good:
        out.recovery_s = round((good[0].end_ms - under.started_ms) / 1000, 3)
    observed = {"overload.shed_ratio": out.shed_ratio, "overload.lost_runs": float(out.lost_runs),
                "recovery_s": out.recovery_s * 1000 if out.recovery_s is not None else None}
    for t in checks:
        value = observed.get(t.key)
        check = SloCheck(text=t.text, key=t.key, observed=value, low=value, high=value, unit=unit_of(t.metric, t.stat),
                         samples=over.runs)
        if value is not None:
            check.call = "holds" if t.holds(value) else "breaks"
        out.checks.append(check)
    return out


def _run_meets(rows: list[Measure], run_id: str, t: Threshold) -> bool:
    """One run within a percentile SLO: its own value of that T-code is on the good side of the threshold."""
    values = [m.value for m in rows if m.run_id == run_id and m.code == t.metric and m.source == "client"]
    return bool(values) and t.holds(values[0])
