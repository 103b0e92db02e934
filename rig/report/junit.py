"""`junit.xml`: FAIL → failure; U/BLOCKED/NOT_RUN/N/A → skipped with a `verdict` property and the reason.

A load run's junit.xml has one test case per policy threshold (failure when it does not hold, skipped without a
measurement) and one for the run itself, an `<error>` when the run could not decide.

A gate that decided nothing (no case PASS or FAIL: setup failed, or everything blocked) adds one `<error>` test
case with the decision's reasons, so no CI that reads JUnit shows it green.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from rig.policy import Decision
from rig.report.data import ReportData
from rig.report.plain import xml_text
from rig.results.load import LoadSummary
from rig.verdict import Verdict


def junit_xml(data: ReportData) -> str:
    decided_nothing = not any(c.verdict in (Verdict.PASS, Verdict.FAIL) for c in data.cases)
    suite = ET.Element("testsuite", name="rig gate", tests=str(len(data.cases) + decided_nothing),
                       failures=str(sum(c.verdict == Verdict.FAIL for c in data.cases)),
                       errors=str(int(decided_nothing)),
                       skipped=str(sum(c.verdict not in (Verdict.PASS, Verdict.FAIL) for c in data.cases)))
    if decided_nothing:
        tc = ET.SubElement(suite, "testcase", classname="rig.gate", name="gate decision")
        error = ET.SubElement(tc, "error", message=f"the gate decided nothing ({data.decision.decision})"[:500])
        error.text = xml_text("\n".join(data.decision.reasons)) or "no case passed or failed"
    for c in data.cases:
        tc = ET.SubElement(suite, "testcase", classname=xml_text(f"reliability.{c.module}"),
                           name=xml_text(f"{c.record_id} {c.name}"),
                           time=f"{c.duration_s or 0:.3f}")
        props = ET.SubElement(tc, "properties")
        ET.SubElement(props, "property", name="verdict", value=c.verdict.value)
        ET.SubElement(props, "property", name="case_id", value=str(c.case_id))
        if c.verdict == Verdict.FAIL:
            failure = ET.SubElement(tc, "failure", message=xml_text(c.reason[:500]))
            failure.text = xml_text("\n".join(f"{i.name}: {i.verdict.value} — {i.reason}" for i in c.items))
        elif c.verdict != Verdict.PASS:
            ET.SubElement(tc, "skipped", message=xml_text(f"{c.verdict.value}: {c.reason}"[:500]))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def load_junit(summary: LoadSummary, decision: Decision) -> str:
    """junit.xml of a load run: its thresholds, and the run's own decision."""
    undecided = decision.decision == "undecided"
    checks = summary.thresholds
    suite = ET.Element("testsuite", name="rig load", tests=str(len(checks) + 1),
                       failures=str(sum(c.holds is False for c in checks)), errors=str(int(undecided)),
                       skipped=str(sum(c.holds is None for c in checks)))
    run = ET.SubElement(suite, "testcase", classname="load", name="run",
                        time=f"{summary.duration_s:.3f}")
    if undecided:
        error = ET.SubElement(run, "error", message="the load run could not decide"[:500])
        error.text = xml_text("\n".join(decision.reasons))
    for c in checks:
        tc = ET.SubElement(suite, "testcase", classname="load.thresholds", name=xml_text(c.text))
        props = ET.SubElement(tc, "properties")
        ET.SubElement(props, "property", name="observed", value=xml_text(c.shown))
        if c.holds is False:
            ET.SubElement(tc, "failure", message=xml_text(f"{c.text}: observed {c.shown}"[:500]))
        elif c.holds is None:
            ET.SubElement(tc, "skipped", message=f"no measurement of {c.key}")
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
