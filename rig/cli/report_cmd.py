"""`rig report DIR`: finish a run from its evidence store (after a crash, a kill, or to write reports again)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.cli.console import JsonFlag, console, escape, fail, print_json
from rig.errors import RigError
from rig.finish import finish_run
from rig.results.summary import RunSummary


def report(
    run_dir: Annotated[Path, typer.Argument(help="A gate, load, capacity, quality or demo run directory.")],
    json_out: JsonFlag = False,
) -> None:
    """Rebuild a run's outputs (results.json / load.json / quality.json / prerelease.json and report.html) from
    its evidence store, without touching any target. A run that was killed is marked ended early (the time of
    its last evidence) and decides at best "undecided". Exit codes are the run's own: 0 pass, 1 fail, 2 undecided.
    """

    try:
        finished = finish_run(run_dir)
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        d = finished.decision
        print_json(RunSummary(kind=finished.kind, decision=d.decision, exit_code=d.exit_code, reasons=d.reasons,
                              run_dir=finished.run_dir))
        raise typer.Exit(d.exit_code)
    if finished.ended_early:
        console.print(f"[yellow]ended early[/]: last evidence at {finished.ended_early}")
    console.print(f"{finished.kind} decision: [bold]{finished.decision.decision}[/] — "
                  + escape("; ".join(finished.decision.reasons[:5])))
    for path in finished.outputs:
        console.print(f"  wrote {path}")
    raise typer.Exit(finished.decision.exit_code)
