"""Token usage and cost of each run, three ways: Langfuse's trace, the target's run record, the rig's estimate.

Langfuse ingests asynchronously, so a trace is read after a settle window and retried until it holds as
many generations as the run record has model requests (or the timeout passes). Every field that one side
lacks is named; a field both sides have must agree (tokens exactly, cost within a micro-dollar).
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rig.adapters.models import RunDetail
from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.langfuse.client import LangfuseClient
from rig.langfuse.models import LangfuseTrace
from rig.waiting import wait_until

Status = Literal["match", "mismatch", "missing", "not_found"]
COST_TOLERANCE_USD = 1e-6
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def rig_token_estimate(text: str) -> int:
    """The rig's own count of a text's tokens: one per CJK character, one per ~4 characters of other words."""
    cjk = len(_CJK.findall(text))
    rest = _CJK.sub(" ", text)
    return cjk + sum(max(1, math.ceil(len(w) / 4)) for w in rest.split())


class FieldRow(BaseModel):
    """One quantity of one run from each side; `status` compares Langfuse with the target's record."""

    field: str
    langfuse: float | None
    target: float | None
    target_kind: str = ""  # provider / estimate / price-table / actual
    rig_estimate: float | None = None
    status: Status
    note: str = ""


class RunReconciliation(BaseModel):
    run_id: str
    case_id: int | None
    trace_id: str | None
    status: Status
    attempts: int = 0
    rows: list[FieldRow] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)  # every field one side lacks, named


class Reconciliation(BaseModel):
    run_dir: str
    host: str
    settle_s: float
    runs: list[RunReconciliation]

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.runs:
            out[r.status] = out.get(r.status, 0) + 1
        return out


def _compare(name: str, lf: float | None, target: float | None, kind: str, rig: float | None,
             tolerance: float, missing: list[str], lf_gap: str) -> FieldRow:
    if lf is None or target is None:
        if lf is None:
            missing.append(lf_gap)
        if target is None:
            missing.append(f"target: {name} not in the run record")
        return FieldRow(field=name, langfuse=lf, target=target, target_kind=kind, rig_estimate=rig, status="missing",
                        note=lf_gap if lf is None else f"target has no {name}")
    ok = abs(lf - target) <= tolerance
    return FieldRow(field=name, langfuse=lf, target=target, target_kind=kind, rig_estimate=rig,
                    status="match" if ok else "mismatch", note="" if ok else f"differs by {lf - target:+g}")


def reconcile_run(detail: RunDetail, answer: str | None, trace: LangfuseTrace | None, *, case_id: int | None = None,
                  attempts: int = 0) -> RunReconciliation:
    """Set Langfuse's usage and cost of one run beside its record; name what is missing or differs."""
    if trace is None:
        return RunReconciliation(run_id=detail.run_id, case_id=case_id, trace_id=detail.trace_id, status="not_found",
                                 attempts=attempts, missing=[f"langfuse: no trace {detail.trace_id}"])
    missing: list[str] = []
    gens = trace.generations
    if detail.usage.source == "estimate":
        missing.append("target: provider usage (the record counts estimates, usage.source=estimate)")
    for i, g in enumerate(gens, 1):
        for key, value in (("usage_details", g.usage_details), ("cost_details", g.cost_details)):
            if not value:
                missing.append(f"langfuse: {key} of generation {i} ({g.name})")

    def total(key: str, detail_field: str) -> float | None:
        values = [(getattr(g, detail_field) or {}).get(key) for g in gens]
        return None if not gens or any(v is None for v in values) else float(sum(v or 0 for v in values))

    kind = detail.usage.source or "provider"
    rows = [
        FieldRow(field="generations", langfuse=float(len(gens)), target=float(detail.model_requests or 0),
                 target_kind="model_requests", status="match" if len(gens) == (detail.model_requests or 0)
                 else "mismatch"),
        _compare("input_tokens", total("input", "usage_details"), _num(detail.usage.input_tokens), kind, None, 0,
                 missing, "langfuse: input tokens (some generation has no usage)"),
        _compare("output_tokens", total("output", "usage_details"), _num(detail.usage.output_tokens), kind,
                 float(rig_token_estimate(answer)) if answer else None, 0, missing,
                 "langfuse: output tokens (some generation has no usage)"),
    ]
    target_cost: float | None
    if detail.cost.actual_usd is not None:
        target_cost, cost_kind = detail.cost.actual_usd, "actual"
    else:
        target_cost, cost_kind = detail.cost.estimated_usd, "price-table estimate"
    lf_cost = total("total", "cost_details")
    if lf_cost is None and trace.total_cost and gens and all(g.cost_details for g in gens):
        lf_cost = trace.total_cost
    rows.append(_compare("cost_usd", lf_cost, target_cost, cost_kind, None, COST_TOLERANCE_USD, missing,
                         "langfuse: cost (some generation has no cost_details)"))
    if rows[0].status == "mismatch":
        missing.append(f"langfuse: {len(gens)} generations for {detail.model_requests} model requests")
    statuses = {r.status for r in rows}
    status: Status = "missing" if "missing" in statuses else "mismatch" if "mismatch" in statuses else "match"
    return RunReconciliation(run_id=detail.run_id, case_id=case_id, trace_id=detail.trace_id, status=status,
                             attempts=attempts, rows=rows, missing=list(dict.fromkeys(missing)))


def _num(v: int | None) -> float | None:
    return None if v is None else float(v)


def fetch_settled(client: LangfuseClient, trace_id: str, expected_generations: int, *, timeout_s: float,
                  interval_s: float = 0.5) -> tuple[LangfuseTrace | None, int]:
    """Read a trace until it holds the expected generations or `timeout_s` passes; (last trace seen, attempts)."""
    trace: LangfuseTrace | None = None
    attempts = 0

    def settled() -> bool:
        nonlocal trace, attempts
        attempts += 1
        trace = client.trace(trace_id)
        return trace is not None and len(trace.generations) >= expected_generations

    wait_until(settled, timeout_s, interval_s=interval_s)
    return trace, attempts


def pull(run_dir: Path, client: LangfuseClient, *, settle_s: float = 5.0, timeout_s: float = 30.0,
         progress: Any = None) -> Reconciliation:
    """Reconcile every run recorded in a gate run directory; writes `langfuse.json` and `langfuse.md` there."""
    db = run_dir / "evidence.sqlite3"
    if not db.exists():
        raise ConfigError(f"{run_dir} holds no evidence.sqlite3", fix="pass the directory of a finished rig gate run")
    store = EvidenceStore(db)
    try:
        records = [r for r in store.runs() if r.trace_id]
        if not records:
            raise ConfigError(f"{run_dir} holds no run records with a trace id",
                              fix="use a gate run directory (load runs keep samples, not run records)")
        answers = {d.get("run_id"): d.get("answer") for e in store.evidence(kind="run") if isinstance(d := e.data, dict)}
        ended = max((r.detail.get("ended_at_ms") or 0) for r in records) / 1000
        wait = ended + settle_s - time.time()
        if wait > 0:  # Langfuse ingests asynchronously: give the last run's export time to land
            time.sleep(wait)
        out = []
        for i, r in enumerate(records, 1):
            detail = RunDetail.model_validate(r.detail)
            trace, attempts = fetch_settled(client, r.trace_id or "", detail.model_requests or 0, timeout_s=timeout_s)
            rec = reconcile_run(detail, answers.get(r.run_id), trace, case_id=r.case_id, attempts=attempts)
            store.add_evidence(r.rep, r.case_id, "langfuse", f"langfuse ↔ run {r.run_id}: {rec.status}",
                               rec.model_dump(mode="json"))
            out.append(rec)
            if progress:
                progress(f"run {r.run_id} → {rec.status}", i, len(records))
    finally:
        store.close()
    result = Reconciliation(run_dir=str(run_dir), host=client.host, settle_s=settle_s, runs=out)
    (run_dir / "langfuse.json").write_text(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=1),
                                           encoding="utf-8")
    (run_dir / "langfuse.md").write_text(markdown(result), encoding="utf-8")
    return result


def format_value(v: float | None, name: str) -> str:
    """A table cell: dollars to 8 places, counts as numbers, a dash for absent."""
    if v is None:
        return "—"
    return f"{v:.8f}" if name == "cost_usd" else f"{v:g}"


def markdown(result: Reconciliation) -> str:
    """The reconciliation table: one row per run and field, then every missing field named."""
    lines = [f"# Langfuse reconciliation ({result.host}, settle {result.settle_s:g} s)", "",
             "| run | case | field | Langfuse | target | target kind | rig estimate | status |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result.runs:
        if not r.rows:
            lines.append(f"| {r.run_id} | {r.case_id} | trace | — | — | — | — | {r.status} |")
        for f in r.rows:
            cells = [r.run_id, str(r.case_id), f.field, format_value(f.langfuse, f.field),
                     format_value(f.target, f.field), f.target_kind, format_value(f.rig_estimate, f.field), f.status]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Missing fields", ""]
    for r in result.runs:
        for m in r.missing:
            lines.append(f"- {r.run_id}: {m}")
    if not any(r.missing for r in result.runs):
        lines.append("- none")
    return "\n".join(lines) + "\n"
