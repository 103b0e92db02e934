"""Writes the Grafana dashboards in this folder from the panel lists below (run after editing them).

    python dashboards/build.py

Every panel query is PromQL over the metric names of shared/DESIGN.md (`rig_*` from the load master or
the Pushgateway, `workbench_*` from the reference target's `/metrics`); tests/observability evaluates
each one against a real Prometheus after a short load run and requires data from all of them.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASOURCE = {"type": "prometheus", "uid": "rig-prometheus"}

Panel = tuple[str, str, list[tuple[str, str]]]  # title, unit, [(legend, expr)]

Q = "histogram_quantile({q}, sum by (le, code, source) (rate(rig_t_seconds_bucket[1m])))"

DASHBOARDS: dict[str, tuple[str, list[Panel]]] = {
    "rig-tcodes": ("rig · T1–T13 timings", [
        ("T-code p50 by source", "s", [("{{code}} {{source}}", Q.format(q=0.5))]),
        ("T-code p95 by source", "s", [("{{code}} {{source}}", Q.format(q=0.95))]),
        ("T-code p99 by source", "s", [("{{code}} {{source}}", Q.format(q=0.99))]),
        ("Samples per second by code", "ops", [("{{code}} {{source}}",
                                                "sum by (code, source) (rate(rig_t_seconds_count[1m]))")]),
        ("First answer token, server side (p95)", "s", [("server", "histogram_quantile(0.95, sum by (le) "
                                                         "(rate(workbench_first_token_seconds_bucket[1m])))")]),
    ]),
    "rig-load": ("rig · load", [
        ("Runs ended per second", "ops", [("runs", "sum(rate(rig_runs_total[1m]))")]),
        ("Errors per second by reason", "ops", [("{{reason}}", "sum by (reason) (rate(rig_errors_total[1m]))")]),
        ("Error ratio", "percentunit", [("errors / runs", "sum(rate(rig_errors_total[1m])) / "
                                         "clamp_min(sum(rate(rig_runs_total[1m])), 1e-9)")]),
        ("Users and workers", "short", [("users", "rig_users"), ("workers", "rig_workers")]),
        ("Send lag p50 / p99 (open loop)", "s", [
            ("p50", "histogram_quantile(0.5, sum by (le) (rate(rig_send_lag_seconds_bucket[1m])))"),
            ("p99", "histogram_quantile(0.99, sum by (le) (rate(rig_send_lag_seconds_bucket[1m])))")]),
        ("Target CPU and memory", "short", [("cpu cores busy", "rig_target_cpu_ratio"),
                                            ("memory MiB", "rig_target_memory_bytes / 2^20")]),
        ("Target HTTP requests per second by status", "reqps",
         [("{{status}}", "sum by (status) (rate(workbench_http_requests_total[1m]))")]),
        ("Chaos: faults injected by the schedule", "short",
         [("{{point}}/{{mode}}", "sum by (point, mode) (rig_chaos_faults_total)"),
          ("open windows", "sum(rig_chaos_active)")]),
    ]),
    "rig-runs": ("rig · runs", [
        ("Runs ended by state and reason (rig)", "short",
         [("{{state}}/{{reason}}", "sum by (state, reason) (increase(rig_runs_total[5m]))")]),
        ("Runs ended by state and reason (target)", "short",
         [("{{state}}/{{reason}}", "sum by (state, reason) (increase(workbench_runs_total[5m]))")]),
        ("Run slots in use / total", "short", [("in use", "workbench_run_slots_in_use"),
                                               ("total", "workbench_run_slots_total")]),
        ("Run queue depth", "short", [("queued", "workbench_run_queue_depth")]),
        ("Tool calls per second", "ops", [("{{tool}} ok={{ok}}", "sum by (tool, ok) (rate(workbench_tool_calls_total[1m]))")]),
        ("Stage duration p95", "s", [("{{stage}}", "histogram_quantile(0.95, sum by (le, stage) "
                                                   "(rate(workbench_stage_duration_seconds_bucket[1m])))")]),
    ]),
    "rig-tokens-cost": ("rig · tokens and cost", [
        ("Tokens per second (rig view)", "short",
         [("{{direction}} {{kind}}", "sum by (direction, kind) (rate(rig_tokens_total[1m]))")]),
        ("Cost so far by kind (USD)", "currencyUSD", [("{{kind}}", "sum by (kind) (rig_cost_usd_total)")]),
        ("Model tokens per second (target view)", "short",
         [("{{direction}} {{source}}", "sum by (direction, source) (rate(workbench_model_tokens_total[1m]))")]),
        ("Model requests per second by outcome", "ops",
         [("{{provider}} {{outcome}}", "sum by (provider, outcome) (rate(workbench_model_requests_total[1m]))")]),
    ]),
    "rig-gate": ("rig · gate results", [
        ("Case verdicts by module", "short", [("{{module}} {{verdict}}",
                                               "sum by (module, verdict) (rig_case_verdicts_total)")]),
        ("Cases by verdict", "short", [("{{verdict}}", "sum by (verdict) (rig_case_verdicts_total)")]),
        ("Gate decision (0 pass, 1 fail, 2 undecided)", "short", [("decision", "max(rig_gate_decision)")]),
    ]),
}

# Faults are annotations on every dashboard: the target's own counter of injected faults that fired, and
# the chaos schedule's open windows (from `rig load --chaos`).
ANNOTATIONS = [
    {"name": "faults fired", "datasource": DATASOURCE, "enable": True, "iconColor": "red",
     "expr": "sum by (point, mode) (increase(workbench_chaos_faults_fired_total[1m])) > 0",
     "titleFormat": "fault {{point}}/{{mode}}", "step": "15s"},
    {"name": "chaos windows", "datasource": DATASOURCE, "enable": True, "iconColor": "orange",
     "expr": "max by (step, point, mode) (rig_chaos_active) > 0",
     "titleFormat": "chaos {{step}}: {{point}}/{{mode}}", "step": "5s"},
]


def panel(index: int, title: str, unit: str, targets: list[tuple[str, str]]) -> dict[str, object]:
    return {"id": index + 1, "type": "timeseries", "title": title, "datasource": DATASOURCE,
            "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "targets": [{"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
                        for i, (legend, expr) in enumerate(targets)]}


def dashboard(uid: str, title: str, panels: list[Panel]) -> dict[str, object]:
    return {"uid": uid, "title": title, "tags": ["rig"], "schemaVersion": 39, "version": 1, "editable": True,
            "time": {"from": "now-30m", "to": "now"}, "refresh": "10s",
            "annotations": {"list": ANNOTATIONS},
            "panels": [panel(i, *p) for i, p in enumerate(panels)]}


def main() -> None:
    for uid, (title, panels) in DASHBOARDS.items():
        path = HERE / f"{uid}.json"
        path.write_text(json.dumps(dashboard(uid, title, panels), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"{path.name}: {len(panels)} panels")


if __name__ == "__main__":
    main()
