"""`rig`: reliability gates, load runs, browser timing, chaos and reports for LLM literature assistants."""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import traceback
from importlib import metadata
from pathlib import Path
from typing import Annotated

import typer

from rig import plugins
from rig.cli import (
    ask_cmd,
    browser_cmd,
    capacity_cmd,
    compare_cmd,
    demo_cmd,
    fixtures_cmd,
    gate_cmd,
    lab_cmd,
    langfuse_cmd,
    load_cmd,
    quality_cmd,
    report_cmd,
    target_cmd,
)

app = typer.Typer(
    help="A load and reliability test rig for LLM literature assistants.\n\n"
         "Without --target every command runs against the embedded reference workbench on loopback.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        try:
            found = metadata.version("rig")
        except metadata.PackageNotFoundError:  # run from a checkout that was never installed
            found = "unknown (not installed: pip install -e .)"
        typer.echo(f"rig {found} (Python {platform.python_version()})")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the rig's version and exit.")] = False) -> None:
    """A load and reliability test rig for LLM literature assistants.

    Without --target every command runs against the embedded reference workbench on loopback.
    """


app.add_typer(fixtures_cmd.app, name="fixtures")
app.command("demo")(demo_cmd.demo)
app.command("ask")(ask_cmd.ask)
app.command("gate")(gate_cmd.gate)
app.command("cases")(gate_cmd.list_cases)
app.command("selftest")(gate_cmd.selftest)
app.command("load")(load_cmd.load)
app.command("capacity")(capacity_cmd.capacity)
app.command("quality")(quality_cmd.quality)
app.command("browser")(browser_cmd.browser)
app.command("compare")(compare_cmd.compare)
app.command("history")(compare_cmd.history)
app.command("report")(report_cmd.report)
app.add_typer(langfuse_cmd.app, name="langfuse")
app.add_typer(lab_cmd.app, name="lab")
app.add_typer(target_cmd.app, name="target")
for _ep in plugins.plugins(plugins.CLI):  # `rig chaos` and any other installed command group
    try:
        app.add_typer(_ep.load(), name=_ep.name)
    except ImportError as _exc:  # a broken plug-in must not take the other commands down with it
        print(f"warning: command group {_ep.name!r} ({_ep.value}) is unavailable: {_exc}", file=sys.stderr)


def main() -> None:
    """The `rig` command: every command's exit codes are 0 pass, 1 the target showed a failure, 2 nothing decided.
    A crash of the rig's own code is never a 1: its traceback goes to a log file, the console gets one line."""
    try:
        app(prog_name="rig")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception as exc:  # a bug of the rig's own, outside a run that keeps its own rig-error.log
        log = Path(tempfile.gettempdir()) / f"rig-crash-{os.getpid()}.log"
        log.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
        print(f"error: the rig itself failed: {type(exc).__name__}: {str(exc)[:200]}\n"
              f"fix: nothing was decided about the target; the traceback is in {log} — please report it",
              file=sys.stderr)
        raise SystemExit(2) from None
