"""A load run's errors and timings apart by cause: inside the injected fault windows, in the recovery after
each, and in steady state.

A run counts **in fault** when it was in flight during a chaos window (its submit-to-end span overlaps the
window); **in recovery** when it was submitted after a window ended but before the first run that completed
again was submitted (the target was still getting back: those failures are the fault's too); **steady**
otherwise. A run that never showed its end is placed by the span it was in flight (its `in_flight` row), never by
the moment its break was seen; a refused submission or a failed login with no run is placed by its time, in
recovery until the target was back (the first good run's end). So `error_rate.steady`
is the error ratio nobody injected — a 5 % defect shows there however loud the chaos — and
`error_rate.in_fault` what the injected faults caused. Windows come from the evidence store (`chaos_window`,
written by whatever ran the schedule); without any, the whole run is steady.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from rig.evidence import EvidenceStore
from rig.load.runviews import RunView, run_views
from rig.measure import labels
from rig.measure.aggregate import headlines
from rig.measure.events import Measure
from rig.measure.tally import tally
from rig.results.chaos import Window
from rig.results.load import PHASES, FaultPhases, Phase, PhaseStats, WindowSpan


def fault_windows(store: EvidenceStore) -> list[WindowSpan]:
    """The windows the chaos schedule recorded, in time order (open ones are left out)."""
    out = []
    for e in store.evidence(kind="chaos_window"):
        w = Window.model_validate(e.data)
        if w.started_ms is not None and w.ended_ms is not None:
            out.append(WindowSpan(step=w.step, fault=f"{w.via} {w.point}/{w.mode}", started_ms=w.started_ms,
                                  ended_ms=w.ended_ms))
    return sorted(out, key=lambda w: w.started_ms)


def split_by_phase(measures: list[Measure], windows: list[WindowSpan]) -> FaultPhases:
    """The load run's rows split into steady, in-fault and recovery phases (each window's recovery measured)."""
    rows = [m for m in measures if m.case_id is None]
    runs = run_views(rows)
    finished = sorted((r for r in runs.values() if r.completed), key=lambda r: r.submit_ms)
    recovering: list[tuple[float, float]] = []  # by submission: before the first good run was sent
    coming_back: list[tuple[float, float]] = []  # by the moment seen: before the target was back (that run's end)
    for i, w in enumerate(windows):
        nxt = windows[i + 1].started_ms if i + 1 < len(windows) else float("inf")
        good = next((r for r in finished if r.submit_ms >= w.ended_ms), None)
        if good is not None:
            w.recovered_ms = good.end_ms
            w.recovery_s = round((good.end_ms - w.ended_ms) / 1000, 3)
        recovering.append((w.ended_ms, min(good.submit_ms if good is not None else float("inf"), nxt)))
        coming_back.append((w.ended_ms, min(good.end_ms if good is not None else float("inf"), nxt)))

    def phase_of_span(start: float, end: float) -> Phase:
        if any(start <= w.ended_ms and end >= w.started_ms for w in windows):
            return "in_fault"
        if any(a <= start < b for a, b in recovering):
            return "recovery"
        return "steady"

    def phase_of_moment(at: float) -> Phase:  # a row with no run: a refused submission, a failed login
        if any(w.started_ms <= at <= w.ended_ms for w in windows):
            return "in_fault"
        return "recovery" if any(a <= at < b for a, b in coming_back) else "steady"

    run_phase = {r.run_id: phase_of_span(r.submit_ms, r.end_ms) for r in runs.values()}
    ended = {r.run_id: r.end for r in runs.values() if r.end}
    out = FaultPhases(windows=windows)
    for phase in PHASES:
        mine = [r for r in runs.values() if run_phase[r.run_id] == phase and r.end]
        placed = [m for m in rows if m.code in ("error", "task") and _placed(m, run_phase, phase_of_moment) == phase]
        stats = _phase_stats(mine, ended, [m for m in rows if m.run_id and run_phase.get(m.run_id) == phase], placed)
        setattr(out, phase, stats)
    return out


def _placed(m: Measure, run_phase: dict[str, Phase], phase_of_moment: Callable[[float], Phase]) -> Phase:
    """An error row's phase: its run's (by the span the run was in flight), or — with no run — the phase of the moment
    it was recorded, where the recovery lasts until the target was back (the first good run's end)."""
    if m.run_id and m.run_id in run_phase:
        return run_phase[m.run_id]
    return phase_of_moment(m.ts_ms or 0.0)


def _phase_stats(runs: list[RunView], ended: dict[str, str], run_rows: list[Measure], placed: list[Measure]) -> PhaseStats:
    ends = Counter(r.end or "unknown" for r in runs)
    completed = sum(n for label, n in ends.items() if labels.completed(label))
    errors = [m for m in placed if m.code == "error"]
    counted = tally(ends, ended, errors, [m for m in placed if m.code == "task"])
    reasons: Counter[str] = Counter()
    for m in errors:
        reasons[m.label or "unknown"] += int(m.value)
    return PhaseStats(runs=len(runs), completed=completed, failed=counted.failed, attempts=counted.attempts,
                      error_ratio=counted.error_ratio, end_states=dict(ends), errors_by_reason=dict(reasons),
                      t_codes=headlines(run_rows))


def fault_phases(store: EvidenceStore) -> FaultPhases:
    """The split of a load run from its evidence store."""
    return split_by_phase(store.measures(), fault_windows(store))


