"""How faithfully a replay offered its source's load: arrival-time error, and each session's turns in order.

Every replayed turn left a `replay_turn` row: its session, place, kind and source digest, valued with how late
it was sent against its schedule. From those rows and the plan: the arrival error (actual send − scheduled,
p50/p99/max), the inter-arrival error (each gap between consecutive arrivals as sent vs as scheduled), and
whether every session's turns were sent exactly as the source has them (same kinds, same source digests,
same order) — the sessions that were not are named.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.load.plan import LoadPlan
from rig.load.replay.plan import ReplayPlan, plan_replay
from rig.load.replay.trace import read_trace
from rig.measure.events import Measure
from rig.results.load import ReplayFidelity, Spread
from rig.stats import summarize


def _spread(values: list[float]) -> Spread:
    s = summarize(values)
    return Spread(count=s.count, p50=s.p50, p99=s.p99, max=s.max)


def replay_fidelity(plan: ReplayPlan, measures: list[Measure]) -> ReplayFidelity:
    """The fidelity of a replay run (its rows) to the plan it was given."""
    sent: dict[str, list[tuple[int, str, str, float]]] = {}
    for m in measures:
        if m.code != "replay_turn" or not m.label or "#" not in m.label:
            continue
        key, _, rest = m.label.rpartition("#")
        index, kind, digest = rest.split(":", 2)
        sent.setdefault(key, []).append((int(index), kind, digest, m.value))
    differing = []
    scheduled_and_actual: list[tuple[float, float]] = []
    for s in plan.sessions:
        got = sorted(sent.get(s.key, []))
        if [(i, k, d) for i, k, d, _ in got] != [(t.index, t.kind, t.digest) for t in s.turns]:
            differing.append(s.key)
        at = {t.index: t.at_s * 1000 for t in s.turns}
        scheduled_and_actual += [(at[i], at[i] + lag) for i, _, _, lag in got if i in at]
    scheduled_and_actual.sort()
    gaps = [abs((b[1] - a[1]) - (b[0] - a[0])) for a, b in zip(scheduled_and_actual, scheduled_and_actual[1:],
                                                               strict=False)]
    return ReplayFidelity(
        source_sha256=plan.source_sha256, source_format=plan.source_format, speed=plan.speed,
        sessions=len(plan.sessions), turns_planned=plan.turns, turns_sent=sum(len(v) for v in sent.values()),
        arrival_error_ms=_spread([abs(actual - scheduled) for scheduled, actual in scheduled_and_actual]),
        inter_arrival_error_ms=_spread(gaps), sequences_equal=not differing and bool(plan.sessions),
        sessions_differing=differing[:50])


class SourceCheck(BaseModel):
    """`rig compare TRACE REPLAY_DIR`: the replay against the trace it claims to replay."""

    decision: str  # faithful | not faithful | not comparable
    reasons: list[str]
    fidelity: ReplayFidelity | None = None


def compare_with_source(trace: Path, run_dir: Path) -> SourceCheck:
    """Re-read the source, plan it again as the replay did (same speed, window, sessions, anonymising) and hold the
    replay's rows to it: same file (sha256), every session's turns in order, the arrival-time error."""

    source = read_trace(trace)
    path = run_dir / "evidence.sqlite3"
    if not path.exists():
        raise ConfigError(f"{run_dir} is not a run directory (no evidence.sqlite3)", fix="pass a `rig load --replay` run")
    store = EvidenceStore(path)
    try:
        saved = store.meta("plan") or {}
        measures = store.measures()
    finally:
        store.close()
    if not saved.get("replay"):
        return SourceCheck(decision="not comparable", reasons=[f"{run_dir} is not a replay (`rig load --replay`)"])
    plan = LoadPlan.model_validate(saved)
    assert plan.replay is not None
    if plan.replay.source_sha256 != source.sha256:
        return SourceCheck(decision="not comparable", reasons=[
            f"{trace} (sha256 {source.sha256[:12]}) is not the file this run replayed ({plan.replay.source_sha256[:12]})"])
    start, end = plan.replay.window_s or (0.0, None)
    again = plan_replay(source, questions=[q for ps in plan.paper_sets for q in ps.questions],
                        paper_sets=len(plan.paper_sets), speed=plan.replay.speed,
                        window=(start, end if end is not None else float("inf")) if plan.replay.window_s else None,
                        max_sessions=len(plan.replay.sessions), anonymise=plan.replay.anonymised)
    fidelity = replay_fidelity(again, measures)
    a = fidelity.arrival_error_ms
    reasons = [f"{fidelity.turns_sent} of {fidelity.turns_planned} turns in {fidelity.sessions} sessions at "
               f"{fidelity.speed:g}×; arrival error p50 {a.p50 or 0:.1f} ms, p99 {a.p99 or 0:.1f} ms, inter-arrival "
               f"error p99 {fidelity.inter_arrival_error_ms.p99 or 0:.1f} ms"]
    if not fidelity.sequences_equal:
        reasons.append(f"sessions not replayed as recorded: {', '.join(fidelity.sessions_differing[:10])}")
    return SourceCheck(decision="faithful" if fidelity.sequences_equal else "not faithful", reasons=reasons,
                       fidelity=fidelity)
