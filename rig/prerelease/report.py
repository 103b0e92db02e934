"""The pre-release report: the gate decision first, then the parts, all read back from their stores.

`report.html` at the top of the demo directory is self-contained: the gate's verdicts, T-codes and
cases; the load curves with the chaos windows shaded; the chaos windows' recovery; the quality metrics
and the judge sheets. `prerelease.json` carries the numbers the page shows.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from rig.evidence import EvidenceStore
from rig.measure.aggregate import tcode_rows
from rig.prerelease.result import PrereleaseResult
from rig.quality.sheets import JudgeSheet, sheet_html
from rig.quality.summary import turn_records
from rig.report.chaos_section import chaos_bands, chaos_section
from rig.report.html import html_report, tcode_table
from rig.report.load_section import error_headline, load_section
from rig.report.plain import escape
from rig.report.quality_section import quality_section
from rig.results.chaos import ChaosAnalysis


class PartNumbers(BaseModel):
    decision: str
    headline: str


class GateNumbers(PartNumbers):
    verdicts: dict[str, int]


class LoadNumbers(PartNumbers):
    runs: int
    throughput_rps: float
    error_ratio: float
    error_ratio_steady: float | None = None  # outside the injected fault windows and their recovery
    error_ratio_in_fault: float | None = None
    requests: int
    workers: int


class ChaosWindowNumbers(BaseModel):
    step: str
    fault: str
    via: str
    runs_in_flight: int
    recovery_s: float | None = None
    interrupted: int | None = None
    lost: int | None = None
    ready_s: float | None = None


class ChaosNumbers(BaseModel):
    windows: list[ChaosWindowNumbers]


class MetricNumbers(BaseModel):
    pooled: float | None
    mean: float | None
    min: float | None
    turns: int
    below_bar: list[str]


class QualityNumbers(PartNumbers):
    turns: int
    states: dict[str, int]
    metrics: dict[str, MetricNumbers]


class PrereleaseNumbers(BaseModel):
    """`prerelease.json`: what the pre-release report shows (JSON Schema: docs/schemas/prerelease.schema.json)."""

    gate: GateNumbers
    load: LoadNumbers
    chaos: ChaosNumbers
    quality: QualityNumbers
    timings_s: dict[str, float]


def _overview(result: PrereleaseResult, numbers: PrereleaseNumbers) -> str:
    rows = []
    parts: tuple[tuple[str, PartNumbers], ...] = (("load", numbers.load), ("gate", numbers.gate),
                                                 ("quality", numbers.quality))
    for part, n in parts:
        rows.append(f"<tr><td><a href='{part}/report.html'>{part}</a></td><td>{escape(n.decision)}</td>"
                    f"<td class=num>{result.timings_s.get(part, 0):.0f} s</td><td>{escape(n.headline)}</td></tr>")
    return ("<h2>Pre-release run</h2><table><tr><th>part</th><th>decision</th><th>wall</th><th>what it found</th></tr>"
            f"{''.join(rows)}</table><p class=muted>total {result.timings_s.get('total', 0):.0f} s; the exit code is "
            "the gate's, whose policy also judged the load run's thresholds</p>")


def prerelease_numbers(result: PrereleaseResult) -> PrereleaseNumbers:
    """The headline numbers of each part, from its result as read back from its store (what the report prints)."""
    load = result.load.summary
    assert load is not None
    windows = load.chaos.windows if load.chaos else []
    verdicts: dict[str, int] = {}
    for c in result.gate.data.cases:
        verdicts[c.verdict.value] = verdicts.get(c.verdict.value, 0) + 1
    q = result.quality.summary
    trace = next(m for m in q.metrics if m.name == "traceability")
    return PrereleaseNumbers(
        gate=GateNumbers(decision=result.gate.decision.decision, verdicts=verdicts,
                         headline=", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))),
        load=LoadNumbers(decision=result.load.decision.decision, runs=load.runs, throughput_rps=load.throughput_rps,
                         error_ratio=load.error_ratio, error_ratio_steady=load.phases.steady.error_ratio,
                         error_ratio_in_fault=load.phases.in_fault.error_ratio, requests=load.requests,
                         workers=load.workers, headline=f"{error_headline(load)}; {load.throughput_rps:.2f} runs/s"),
        chaos=ChaosNumbers(windows=[ChaosWindowNumbers.model_validate(
            {k: getattr(w, k) for k in ChaosWindowNumbers.model_fields if getattr(w, k, None) is not None})
            for w in windows]),
        quality=QualityNumbers(decision=q.decision.decision, turns=q.turns, states=q.states,
                               metrics={m.name: MetricNumbers(pooled=m.pooled, mean=m.mean, min=m.minimum, turns=m.turns,
                                                              below_bar=m.below_bar) for m in q.metrics},
                               headline=f"{q.turns} case-turns, traceability {trace.pooled}, "
                                        + ", ".join(f"{k} {v}" for k, v in sorted(q.states.items()))),
        timings_s={k: round(v, 1) for k, v in result.timings_s.items()})


def write_prerelease_report(result: PrereleaseResult) -> PrereleaseNumbers:
    """Write `report.html` and `prerelease.json` at the top of the run directory; returns the numbers."""
    numbers = prerelease_numbers(result)
    assert result.load.summary is not None
    load_store = EvidenceStore(result.load.run_dir / "evidence.sqlite3")
    quality_store = EvidenceStore(result.quality.run_dir / "evidence.sqlite3")
    try:
        load_html = load_section(load_store, result.load.summary, chaos_bands(load_store))
        records = turn_records(quality_store)
        quality_tcodes = tcode_table(tcode_rows(quality_store.measures()))
    finally:
        load_store.close()
        quality_store.close()
    q = result.quality.summary
    written = json.loads((result.quality.run_dir / "judge" / "sheets.json").read_text(encoding="utf-8"))
    sheets = [JudgeSheet.model_validate(s) for s in written]  # as the quality run wrote them, proposals included
    sheets_html = (f"<p>{len(sheets)} sheets; also as <a href='quality/judge/sheets.csv'>CSV</a> and "
                   f"<a href='quality/judge/sheets.json'>JSON</a>.</p><details><summary>open the sheets</summary>"
                   f"{''.join(sheet_html(s) for s in sheets)}</details>")
    sections = [("Load (T10): curves with the chaos windows shaded", load_html),
                ("Chaos windows", chaos_section(result.load.summary.chaos or ChaosAnalysis())),
                ("Quality metrics", quality_section(q, records, "quality/judge/sheets.html")),
                ("T-codes of the quality run", quality_tcodes),
                ("Judge sheets", sheets_html)]
    page = html_report(result.gate.data, sections, title="rig pre-release report", lead=_overview(result, numbers))
    (result.run_dir / "report.html").write_text(page, encoding="utf-8")
    (result.run_dir / "prerelease.json").write_text(numbers.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return numbers
