"""The gate's results as Prometheus metrics, pushed to a Pushgateway at the end of a gate run.

`rig_case_verdicts_total{verdict,module}` counts case verdicts (every repeat); `rig_gate_decision` is the
decision's exit code (0 pass, 1 fail, 2 undecided). The `rig-gate` dashboard reads both.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, push_to_gateway

from rig.errors import RigError
from rig.policy import Decision
from rig.report.data import ReportData


def gate_registry(data: ReportData, decision: Decision) -> CollectorRegistry:
    """A registry holding this gate run's verdict counts and decision."""
    registry = CollectorRegistry()
    verdicts = Counter("rig_case_verdicts", "Case verdicts of gate runs", ["verdict", "module"], registry=registry)
    for case in data.cases:
        for verdict in case.repeats or [case.verdict]:
            verdicts.labels(verdict.value, case.module).inc()
    Gauge("rig_gate_decision", "Gate decision as its exit code (0 pass, 1 fail, 2 undecided)",
          registry=registry).set(decision.exit_code)
    return registry


def push_gate_results(url: str, data: ReportData, decision: Decision, run_name: str) -> None:
    """Push to `url` under job `rig_gate`, grouped by run directory name (a later run does not erase it)."""
    try:
        push_to_gateway(url, job="rig_gate", registry=gate_registry(data, decision), grouping_key={"run": run_name})
    except OSError as exc:
        raise RigError(f"could not push the gate results to {url}: {exc}",
                       fix="check the Pushgateway URL, or leave --pushgateway out") from exc
