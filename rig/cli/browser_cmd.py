"""`rig browser`: people in headless Chromium, timed from what the page shows."""

from __future__ import annotations

from contextlib import nullcontext

import typer
from rich.table import Table

from rig.cli.console import JsonFlag, console, fail, print_json
from rig.cli.grouped import grouped
from rig.errors import RigError
from rig.load.browser_run import BrowserRunOptions, run_browser


@grouped
def browser(options: BrowserRunOptions, json_out: JsonFlag = False) -> None:
    """Drive browser users through the target's web UI and time T3/T4/T5 from the DOM.

    A script injected before the page loads stamps the click on send, the first status, the first answer
    text and the end (MutationObserver, performance.timeOrigin + now()); each turn is linked to its run id
    and the server's run record. Writes browser.json and evidence.sqlite3 into the run directory.
    """
    users = options.users
    try:
        with console.status(f"{users} browser user(s), {options.turns} turn(s) each") if not json_out else nullcontext():
            summary, result = run_browser(options)
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        print_json(summary)
        raise typer.Exit(1 if result.errors else 0)
    table = Table(title="browser timings (ms)")
    for col in ("measure", "n", "p50", "p95", "max"):
        table.add_column(col)
    for key, row in (("T3", summary.T3), ("T4", summary.T4), ("T5", summary.T5),
                     ("T4_browser_minus_server", summary.T4_browser_minus_server)):
        table.add_row(key, str(row.count), *(f"{v:.1f}" if v is not None else "—" for v in (row.p50, row.p95, row.max)))
    console.print(table)
    console.print(f"{summary.turns} turns by {users} user(s) in {result.wall_s:.1f} s; browser PSS "
                  f"{summary.rss_base_mb:.0f} → {summary.rss_peak_mb:.0f} MiB")
    for err in result.errors:
        console.print(f"[red]error[/red] {err}")
    console.print(f"run directory: {result.run_dir}")
    raise typer.Exit(1 if result.errors else 0)
