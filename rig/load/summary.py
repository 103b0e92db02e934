"""`load.json`: the numbers of a load run, from its evidence store and Locust's own CSV, as a typed model.

T-codes are summarised by `rig.measure.aggregate` like everywhere else (`t_codes` holds each code's
headline, `by_source` every source apart). Request counts are Locust's rows of real HTTP requests only:
the T-code rows the users add (request type = the code) are listed apart and never counted as requests.
JSON Schema: docs/schemas/load.schema.json.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rig.evidence import EvidenceStore
from rig.load.headroom import client_health
from rig.load.locust_rows import is_measure_row
from rig.load.phases import fault_phases
from rig.load.replay.fidelity import replay_fidelity
from rig.load.replay.plan import ReplayPlan
from rig.measure import labels
from rig.measure.aggregate import by_source, ended_run_ids, headlines, run_ends
from rig.measure.events import Measure
from rig.measure.tally import tally
from rig.measure.tcodes import TOKENS_OUT
from rig.results.capacity import ClientHealth
from rig.results.load import LoadSummary, LocustRow, LocustTotals, ReplayFidelity, SendLag, WorkerRecord
from rig.results.shape import ShapeSpec, StageMark
from rig.stats import summarize


def locust_rows(run_dir: Path) -> list[LocustRow]:
    """Locust's final rows (`locust-requests.json`, written as Locust quits), else its CSV without the
    Aggregated row."""
    final = run_dir / "locust-requests.json"
    if final.exists():
        return [LocustRow.model_validate(r) for r in json.loads(final.read_text(encoding="utf-8"))]
    path = run_dir / "locust_stats.csv"
    if not path.exists():
        return []
    return [LocustRow(type=r["Type"], name=r["Name"], requests=int(r["Request Count"]), failures=int(r["Failure Count"]))
            for r in csv.DictReader(path.open(encoding="utf-8")) if r.get("Name") != "Aggregated"]


def locust_totals(run_dir: Path) -> LocustTotals:
    """Locust's rows, HTTP requests and T-code rows apart (Locust's own total mixes both)."""
    out = LocustTotals()
    for row in locust_rows(run_dir):
        if is_measure_row(row.type):
            out.tcode_rows.append(row)
        else:
            out.rows.append(row)
            out.requests += row.requests
            out.failures += row.failures
    return out


def _count(rows: list[Measure], code: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in rows:
        if m.code == code:
            key = m.label or "unknown"
            out[key] = out.get(key, 0) + int(m.value)
    return out


def load_summary(store: EvidenceStore, run_dir: Path, duration_s: float, workers: int, users: int) -> LoadSummary:
    measures = [m for m in store.measures() if m.case_id is None]
    ends = run_ends(measures)
    runs = sum(ends.values())
    completed = sum(n for label, n in ends.items() if labels.completed(label))
    errors = _count(measures, "error")
    logins = sum(n for label, n in errors.items() if labels.login_refused(label) is not None)
    ended = ended_run_ids(measures)
    counted = tally(ends, ended, [m for m in measures if m.code == "error"], [m for m in measures if m.code == "task"])
    undelivered = {m.run_id for m in measures if m.code == "error" and m.run_id and labels.stream_failed(m.label)
                   and labels.completed(ended.get(m.run_id))}
    lag = summarize([m.value for m in measures if m.code == "send_lag"])
    locust = locust_totals(run_dir)
    origins: dict[str, int] = {}
    for m in measures:
        if m.code == "T4" and m.source == "client":
            origins[m.origin or "local"] = origins.get(m.origin or "local", 0) + 1
    return LoadSummary(
        t_codes=headlines(measures), by_source=by_source(measures),
        throughput_rps=completed / duration_s if duration_s else 0.0, runs=runs, completed_runs=completed,
        delivered_runs=completed - len(undelivered), tokens_out_per_s=_tokens_per_s(measures, duration_s),
        requests=locust.requests, requests_per_s=locust.requests / duration_s if duration_s else 0.0,
        error_ratio=counted.error_ratio or 0.0, rig_errors=counted.rig_errors, phases=fault_phases(store),
        errors_by_reason=errors, login_failures=logins,
        end_states=dict(ends), send_lag=SendLag(count=lag.count, p50=lag.p50, p99=lag.p99, max=lag.max),
        workers=workers, users=users, duration_s=duration_s, samples_by_origin=origins, locust=locust,
        replay=_replay(store, measures),
        worker_nodes=[WorkerRecord.model_validate(w) for w in store.meta("workers") or []],
        stages=stage_marks(store), client=_client(store, measures))


def _tokens_per_s(measures: list[Measure], duration_s: float) -> float | None:
    """Output tokens of the completed runs per second of the run (None: no run's tokens were known)."""
    tokens = [m.value for m in measures if m.code == TOKENS_OUT]
    return round(sum(tokens) / duration_s, 3) if tokens and duration_s else None


def _client(store: EvidenceStore, measures: list[Measure]) -> ClientHealth | None:
    """The load generators' headroom from the start of the load to its last sample (None: no process sampled)."""
    samples = [m for m in measures if m.code in ("client_cpu", "loop_lag") and m.ts_ms is not None]
    if not samples:
        return None
    start = float(store.meta("load_started_ms") or min(m.ts_ms or 0.0 for m in samples))
    return client_health(samples, start, max(m.ts_ms or 0.0 for m in samples) + 1)


def stage_marks(store: EvidenceStore) -> list[StageMark]:
    """A shaped run's stages on its time axis (from the master's note of when its shape started)."""
    shape, started = store.meta("shape"), store.meta("shape_started_ms")
    if not shape or started is None:
        return []
    return ShapeSpec.model_validate(shape).marks(float(started))


def _replay(store: EvidenceStore, measures: list[Measure]) -> ReplayFidelity | None:
    saved = store.meta("plan") or {}
    if not saved.get("replay"):
        return None
    return replay_fidelity(ReplayPlan.model_validate(saved["replay"]), measures)


