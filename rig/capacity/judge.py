"""Judging one step of offered load from what the run measured in its window.

A run belongs to a step when it was submitted inside the step's window (after the warm-up); it is judged once it
has ended, and one that never ends is lost (an error). Each threshold of the policy is checked with an interval:
a percentile with its bootstrap interval, an error ratio with its Wilson interval. A threshold holds when the whole
interval is on the good side, breaks when it is all on the bad side, and is unclear otherwise — so "holds at N"
is said with the stated confidence, never from one lucky percentile.
"""

from __future__ import annotations

from rig.compare.stats import MIN_SAMPLES, percentile_interval, wilson_interval
from rig.load.runviews import run_views
from rig.measure import labels
from rig.measure.events import Measure
from rig.measure.tcodes import is_tcode
from rig.measure.thresholds import Threshold, unit_of
from rig.results.capacity import CapacityStep, SloCheck

COLLAPSE_ERROR_RATIO = 0.5  # past this, a step is not a slower system but a broken one: the search stops rising


def first_seen(rows: list[Measure]) -> dict[str, float]:
    """When the client first measured something of each run (its submission, to within the first row)."""
    out: dict[str, float] = {}
    for m in rows:
        if m.run_id and m.ts_ms is not None and m.case_id is None:
            out[m.run_id] = min(out.get(m.run_id, m.ts_ms), m.ts_ms)
    return out


def judge_step(measures: list[Measure], step: CapacityStep, thresholds: list[Threshold], *,
               alpha: float = 0.10, seed: int = 0) -> CapacityStep:
    """Fill `step`'s counts and SLO checks from `measures` and call it (holds / breaks / unclear / collapsed)."""
    rows = [m for m in measures if m.case_id is None]
    w0, w1 = step.window_start_ms, step.window_end_ms
    views = run_views(rows)
    seen = first_seen(rows)
    ended = [r for r in views.values() if r.end and w0 <= r.submit_ms < w1]
    ended_ids = {r.run_id for r in ended}
    unfinished = [rid for rid, at in seen.items() if w0 <= at < w1 and rid not in ended_ids
                  and not (views.get(rid) and views[rid].end)]
    loose = [m for m in rows if m.code == "error" and not m.run_id and m.ts_ms is not None and w0 <= m.ts_ms < w1]
    completed = [r for r in ended if r.completed]
    on_purpose = [r for r in ended if labels.on_purpose(r.end)]  # a stop the user sent: not the target's failure
    trials = len(ended) + len(unfinished) + len(loose)
    failures = trials - len(completed) - len(on_purpose)
    step.runs, step.completed, step.unfinished = len(ended) + len(unfinished), len(completed), len(unfinished)
    step.throughput_rps = round(len(completed) / ((w1 - w0) / 1000), 4) if w1 > w0 else 0.0
    err = wilson_interval(failures, trials, alpha=alpha)
    if err is not None:
        step.error_ratio, step.error_low, step.error_high = (round(v, 5) for v in err)
    ids = {r.run_id for r in completed}
    step.slos = [_check(t, rows, ids, err, step, alpha=alpha, seed=seed + step.index) for t in thresholds]
    if trials and (failures / trials >= COLLAPSE_ERROR_RATIO or not completed):
        step.call, step.why = "collapsed", f"{failures} of {trials} runs failed or were lost"
    elif any(c.call == "breaks" for c in step.slos):
        broke = [c.text for c in step.slos if c.call == "breaks"]
        step.call, step.why = "breaks", "broke: " + ", ".join(broke)
    elif step.slos and all(c.call == "holds" for c in step.slos):
        step.call, step.why = "holds", f"every threshold held with {1 - alpha:.0%} confidence"
    else:
        unclear = [f"{c.text} ({c.samples} samples)" for c in step.slos if c.call == "unclear"]
        step.call, step.why = "unclear", "not decided: " + (", ".join(unclear) or "no threshold to judge")
    return step


def _check(t: Threshold, rows: list[Measure], run_ids: set[str], err: tuple[float, float, float] | None,
           step: CapacityStep, *, alpha: float, seed: int) -> SloCheck:
    check = SloCheck(text=t.text, key=t.key, observed=None, unit=unit_of(t.metric, t.stat))
    if is_tcode(t.metric) and t.stat and t.stat.startswith("p"):
        values = [m.value for m in rows if m.code == t.metric and m.source == "client" and m.unit == "ms"
                  and m.run_id in run_ids]
        check.samples = len(values)
        q = float(t.stat[1:])
        got = percentile_interval(values, q, alpha=alpha, seed=seed) if len(values) >= MIN_SAMPLES.get(q, 20) \
            else None
        if got is None:
            return check
        check.observed, check.low, check.high = (round(v, 3) for v in got)
    elif t.metric.startswith("error_rate") and err is not None:
        check.samples = step.runs
        check.observed, check.low, check.high = (round(v, 5) for v in err)
    elif t.metric == "throughput":
        check.observed = check.low = check.high = step.throughput_rps
        check.samples = step.completed
    else:
        return check
    assert check.low is not None and check.high is not None
    if t.holds(check.high) and t.holds(check.low):
        check.call = "holds"
    elif not t.holds(check.low) and not t.holds(check.high):
        check.call = "breaks"
    return check
