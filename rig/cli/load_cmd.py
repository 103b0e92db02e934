"""`rig load`: many simulated researchers against a target, measured the way the eval set defines T2–T13."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from rig.cli.console import console, fail, live_progress, option_error, think_option
from rig.errors import RigError
from rig.load import live
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.load.stages import parse_shape
from rig.policy import load_policy
from rig.report.load_section import error_headline, replay_line
from rig.results.summary import RunSummary

FLAGS = {"duration_s": "--duration", "rate_per_s": "--rate", "think_min_s": "--think", "think_max_s": "--think",
         "master_bind": "--master-bind-host"}  # LoadOptions fields whose option has another name


def load(
    users: Annotated[int, typer.Option(help="Simulated researchers (closed loop) or concurrency cap (open loop).")] = 10,
    spawn_rate: Annotated[float, typer.Option(help="Users started per second.")] = 5.0,
    duration: Annotated[str, typer.Option(help="How long to run, e.g. 60s or 2m; the run stops by itself.")] = "60s",
    arrival: Annotated[str, typer.Option(help="closed (think time), constant or poisson (open loop).")] = "closed",
    rate: Annotated[str, typer.Option(help="Open-loop session arrival rate, e.g. 2/s.")] = "1/s",
    workers: Annotated[int, typer.Option(help="Locust workers (0: one local process).")] = 0,
    expect_workers: Annotated[int | None, typer.Option(help="Workers the master waits for (incl. remote).")] = None,
    master_host: Annotated[str | None, typer.Option(help="With --worker-only: the master to join.")] = None,
    master_port: Annotated[int | None, typer.Option(help="Master port (both sides).")] = None,
    master_bind_host: Annotated[str, typer.Option(
        help="Interface the master listens on for workers: 0.0.0.0 or its address when workers run elsewhere.")
    ] = "127.0.0.1",
    worker_only: Annotated[bool, typer.Option(
        help="Start workers only, joining --master-host; they end when the master does (or a minute after losing it).")
    ] = False,
    target: Annotated[str | None, typer.Option(help="External target URL (needs --config).")] = None,
    config: Annotated[Path | None, typer.Option(help="rig.yaml with accounts.")] = None,
    out: Annotated[Path | None, typer.Option(help="Run directory (default reports/<time>-load).")] = None,
    policy: Annotated[Path | None, typer.Option(help="policy.yaml with load thresholds (T4.p95 < 3s at 20 users).")] = None,
    pushgateway: Annotated[str | None, typer.Option(help="Push the final totals to this Pushgateway.")] = None,
    metrics_host: Annotated[str, typer.Option(
        help="Interface the master's /metrics binds (0.0.0.0 inside a container).")] = "127.0.0.1",
    otlp_endpoint: Annotated[str | None, typer.Option(
        help="Export a span per simulated run (traceparent sent to the target) to this OTLP/HTTP endpoint.")] = None,
    metrics_port: Annotated[int | None, typer.Option(help="Port of the master's Prometheus endpoint.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the arrival schedule.")] = 1,
    think: Annotated[str, typer.Option(help="Think time range in seconds, e.g. 1-3.")] = "1-3",
    ingest_users: Annotated[int, typer.Option(help="Additional users uploading papers (T1).")] = 0,
    browsers: Annotated[int, typer.Option(help="Playwright browser users beside the Locust users.")] = 0,
    chaos: Annotated[Path | None, typer.Option(
        help="Chaos schedule (YAML, see docs/chaos.example.yaml) applied during the run.")] = None,
    chaos_metrics_port: Annotated[int | None, typer.Option(
        help="Port of the schedule's Prometheus endpoint (rig_chaos_faults_total); default a free port.")] = None,
    baseline: Annotated[str | None, typer.Option(
        help="Also decide against this earlier run (a run directory, or last-pass: the newest passing run of this "
             "kind and target): the policy's baseline rules (default: no new FAIL) and rig compare's regressions.")
    ] = None,
    replay: Annotated[Path | None, typer.Option(
        help="Replay a trace export (Langfuse observations JSON or an OTLP/JSON dump): its sessions, turns and "
             "arrival times; the run lasts as long as the replay (--duration is not used).")] = None,
    speed: Annotated[float, typer.Option(help="Replay: arrivals this many times faster (60: an hour in a minute).")
    ] = 1.0,
    window: Annotated[str | None, typer.Option(help="Replay: only this part of the trace, e.g. 10m-20m or 1h-.")] = None,
    max_sessions: Annotated[int | None, typer.Option(help="Replay: at most this many sessions (the earliest).")] = None,
    anonymise: Annotated[bool, typer.Option(
        help="Replay: send questions of the rig's corpus in place of the trace's texts (none is sent or stored).")
    ] = False,
    shape: Annotated[str | None, typer.Option(
        help="Stages of users as k6 ramps them, duration:target each: 30s:10,1m:10,10s:0 (ramp to 10, hold, ramp "
             "down), or a YAML file with stages: [{duration, target}]; the run lasts as long as its stages.")
    ] = None,
    slots: Annotated[int | None, typer.Option(help="The embedded workbench's run slots (runs executing at once).")
    ] = None,
    soak: Annotated[str | None, typer.Option(
        help="Hold the load this long (e.g. 30m) and fit each resource's slope per hour (memory, open files, slots, "
             "T4, T5, and T4 per question of a session): a slope whose interval lies past the policy's bound fails "
             "the run.")] = None,
    mix: Annotated[str | None, typer.Option(
        help="Change how often researchers draw each action, ACTION=WEIGHT: ask=10, revision=3, stop_resume=1, "
             "late_stop=1 (a stop racing the run's end), regenerate=1, export=1, search=2 by default; 0 leaves one "
             "out. Example: --mix late_stop=5,search=0.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress and no tables: thresholds and the "
                                        "decision only.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the end summary as JSON on stdout (nothing else "
                                           "there; docs/schemas/summary.schema.json).")] = False,
) -> None:
    """Run a bounded load test; writes load.json and report.html into the run directory.

    Without --target it starts the embedded workbench. With --workers K it starts a Locust master and K
    workers over Locust's own transport; on other machines `--worker-only --master-host HOST` adds more.
    """

    think_s = think_option(think)
    try:
        shaped = parse_shape(shape) if shape else None
    except RigError as exc:
        raise fail(exc) from None
    try:
        options = LoadOptions(shape=shaped, slots=slots, soak=soak is not None, users=users, spawn_rate=spawn_rate,
                              duration_s=soak if soak is not None else duration,
                              arrival=arrival,
                              rate_per_s=rate, workers=workers, expect_workers=expect_workers, master_host=master_host,
                              master_port=master_port, master_bind=master_bind_host, worker_only=worker_only,
                              target=target, config=config, out=out,
                              policy=policy, pushgateway=pushgateway, metrics_port=metrics_port, seed=seed,
                              otlp_endpoint=otlp_endpoint, metrics_host=metrics_host,
                              think_min_s=think_s[0], think_max_s=think_s[1], ingest_users=ingest_users,
                              browsers=browsers, chaos=chaos, chaos_metrics_port=chaos_metrics_port, baseline=baseline,
                              replay=replay, speed=speed, window=window, max_sessions=max_sessions, anonymise=anonymise,
                              mix=mix or {})
    except ValidationError as exc:
        raise fail(option_error(exc, FLAGS)) from None
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
        if s.replay is not None:
            console.print(replay_line(s))
        console.print(f"throughput {s.throughput_rps:.2f} runs/s, {s.requests} HTTP requests ({s.requests_per_s:.1f}/s), "
                      f"error ratio over the whole run {s.error_ratio:.2%}, send lag p99 {s.send_lag.p99 or 0:.1f} ms")
    if s and s.thresholds:  # every threshold, held or not, as k6 lists them
        checks = Table("", "threshold", "observed", title="thresholds")
        for c in s.thresholds:
            mark = "[green]✓[/]" if c.holds else "[red]✗[/]" if c.holds is False else "[yellow]?[/]"
            checks.add_row(mark, c.text, c.shown)
        console.print(checks)
    console.print(f"decision: {result.decision.decision} — " + "; ".join(result.decision.reasons[:5]))
    for w in s.chaos.windows if s and s.chaos and not quiet else []:
        extra = f", interrupted {w.interrupted}, lost {w.lost}, ready {w.ready_s} s" if w.via == "restart" else ""
        console.print(f"chaos {w.step} ({w.fault}): {w.runs_in_flight} runs in flight, recovery {w.recovery_s} s{extra}")
    console.print(f"reports: {result.run_dir}/report.html, load.json, junit.xml, locust_stats.csv")
    raise typer.Exit(result.decision.exit_code)
