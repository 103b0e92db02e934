"""The pre-release report: the gate decision first, then the parts, all read back from their stores.

`report.html` at the top of the demo directory is self-contained: the gate's verdicts, T-codes and
cases; the load curves with the chaos windows shaded; the chaos windows' recovery; the quality metrics
and the judge sheets. `prerelease.json` carries the numbers the page shows.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

from rig.evidence import EvidenceStore
from rig.quality.sheets import JudgeSheet, sheet_html
from rig.quality.summary import turn_records
from rig.report.chaos_section import chaos_bands, chaos_section
from rig.report.data import tcode_rows
from rig.report.html import html_report, tcode_table
from rig.report.load_section import load_section
from rig.report.quality_section import quality_section

if TYPE_CHECKING:
    from rig.prerelease.session import PrereleaseResult


def _overview(result: PrereleaseResult, numbers: dict[str, Any]) -> str:
    rows = []
    for part, link in (("load", "load/report.html"), ("gate", "gate/report.html"), ("quality", "quality/report.html")):
        n = numbers[part]
        rows.append(f"<tr><td><a href='{link}'>{part}</a></td><td>{escape(n['decision'])}</td>"
                    f"<td class=num>{result.timings_s.get(part, 0):.0f} s</td><td>{escape(n['headline'])}</td></tr>")
    return ("<h2>Pre-release run</h2><table><tr><th>part</th><th>decision</th><th>wall</th><th>what it found</th></tr>"
            f"{''.join(rows)}</table><p class=muted>total {result.timings_s.get('total', 0):.0f} s; the exit code is "
            "the gate's, whose policy also judged the load run's thresholds</p>")


def prerelease_numbers(result: PrereleaseResult) -> dict[str, Any]:
    """The headline numbers of each part, from its result as read back from its store (what the report prints)."""
    load = result.load.summary
    chaos = load.get("chaos") or {}
    windows = chaos.get("windows") or []
    verdicts: dict[str, int] = {}
    for c in result.gate.data.cases:
        verdicts[c.verdict.value] = verdicts.get(c.verdict.value, 0) + 1
    q = result.quality.summary
    trace = next(m for m in q.metrics if m.name == "traceability")
    recovery = [w.get("recovery_s") for w in windows if w.get("recovery_s") is not None]
    return {
        "gate": {"decision": result.gate.decision.decision, "verdicts": verdicts,
                 "headline": ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))},
        "load": {"decision": result.load.decision.decision, "runs": load.get("runs"),
                 "throughput_rps": load.get("throughput_rps"), "error_ratio": load.get("error_ratio"),
                 "workers": load.get("workers"),
                 "headline": f"{load.get('throughput_rps', 0):.2f} runs/s, error ratio {load.get('error_ratio', 0):.1%}, "
                             f"{len(windows)} chaos window(s), recovery "
                             + (", ".join(f"{r:.2f} s" for r in recovery) or "—")},
        "chaos": {"windows": [{k: w.get(k) for k in ("step", "fault", "via", "runs_in_flight", "recovery_s",
                                                      "interrupted", "lost", "ready_s")} for w in windows]},
        "quality": {"decision": q.decision.decision, "turns": q.turns, "states": q.states,
                    "metrics": {m.name: {"pooled": m.pooled, "mean": m.mean, "min": m.minimum, "turns": m.turns,
                                         "below_bar": m.below_bar} for m in q.metrics},
                    "headline": f"{q.turns} case-turns, traceability {trace.pooled}, "
                                + ", ".join(f"{k} {v}" for k, v in sorted(q.states.items()))},
    }


def write_prerelease_report(result: PrereleaseResult) -> dict[str, Any]:
    """Write `report.html` and `prerelease.json` at the top of the run directory; returns the numbers."""
    numbers = prerelease_numbers(result)
    numbers["timings_s"] = {k: round(v, 1) for k, v in result.timings_s.items()}
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
                ("Chaos windows", chaos_section(result.load.summary.get("chaos") or {})),
                ("Quality metrics", quality_section(q, records, "quality/judge/sheets.html")),
                ("T-codes of the quality run", quality_tcodes),
                ("Judge sheets", sheets_html)]
    page = html_report(result.gate.data, sections, title="rig pre-release report", lead=_overview(result, numbers))
    (result.run_dir / "report.html").write_text(page, encoding="utf-8")
    (result.run_dir / "prerelease.json").write_text(json.dumps(numbers, ensure_ascii=False, indent=2, default=str),
                                                    encoding="utf-8")
    return numbers
