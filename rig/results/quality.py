"""A quality run's result, typed: what each case-turn leaves behind (its hits, citations, mechanical metrics and
T-codes), the per-metric summary, and `quality.json` (JSON Schema docs/schemas/quality.schema.json).

A `TurnRecord` is written to the evidence store (kind `quality_turn`) as each turn ends; the report, the
judge sheets and `quality.json` are all rendered from those records, never from memory of the run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rig.jsonvalue import JsonObject
from rig.measure.events import Citation
from rig.policy import Decision
from rig.verdict import Verdict

TurnKind = Literal["direct_tool", "conversation", "summary_fixture", "injection", "repeat_same"]


class RankedHit(BaseModel):
    """One retrieval hit in the order the target returned it (rank 1 first)."""

    rank: int
    doc_id: str
    paper_id: str | None = None
    page: int | None = None
    chunk_id: str
    score: float | None = None
    text: str = ""


class CitedSource(Citation):
    """A citation of the answer (as the target saved it), checked against this run's hits and allowed papers."""

    traced: bool  # points to a hit this run retrieved (same document, page and chunk)
    in_scope: bool  # points to an allowed paper of the turn
    hit_text: str = ""  # the text of the hit with its chunk id ("" when the run returned no such chunk)
    page_text: str | None = None  # the physical page as the rig downloaded it, for judges


class Metric(BaseModel):
    """A mechanical metric of one case-turn; `verdict` is None where the eval set sets no bar."""

    name: str
    value: float | None = None
    numerator: int | None = None
    denominator: int | None = None
    verdict: Verdict | None = None
    detail: str = ""


class TurnRecord(BaseModel):
    key: int
    record_id: str
    sheet: str
    case_id: int
    turn: int
    name: str
    kind: TurnKind
    dimensions: list[str]
    performance_codes: list[str]
    allowed_papers: list[str]
    question: str
    state: str  # how the turn ended: the run's state/reason, `searched`, or the verdict that stopped it
    answer: str | None = None
    run_id: str | None = None
    session_id: str | None = None
    scope_doc_ids: list[str] = Field(default_factory=list)
    effective_scope: list[str] = Field(default_factory=list)
    hits: list[RankedHit] = Field(default_factory=list)
    citations: list[CitedSource] = Field(default_factory=list)
    metrics: list[Metric] = Field(default_factory=list)
    tcodes: dict[str, str] = Field(default_factory=dict)  # each listed T-code: "measured" or why not
    fixture: JsonObject = Field(default_factory=dict)  # what the turn's fixture did (scope switch …), shown unread
    previous: list[dict[str, str]] = Field(default_factory=list)  # earlier turns of the case (question, answer)

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)


class MetricSummary(BaseModel):
    name: str
    turns: int  # case-turns where the metric has a value
    pooled: float | None = None  # Σ numerator / Σ denominator (traceability: all citations together)
    mean: float | None = None  # mean of the per-turn values
    minimum: float | None = None
    below_bar: list[str] = Field(default_factory=list)  # record ids failing the metric's bar, where it has one


class QualitySummary(BaseModel):
    turns: int
    states: dict[str, int]
    verdicts: dict[str, int]
    metrics: list[MetricSummary]
    decision: Decision


class TurnResult(BaseModel):
    """One case-turn in `quality.json`: how it ended, its metrics, and each listed T-code measured or why not."""

    record_id: str
    kind: str
    state: str
    run_id: str | None = None
    metrics: dict[str, Metric]
    tcodes: dict[str, str]


class QualityReport(BaseModel):
    """`quality.json` (JSON Schema: docs/schemas/quality.schema.json)."""

    summary: QualitySummary
    turns: list[TurnResult]
