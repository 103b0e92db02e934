"""`rig capacity`: how many concurrent researchers a deployment holds within the policy's SLOs."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from rig.capacity.session import CapacityOptions, run_capacity
from rig.cli.console import Output, console, escape, fail, live_progress, option_error
from rig.cli.grouped import grouped
from rig.errors import RigError
from rig.load.options import LoadOptions
from rig.policy import load_policy
from rig.results.summary import RunSummary
from rig.run import EmbeddedChoice, OutputChoice, PolicyChoice, TargetChoice, flag_names


@grouped
def capacity(search: CapacityOptions, target: TargetChoice, embedded: EmbeddedChoice, deciding: PolicyChoice,
             output: OutputChoice, printing: Output,
             think: Annotated[str, typer.Option(help="Think time range in seconds between a user's questions.",
                                                rich_help_panel="Load")] = "1-3",
             workers: Annotated[str, typer.Option(help="Locust workers (0: one local process; auto: one per core).",
                                                  rich_help_panel="Load")] = "0") -> None:
    """Find the highest offered load (closed-loop researchers) that holds the policy's thresholds.

    Steps of users double until one does not hold, then bisect; each step is judged on the runs submitted after
    its warm-up, with intervals (a percentile's bootstrap, an error ratio's Wilson interval): it holds only when the
    whole interval is within the SLO. A step whose load generator ran out of CPU or lagged is undecided, never a
    capacity figure. Writes capacity.json, report.html (the curve, the knee, what reached its limit first) and
    junit.xml. Exit 0 with an answer, 1 below --require, 2 undecided.
    """
    try:
        load = LoadOptions.model_validate({**target.model_dump(), **embedded.model_dump(), **deciding.model_dump(),
                                           **output.model_dump(), "think": think, "workers": workers})
    except ValidationError as exc:
        raise fail(option_error(exc, flag_names(LoadOptions))) from None
    options = search.model_copy(update={"load": load})
    try:
        load_policy(deciding.policy)
    except RigError as exc:
        raise fail(exc) from None
    quiet, json_out = printing.quiet, printing.json_out
    with live_progress("capacity", quiet=quiet or json_out, every_s=5.0) as progress:
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
    console.print(f"capacity: {escape(cap.answer)}")
    console.print(f"decision: {decision.decision} — " + escape("; ".join(decision.reasons[:3])))
    console.print(f"reports: {run.run_dir}/report.html, capacity.json, junit.xml")
    raise typer.Exit(decision.exit_code)
