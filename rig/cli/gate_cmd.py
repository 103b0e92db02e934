"""`rig gate`, `rig cases`, `rig selftest`."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.catalog import load_eval_set
from rig.cli.console import JsonFlag, Output, console, escape, fail, live_progress, print_json
from rig.cli.grouped import grouped
from rig.errors import RigError
from rig.gate.registry import all_cases
from rig.gate.session import GateOptions, run_gate
from rig.results.summary import RunSummary
from rig.selftest import REPRESENTATIVE, run_selftest

VERDICT_STYLE = {"PASS": "green", "FAIL": "red", "U": "yellow", "BLOCKED": "magenta", "NOT_RUN": "dim",
                 "N/A": "dim"}


@grouped
def gate(options: GateOptions, output: Output) -> None:
    """Run the eval set's reliability cases and decide whether the release may go.

    Without --target it starts the embedded workbench on a free loopback port. Exit 0 pass, 1 fail,
    2 undecidable (target unreachable, config invalid, or evidence that cannot decide).
    """
    raise typer.Exit(_run_and_print(options, output))


def _run_and_print(options: object, output: Output | None = None) -> int:
    assert isinstance(options, GateOptions)
    output = output or Output()
    began = time.monotonic()
    with live_progress("gate", quiet=output.quiet or output.json_out, counts=True) as progress:
        try:
            result = run_gate(options, progress)
        except RigError as exc:
            raise fail(exc) from None
    if output.json_out:
        counts = Counter(c.verdict.value for c in result.data.cases)
        print(RunSummary(kind="gate", decision=result.decision.decision, exit_code=result.decision.exit_code,
                         reasons=result.decision.reasons, run_dir=result.run_dir,
                         verdicts=dict(counts)).model_dump_json(indent=2))
        if result.setup_error is not None:
            fail(result.setup_error)
        return result.decision.exit_code
    if result.setup_error is not None:  # nothing ran: the cause and the fix, not a table of NOT_RUN
        fail(result.setup_error)
        console.print(f"[bold yellow]decision: {result.decision.decision.upper()}[/] — every case NOT_RUN")
        console.print(f"reports: {result.run_dir}/report.html (also results.json, junit.xml); the exchange is in "
                      f"{result.run_dir}/evidence.sqlite3")
        return result.decision.exit_code
    if not output.quiet:
        table = Table("record", "module", "case", "verdict", "reason",
                      title=f"verdicts ({time.monotonic() - began:.0f}s)")
        for c in result.data.cases:
            style = VERDICT_STYLE[c.verdict.value]
            reps = "" if len(c.repeats) <= 1 else " " + "/".join(v.value for v in c.repeats)
            table.add_row(c.record_id, c.module, escape(c.name), f"[{style}]{c.verdict.value}[/]{reps}", escape(c.reason[:90]))
        console.print(table)
    colour = {"pass": "green", "fail": "red", "undecided": "yellow", "recorded": "blue"}[result.decision.decision]
    console.print(f"[bold {colour}]decision: {result.decision.decision.upper()}[/]")
    for reason in result.decision.reasons[:12]:
        console.print(f"  • {escape(reason)}")
    console.print(f"reports: {result.run_dir}/report.html (also report.md, results.json, junit.xml)")
    return result.decision.exit_code


def list_cases(
    module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
    applicability: Annotated[str | None, typer.Option(help="Filter by applicability text, e.g. 首版必需 or 条件.")] = None,
    metric: Annotated[str | None, typer.Option(help="Only cases recording this metric code, e.g. T4.")] = None,
    eval_set: Annotated[Path | None, typer.Option(help="Another eval set file of the same schema.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """List the reliability cases with their record ids, modules, applicability and metric codes."""

    try:
        specs = all_cases()
        es = load_eval_set(eval_set)
    except RigError as exc:
        raise fail(exc) from None
    table = Table("id", "record", "module", "name", "applicability", "metrics", "implemented by")
    listed = []
    for c in es.reliability:
        spec = specs.get(c.case_id)
        codes = sorted(set(c.performance_codes) | set(c.related_codes))
        if module and (spec.module if spec else "") != module and c.module != module:
            continue
        if applicability and applicability not in c.applicability:
            continue
        if metric and metric not in codes:
            continue
        listed.append(c)
        table.add_row(str(c.case_id), c.record_id, f"{c.module} ({spec.module if spec else '-'})", c.name,
                      c.applicability, " ".join(codes), f"{spec.fn.__name__}" if spec else "[red]missing[/]")
    if json_out:
        print_json(listed)
        return
    console.print(table)


def selftest(
    defects: Annotated[str | None, typer.Option(help="Comma-separated defects (default: all).")] = None,
    representative: Annotated[bool, typer.Option(help="Only one defect per reliability module.")] = False,
    out: Annotated[Path, typer.Option(help="Where the self-test's run directories go.")] = Path("reports/selftest"),
    json_out: JsonFlag = False,
) -> None:
    """Gate the clean workbench, then each seeded defect; print the detection matrix.

    Exit non-zero if a defect is not caught (FAIL) by its case, or the clean run has a FAIL or U.
    """

    chosen = defects.split(",") if defects else REPRESENTATIVE if representative else None
    try:
        report = run_selftest(chosen, out, None if json_out else console)
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        print_json(report)
    raise typer.Exit(0 if report.ok else 1)


