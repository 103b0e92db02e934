"""Writes the Grafana dashboards in this folder from the panel lists below (run after editing them).

    python dashboards/build.py

Every panel query is PromQL over the metric names of shared/DESIGN.md (`rig_*` from the load master or
the Pushgateway, `workbench_*` from the reference target's `/metrics`), scoped to the dashboard's variables
(`$datasource`, `$job`, `$target`, and `$run` on the gate's); tests/observability evaluates each one against a
real Prometheus after a short load run, with the variables at "All", and requires data from all of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}  # the dashboard's datasource variable, never a fixed uid
WORKBENCH_ROW = "Reference workbench only (workbench_* metrics: empty on any other target)"

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
        ("Users the shape asks for, and running (stages, capacity steps)", "short",
         [("asked for", "rig_shape_users"), ("running", "rig_users")]),
        ("Shape stage / capacity step", "short", [("stage or step", "rig_shape_stage")]),
        ("Client T4 and T5 p95 (read beside the stages)", "s", [
            ("T4 p95", "histogram_quantile(0.95, sum by (le) (rate(rig_t_seconds_bucket{code=\"T4\", "
                       "source=\"client\"}[1m])))"),
            ("T5 p95", "histogram_quantile(0.95, sum by (le) (rate(rig_t_seconds_bucket{code=\"T5\", "
                       "source=\"client\"}[1m])))")]),
        ("Answer pace p95: ITL (per piece) and TPOT (per output token)", "s", [
            ("ITL p95", "histogram_quantile(0.95, sum by (le) (rate(rig_gen_ai_time_per_output_chunk_seconds_bucket"
                        "[1m])))"),
            ("TPOT p95", "histogram_quantile(0.95, sum by (le) (rate(rig_gen_ai_time_per_output_token_seconds_bucket"
                         "[1m])))")]),
        ("Output tokens per second", "short", [("tokens/s", "sum(rate(rig_gen_ai_output_tokens_sum[1m]))")]),
        ("Send lag p50 / p99 (open loop)", "s", [
            ("p50", "histogram_quantile(0.5, sum by (le) (rate(rig_send_lag_seconds_bucket[1m])))"),
            ("p99", "histogram_quantile(0.99, sum by (le) (rate(rig_send_lag_seconds_bucket[1m])))")]),
        ("Target CPU (cores busy)", "short", [("cpu cores busy", "rig_target_cpu_cores")]),
        ("Target memory", "bytes", [("resident", "rig_target_memory_bytes")]),
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
        ("Gate decision", "decision", [("decision", "max(rig_gate_decision)")]),
    ]),
}

# Faults are annotations on every dashboard: the target's own counter of injected faults that fired, and
# the chaos schedule's open windows (from `rig load --chaos`); so is each move of a load shape to its next stage
# (`rig load --shape`) or of a capacity search to its next step.
# Every metric selector is limited to the dashboard's variables, so a total never mixes jobs, targets or runs.
GATE_METRICS = ("rig_case_verdicts_total", "rig_gate_decision")  # pushed per run (grouping key `run`)
_METRIC = re.compile(r"\b((?:rig|workbench)_[a-z0-9_]+)(\{[^}]*\})?")


def scoped(expr: str) -> str:
    """`expr` with `job=~"$job"` on every selector, `instance=~"$target"` on the target's, `run=~"$run"` on the
    gate's pushed results."""
    def add(m: re.Match[str]) -> str:
        name, inner = m.group(1), (m.group(2) or "{}")[1:-1]
        matchers = [inner] if inner else []
        matchers.append('job=~"$job"')
        if name.startswith("workbench_"):
            matchers.append('instance=~"$target"')
        if name in GATE_METRICS:
            matchers.append('run=~"$run"')
        return name + "{" + ",".join(matchers) + "}"
    return _METRIC.sub(add, expr)


def _query_variable(name: str, query: str) -> dict[str, object]:
    return {"name": name, "label": name, "type": "query", "datasource": DATASOURCE, "definition": query,
            "query": {"query": query, "refId": f"{name}-variable"}, "includeAll": True, "multi": True,
            "allValue": ".*", "current": {"text": "All", "value": "$__all"}, "refresh": 2, "sort": 1, "hide": 0}


def variables(uid: str) -> list[dict[str, object]]:
    """The datasource (any Prometheus, picked on import or in the dashboard), then job and target; run on the gate's."""
    out: list[dict[str, object]] = [
        {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0},  # empty: Grafana's default Prometheus until one is picked
        _query_variable("job", "label_values(job)"),
        _query_variable("target", "label_values(up, instance)")]  # any target's instance, not only the workbench's
    if uid == "rig-gate":
        out.append(_query_variable("run", "label_values(rig_gate_decision, run)"))
    return out


ANNOTATIONS = [
    {"name": "stage or step changes", "datasource": DATASOURCE, "enable": True, "iconColor": "blue",
     "expr": scoped("changes(rig_shape_stage[1m]) > 0"), "titleFormat": "load shape: next stage or capacity step",
     "step": "15s"},
    {"name": "faults fired (the reference workbench's own counter)", "datasource": DATASOURCE, "enable": True, "iconColor": "red",
     "expr": scoped("sum by (point, mode) (increase(workbench_chaos_faults_fired_total[1m])) > 0"),
     "titleFormat": "fault {{point}}/{{mode}}", "step": "15s"},
    {"name": "chaos windows", "datasource": DATASOURCE, "enable": True, "iconColor": "orange",
     "expr": scoped("max by (step, point, mode) (rig_chaos_active) > 0"),
     "titleFormat": "chaos {{step}}: {{point}}/{{mode}}", "step": "5s"},
]
DECISION_MAPPINGS = [{"type": "value", "options": {
    "0": {"text": "PASS", "color": "green", "index": 0},
    "1": {"text": "FAIL", "color": "red", "index": 1},
    "2": {"text": "UNDECIDED", "color": "yellow", "index": 2}}}]


def panel(index: int, title: str, unit: str, targets: list[tuple[str, str]]) -> dict[str, object]:
    """A time series in `unit` (one unit a panel, so one axis), or with unit `decision` the gate's decision as a stat
    with its value mapped to PASS / FAIL / UNDECIDED."""
    stat = unit == "decision"
    defaults: dict[str, object] = {"unit": "none" if stat else unit}
    if stat:
        defaults |= {"mappings": DECISION_MAPPINGS, "color": {"mode": "thresholds"}, "thresholds": {
            "mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 1},
                                          {"color": "yellow", "value": 2}]}}
    return {"id": index + 1, "type": "stat" if stat else "timeseries", "title": title, "datasource": DATASOURCE,
            "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
            "fieldConfig": {"defaults": defaults, "overrides": []},
            **({"options": {"colorMode": "background", "graphMode": "none", "reduceOptions": {
                "calcs": ["lastNotNull"], "fields": "", "values": False}}} if stat else {}),
            "targets": [{"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": scoped(expr),
                         "legendFormat": legend} for i, (legend, expr) in enumerate(targets)]}


def workbench_only(p: Panel) -> bool:
    """A panel that reads the reference target's own metrics: it has data only there."""
    return any("workbench_" in expr for _, expr in p[2])


def dashboard(uid: str, title: str, panels: list[Panel]) -> dict[str, object]:
    """The rig's own panels first (any target); the reference workbench's below them, in a row named so."""
    mine = [p for p in panels if not workbench_only(p)]
    theirs = [p for p in panels if workbench_only(p)]
    built = [panel(i, *p) for i, p in enumerate(mine)]
    if theirs:
        top = 8 * ((len(mine) + 1) // 2)
        built.append({"id": len(mine) + 1, "type": "row", "title": WORKBENCH_ROW, "collapsed": False, "panels": [],
                      "gridPos": {"h": 1, "w": 24, "x": 0, "y": top}})
        for i, p in enumerate(theirs):
            item = panel(i, *p)
            item["id"] = len(mine) + 2 + i
            item["gridPos"] = {"h": 8, "w": 12, "x": 12 * (i % 2), "y": top + 1 + 8 * (i // 2)}
            built.append(item)
    return {"uid": uid, "title": title, "tags": ["rig"], "schemaVersion": 39, "version": 1,
            "editable": True, "time": {"from": "now-30m", "to": "now"}, "refresh": "10s",
            "templating": {"list": variables(uid)}, "annotations": {"list": ANNOTATIONS}, "panels": built}


def main() -> None:
    for uid, (title, panels) in DASHBOARDS.items():
        path = HERE / f"{uid}.json"
        path.write_text(json.dumps(dashboard(uid, title, panels), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"{path.name}: {len(panels)} panels")


if __name__ == "__main__":
    main()
