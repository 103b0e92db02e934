"""`rig demo`: the full pre-release run on the embedded default, ending in one report and the gate's exit code."""

from __future__ import annotations

import typer
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from rig.cli.console import Output, console, escape, fail, live_progress
from rig.cli.grouped import grouped
from rig.errors import RigError
from rig.prerelease import PrereleaseOptions, PrereleaseResult, run_prerelease
from rig.results.summary import RunSummary


@grouped
def demo(options: PrereleaseOptions, output: Output) -> None:
    """Run the whole pre-release check: load with browsers under chaos, the 38-case gate, the 75 quality turns.

    Everything runs on loopback against the embedded workbench and stops by itself. Writes report.html
    (gate decision first) and prerelease.json, with each part's own run directory beside them.
    Exit code: the gate's (0 pass, 1 fail, 2 undecided).
    """
    if not console.is_terminal or output.quiet or output.json_out:  # a CI log: a line per part's progress (at
        # most every 5 s each, from the start); nothing with --quiet or --json
        with live_progress("demo", every_s=5.0, quiet=output.quiet or output.json_out) as line:
            try:
                result = run_prerelease(options, lambda part, text, done, total: line(f"{part}: {text}", done, total))
            except RigError as exc:
                raise fail(exc) from None
    else:
        result = _with_bars(options)
    d = result.decision
    if output.json_out:
        print(RunSummary(kind="demo", decision=d.decision, exit_code=d.exit_code, reasons=d.reasons,
                         run_dir=result.run_dir).model_dump_json(indent=2))
        raise typer.Exit(d.exit_code)
    if output.quiet:
        console.print(f"gate decision: {d.decision} — " + escape("; ".join(d.reasons[:6])))
        raise typer.Exit(d.exit_code)
    table = Table("part", "decision", "wall", title="pre-release run")
    for part, decision in (("load", result.load.decision), ("gate", result.gate.decision),
                           ("quality", result.quality.decision)):
        table.add_row(part, decision.decision, f"{result.timings_s.get(part, 0):.0f} s")
    console.print(table)
    console.print(f"[bold]gate decision: {d.decision.upper()}[/] — " + escape("; ".join(d.reasons[:6])))
    console.print(f"report: {result.run_dir}/report.html (total {result.timings_s['total']:.0f} s)")
    raise typer.Exit(d.exit_code)


def _with_bars(options: PrereleaseOptions) -> PrereleaseResult:
    """The pre-release run with a progress bar per part (on a terminal)."""
    with Progress(TextColumn("[bold]{task.fields[part]}"), BarColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=console) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(part: str, text: str, done: float, total: float) -> None:
            if part not in tasks:
                tasks[part] = bar.add_task(text, total=total or None, part=part)
            bar.update(tasks[part], description=text[:60], completed=done, total=total or None)

        try:
            return run_prerelease(options, progress)
        except RigError as exc:
            bar.stop()
            raise fail(exc) from None
