"""`rig capacity`: how many concurrent researchers a deployment holds within the policy's SLOs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from rig.capacity.session import CapacityOptions, run_capacity
from rig.cli.console import Output, console, fail, live_progress, option_error, seconds_option, think_option
from rig.errors import RigError
from rig.load.options import LoadOptions
from rig.policy import load_policy
from rig.results.summary import RunSummary

FLAGS = {"step_s": "--step", "warmup_s": "--warmup", "budget_s": "--budget", "max_users": "--max-users",
         "max_steps": "--max-steps", "lag_limit_ms": "--client-lag-limit", "cpu_limit_pct": "--client-cpu-limit",
         "think_min_s": "--think", "think_max_s": "--think"}


def capacity(
    policy: Annotated[Path | None, typer.Option(
        help="policy.yaml whose thresholds are the SLOs searched against, e.g. [T4.p95 < 3s, error_rate < 1%].")
    ] = None,
    start: Annotated[int, typer.Option(help="Users of the first step.")] = 1,
    max_users: Annotated[int, typer.Option(help="The most users a step offers.")] = 64,
    step: Annotated[str, typer.Option(help="Each step's length, its warm-up included.")] = "30s",
    warmup: Annotated[str, typer.Option(help="The start of each step left out of its judgement.")] = "10s",
    max_steps: Annotated[int, typer.Option(help="The most steps the search runs.")] = 12,
    budget: Annotated[str, typer.Option(help="The whole search's time limit.")] = "15m",
    confidence: Annotated[float, typer.Option(help="Confidence of each step's call (interval of its SLOs).")] = 0.9,
    require: Annotated[int | None, typer.Option(
        help="Fail (exit 1) when the deployment holds fewer researchers than this.")] = None,
    think: Annotated[str, typer.Option(help="Think time range in seconds between a user's questions.")] = "1-3",
    workers: Annotated[int, typer.Option(help="Locust workers (0: one local process).")] = 0,
    target: Annotated[str | None, typer.Option(help="External target URL (needs --config).")] = None,
    config: Annotated[Path | None, typer.Option(help="rig.yaml with accounts.")] = None,
    slots: Annotated[int | None, typer.Option(help="The embedded workbench's run slots.")] = None,
    token_delay_ms: Annotated[float | None, typer.Option(
        help="The embedded workbench's delay per answer token (a slower model).")] = None,
    client_cpu_limit: Annotated[float, typer.Option(
        help="A Locust process past this CPU share (% of a core) makes its step undecided.")] = 90.0,
    client_lag_limit: Annotated[str, typer.Option(
        help="An event loop waking this late (p95) makes its step undecided.")] = "50ms",
    out: Annotated[Path | None, typer.Option(help="Run directory (default reports/<time>-load).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="The answer and the decision only.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the end summary as JSON on stdout.")] = False,
) -> None:
    """Find the highest offered load (closed-loop researchers) that holds the policy's thresholds.

    Steps of users double until one does not hold, then bisect; each step is judged on the runs submitted after
    its warm-up, with intervals (a percentile's bootstrap, an error ratio's Wilson interval): it holds only when the
    whole interval is within the SLO. A step whose load generator ran out of CPU or lagged is undecided, never a
    capacity figure. Writes capacity.json, report.html (the curve, the knee, what reached its limit first) and
    junit.xml. Exit 0 with an answer, 1 below --require, 2 undecided.
    """
    think_s = think_option(think)
    try:
        options = CapacityOptions(
            load=LoadOptions(target=target, config=config, out=out, policy=policy, workers=workers, slots=slots,
                             token_delay_ms=token_delay_ms, think_min_s=think_s[0], think_max_s=think_s[1]),
            start=start, max_users=max_users, step_s=seconds_option(step, "--step"),
            warmup_s=seconds_option(warmup, "--warmup", zero_ok=True),
            max_steps=max_steps, budget_s=seconds_option(budget, "--budget"), confidence=confidence,
            required=require, cpu_limit_pct=client_cpu_limit,
            lag_limit_ms=seconds_option(client_lag_limit, "--client-lag-limit") * 1000)
    except ValidationError as exc:
        raise fail(option_error(exc, FLAGS)) from None
    try:
        load_policy(policy)
    except RigError as exc:
        raise fail(exc) from None
    output = Output(quiet=quiet, json=json_out)
    with live_progress("capacity", quiet=output.quiet or output.json, every_s=5.0) as progress:
        try:
            run = run_capacity(options, progress)
        except RigError as exc:
            raise fail(exc) from None
    cap, decision = run.result, run.decision
    if json_out:
        print(RunSummary(kind="capacity", decision=decision.decision, exit_code=decision.exit_code,
                         reasons=decision.reasons, run_dir=run.run_dir).model_dump_json(indent=2))
        raise typer.Exit(decision.exit_code)
    if not quiet:
        table = Table("step", "users", "runs", "runs completed/s", "error %", "SLOs", "at its limit", "call",
                      title="capacity steps")
        for s in cap.steps:
            slos = ", ".join(f"{c.text.split()[0]} {c.observed if c.observed is not None else '—'} ({c.call})"
                             for c in s.slos)
            table.add_row(str(s.index), str(s.users), str(s.runs), f"{s.throughput_rps:.2f}",
                          f"{100 * (s.error_ratio or 0):.1f}", slos,
                          ", ".join(r.name for r in s.resources if r.at_limit) or "—", s.call)
        console.print(table)
    console.print(f"capacity: {cap.answer}")
    console.print(f"decision: {decision.decision} — " + "; ".join(decision.reasons[:3]))
    console.print(f"reports: {run.run_dir}/report.html, capacity.json, junit.xml")
    raise typer.Exit(decision.exit_code)
