"""`report.md` — the decision, the verdict table and the T-code table, in Markdown."""

from __future__ import annotations

from rig.report.coverage_section import coverage_markdown
from rig.report.data import ReportData
from rig.report.plain import md_cell, md_text


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "usd":
        return f"{value:.6f}"
    return f"{value:.1f}" if unit == "ms" else f"{value:g}"


def markdown_report(data: ReportData) -> str:
    m = data.manifest
    lines = [f"# rig {m.kind} report", "", f"**Decision: {data.decision.decision.upper()}**", ""]
    lines += [f"- {md_text(r)}" for r in data.decision.reasons] + [""]
    lines += ["## Manifest", "", f"- target: {md_text(str(m.target_url))} (version {md_text(str(m.target_version))}, "
              f"embedded: {m.target_embedded})",
              f"- rig {m.rig_version} @ {m.git_commit}",
              f"- eval set sha256 {str(m.eval_set_sha256)[:16]}…, corpus digest {str(m.corpus_digest)[:16]}…",
              f"- machine: {m.machine.describe()}", f"- started {m.started_at}, ended {m.ended_at}", ""]
    lines += ["## Verdicts", "", "| record | module | case | verdict | reason |", "|---|---|---|---|---|"]
    for c in data.cases:
        reps = "" if len(c.repeats) <= 1 else f" ({'/'.join(v.value for v in c.repeats)})"
        lines.append(f"| {md_cell(c.record_id)} | {md_cell(c.module)} | {md_cell(c.name)} | {c.verdict.value}{reps} | "
                     f"{md_cell(c.reason, 160)} |")
    lines += ["", "## T-codes", "", "| code | source | label | unit | n | p50 | p90 | p95 | p99 |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in data.tcodes:
        s = r.summary
        lines.append(f"| {r.code} | {r.source} | {md_cell(r.label or '')} | {r.unit} | {s.count} | {_fmt(s.p50, r.unit)} | "
                     f"{_fmt(s.p90, r.unit)} | {_fmt(s.p95, r.unit)} | {_fmt(s.p99, r.unit)} |")
    if data.end_reasons:
        lines += ["", "## T8 end states", ""] + [f"- {md_text(k)}: {v}" for k, v in sorted(data.end_reasons.items())]
    if data.coverage is not None:
        lines += coverage_markdown(data.coverage)
    return "\n".join(lines) + "\n"
