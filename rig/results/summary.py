"""The end-of-run summary `--json` prints on stdout: the decision and what it rests on, for a CI step to read
without parsing a report (its schema is published as docs/schemas/summary.schema.json)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from rig.measure.thresholds import ThresholdCheck


class RunSummary(BaseModel):
    """One run's outcome: kind, decision, exit code, reasons, where its reports are; verdict counts for a gate,
    runs and the error ratio for a load run, and every threshold with what was observed."""

    kind: str
    decision: str
    exit_code: int
    reasons: list[str]
    run_dir: Path
    verdicts: dict[str, int] = Field(default_factory=dict)  # gate: cases by verdict
    runs: int | None = None  # load: runs measured
    error_ratio: float | None = None  # load: failed tasks of all attempted
    thresholds: list[ThresholdCheck] = Field(default_factory=list)
