"""`rig lab`: a distributed load run across hosts made of network namespaces on this machine (root)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from rig.cli.console import JsonFlag, console, escape, fail, option_error, print_json
from rig.clock import parse_duration
from rig.errors import RigError
from rig.netlab.lab import LabOptions, LabResult, default_out, run_lab
from rig.netlab.lab import clean as sweep
from rig.netlab.netns import check_can_run

app = typer.Typer(help="Multi-host runs on one machine: target, Locust master and workers in their own network "
                       "namespaces (needs root).", no_args_is_help=True)


def _seconds(text: str | None) -> float | None:

    return parse_duration(text) if text else None


@app.command("run")
def run(
    workers: Annotated[int, typer.Option(help="Worker hosts.")] = 2,
    users: Annotated[int, typer.Option(help="Simulated researchers, spread over the workers.")] = 6,
    duration: Annotated[str, typer.Option(help="Length of the load run, e.g. 30s.")] = "30s",
    kill_worker_at: Annotated[str | None, typer.Option(
        help="Crash worker-1's host (SIGKILL to all on it) this long after every user spawned, e.g. 10s.")] = None,
    link_down_at: Annotated[str | None, typer.Option(help="Pull worker-1's cable (interface down) at this offset.")]
    = None,
    link_down_for: Annotated[str, typer.Option(help="…and put it back after this long.")] = "8s",
    latency: Annotated[float | None, typer.Option(
        help="Slow the target's link by this many ms (one way, from the target) during a window.")] = None,
    latency_at: Annotated[str, typer.Option(help="Offset of the latency window.")] = "10s",
    latency_for: Annotated[str, typer.Option(help="Length of the latency window.")] = "10s",
    out: Annotated[Path | None, typer.Option(help="Lab directory (default reports/<time>-lab).")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Start the reference target, a master and N workers on hosts of their own, run the load with the asked-for
    faults, and check that what the master merged is what the workers shipped (lab.json)."""

    try:
        options = LabOptions(workers=workers, users=users, duration_s=_seconds(duration) or 30.0,
                             out=out or default_out(), kill_worker_at_s=_seconds(kill_worker_at),
                             link_down_at_s=_seconds(link_down_at), link_down_for_s=_seconds(link_down_for) or 8.0,
                             latency_ms=latency, latency_at_s=_seconds(latency_at) or 0.0,
                             latency_for_s=_seconds(latency_for) or 10.0)
    except ValidationError as exc:
        raise fail(option_error(exc, {"duration_s": "--duration", "kill_worker_at_s": "--kill-worker-at",
                                      "link_down_at_s": "--link-down-at", "link_down_for_s": "--link-down-for",
                                      "latency_at_s": "--latency-at", "latency_for_s": "--latency-for"})) from None
    except ValueError as exc:  # a duration that does not parse
        raise fail(RigError(str(exc), fix="durations look like 30s, 2m or 90")) from None
    try:
        if json_out:
            result = run_lab(options, progress=lambda text: None)
        else:
            with console.status("lab") as status:
                result = run_lab(options, progress=lambda text: status.update(f"lab: {text}"))
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        print_json(result)
        raise typer.Exit(1 if any(not w.prefix for w in result.workers) else 0)
    _print_lab(result)
    if any(not w.prefix for w in result.workers):
        raise typer.Exit(1)


def _print_lab(result: LabResult) -> None:
    """What the master merged against what each worker shipped, then the chaos windows and the decision."""
    table = Table("host", "worker", "reports shipped/counted", "rows shipped/counted/stored",
                  "requests shipped/counted", "lost at", "verdict", title="workers: shipped vs merged")
    for w in result.workers:
        lost = ""
        if w.record and w.record.lost_ms and result.spawned_ms:
            lost = f"+{(w.record.lost_ms - result.spawned_ms) / 1000:.1f} s"
        verdict = "intact" if w.intact else ("counted prefix" if w.prefix else "MISMATCH")
        table.add_row(w.host, (w.worker_id or "?")[-8:], f"{w.shipped_reports}/{w.counted_reports}",
                      f"{w.shipped_rows}/{w.counted_rows}/{w.stored_rows}",
                      f"{w.shipped_requests}/{w.counted_requests}", lost, verdict)
    console.print(table)
    console.print(f"merged requests {result.merged_requests} (workers shipped {result.shipped_requests}); "
                  f"rows stored {result.merged_rows} (shipped {result.shipped_rows}); "
                  f"master ended {result.overrun_s:+.1f} s after the planned end")
    for window in result.chaos_windows:
        console.print(f"window {window.get('step')} ({window.get('fault')}): T4 p50 shift "
                      f"{_delta(window.get('T4_shift_ms'))} ms inside, {_delta(window.get('T4_after_ms'))} ms after")
    console.print(f"decision: {result.decision} — " + escape("; ".join(result.reasons[:4])))
    console.print(f"lab: {result.out}/lab.json, run: {result.run_dir}/report.html")


def _delta(shift: object) -> str:
    value = shift.get("delta", {}).get("p50") if isinstance(shift, dict) else None
    return f"{value:+.0f}" if isinstance(value, (int, float)) else "?"


@app.command("clean")
def clean(json_out: JsonFlag = False) -> None:
    """Delete the namespaces of labs whose process has gone (after a crash or a power cut)."""

    try:
        check_can_run()
    except RigError as exc:
        raise fail(exc) from None
    removed = sweep()
    if json_out:
        print(json.dumps({"removed": removed}))
        return
    console.print(f"removed {len(removed)} namespace(s)" + (f": {', '.join(removed)}" if removed else ""))
