"""`rig langfuse pull`: the Langfuse side of a gate run's token usage and cost, reconciled run by run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.console import JsonFlag, console, fail, print_json, progress_bar
from rig.errors import RigError
from rig.langfuse.client import LangfuseClient
from rig.langfuse.reconcile import format_value
from rig.langfuse.reconcile import pull as do_pull

app = typer.Typer(help="Read a run directory's traces back from Langfuse and reconcile usage and cost.",
                  no_args_is_help=True)

STATUS_STYLE = {"match": "green", "mismatch": "red", "missing": "yellow", "not_found": "red"}


@app.command("pull")
def pull(
    run_dir: Annotated[Path, typer.Argument(help="A finished rig gate run directory (reports/<run>).")],
    host: Annotated[str | None, typer.Option(help="Langfuse host; default $LANGFUSE_HOST.")] = None,
    settle: Annotated[float, typer.Option(help="Seconds after the last run ended before the first read.")] = 5.0,
    timeout: Annotated[float, typer.Option(help="Seconds to keep retrying a trace that is absent or incomplete.")]
    = 30.0,
    json_out: JsonFlag = False,
) -> None:
    """For each run: Langfuse's tokens and cost beside the run record's and the rig's estimate.

    Keys come from LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY. Writes langfuse.json and langfuse.md into
    RUN_DIR and adds one `langfuse` evidence row per run. Exit 0 when every run matches, 1 otherwise.
    """

    try:
        client = LangfuseClient.from_env(host)
        if json_out:
            result = do_pull(run_dir, client, settle_s=settle, timeout_s=timeout)
        else:
            with progress_bar("reconciling") as advance:
                result = do_pull(run_dir, client, settle_s=settle, timeout_s=timeout,
                                 progress=lambda item, _i, n: advance(item, total=n))
        client.close()
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        print_json(result)
        raise typer.Exit(0 if all(r.status == "match" for r in result.runs) else 1)
    table = Table(title=f"Langfuse ↔ run records ({result.host})")
    for col in ("run", "case", "field", "Langfuse", "target", "target kind", "rig estimate", "status"):
        table.add_column(col, justify="right" if col in ("Langfuse", "target", "rig estimate") else "left")
    for r in result.runs:
        style = STATUS_STYLE[r.status]
        if not r.rows:
            table.add_row(r.run_id, str(r.case_id), "trace", "—", "—", "", "", f"[{style}]{r.status}[/]")
        for f in r.rows:
            table.add_row(r.run_id, str(r.case_id), f.field, format_value(f.langfuse, f.field),
                          format_value(f.target, f.field), f.target_kind, format_value(f.rig_estimate, f.field),
                          f"[{STATUS_STYLE[f.status]}]{f.status}[/]")
    console.print(table)
    for r in result.runs:
        for m in r.missing:
            console.print(f"[yellow]missing[/] {r.run_id}: {m}")
    console.print(" · ".join(f"{k}: {v}" for k, v in sorted(result.counts.items())) +
                  f" — written to {run_dir / 'langfuse.md'}")
    raise typer.Exit(0 if set(result.counts) == {"match"} else 1)
