"""The comparison's decision as Prometheus metrics, pushed to a Pushgateway (what a dashboard annotates).

`rig_compare_decision{kind}` is the exit code (0 no regression, 1 regressed, 2 not comparable);
`rig_compare_findings{kind,finding}` counts regressed T-code percentiles, rates and worse verdicts.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, push_to_gateway

from rig.compare.model import CompareResult
from rig.errors import RigError

EXIT = {"no regression": 0, "regressed": 1, "not comparable": 2}


def compare_registry(result: CompareResult) -> CollectorRegistry:
    registry = CollectorRegistry()
    kind = "+".join(p.part for p in result.parts) or "none"
    Gauge("rig_compare_decision", "rig compare decision as its exit code", ["kind"], registry=registry).labels(
        kind).set(EXIT[result.decision])
    findings = Gauge("rig_compare_findings", "Findings of rig compare that make the new run worse",
                     ["kind", "finding"], registry=registry)
    findings.labels(kind, "worse_verdict").set(sum(v.worse for p in result.parts for v in p.verdict_changes))
    findings.labels(kind, "regressed_tcode").set(sum(s.call == "regressed" for p in result.parts
                                                     for t in p.tcodes for s in t.shifts))
    findings.labels(kind, "regressed_rate").set(sum(r.call == "regressed" for p in result.parts for r in p.rates))
    return registry


def push_compare(url: str, result: CompareResult, name: str) -> None:
    """Push under job `rig_compare`, grouped by the new run's name."""
    try:
        push_to_gateway(url, job="rig_compare", registry=compare_registry(result), grouping_key={"run": name})
    except OSError as exc:
        raise RigError(f"could not push the comparison to {url}: {exc}",
                       fix="check the Pushgateway URL, or leave --pushgateway out") from exc
