"""`rig demo`: the full pre-release run on the embedded default, ending in one report and the gate's exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from rig.cli.console import console, fail, option_error, seconds_option
from rig.errors import RigError
from rig.prerelease import PrereleaseOptions, run_prerelease


def demo(
    out: Annotated[Path | None, typer.Option(help="Run directory (default reports/<time>-demo).")] = None,
    users: Annotated[int, typer.Option(help="Locust users of the load part.")] = 8,
    workers: Annotated[int, typer.Option(help="Locust workers (distributed mode on loopback).")] = 2,
    browsers: Annotated[int, typer.Option(help="Playwright browser users mixed into the load.")] = 1,
    duration: Annotated[str, typer.Option(help="Length of the load part, e.g. 60s.")] = "60s",
    chaos: Annotated[Path | None, typer.Option(help="Chaos schedule of the load part (default: tool errors, "
                                                    "then one restart).")] = None,
    policy: Annotated[Path | None, typer.Option(help="Gate policy (default: all cases, T4/T5 p95 thresholds).")]
    = None,
    gate_browser: Annotated[bool, typer.Option(help="Run the gate's browser halves (cases 1, 5, 17, 20, 22, 27–30).")
                            ] = True,
    resume: Annotated[Path | None, typer.Option(
        help="Continue a killed pre-release run: finished parts are kept, a killed load part is finished from "
             "its evidence, the gate and quality parts resume.")] = None,
) -> None:
    """Run the whole pre-release check: load with browsers under chaos, the 38-case gate, the 75 quality turns.

    Everything runs on loopback against the embedded workbench and stops by itself. Writes report.html
    (gate decision first) and prerelease.json, with each part's own run directory beside them.
    Exit code: the gate's (0 pass, 1 fail, 2 undecided).
    """

    try:
        options = PrereleaseOptions(out=out, users=users, workers=workers, browsers=browsers,
                                    duration_s=seconds_option(duration, "--duration"), chaos=chaos, policy=policy,
                                    gate_browser=gate_browser, resume=resume)
    except ValidationError as exc:
        raise fail(option_error(exc, {"duration_s": "--duration"})) from None
    with Progress(TextColumn("[bold]{task.fields[part]}"), BarColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=console) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(part: str, text: str, done: float, total: float) -> None:
            if part not in tasks:
                tasks[part] = bar.add_task(text, total=total or None, part=part)
            bar.update(tasks[part], description=text[:60], completed=done, total=total or None)

        try:
            result = run_prerelease(options, progress)
        except RigError as exc:
            bar.stop()
            raise fail(exc) from None
    table = Table("part", "decision", "wall", title="pre-release run")
    for part, decision in (("load", result.load.decision), ("gate", result.gate.decision),
                           ("quality", result.quality.decision)):
        table.add_row(part, decision.decision, f"{result.timings_s.get(part, 0):.0f} s")
    console.print(table)
    d = result.decision
    console.print(f"[bold]gate decision: {d.decision.upper()}[/] — " + "; ".join(d.reasons[:6]))
    console.print(f"report: {result.run_dir}/report.html (total {result.timings_s['total']:.0f} s)")
    raise typer.Exit(d.exit_code)
