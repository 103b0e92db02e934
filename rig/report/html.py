"""`report.html` — self-contained: decision first, manifest, verdict matrix, T-codes, case evidence."""

from __future__ import annotations

import json
from collections import defaultdict

from rig.evidence import EvidenceRow
from rig.report.coverage_section import coverage_html
from rig.report.data import CaseReport, ReportData, TCodeRow
from rig.report.plain import escape
from rig.report.traces import traces_html
from rig.runmanifest import RunManifest
from rig.verdict import Verdict

COLORS = {Verdict.PASS: "#1a7f37", Verdict.FAIL: "#cf222e", Verdict.U: "#bf8700", Verdict.BLOCKED: "#6e40c9",
          Verdict.NOT_RUN: "#57606a", Verdict.NA: "#8c959f"}
DECISION_COLORS = {"pass": "#1a7f37", "fail": "#cf222e", "undecided": "#bf8700", "recorded": "#57606a"}
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Noto Sans CJK SC","WenQuanYi Micro Hei",sans-serif;margin:24px;color:#1f2328}
h1{font-size:22px} h2{font-size:18px;margin-top:28px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} .v{color:#fff;border-radius:4px;padding:1px 6px;font-weight:600;font-size:12px;white-space:nowrap}
.banner{color:#fff;padding:12px 16px;border-radius:6px;font-size:20px;font-weight:700}
.matrix td{min-width:70px} pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:320px;font-size:12px}
details{margin:6px 0} summary{cursor:pointer} .muted{color:#57606a} .num{text-align:right;font-variant-numeric:tabular-nums}
svg.chart{height:auto;display:block;margin:6px 0} .charts-2{display:grid;grid-template-columns:1fr 1fr;gap:8px}
"""


def chip(verdict: Verdict) -> str:
    return f'<span class="v" style="background:{COLORS[verdict]}">{escape(verdict.value)}</span>'


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "usd":
        return f"{value:.6f}"
    return f"{value:.1f}" if unit == "ms" else f"{value:g}"


def _bar(row: TCodeRow, scale: float) -> str:
    """An inline SVG of p50 (dark) and p95 (light) for a time row."""
    s = row.summary
    if row.unit != "ms" or s.p50 is None or s.p95 is None or scale <= 0:
        return ""
    w50, w95 = 160 * s.p50 / scale, 160 * s.p95 / scale
    return (f'<svg width="170" height="12" role="img"><rect width="{w95:.1f}" height="12" fill="#b6e3ff"/>'
            f'<rect width="{w50:.1f}" height="12" fill="#0969da"/></svg>')


def tcode_table(rows: list[TCodeRow]) -> str:
    out = ['<table><tr><th>code</th><th>source</th><th>label</th><th>unit</th><th>n</th><th>p50</th><th>p90</th>'
           '<th>p95</th><th>p99</th><th>max</th><th>p50 / p95</th></tr>']
    by_code: dict[str, float] = defaultdict(float)
    for r in rows:
        if r.unit == "ms" and r.summary.p95 is not None:
            by_code[r.code] = max(by_code[r.code], r.summary.p95)
    for r in rows:
        s = r.summary
        out.append(f"<tr><td>{escape(r.code)}</td><td>{escape(r.source)}</td><td>{escape(r.label or '')}</td>"
                   f"<td>{r.unit}</td><td class=num>{s.count}</td>" +
                   "".join(f"<td class=num>{_fmt(v, r.unit)}</td>" for v in (s.p50, s.p90, s.p95, s.p99, s.max)) +
                   f"<td>{_bar(r, by_code.get(r.code, 0))}</td></tr>")
    out.append("</table>")
    return "".join(out)


def _matrix(cases: list[CaseReport]) -> str:
    modules: dict[str, list[CaseReport]] = defaultdict(list)
    for c in cases:
        modules[c.module].append(c)
    rows = []
    for module, items in modules.items():
        cells = "".join(f'<td><a href="#case{c.case_id}">{c.case_id}</a> {chip(c.verdict)}</td>' for c in items)
        rows.append(f"<tr><th>{escape(module)}</th>{cells}</tr>")
    counts: dict[Verdict, int] = defaultdict(int)
    for c in cases:
        counts[c.verdict] += 1
    summary = " ".join(f"{chip(v)} {n}" for v, n in counts.items())
    return f'<p>{summary}</p><table class="matrix">{"".join(rows)}</table>'


def _evidence(e: EvidenceRow) -> str:
    data = json.dumps(e.data, ensure_ascii=False, indent=1, default=str)
    if e.kind == "screenshot" and isinstance(e.data, dict) and e.data.get("file"):
        return (f'<figure><img src="{escape(str(e.data["file"]))}" alt="{escape(e.title)}" loading="lazy" '
                f'style="max-width:720px;border:1px solid #d0d7de"><figcaption>#{e.id} screenshot — '
                f'{escape(e.title)}</figcaption></figure>')
    return (f'<details><summary>#{e.id} <b>{escape(e.kind)}</b> — {escape(e.title)}</summary>'
            f"<pre>{escape(data[:12000])}</pre></details>")


def _case(c: CaseReport) -> str:
    items = "".join(f"<tr><td>{escape(i.name)}</td><td>{chip(i.verdict)}</td><td>{escape(i.reason)}</td>"
                    f"<td>{'' if i.required else 'optional'}</td>"
                    f"<td>{' '.join(f'#{x}' for x in i.evidence_ids)}</td></tr>" for i in c.items)
    metrics = ", ".join(f"{k} p50 {v.p50:.1f} ms ({v.source}, n={v.count})"
                        for k, v in c.metrics.items() if v.p50 is not None)
    reps = "" if len(c.repeats) <= 1 else " repeats: " + " ".join(chip(v) for v in c.repeats)
    return (f'<h3 id="case{c.case_id}">{escape(c.record_id)} {escape(c.name)} {chip(c.verdict)}{reps}</h3>'
            f'<p class="muted">{escape(c.module)} · {escape(c.reason)}'
            f'{" · " + escape(metrics) if metrics else ""}</p>'
            f"<table><tr><th>item</th><th>verdict</th><th>reason</th><th></th><th>evidence</th></tr>{items}</table>"
            f"{''.join(_evidence(e) for e in c.evidence if e.kind == 'screenshot')}"
            f"<details><summary>evidence ({len(c.evidence)})</summary>"
            f"{''.join(_evidence(e) for e in c.evidence if e.kind != 'screenshot')}</details>")


def _manifest(manifest: RunManifest) -> str:
    keys = ["kind", "target_url", "target_version", "target_embedded", "adapter", "rig_version", "git_commit",
            "eval_set_sha256", "corpus_digest", "defects", "seeds", "machine", "started_at", "ended_at", "resumed_at"]
    m = manifest.model_dump(mode="json")
    rows = "".join(f"<tr><th>{k}</th><td>{escape(json.dumps(m.get(k), ensure_ascii=False, default=str))}</td></tr>"
                   for k in keys if k in m)
    return f"<table>{rows}</table>"


def html_report(data: ReportData, sections: list[tuple[str, str]] | None = None, *, title: str | None = None,
                lead: str = "") -> str:
    """The whole report; `sections` are extra (title, html) blocks such as load curves or chaos windows.

    `lead` is shown right under the decision (a pre-release run's overview of its parts).
    """
    d = data.decision
    reasons = "".join(f"<li>{escape(r)}</li>" for r in d.reasons)
    end_reasons = "".join(f"<tr><td>{escape(k)}</td><td class=num>{v}</td></tr>"
                          for k, v in sorted(data.end_reasons.items()))
    runs = "".join(f"<tr><td>{escape(r.run_id)}</td><td>{r.case_id}</td><td>{escape(str(r.state))}/"
                   f"{escape(str(r.end_reason))}</td><td><a href='#trace-{escape(str(r.trace_id))}'>"
                   f"{escape(str(r.trace_id))}</a></td><td class=num>{r.spans}"
                   f"</td></tr>" for r in data.runs)
    blocks = [*(sections or [])]
    if data.coverage is not None:
        blocks.append(("Coverage of the target's operations", coverage_html(data.coverage)))
    extra = "".join(f"<h2>{escape(t)}</h2>{h}" for t, h in blocks)
    kind = data.manifest.kind or "gate"
    banner = f"{kind.capitalize()} decision: {d.decision.upper()}"
    runs_table = ("<h2>Runs and traces</h2><table><tr><th>run</th><th>case</th><th>end</th><th>trace</th>"
                  f"<th>spans</th></tr>{runs}</table>")
    return f"""<!doctype html><html lang="zh"><head><meta charset="utf-8"><title>rig report — {escape(d.decision)}</title>
<style>{CSS}</style></head><body>
<h1>{escape(title or f"rig {kind} report")}</h1>
<div class="banner" style="background:{DECISION_COLORS[d.decision]}">{escape(banner)}</div>
<ul>{reasons}</ul>
{lead}
<h2>Manifest</h2>{_manifest(data.manifest)}
{f"<h2>Verdicts by module</h2>{_matrix(data.cases)}" if data.cases else ""}
<h2>T-codes</h2>{tcode_table(data.tcodes)}
<h2>T8 end states</h2><table><tr><th>state/reason</th><th>runs</th></tr>{end_reasons}</table>
{extra}
{f"<h2>Cases</h2>{''.join(_case(c) for c in data.cases)}" if data.cases else ""}
{runs_table if data.runs else ""}
{f"<h2>Trace trees</h2>{traces_html(data.traces)}" if data.traces else ""}
</body></html>"""
