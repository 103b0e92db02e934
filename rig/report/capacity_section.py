"""A capacity run in the report: the answer, the curve of offered load against what it got (throughput, T4/T5
p95 with their intervals and the SLO lines, error ratio), each step's call and what reached its limit; and the
run's junit.xml."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from rig.measure.thresholds import Threshold
from rig.policy import Decision
from rig.report.charts import Mark, line_chart
from rig.report.plain import escape
from rig.results.capacity import CapacityResult, CapacityStep


def capacity_decision(cap: CapacityResult) -> Decision:
    """The run's one decision: undecided when the search could not answer; with `--require N`, pass or fail on
    it; otherwise the answer, recorded."""
    if cap.verdict == "undecided":
        return Decision(decision="undecided", reasons=[cap.answer])
    broken = [c for c in (cap.overload.checks if cap.overload else []) if c.call == "breaks"]
    if broken:
        return Decision(decision="fail", reasons=[f"{c.text}: observed {c.observed}" for c in broken] + [cap.answer])
    if cap.required is not None:
        held = cap.holds or 0
        if held < cap.required:
            return Decision(decision="fail", reasons=[f"holds {held} researchers, below the {cap.required} required: "
                                                      f"{cap.answer}"])
        return Decision(decision="pass", reasons=[f"holds {held} ≥ {cap.required} required: {cap.answer}"])
    return Decision(decision="recorded", reasons=[cap.answer])


def _knee(cap: CapacityResult) -> list[Mark]:
    marks = [Mark(float(cap.holds), f"holds: {cap.holds} users")] if cap.holds else []
    return marks + ([Mark(float(cap.breaks), f"breaks: {cap.breaks} users")] if cap.breaks else [])


def _curve(cap: CapacityResult, rising: list[CapacityStep], extra: list[CapacityStep], name: str,
           value: Callable[[CapacityStep], float], *, title: str, unit: str) -> str:
    """One measure over the search's steps, the overload and recovery steps as points of their own."""
    series = {name: [(float(s.users), value(s)) for s in rising]}
    series |= {step_label(cap, s): [(float(s.users), value(s))] for s in extra}
    return line_chart(series, title=title, unit=unit, x_label="offered load (users)", marks=_knee(cap))


def _slo_curve(cap: CapacityResult, rising: list[CapacityStep], extra: list[CapacityStep], text: str) -> str:
    """An SLO's observed value per step, the interval's high end, and the SLO's own line."""
    def observed(s: CapacityStep, high: bool = False) -> float | None:
        c = next((c for c in s.slos if c.text == text), None)
        return None if c is None else c.high if high else c.observed

    series = {f"{text.split('<')[0].strip()} observed": [(float(s.users), v) for s in rising
                                                          if (v := observed(s)) is not None],
              "interval high": [(float(s.users), v) for s in rising if (v := observed(s, True)) is not None]}
    series |= {step_label(cap, s): [(float(s.users), v)] for s in extra if (v := observed(s)) is not None}
    limit = _threshold_value(text)
    users = [float(s.users) for s in cap.steps]
    if limit is not None and users:
        series[f"SLO {text}"] = [(min(users), limit), (max(users), limit)]
    return line_chart(series, title=f"{text.split('<')[0].strip()} against offered load", unit="ms",
                      x_label="offered load (users)", marks=_knee(cap))


def _threshold_value(text: str) -> float | None:
    """The threshold's own value, in the unit it is compared in."""
    try:
        return Threshold.parse(text).value
    except ValueError:
        return None


def step_label(cap: CapacityResult, step: CapacityStep) -> str:
    """A step as the report names it: the search's steps by number, the overload and recovery steps by role."""
    role = _roles(cap).get(step.index, "step")
    return f"{role} {step.index}: {step.users} users"


def _roles(cap: CapacityResult) -> dict[int, str]:
    """The overload and recovery steps (the last two, when the search went past capacity), by step index."""
    if cap.overload is None or len(cap.steps) < 2:
        return {}
    return {cap.steps[-2].index: "overload step", cap.steps[-1].index: "recovery step"}


def capacity_html(cap: CapacityResult) -> str:
    """The answer first, then the curves over offered load (the knee marked), then a row per step."""
    roles = _roles(cap)
    rising = sorted((s for s in cap.steps if s.index not in roles), key=lambda s: (s.users, s.index))
    extra = [s for s in cap.steps if s.index in roles]
    charts = [_curve(cap, rising, extra, "runs completed/s", lambda s: s.throughput_rps,
                     title="throughput against offered load", unit="runs/s")]
    for code in ("T4", "T5"):
        for text in (t for t in cap.thresholds if t.startswith(code + ".")):
            charts.append(_slo_curve(cap, rising, extra, text))
    charts.append(_curve(cap, rising, extra, "error ratio", lambda s: 100 * (s.error_ratio or 0.0),
                         title="error ratio against offered load", unit="%"))
    rows = []
    for s in cap.steps:
        slos = "; ".join(f"{escape(c.text)}: {c.observed if c.observed is not None else '—'} "
                         f"[{c.low if c.low is not None else '—'}, {c.high if c.high is not None else '—'}] "
                         f"{escape(c.call)}" for c in s.slos)
        full = ", ".join(escape(r.name) for r in s.resources if r.at_limit) or "—"
        client = (f"{s.client.cpu_peak_pct if s.client.cpu_peak_pct is not None else '—'} % CPU, lag p95 "
                  f"{s.client.loop_lag_p95_ms if s.client.loop_lag_p95_ms is not None else '—'} ms")
        rows.append(f"<tr><td>{escape(step_label(cap, s).split(':')[0])}</td><td class=num>{s.users}</td>"
                    f"<td class=num>{s.runs}</td>"
                    f"<td class=num>{s.throughput_rps:.2f}</td><td>{slos}</td><td>{full}</td><td>{client}</td>"
                    f"<td><b>{escape(s.call)}</b> {escape(s.why)}</td></tr>")
    over = ""
    if cap.overload is not None:
        o = cap.overload
        checks = "".join(f"<li>{escape(c.text)}: {c.observed if c.observed is not None else '—'} — {escape(c.call)}"
                         f"</li>" for c in o.checks)
        over = (f"<h3>Beyond capacity</h3><ul><li>{o.users} users: {o.refused} submissions refused (shed ratio "
                f"{o.shed_ratio:.1%}), {o.runs} runs, {o.lost_runs} lost; other errors: "
                f"{escape(str(o.errors) if o.errors else 'none')}</li><li>back at {o.recovered_at_users} users: within "
                f"the SLOs again after {o.recovery_s if o.recovery_s is not None else '— (never)'} s</li>{checks}</ul>")
    return over + (f"<p><b>{escape(cap.answer)}</b></p><p>stopped: {escape(cap.stopped_because)}; each step judged on the "
            f"runs submitted after its warm-up, with {cap.confidence:.0%} intervals.</p>" + "".join(charts) +
            "<table><tr><th>step</th><th>users</th><th>runs</th><th>completed/s</th><th>SLOs (observed [interval])"
            "</th><th>at its limit</th><th>client</th><th>call</th></tr>" + "".join(rows) + "</table>")


def capacity_junit(cap: CapacityResult, decision: Decision) -> str:
    """junit.xml of a capacity run: the answer as one test case (failure below `--require`, error when
    undecided), each step as a case of its own with what it measured."""
    suite = ET.Element("testsuite", name="rig capacity", tests=str(len(cap.steps) + 1),
                       failures=str(int(decision.decision == "fail")),
                       errors=str(int(decision.decision == "undecided")), skipped="0")
    answer = ET.SubElement(suite, "testcase", classname="capacity", name="capacity")
    props = ET.SubElement(answer, "properties")
    ET.SubElement(props, "property", name="holds", value=str(cap.holds))
    ET.SubElement(props, "property", name="breaks", value=str(cap.breaks))
    if decision.decision == "fail":
        ET.SubElement(answer, "failure", message="; ".join(decision.reasons)[:500])
    elif decision.decision == "undecided":
        ET.SubElement(answer, "error", message="; ".join(decision.reasons)[:500])
    for s in cap.steps:
        tc = ET.SubElement(suite, "testcase", classname="capacity.steps", name=f"step {s.index}: {s.users} users")
        p = ET.SubElement(tc, "properties")
        ET.SubElement(p, "property", name="call", value=s.call)
        ET.SubElement(p, "property", name="why", value=s.why[:300])
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
