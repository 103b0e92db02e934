"""`results.json` — the machine-readable result of a gate (or quality) run, as a typed model.

Its JSON Schema is published as `docs/schemas/results.schema.json` (`python -m rig.schemas --write`); `rig compare`
and `rig report` read it back through these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rig.measure.aggregate import TCodeStats
from rig.results.quality import QualitySummary
from rig.runmanifest import RunManifest
from rig.stats import Summary
from rig.verdict import Item, Verdict


class CaseResult(BaseModel):
    """A case's verdict over its repetitions, its items and its T-code headlines (what results.json lists)."""

    record_id: str
    case_id: int
    module: str
    name: str
    verdict: Verdict
    reason: str
    repeats: list[Verdict] = Field(default_factory=list)
    items: list[Item] = Field(default_factory=list)
    metrics: dict[str, TCodeStats] = Field(default_factory=dict)


class TCodeResult(Summary):
    code: str
    source: str
    label: str | None
    unit: str


class GateResults(BaseModel):
    """The decision with its reasons, the manifest, every case with its items, T-codes and end reasons."""

    decision: Literal["pass", "fail", "undecided", "recorded"]
    reasons: list[str]
    manifest: RunManifest
    cases: list[CaseResult]
    tcodes: list[TCodeResult]
    end_reasons: dict[str, int]
    quality: QualitySummary | None = None  # a quality run's per-metric summary
