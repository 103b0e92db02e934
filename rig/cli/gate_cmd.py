"""`rig gate`, `rig cases`, `rig selftest`."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.catalog import load_eval_set
from rig.cli.console import Output, console, fail, live_progress, seconds_option
from rig.errors import RigError
from rig.gate.registry import all_cases
from rig.gate.session import GateOptions, run_gate
from rig.results.summary import RunSummary
from rig.selftest import REPRESENTATIVE, run_selftest

VERDICT_STYLE = {"PASS": "green", "FAIL": "red", "U": "yellow", "BLOCKED": "magenta", "NOT_RUN": "dim",
                 "N/A": "dim"}


def _ids(text: str | None) -> list[int] | None:
    """`1-5,20,27` → [1, 2, 3, 4, 5, 20, 27]; anything else is a usage error (exit 2) saying which part."""
    if text is None:
        return None
    out: list[int] = []
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise typer.BadParameter("no case given (for example 1-5,20)", param_hint="--cases")
    for part in parts:
        if not part:
            continue
        lo, dash, hi = part.partition("-")
        if not lo.strip().isdigit() or (dash and not hi.strip().isdigit()):
            raise typer.BadParameter(f"{part!r} is not a case number or a range such as 1-5", param_hint="--cases")
        a, b = int(lo), int(hi) if dash else int(lo)
        if b < a:
            raise typer.BadParameter(f"the range {part} runs backwards (write {b}-{a})", param_hint="--cases")
        out.extend(range(a, b + 1))
    return out


def gate(
    target: Annotated[str | None, typer.Option(help="URL of an external target (needs --config).")] = None,
    config: Annotated[Path | None, typer.Option(help="rig.yaml: accounts, chaos token env, restart command.")] = None,
    cases: Annotated[str | None, typer.Option(help="Case ids, e.g. 1-5,20,27.")] = None,
    module: Annotated[list[str] | None, typer.Option(help="Only these modules (repeatable).")] = None,
    repeat: Annotated[int, typer.Option(help="Run every case N times; verdicts must not flip.")] = 1,
    out: Annotated[Path | None, typer.Option(help="Run directory (default reports/<time>-gate).")] = None,
    resume: Annotated[Path | None, typer.Option(help="Continue a crashed run directory; finished cases stay.")] = None,
    policy: Annotated[Path | None, typer.Option(help="policy.yaml: required cases, allowed BLOCKED, thresholds.")] = None,
    eval_set: Annotated[Path | None, typer.Option(help="Another eval set file of the same schema.")] = None,
    load: Annotated[Path | None, typer.Option(help="A finished rig load run: its numbers meet the thresholds.")] = None,
    browser: Annotated[bool, typer.Option(help="Also run cases 1, 5, 17, 20, 22, 27–30 in headless Chromium.")] = False,
    selectors: Annotated[Path | None, typer.Option(help="Selector map of the target's UI (YAML).")] = None,
    pushgateway: Annotated[str | None, typer.Option(help="Push verdict counts and the decision to this Pushgateway.")] = None,
    otlp_endpoint: Annotated[str | None, typer.Option(
        help="Also export the rig's spans to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318).")] = None,
    otlp_listen: Annotated[str | None, typer.Option(
        help="HOST:PORT where the gate receives the target's spans (case 34); configure the target's OTLP "
             "exporter to http://HOST:PORT/v1/traces. Default: a free loopback port (embedded target only).")] = None,
    baseline: Annotated[str | None, typer.Option(
        help="Also decide against this earlier run (a run directory, or last-pass: the newest passing run of this "
             "kind and target): the policy's baseline rules (default: no new FAIL) and rig compare's regressions.")
    ] = None,
    deadline: Annotated[str | None, typer.Option(
        help="The whole gate's time limit, e.g. 30m: no case starts after it (the one in flight ends); the run is "
             "then undecided and --resume completes it.")] = None,
    grace: Annotated[str, typer.Option(
        help="After a first Ctrl-C/SIGTERM, how long the case in flight may take to end before the rig abandons it "
             "(recorded U 'interrupted', which --resume runs again).")] = "2m",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress and no verdict table: the decision only.")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the end summary as JSON on stdout (nothing else "
                                           "there; docs/schemas/summary.schema.json).")] = False,
) -> None:
    """Run the eval set's reliability cases and decide whether the release may go.

    Without --target it starts the embedded workbench on a free loopback port. Exit 0 pass, 1 fail,
    2 undecidable (target unreachable, config invalid, or evidence that cannot decide).
    """

    deadline_s = seconds_option(deadline, "--deadline") if deadline is not None else None
    grace_s = seconds_option(grace, "--grace")
    options = GateOptions(deadline_s=deadline_s, grace_s=grace_s, target=target, config=config, cases=_ids(cases), modules=module,
                          repeat=repeat, out=out,
                          resume=resume, policy=policy, eval_set=eval_set, load=load,
                          browser=browser, selectors=selectors, pushgateway=pushgateway,
                          otlp_endpoint=otlp_endpoint, otlp_listen=otlp_listen, baseline=baseline)
    code = _run_and_print(options, Output(quiet=quiet, json=json_out))
    raise typer.Exit(code)


def _run_and_print(options: object, output: Output | None = None) -> int:
    assert isinstance(options, GateOptions)
    output = output or Output()
    began = time.monotonic()
    with live_progress("gate", quiet=output.quiet or output.json, counts=True) as progress:
        try:
            result = run_gate(options, progress)
        except RigError as exc:
            raise fail(exc) from None
    if output.json:
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
            table.add_row(c.record_id, c.module, c.name, f"[{style}]{c.verdict.value}[/]{reps}", c.reason[:90])
        console.print(table)
    colour = {"pass": "green", "fail": "red", "undecided": "yellow", "recorded": "blue"}[result.decision.decision]
    console.print(f"[bold {colour}]decision: {result.decision.decision.upper()}[/]")
    for reason in result.decision.reasons[:12]:
        console.print(f"  • {reason}")
    console.print(f"reports: {result.run_dir}/report.html (also report.md, results.json, junit.xml)")
    return result.decision.exit_code


def list_cases(
    module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
    applicability: Annotated[str | None, typer.Option(help="Filter by applicability text, e.g. 首版必需 or 条件.")] = None,
    metric: Annotated[str | None, typer.Option(help="Only cases recording this metric code, e.g. T4.")] = None,
    eval_set: Annotated[Path | None, typer.Option(help="Another eval set file of the same schema.")] = None,
) -> None:
    """List the reliability cases with their record ids, modules, applicability and metric codes."""

    try:
        specs = all_cases()
        es = load_eval_set(eval_set)
    except RigError as exc:
        raise fail(exc) from None
    table = Table("id", "record", "module", "name", "applicability", "metrics", "implemented by")
    for c in es.reliability:
        spec = specs.get(c.case_id)
        codes = sorted(set(c.performance_codes) | set(c.related_codes))
        if module and (spec.module if spec else "") != module and c.module != module:
            continue
        if applicability and applicability not in c.applicability:
            continue
        if metric and metric not in codes:
            continue
        table.add_row(str(c.case_id), c.record_id, f"{c.module} ({spec.module if spec else '-'})", c.name,
                      c.applicability, " ".join(codes), f"{spec.fn.__name__}" if spec else "[red]missing[/]")
    console.print(table)


def selftest(
    defects: Annotated[str | None, typer.Option(help="Comma-separated defects (default: all).")] = None,
    representative: Annotated[bool, typer.Option(help="Only one defect per reliability module.")] = False,
    out: Annotated[Path, typer.Option(help="Where the self-test's run directories go.")] = Path("reports/selftest"),
) -> None:
    """Gate the clean workbench, then each seeded defect; print the detection matrix.

    Exit non-zero if a defect is not caught (FAIL) by its case, or the clean run has a FAIL or U.
    """

    chosen = defects.split(",") if defects else REPRESENTATIVE if representative else None
    try:
        report = run_selftest(chosen, out, console)
    except RigError as exc:
        raise fail(exc) from None
    raise typer.Exit(0 if report.ok else 1)


