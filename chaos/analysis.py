"""What each chaos window did to the load: errors and T-code shifts inside it, recovery after it, runs
interrupted vs lost, resumed runs linked (T9), and whether answers committed before a restart survived it.

Everything is derived from the evidence store (samples and `chaos_window` rows), so a report can be
re-derived from the run directory alone.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from rig.evidence import EvidenceStore
from rig.load import TERMINAL, RunView, run_views
from rig.results import ChaosAnalysis, Retained, Window
from rig.stats import summarize


def _pcts(values: list[float]) -> dict[str, float | None]:
    s = summarize(values)
    return {"n": s.count, "p50": s.p50, "p95": s.p95}


def _shift(inside: list[float], base: list[float]) -> dict[str, Any]:
    a, b = _pcts(inside), _pcts(base)
    delta = {k: (a[k] - b[k]) if a[k] is not None and b[k] is not None else None  # type: ignore[operator]
             for k in ("p50", "p95")}
    return {"window": a, "baseline": b, "delta": delta}


def analyse(store: EvidenceStore, retention: dict[str, Retained] | None = None) -> ChaosAnalysis:
    """The chaos part of load.json: one entry per window, plus the hypothesis checks and retention."""
    measures = store.measures()
    runs = run_views(measures)
    errors = [m for m in measures if m.case_id is None and m.code == "error" and m.ts_ms]
    windows = sorted((Window.model_validate(e.data) for e in store.evidence(kind="chaos_window")),
                     key=lambda w: w.started_ms or 0)
    first_start = min((w.started_ms for w in windows if w.started_ms), default=None)
    base = [r for r in runs.values() if first_start is None or r.end_ms < first_start]
    resumed_by_origin: dict[str, list[RunView]] = defaultdict(list)
    for r in runs.values():
        if r.resumed_from:
            resumed_by_origin[r.resumed_from].append(r)
    out = []
    for w in windows:
        start, end = w.started_ms, w.ended_ms
        if start is None or end is None:
            continue
        in_flight = [r for r in runs.values() if not r.resumed_from and r.submit_ms <= end and r.end_ms >= start]
        submitted = [r for r in runs.values() if start <= r.submit_ms <= end]
        following = [w2.started_ms for w2 in windows if w2.started_ms and w2.started_ms > start]
        after = [r for r in runs.values() if end < r.submit_ms and r.end_ms < min(following, default=float("inf"))]
        entry: dict[str, Any] = {
            "step": w.step, "fault": f"{w.via} {w.point}/{w.mode}", "via": w.via,
            "started_ms": start, "ended_ms": end, "seconds": round((end - start) / 1000, 3),
            "error": w.error, "applied": w.applied, "rolled_back": w.rolled_back, "trace_id": w.trace_id,
            "runs_in_flight": len(in_flight),
            "ends_in_window": dict(Counter(r.end or "unknown" for r in in_flight)),
            "errors_in_window": dict(Counter(m.label or "unknown" for m in errors if start <= (m.ts_ms or 0) <= end)),
            "T4_shift_ms": _shift([r.t4_ms for r in submitted if r.t4_ms is not None],
                                  [r.t4_ms for r in base if r.t4_ms is not None]),
            "T5_shift_ms": _shift([r.t5_ms for r in submitted if r.t5_ms is not None],
                                  [r.t5_ms for r in base if r.t5_ms is not None]),
            # runs submitted after the window closed (and ended before the next one opened): the fault's
            # effect must be gone there
            "T4_after_ms": _shift([r.t4_ms for r in after if r.t4_ms is not None],
                                  [r.t4_ms for r in base if r.t4_ms is not None]),
        }
        if w.via == "restart":
            later = sorted((r for r in runs.values() if r.completed and r.submit_ms >= start and r.end_ms > end),
                           key=lambda r: r.end_ms)
            interrupted = [r for r in in_flight if r.server_end == "interrupted/server_restart"]
            lost = [r for r in in_flight if r.broken and (r.server_end is None
                                                           or r.server_end.split("/")[0] not in TERMINAL)]
            resumed = [(o.run_id, n) for o in interrupted for n in resumed_by_origin.get(o.run_id, [])]
            entry.update({
                "ready_s": w.applied.get("ready_s"),
                "recovery_s": round((later[0].end_ms - start) / 1000, 3) if later else None,
                "first_good_run": later[0].run_id if later else None,
                "interrupted": len(interrupted), "interrupted_runs": [r.run_id for r in interrupted],
                "lost": len(lost), "lost_runs": [r.run_id for r in lost],
                "other_ends": dict(Counter(r.end or "unknown" for r in in_flight
                                           if r not in interrupted and r not in lost)),
                "resumed": [{"from": old, "run": new.run_id, "end": new.end} for old, new in resumed],
            })
            if retention is not None:
                entry["committed"] = retention.get(w.step)
        else:
            later = sorted((r for r in runs.values() if r.completed and r.submit_ms >= end), key=lambda r: r.end_ms)
            entry["recovery_s"] = round((later[0].end_ms - end) / 1000, 3) if later else None
            entry["first_good_run"] = later[0].run_id if later else None
        out.append(entry)
    hypothesis = {e.title: e.data for e in store.evidence(kind="chaos_hypothesis")}
    return ChaosAnalysis.model_validate({
        "windows": out, "hypothesis": hypothesis, "baseline_runs": len(base),
        "rollbacks": [e.data for e in store.evidence(kind="chaos_rollbacks")]})


def committed_messages(store: EvidenceStore, before_ms: float) -> list[tuple[str, str, str]]:
    """(user, session, message) of every answer the target committed before `before_ms`."""
    out = []
    for m in store.measures("committed"):
        if m.ts_ms is not None and m.ts_ms < before_ms and m.label and m.label.count("|") == 2:
            user, session, message = m.label.split("|")
            out.append((user, session, message))
    return out


def check_retained(adapter: Any, passwords: dict[str, str], committed: list[tuple[str, str, str]]) -> Retained:
    """Read every committed answer's session back from the target; the missing ones are lost data."""
    by_user: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for user, session, message in committed:
        by_user[user][session].add(message)
    present = 0
    missing: list[str] = []
    for user, sessions in by_user.items():
        auth = adapter.login(user, passwords[user])
        for session_id, messages in sessions.items():
            have = {m.message_id for m in adapter.session(auth, session_id).messages}
            present += len(messages & have)
            missing += sorted(messages - have)
    return Retained(checked=len(committed), present=present, lost=len(missing), lost_messages=missing[:50])
