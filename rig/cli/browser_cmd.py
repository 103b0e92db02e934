"""`rig browser`: people in headless Chromium, timed from what the page shows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.browser.run import BrowserRunOptions, run_browser
from rig.cli.console import console, fail
from rig.errors import RigError
from rig.rundir import run_directory


def browser(
    users: Annotated[int, typer.Option(help="Browser users at once, each in its own context.")] = 1,
    turns: Annotated[int, typer.Option(help="Questions each user asks, one after the other.")] = 3,
    target: Annotated[str | None, typer.Option(help="External target URL (needs --config).")] = None,
    config: Annotated[Path | None, typer.Option(help="rig.yaml: account a logs in through the UI.")] = None,
    selectors: Annotated[Path | None, typer.Option(help="Selector map of the target's UI (YAML).")] = None,
    out: Annotated[Path | None, typer.Option(help="Run directory (default reports/<time>-browser).")] = None,
    deadline: Annotated[float, typer.Option(help="Seconds after which no new turn starts.")] = 180.0,
) -> None:
    """Drive browser users through the target's web UI and time T3/T4/T5 from the DOM.

    A script injected before the page loads stamps the click on send, the first status, the first answer
    text and the end (MutationObserver, performance.timeOrigin + now()); each turn is linked to its run id
    and the server's run record. Writes browser.json and evidence.sqlite3 into the run directory.
    """

    try:
        run_dir = run_directory("browser", out=out, reports_root=Path("reports"))
        options = BrowserRunOptions(users=users, turns=turns, target=target, config=config, selectors=selectors,
                                    out=run_dir, deadline_s=deadline)
        with console.status(f"{users} browser user(s), {turns} turn(s) each"):
            summary, result = run_browser(options)
    except RigError as exc:
        raise fail(exc) from exc
    table = Table(title="browser timings (ms)")
    for col in ("measure", "n", "p50", "p95", "max"):
        table.add_column(col)
    for key in ("T3", "T4", "T5", "T4_browser_minus_server"):
        row = summary[key]
        assert isinstance(row, dict)
        table.add_row(key, str(row["count"]), *(f"{row[k]:.1f}" if row[k] is not None else "—"
                                                for k in ("p50", "p95", "max")))
    console.print(table)
    console.print(f"{summary['turns']} turns by {users} user(s) in {result.wall_s:.1f} s; browser PSS "
                  f"{summary['rss_base_mb']:.0f} → {summary['rss_peak_mb']:.0f} MiB")
    for err in result.errors:
        console.print(f"[red]error[/red] {err}")
    console.print(f"run directory: {run_dir}")
    raise typer.Exit(1 if result.errors else 0)
