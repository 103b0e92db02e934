"""The report's quality section: per-metric results first, then one row per case-turn, linked to its sheet."""

from __future__ import annotations

from rig.report.html import chip
from rig.report.plain import escape
from rig.results.quality import QualitySummary, TurnRecord
from rig.verdict import Verdict

COLUMNS = ("traceability", "faithfulness", "recall@10", "nDCG@10", "refusal", "out_of_scope_citations")


def _v(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cell(record: TurnRecord, name: str) -> str:
    m = record.metric(name)
    if m is None:
        return "<td></td>"
    text = _v(m.value) if m.value is not None else (m.verdict.value if m.verdict else "-")
    colour = ' style="color:#cf222e;font-weight:600"' if m.verdict == Verdict.FAIL else ""
    return f'<td class=num title="{escape(m.detail)}"{colour}>{text}</td>'


def quality_section(summary: QualitySummary, records: list[TurnRecord], sheets_href: str) -> str:
    d = summary.decision
    metrics = "".join(
        f"<tr><td>{escape(m.name)}</td><td class=num>{m.turns}</td><td class=num>{_v(m.pooled)}</td>"
        f"<td class=num>{_v(m.mean)}</td><td class=num>{_v(m.minimum)}</td>"
        f"<td>{escape(', '.join(m.below_bar[:10]) or '-')}</td></tr>" for m in summary.metrics)
    states = ", ".join(f"{escape(k)} {v}" for k, v in sorted(summary.states.items(), key=lambda kv: -kv[1]))
    known = {v.value for v in Verdict}  # a turn still running (a crashed run) has no verdict to show
    verdicts = " ".join(f"{chip(Verdict(k))} {v}" for k, v in summary.verdicts.items() if k in known)
    rows = "".join(
        f"<tr><td><a href='{escape(sheets_href)}#{escape(r.record_id)}'>{escape(r.record_id)}</a></td>"
        f"<td>{escape(r.name)}</td><td>{escape(r.kind)}</td><td>{escape(r.state)}</td>"
        + "".join(_cell(r, c) for c in COLUMNS)
        + f"<td>{escape(' '.join(r.dimensions))}</td></tr>" for r in records)
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    return (f"<p><b>Quality decision: {escape(d.decision.upper())}</b> — {escape('; '.join(d.reasons))}</p>"
            f"<p>{summary.turns} case-turns; ends: {states}</p><p>turn verdicts: {verdicts} "
            "(U: judged dimensions await the <a href='" + escape(sheets_href) + "'>judge sheets</a>)</p>"
            "<table><tr><th>metric</th><th>turns</th><th>pooled</th><th>mean</th><th>min</th><th>below its bar</th>"
            f"</tr>{metrics}</table><p class=muted>Each metric on its own; no metric or dimension is averaged into "
            "another. Pooled = all numerators over all denominators (traceability: every citation of the run).</p>"
            f"<details><summary>case-turns ({len(records)})</summary><table><tr><th>record</th><th>name</th>"
            f"<th>kind</th><th>state</th>{head}<th>judged dimensions</th></tr>{rows}</table></details>")
