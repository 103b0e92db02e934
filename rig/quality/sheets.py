"""Judge sheets: for each case-turn, what a judge needs to score the dimensions no program can.

A sheet holds the prompt (and the case's earlier turns), the answer, each citation opened to its hit and
its page, the ground-truth points, the scoring rules, and an empty score per dimension (0–4, U or N/A).
A proposed score from an LLM judge is shown apart and marked as proposed; it never fills the score.
Written as `judge/sheets.html`, `judge/sheets.csv` (one row per case-turn and dimension) and `sheets.json`.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from pydantic import BaseModel, Field

from rig.catalog.models import EvalSet
from rig.jsonvalue import JsonObject
from rig.report.plain import escape
from rig.results.quality import CitedSource, TurnRecord


class Proposal(BaseModel):
    """An LLM judge's proposed scores for one case-turn: never a final score."""

    model: str
    scores: dict[str, int | str] = Field(default_factory=dict)
    reason: str = ""
    error: str | None = None


class JudgeSheet(BaseModel):
    record_id: str
    name: str
    sheet: str
    dimensions: list[str]
    state: str
    previous: list[dict[str, str]]
    prompt: str
    answer: str | None
    citations: list[CitedSource]
    hits: int
    ground_truth: str
    reference: str
    rules: str
    focus: str
    mechanical: dict[str, str]
    scores: dict[str, str | None]
    fixture: JsonObject = Field(default_factory=dict)  # scope switch, summary, injection reach, variants
    proposal: Proposal | None = None


def build_sheets(records: list[TurnRecord], eval_set: EvalSet, proposals: dict[str, Proposal] | None = None
                 ) -> list[JudgeSheet]:
    by_id = {t.record_id: t for t in eval_set.quality}
    out = []
    for r in records:
        turn = by_id[r.record_id]
        out.append(JudgeSheet(
            record_id=r.record_id, name=r.name, sheet=r.sheet, dimensions=r.dimensions, state=r.state,
            previous=r.previous, prompt=r.question, answer=r.answer, citations=r.citations, hits=len(r.hits),
            ground_truth=turn.gt, reference=turn.reference, rules=turn.rules, focus=turn.configuration.focus,
            mechanical={m.name: (f"{m.value:g}" if m.value is not None else "-")
                        + (f" {m.verdict.value}" if m.verdict else "") for m in r.metrics},
            scores={d: None for d in r.dimensions}, fixture=r.fixture, proposal=(proposals or {}).get(r.record_id)))
    return out


def sheets_csv(sheets: list[JudgeSheet]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["record_id", "name", "dimension", "score", "proposed_score", "proposed_reason", "state",
                "traceability", "faithfulness", "prompt", "answer"])
    for s in sheets:
        for d in s.dimensions:
            p = s.proposal
            w.writerow([s.record_id, s.name, d, "", p.scores.get(d, "") if p else "", p.reason if p else "",
                        s.state, s.mechanical.get("traceability", ""), s.mechanical.get("faithfulness", ""),
                        s.prompt, s.answer or ""])
    return buf.getvalue()


def _citation(c: CitedSource) -> str:
    flag = "" if c.traced and c.in_scope else (' <b style="color:#cf222e">' + ("not a hit of this run"
                                                                              if not c.traced else "outside scope")
                                                + "</b>")
    page = escape(c.page_text) if c.page_text else '<span class="muted">page not downloaded</span>'
    return (f"<details><summary>[{c.marker}] {escape(str(c.paper_id))} p.{c.page if c.page is not None else 'file'}"
            f" — {escape(c.quote[:120])}{flag}</summary><p><b>hit</b> {escape(c.hit_text[:1200]) or '-'}</p>"
            f"<p><b>page</b> {page}</p></details>")


def sheet_html(s: JudgeSheet) -> str:
    prev = "".join(f"<p class=muted><b>earlier turn</b> {escape(p['question'])}<br>{escape(p['answer'][:600])}</p>"
                   for p in s.previous)
    dims = "".join(f"<tr><td>{escape(d)}</td><td class=score>&nbsp;</td><td>"
                   + (f"<i>proposed</i> {escape(str(s.proposal.scores.get(d, '-')))}" if s.proposal else "")
                   + "</td></tr>" for d in s.dimensions)
    proposal = ""
    if s.proposal is not None:
        why = escape(s.proposal.error or s.proposal.reason)
        proposal = f"<p><i>proposed by {escape(s.proposal.model)} (not a score):</i> {why}</p>"
    mech = ", ".join(f"{escape(k)} {escape(v)}" for k, v in s.mechanical.items())
    fixture = ""
    if s.fixture:
        text = json.dumps(s.fixture, ensure_ascii=False, indent=1, default=str)[:6000]
        fixture = (f"<details><summary>how the turn was prepared ({escape(', '.join(s.fixture))})</summary>"
                   f"<pre>{escape(text)}</pre></details>")
    return (f'<section id="{escape(s.record_id)}"><h3>{escape(s.record_id)} {escape(s.name)}</h3>'
            f'<p class=muted>{escape(s.sheet)} · state {escape(s.state)} · {s.hits} hits · {mech}</p>{prev}'
            f"{fixture}<p><b>prompt</b> {escape(s.prompt)}</p><p><b>answer</b></p><pre>{escape(s.answer or '(none)')}</pre>"
            f"<p><b>citations</b> ({len(s.citations)})</p>{''.join(_citation(c) for c in s.citations)}"
            f"<p><b>ground truth</b></p><pre>{escape(s.ground_truth)}</pre><p class=muted>{escape(s.reference)}"
            f" · focus: {escape(s.focus)}</p><details><summary>scoring rules</summary><pre>{escape(s.rules)}</pre>"
            f"</details><table><tr><th>dimension</th><th>score 0–4 / U / N/A</th><th>proposal</th></tr>{dims}"
            f"</table>{proposal}</section>")


CSS = ("body{font:14px/1.5 system-ui,'Noto Sans CJK SC','WenQuanYi Micro Hei',sans-serif;margin:24px;max-width:1000px}"
       "pre{white-space:pre-wrap;background:#f6f8fa;padding:8px}td,th{border:1px solid #d0d7de;padding:3px 8px}"
       "table{border-collapse:collapse}.score{min-width:120px}.muted{color:#57606a}section{border-top:2px solid "
       "#d0d7de;margin-top:24px}")


def write_sheets(out_dir: Path, sheets: list[JudgeSheet]) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    index = "".join(f'<li><a href="#{escape(s.record_id)}">{escape(s.record_id)}</a> {escape(s.name)}</li>'
                    for s in sheets)
    html = (f'<!doctype html><html lang="zh"><head><meta charset="utf-8"><title>judge sheets</title><style>{CSS}'
            f"</style></head><body><h1>Judge sheets ({len(sheets)} case-turns)</h1><p>Score each dimension on its "
            "own (0–4 by the rules, U for missing evidence, N/A where it does not apply); never average. "
            "Proposed scores are an LLM judge's suggestion, not a score.</p>"
            f"<ol>{index}</ol>{''.join(sheet_html(s) for s in sheets)}</body></html>")
    files = {"sheets.html": html, "sheets.csv": sheets_csv(sheets),
             "sheets.json": json.dumps([s.model_dump(mode="json") for s in sheets], ensure_ascii=False, indent=1)}
    written = {}
    for name, text in files.items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written[name] = path
    return written
