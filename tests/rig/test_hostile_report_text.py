"""Nothing a target says is markup, in any report: a reason, a title and an end reason carrying Rich markup, HTML, a
Markdown table break and control characters go through every path a report writes — report.html, report.md,
junit.xml (gate and load), compare.md/html and the console — and come out as text, each file still well formed."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from rig.cli.console import fail
from rig.errors import RigError
from rig.evidence import EvidenceStore
from rig.measure.aggregate import TCodeStats
from rig.measure.events import Measure
from rig.measure.thresholds import ThresholdCheck
from rig.policy import Decision
from rig.report.data import build_report_data
from rig.report.html import html_report
from rig.report.junit import junit_xml, load_junit
from rig.report.markdown import markdown_report
from rig.report.plain import md_cell
from rig.results.load import LoadSummary
from rig.runmanifest import RunManifest
from rig.stats import Summary
from rig.verdict import Item, Verdict

HOSTILE = "[/oops] [bold]x[/bold] <script>alert(1)</script> a|b & \x00\x07\x1b[31mred\x1b[0m"


def _store(tmp_path: Path) -> EvidenceStore:
    store = EvidenceStore(tmp_path / "evidence.sqlite3")
    store.begin_case(1, 1, "可靠性-01-1", "登录", f"case {HOSTILE}")
    e = store.add_evidence(1, 1, "exchange", f"title {HOSTILE}", {"message": HOSTILE})
    store.add_item(1, 1, Item(name="target", verdict=Verdict.FAIL, reason=f"unexpected answer: {HOSTILE}",
                              evidence_ids=[e]))
    store.end_case(1, 1, Verdict.FAIL, f"target: unexpected answer: {HOSTILE}")
    store.add_measures([Measure(code="T8", source="server", value=1.0, unit="count", run_id="r1", case_id=1, rep=1,
                                label=f"failed/{HOSTILE}")])
    return store


def _inert(text: str) -> None:
    assert "<script>" not in text and "\x1b" not in text and "\x00" not in text and "\x07" not in text


def test_hostile_text_is_inert_in_html_markdown_and_junit(tmp_path: Path) -> None:
    store = _store(tmp_path)
    decision = Decision(decision="fail", reasons=[f"case 1 FAIL: {HOSTILE}"])
    data = build_report_data(store, decision, RunManifest(kind="gate", target_url=f"http://x/{HOSTILE}"))
    page = html_report(data)
    _inert(page)
    assert "&lt;script&gt;" in page and "\\x1b[31mred" in page
    md = markdown_report(data)
    _inert(md)
    row = next(line for line in md.splitlines() if line.startswith("| 可靠性-01-1 |"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 6, row  # five cells: the target's `|` did not add a column
    assert "&lt;script&gt;" in row and "[/oops]" in row
    for xml in (junit_xml(data), load_junit(_load_summary(), decision)):
        _inert(xml)
        ET.fromstring(xml.split("?>", 1)[1])  # well formed XML 1.0 (controls would make it unreadable)


def test_hostile_text_prints_as_itself_on_the_console(capsys: pytest.CaptureFixture[str]) -> None:
    fail(RigError(f"the target said: {HOSTILE}", fix="nothing"))
    printed = capsys.readouterr().err
    assert "[/oops] [bold]x[/bold]" in printed and "<script>" in printed  # shown as sent, never parsed as markup
    assert "\x1b" not in printed and "\x00" not in printed and "\x07" not in printed  # no escape sequence acts


def test_a_markdown_cell_stays_one_cell_on_one_line() -> None:
    cell = md_cell("a|b\nc <i>d</i>", 80)
    assert "\n" not in cell and cell.count("|") == cell.count("\\|") == 1 and "&lt;i&gt;" in cell


def _load_summary() -> LoadSummary:
    stats = TCodeStats(code="T4", source="client", **Summary(count=20, p50=120.0, p95=300.0, max=400.0).model_dump())
    return LoadSummary(t_codes={"T4": stats}, by_source={}, throughput_rps=1.0, runs=20, completed_runs=20,
                       requests=40, requests_per_s=2.0, error_ratio=0.0, errors_by_reason={HOSTILE: 1},
                       login_failures=0, end_states={}, send_lag={"count": 0}, workers=0, users=2, duration_s=20.0,
                       samples_by_origin={}, locust={},
                       thresholds=[ThresholdCheck(text=f"T4.p95 < 100ms {HOSTILE}", key="T4.p95", observed=300.0,
                                                  unit="ms", holds=False)])
