"""`load.json`: per-T-code percentiles, throughput, errors by reason, send lag, workers — from the store."""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from rig.evidence import EvidenceStore
from rig.stats import summarize

TIME_CODES = ("T1", "T2", "T3", "T4", "T5", "T6", "T7", "T9")


def locust_totals(run_dir: Path) -> dict[str, Any]:
    """Locust's own aggregate row (requests/s, failures) and the rows it recorded per request type."""
    path = run_dir / "locust_stats.csv"
    if not path.exists():
        return {}
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    total = next((r for r in rows if r.get("Name") == "Aggregated"), None)
    return {"rows": [(r["Type"], r["Name"], int(r["Request Count"]), int(r["Failure Count"])) for r in rows
                     if r.get("Name") != "Aggregated"],
            "requests": int(total["Request Count"]) if total else 0,
            "failures": int(total["Failure Count"]) if total else 0,
            "requests_per_s": float(total["Requests/s"]) if total else 0.0}


def load_summary(store: EvidenceStore, run_dir: Path, duration_s: float, workers: int, users: int) -> dict[str, Any]:
    measures = [m for m in store.measures() if m.case_id is None]
    t_codes: dict[str, Any] = {}
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for m in measures:
        if m.code in TIME_CODES and m.unit == "ms" and not (m.label or "").startswith("no_body"):
            if m.code == "T7" and m.label != "execution":
                continue
            by[(m.code, m.source)].append(m.value)
    for (code, source), values in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1] != "client")):
        s = summarize(values)
        entry = {"source": source, "count": s.count, "p50": s.p50, "p90": s.p90, "p95": s.p95, "p99": s.p99,
                 "max": s.max}
        t_codes.setdefault(code, entry)
        t_codes.setdefault("by_source", {}).setdefault(code, {})[source] = entry
    ends = Counter(m.label for m in measures if m.code == "T8" and m.source in ("server", "client"))
    completed = sum(n for label, n in ends.items() if label and label.startswith("completed/"))
    runs = sum(ends.values())
    errors = Counter(m.label for m in measures if m.code == "error")
    lag = [m.value for m in measures if m.code == "send_lag"]
    lag_s = summarize(lag)
    locust = locust_totals(run_dir)
    stopped_on_purpose = sum(n for label, n in ends.items() if label == "stopped/user_stop")
    failed_runs = runs - completed - stopped_on_purpose
    attempts = runs + sum(n for label, n in errors.items() if label and label.startswith("http_"))
    origins = Counter(m.origin for m in measures if m.code == "T4" and m.source == "client")
    return {
        "t_codes": t_codes,
        "throughput_rps": completed / duration_s if duration_s else 0.0,
        "runs": runs, "completed_runs": completed,
        "requests_per_s": locust.get("requests_per_s", 0.0),
        "error_ratio": (failed_runs + sum(n for lbl, n in errors.items() if lbl and lbl.startswith("http_")))
        / attempts if attempts else 0.0,
        "errors_by_reason": dict(errors),
        "end_states": dict(ends),
        "send_lag": {"count": lag_s.count, "p50": lag_s.p50, "p99": lag_s.p99, "max": lag_s.max},
        "workers": workers, "users": users, "duration_s": duration_s,
        "samples_by_origin": dict(origins),
        "locust": locust,
    }


def observed_for_policy(summary: dict[str, Any]) -> dict[str, float | None]:
    """Keys thresholds are written against: `T4.p95@20`, `error_rate@20` and the same without `@users`."""
    out: dict[str, float | None] = {}
    users = summary["users"]
    for code, entry in summary["t_codes"].items():
        if code == "by_source":
            continue
        for stat in ("p50", "p90", "p95", "p99", "max"):
            out[f"{code}.{stat}"] = entry.get(stat)
    out["error_rate"] = summary["error_ratio"]
    out["throughput"] = summary["throughput_rps"]
    out["send_lag.p50"] = summary["send_lag"]["p50"]
    out["send_lag.p99"] = summary["send_lag"]["p99"]
    for key in list(out):
        out[f"{key}@{users}"] = out[key]
    return out
