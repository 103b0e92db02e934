"""`compare.html` and `compare.md`: the comparability table first, then the verdict changes, then each T-code
with both runs' distributions on one axis (ECDF, inline SVG) and the flagged shifts marked."""

from __future__ import annotations

from pathlib import Path

from rig.compare.model import CompareResult, Comparison, Difference, TCodeComparison
from rig.compare.runs import read_measures, samples
from rig.report.charts import ecdf_chart
from rig.report.plain import escape, md_cell

_CALL_STYLE = {"regressed": "color:#b42318;font-weight:600", "improved": "color:#067647;font-weight:600",
               "no evidence": "color:#444", "not enough samples": "color:#999"}
_CAPACITY_STYLE = {"fewer": "color:#b42318", "more": "color:#067647", "same": "color:#444",
                   "not comparable": "color:#b54708"}


def write_reports(result: CompareResult, out: Path) -> list[Path]:
    """compare.json, compare.md and compare.html into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "compare.json", out / "compare.md", out / "compare.html"]
    paths[0].write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(result), encoding="utf-8")
    paths[2].write_text(page(result), encoding="utf-8")
    return paths


def markdown(result: CompareResult) -> str:
    lines = [f"# Compare: {result.decision}", "", f"- base: `{result.base}`", f"- new: `{result.new}`",
             f"- α = {result.settings.alpha}, minimum effect = max({result.settings.min_rel:.0%} of the base, "
             f"{result.settings.min_abs_ms:.0f} ms), bootstrap {result.settings.resamples}× (seed {result.settings.seed})",
             "", *[f"- {r}" for r in result.reasons], ""]
    for part in result.parts:
        lines += [f"## {part.part}", "", "| setting | base | new | |", "|---|---|---|---|"]
        lines += [f"| {d.field} | {_cell(d.base)} | {_cell(d.new)} | {_kind(d)} |"
                  for d in part.differences] or ["| (none differ) | | | |"]
        lines += ["", "| case / item | base | new | new reason |", "|---|---|---|---|"]
        lines += [f"| {v.case}{' / ' + v.item if v.item else ''} | {v.base} | {v.new}{' ⚠' if v.worse else ''} | "
                  f"{_cell(v.new_reason)} |" for v in part.verdict_changes] or ["| (no verdict changed) | | | |"]
        lines += ["", "| T-code | source | n | stat | base | new | shift [interval] | call |",
                  "|---|---|---|---|---|---|---|---|"]
        for t in part.tcodes + part.tokens_and_cost:
            for s in t.shifts:
                interval = f"{s.delta:+.1f} [{s.low:+.1f}, {s.high:+.1f}]" if s.delta is not None else "—"
                lines.append(f"| {t.code} | {t.source} | {t.n_base}/{t.n_new} | {s.stat} | {_n(s.base, t.unit)} | "
                             f"{_n(s.new, t.unit)} | {interval} {t.unit} | {s.call} |")
        lines += ["", "| rate | base | new | p | call |", "|---|---|---|---|---|"]
        lines += [f"| {r.name} | {r.base}/{r.base_runs} | {r.new}/{r.new_runs} | "
                  f"{'—' if r.p_value is None else f'{r.p_value:.3g}'} | {r.call} |" for r in part.rates]
        if part.throughput:
            tp = part.throughput
            lines += ["", f"Throughput: {tp.base_rps} → {tp.new_rps} runs/s"
                      + ("" if tp.comparable else f" — not comparable: {tp.why}")]
        if part.capacity:
            c = part.capacity
            lines += ["", "| capacity | held | broke | answer |", "|---|---|---|---|",
                      f"| base | {c.base_holds} | {c.base_breaks or '—'} | {_cell(c.base_answer)} |",
                      f"| new | {c.new_holds} | {c.new_breaks or '—'} | {_cell(c.new_answer)} |", "",
                      f"Capacity: **{c.call}** — {c.why}"]
        lines.append("")
    return "\n".join(lines)


def page(result: CompareResult) -> str:
    esc = escape
    body = [f"<h1>Compare: <span style='{_decision_style(result.decision)}'>{esc(result.decision)}</span></h1>",
            f"<p>base <code>{esc(result.base)}</code><br>new <code>{esc(result.new)}</code></p>",
            f"<p class=small>α = {result.settings.alpha}; a shift counts when its {1 - result.settings.alpha:.0%} "
            f"bootstrap interval excludes 0 and it is at least max({result.settings.min_rel:.0%} of the base, "
            f"{result.settings.min_abs_ms:.0f} ms); too few samples say so.</p>",
            "<ul>" + "".join(f"<li>{esc(r)}</li>" for r in result.reasons) + "</ul>"]
    for part in result.parts:
        body.append(f"<h2>{esc(part.part)}</h2>")
        body.append(_table(["setting", "base", "new", ""],
                           [[d.field, _cell(d.base), _cell(d.new), _kind(d)]
                            for d in part.differences] or [["(no setting differs)", "", "", ""]]))
        if part.capacity:
            c = part.capacity
            body.append(f"<h3>Capacity: <span style='{_CAPACITY_STYLE[c.call]}'>{esc(c.call)}</span></h3>"
                        f"<p>{esc(c.why)}</p>")
            body.append(_table(["", f"held ({c.unit})", "broke", "answer"],
                               [["base", str(c.base_holds), str(c.base_breaks or "—"), c.base_answer],
                                ["new", str(c.new_holds), str(c.new_breaks or "—"), c.new_answer]]))
            continue  # a capacity search's samples span every step's load: its T-codes do not compare
        body.append("<h3>Verdict changes</h3>")
        body.append(_table(["case / item", "base", "new", "base reason", "new reason"],
                           [[f"{v.case}{' / ' + v.item if v.item else ''}", v.base or "—",
                             f"{v.new or '—'}{' ⚠' if v.worse else ''}", v.base_reason[:160], v.new_reason[:160]]
                            for v in part.verdict_changes] or [["(no verdict changed)", "", "", "", ""]]))
        body.append("<h3>T-codes</h3><div class=grid>")
        drawn = _samples_of(part)
        for t in part.tcodes:
            body.append(_tcode_block(t, drawn.get((t.code, t.source), ([], []))))
        body.append("</div>")
        if part.tokens_and_cost:
            body.append("<h3>Tokens and cost per run</h3>")
            body.append(_table(["code", "source", "n", "base p50", "new p50", "call"],
                               [[t.code, t.source, f"{t.n_base}/{t.n_new}", _n(t.shifts[0].base, t.unit),
                                 _n(t.shifts[0].new, t.unit), t.shifts[0].call] for t in part.tokens_and_cost]))
        body.append("<h3>Error and end-reason rates</h3>")
        body.append(_table(["rate", "base", "new", "p (two-proportion)", "call"],
                           [[r.name, f"{r.base}/{r.base_runs}", f"{r.new}/{r.new_runs}",
                             "—" if r.p_value is None else f"{r.p_value:.3g}", r.call] for r in part.rates]))
        if part.throughput:
            tp = part.throughput
            body.append(f"<p>Throughput: {tp.base_rps} → {tp.new_rps} runs/s"
                        + ("" if tp.comparable else f" — not comparable: {esc(tp.why)}") + "</p>")
    style = ("body{font:14px system-ui,sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;"
             "margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
             ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px}"
             ".card{border:1px solid #e5e5e5;padding:8px}svg.chart{height:auto}"
             ".small{color:#555;font-size:12px}code{font-size:12px}")
    return (f"<!doctype html><html><head><meta charset=utf-8><title>rig compare</title><style>{style}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")


def _samples_of(part: Comparison) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    sb, sn = samples(read_measures(Path(part.base_dir))), samples(read_measures(Path(part.new_dir)))
    return {k: (sb.get(k, []), sn.get(k, [])) for k in set(sb) | set(sn)}


def _tcode_block(t: TCodeComparison, drawn: tuple[list[float], list[float]]) -> str:
    rows = "".join(f"<tr><td>{s.stat}</td><td>{_n(s.base)}</td><td>{_n(s.new)}</td><td>"
                   + (f"{s.delta:+.1f} [{s.low:+.1f}, {s.high:+.1f}]" if s.delta is not None else "—")
                   + f"</td><td style='{_CALL_STYLE[s.call]}'>{s.call}</td></tr>" for s in t.shifts)
    flagged = [s for s in t.shifts if s.call in ("regressed", "improved")]
    chart = ecdf_chart(*drawn, title=f"{t.code} ({t.source})", unit=t.unit,
                       marks=[(s.stat, s.base, s.new) for s in flagged])
    return (f"<div class=card><b>{t.code}</b> {escape(t.source)} <span class=small>n {t.n_base} → {t.n_new}; "
            f"Cliff's δ {t.cliffs_delta if t.cliffs_delta is not None else '—'}</span>{chart}"
            f"<table><tr><th>stat</th><th>base</th><th>new</th><th>shift [interval] ms</th><th>call</th></tr>{rows}"
            "</table></div>")




def _table(head: list[str], rows: list[list[str]]) -> str:
    esc = escape
    return ("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in r) + "</tr>" for r in rows) + "</table>")


def _decision_style(decision: str) -> str:
    return {"regressed": "color:#b42318", "no regression": "color:#067647"}.get(decision, "color:#b54708")


def _cell(value: object) -> str:
    return md_cell(str(value), 80)


def _n(value: float | None, unit: str = "") -> str:
    return "—" if value is None else f"{value:.1f} {unit}".rstrip()


def _kind(d: Difference) -> str:
    unit = f" ({d.unit})" if d.unit else ""
    return ("not comparable" if d.blocking else "compared anyway: a caveat" if d.caveat
            else "environment only" if d.environment else "") + unit
