"""`rig quality`: the eval set's 75 quality case-turns, mechanical metrics, and judge sheets."""

from __future__ import annotations

import typer
from rich.table import Table

from rig.cli.console import Output, console, escape, fail, live_progress
from rig.cli.grouped import grouped
from rig.errors import RigError
from rig.quality.session import JudgeOptions, QualityOptions, run_quality
from rig.results.quality import QualitySummary
from rig.results.summary import RunSummary


@grouped
def quality(options: QualityOptions, judge: JudgeOptions, output: Output) -> None:
    """Run the quality workload: expert, user and adversarial case-turns, each in the way its case says.

    Writes quality.json, report.html and judge/sheets.{html,csv,json} into the run directory. Exit 0 when
    every turn is recorded with traceability 1.00 and no out-of-scope citation, 1 when a bar fails, 2 when
    the run cannot decide. Judged dimensions (E1–E8, R2–R4) stay U until a judge scores the sheets.
    """
    options = options.model_copy(update={"judge": judge if judge.base_url else None})
    with live_progress("quality", counts=True, every_s=5.0, quiet=output.quiet or output.json_out) as progress:
        try:
            result = run_quality(options, progress)
        except RigError as exc:
            raise fail(exc) from None
    d = result.decision
    if output.json_out:
        print(RunSummary(kind="quality", decision=d.decision, exit_code=d.exit_code, reasons=d.reasons,
                         run_dir=result.run_dir).model_dump_json(indent=2))
        raise typer.Exit(d.exit_code)
    if output.quiet:
        console.print(f"decision: {d.decision} — " + escape("; ".join(d.reasons)))
    else:
        print_summary(result.summary)
        console.print(f"reports: {result.run_dir}/report.html, quality.json, judge/sheets.html")
    raise typer.Exit(d.exit_code)


def print_summary(summary: object) -> None:

    assert isinstance(summary, QualitySummary)
    table = Table("metric", "turns", "pooled", "mean", "min", "below bar", title="quality metrics (each on its own)")
    for m in summary.metrics:
        table.add_row(m.name, str(m.turns), *("-" if v is None else f"{v:.2f}" for v in (m.pooled, m.mean, m.minimum)),
                      ", ".join(m.below_bar[:5]) or "-")
    console.print(table)
    console.print("turn ends: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.states.items())))
    console.print(f"decision: {summary.decision.decision} — " + escape("; ".join(summary.decision.reasons)))
