"""`rig load`: many simulated researchers against a target, measured the way the eval set defines T2–T13."""

from __future__ import annotations

import typer
from rich.table import Table

from rig.cli.console import Output, console, escape, fail, live_progress
from rig.cli.grouped import grouped
from rig.errors import RigError
from rig.load import live
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.policy import load_policy
from rig.report.load_section import error_headline, replay_line
from rig.results.summary import RunSummary


@grouped
def load(options: LoadOptions, output: Output) -> None:
    """Run a bounded load test; writes load.json and report.html into the run directory.

    Without --target it starts the embedded workbench. With --workers K it starts a Locust master and K
    workers over Locust's own transport; on other machines `--worker-only --master-host HOST` adds more.
    """
    quiet, json_out = output.quiet, output.json_out
    try:
        load_policy(options.policy)  # a policy that cannot be read, or a threshold key the rig does not measure
    except RigError as exc:
        raise fail(exc) from None

    with live_progress("load", quiet=quiet or json_out, every_s=live.EVERY_S) as progress:
        try:
            result = run_load(options, progress)
        except RigError as exc:
            raise fail(exc) from None
    s = result.summary
    if json_out:
        print(RunSummary(kind="load", decision=result.decision.decision, exit_code=result.decision.exit_code,
                         reasons=result.decision.reasons, run_dir=result.run_dir, runs=s.runs if s else None,
                         error_ratio=s.error_ratio if s else None,
                         thresholds=s.thresholds if s else []).model_dump_json(indent=2))
        raise typer.Exit(result.decision.exit_code)
    if s and not quiet:
        table = Table("code", "source", "n", "p50 ms", "p90 ms", "p95 ms", "p99 ms", title="T-codes")
        for code, sources in s.by_source.items():
            for source, e in sources.items():
                table.add_row(code, source, str(e.count), *(f"{(getattr(e, k) or 0):.1f}" for k in ("p50", "p90", "p95", "p99")))
        console.print(table)
        console.print(error_headline(s))
        if s.client is not None and s.client.saturated:
            console.print(f"[yellow]client saturated[/]: {escape(s.client.why)}", soft_wrap=True)
        if s.replay is not None:
            console.print(replay_line(s))
        console.print(f"throughput {s.throughput_rps:.2f} runs/s, {s.requests} HTTP requests ({s.requests_per_s:.1f}/s), "
                      f"error ratio over the whole run {s.error_ratio:.2%}, send lag p99 {s.send_lag.p99 or 0:.1f} ms")
    if s and s.thresholds:  # every threshold, held or not, as k6 lists them
        checks = Table("", "threshold", "observed", title="thresholds")
        for c in s.thresholds:
            mark = "[green]✓[/]" if c.holds else "[red]✗[/]" if c.holds is False else "[yellow]?[/]"
            checks.add_row(mark, escape(c.text), c.shown)
        console.print(checks)
    console.print(f"decision: {result.decision.decision} — " + escape("; ".join(result.decision.reasons[:5])))
    for w in s.chaos.windows if s and s.chaos and not quiet else []:
        extra = f", interrupted {w.interrupted}, lost {w.lost}, ready {w.ready_s} s" if w.via == "restart" else ""
        console.print(f"chaos {w.step} ({w.fault}): {w.runs_in_flight} runs in flight, recovery {w.recovery_s} s{extra}")
    console.print(f"reports: {result.run_dir}/report.html, load.json, junit.xml, locust_stats.csv")
    raise typer.Exit(result.decision.exit_code)
