"""`rig load --replay` for real: the shipped trace replayed against the embedded workbench keeps its arrival
times and every session's turns; `rig compare TRACE RUN` says so; an hour of traffic at 60× takes a minute."""

from __future__ import annotations

import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.load.options import LoadOptions
from rig.load.replay.fidelity import compare_with_source
from rig.load.replay.plan import ReplayPlan
from rig.load.session import run_load
from rig.ports import free_port

SHIPPED = Path(__file__).resolve().parents[2] / "docs" / "replay" / "langfuse-observations.json"


@pytest.mark.slow  # a long integration run (~35 s): `make test-slow`
def test_the_shipped_trace_replays_with_its_arrival_times_and_turns(tmp_path: Path) -> None:
    result = run_load(LoadOptions(replay=SHIPPED, speed=20, out=tmp_path / "replay", metrics_port=free_port()))
    r = result.summary.replay if result.summary else None
    assert r is not None and r.turns_sent == r.turns_planned == 26 and r.sessions == 10
    assert r.sequences_equal, r.sessions_differing
    # Relative to the trace itself, not a stopwatch: arrivals keep the trace's shape when their error stays well
    # under the typical gap between two sends (bench/ reports the error in ms against bare Locust).
    store = EvidenceStore(result.run_dir / "evidence.sqlite3")
    plan = ReplayPlan.model_validate(store.meta("plan")["replay"])
    store.close()
    sends = sorted(t.at_s * 1000 for session in plan.sessions for t in session.turns)
    gap_ms = statistics.median(b - a for a, b in zip(sends, sends[1:], strict=False) if b > a)
    assert r.arrival_error_ms.count == 26
    assert r.arrival_error_ms.p99 is not None and r.arrival_error_ms.p99 < gap_ms / 4, (r.arrival_error_ms, gap_ms)
    assert r.inter_arrival_error_ms.p99 is not None and r.inter_arrival_error_ms.p99 < gap_ms / 4
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["replay"]["sha256"] == r.source_sha256 and manifest["replay"]["turns"] == 26
    check = compare_with_source(SHIPPED, result.run_dir)
    assert check.decision == "faithful" and check.fidelity == r
    other = tmp_path / "other.json"
    other.write_text(SHIPPED.read_text(encoding="utf-8").replace("sess-01", "sess-99"), encoding="utf-8")
    assert compare_with_source(other, result.run_dir).decision == "not comparable"


def _hour_of_traffic(path: Path, sessions: int = 180) -> None:
    """A Langfuse export of one hour: sessions of one to three questions, a few minutes apart."""
    rng = random.Random(7)
    t0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    data = []
    for n in range(sessions):
        at = t0 + timedelta(seconds=rng.uniform(0, 3300))
        for k in range(rng.randint(1, 3)):
            data.append({"id": f"o{n}-{k}", "traceId": f"t{n}-{k}", "startTime": at.isoformat(), "projectId": "p",
                         "type": "SPAN", "isRootObservation": True, "name": "chat", "sessionId": f"s{n}",
                         "input": {"question": rng.choice(["2.9%指什么？", "样本来自哪里？", "主要发现是什么？"])}})
            at += timedelta(seconds=rng.uniform(120, 300))
    path.write_text(json.dumps({"data": data, "meta": {}}), encoding="utf-8")


@pytest.mark.slow
def test_an_hour_of_traffic_at_60x_takes_about_a_minute(tmp_path: Path) -> None:
    trace = tmp_path / "hour.json"
    _hour_of_traffic(trace)
    began = time.monotonic()
    result = run_load(LoadOptions(replay=trace, speed=60, workers=2, out=tmp_path / "replay",
                                  metrics_port=free_port()))
    wall = time.monotonic() - began
    r = result.summary.replay if result.summary else None
    assert r is not None and r.sequences_equal and r.turns_sent == r.turns_planned, r
    assert result.summary is not None and result.summary.duration_s < 70  # the plan's span at 60×, not a stopwatch
    print(f"\n1 h of traffic ({r.turns_planned} turns, {r.sessions} sessions) at 60×: {wall:.0f} s in all, "
          f"load phase {result.summary.duration_s:.0f} s, arrival error p99 {r.arrival_error_ms.p99} ms")
