"""`rig target check`: exercise every declared operation once before any gate, and say what the target gives."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.console import console, err_console, escape, fail
from rig.config import load_config
from rig.errors import ConfigError, RigError
from rig.fixtures import ensure_corpus
from rig.gate.needs import cases_needing
from rig.redact import Redactor
from rig.target.check import TargetCheck, check_target
from rig.target.open import connect

app = typer.Typer(help="Check a target before a gate: what it offers, as the rig will use it.",
                  no_args_is_help=True, add_completion=False)

STYLE = {"ok": "green", "failed": "bold red", "absent": "yellow", "skipped": "dim"}


@app.command("check")
def check(
    config: Annotated[Path | None, typer.Option(help="rig.yaml of the target (without it: the embedded workbench).")
                      ] = None,
    target: Annotated[str | None, typer.Option(help="The target's URL, over rig.yaml's target.url.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the check as JSON on stdout (nothing else there).")
                        ] = False,
) -> None:
    """Log both accounts in, upload one small file, ask one question, read it back, and every other operation
    rig.yaml declares, once each: a table of operation, request, status, what was extracted and the capability it
    gives; what is missing, and for which cases; which accounts a load would use.

    Exit 0 when every declared operation answered within its rules, 2 when one did not (its exchange is shown) or
    the target cannot be reached. What the check made (a project, a document, a session) stays on the target.
    """
    try:
        if target and not config:
            raise ConfigError("--target needs --config rig.yaml (accounts, how to reach the target)",
                              fix="write a rig.yaml (see docs/rig.example.yaml) and pass --config")
        rig_config = load_config(config) if config else None
        if rig_config and target:
            rig_config.target.url = target
        corpus_dir, manifest = ensure_corpus()
        with tempfile.TemporaryDirectory(prefix="rig-check-") as tmp:
            conn = connect(rig_config, Path(tmp), Redactor(), accounts={"a": "rig-check-a", "b": "rig-check-b"})
            try:
                say = (lambda _: None) if json_out else (lambda text: err_console.print(f"[dim]… {escape(text)}[/]"))
                result = check_target(conn, corpus_dir, manifest, needing=cases_needing(), progress=say)
            finally:
                conn.close()
    except RigError as exc:
        raise fail(exc) from None
    if json_out:
        typer.echo(json.dumps({**result.model_dump(mode="json"), "ok": result.ok}, ensure_ascii=False, indent=2))
    else:
        _print(result)
    raise typer.Exit(0 if result.ok else 2)


def _print(result: TargetCheck) -> None:
    table = Table(title=f"{result.target_url} ({result.adapter})", show_lines=False)
    for column in ("operation", "outcome", "request", "status", "extracted", "gives"):
        table.add_column(column, overflow="fold")
    for r in result.rows:
        table.add_row(escape(r.operation), f"[{STYLE[r.outcome]}]{r.outcome}[/]", escape(r.request), escape(r.status),
                      escape(r.extracted or r.note), escape(r.gives))
    console.print(table)
    for r in result.rows:
        if r.outcome == "failed":
            console.print(f"[bold red]failed:[/] {escape(r.operation)}: {escape(r.note)}")
            if r.exchange:
                console.print(escape(json.dumps(r.exchange, ensure_ascii=False, default=str)[:1500]))
    if result.missing:
        console.print("[bold]missing[/] (items of these cases will be BLOCKED, naming it):")
        for name, cases in result.missing.items():
            console.print(f"  {escape(name)}: cases {', '.join(str(c) for c in cases)}")
    console.print(f"[bold]a load uses[/] {escape(', '.join(result.load_accounts) or 'no account')}: "
                  f"{escape(result.load_note)}")
    console.print("[green]every declared operation answered within its rules[/]" if result.ok else
                  "[bold red]an operation answered outside its rules[/]: fix rig.yaml or the target, then check again")
