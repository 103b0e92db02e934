"""`junit.xml`: FAIL → failure; U/BLOCKED/NOT_RUN/N/A → skipped with a `verdict` property and the reason."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from rig.report.data import ReportData
from rig.verdict import Verdict


def junit_xml(data: ReportData) -> str:
    suite = ET.Element("testsuite", name="rig gate", tests=str(len(data.cases)),
                       failures=str(sum(c.verdict == Verdict.FAIL for c in data.cases)),
                       skipped=str(sum(c.verdict not in (Verdict.PASS, Verdict.FAIL) for c in data.cases)))
    for c in data.cases:
        tc = ET.SubElement(suite, "testcase", classname=f"reliability.{c.module}", name=f"{c.record_id} {c.name}",
                           time=f"{c.duration_s or 0:.3f}")
        props = ET.SubElement(tc, "properties")
        ET.SubElement(props, "property", name="verdict", value=c.verdict.value)
        ET.SubElement(props, "property", name="case_id", value=str(c.case_id))
        if c.verdict == Verdict.FAIL:
            failure = ET.SubElement(tc, "failure", message=c.reason[:500])
            failure.text = "\n".join(f"{i.name}: {i.verdict.value} — {i.reason}" for i in c.items)
        elif c.verdict != Verdict.PASS:
            ET.SubElement(tc, "skipped", message=f"{c.verdict.value}: {c.reason}"[:500])
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
