"""Shared console output: one rich Console, progress bars, and errors printed with their fix."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rig.errors import RigError

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def fail(error: RigError, code: int = 2) -> typer.Exit:
    """Print an error (cause and fix) and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {error.message}")
    if error.fix:
        err_console.print(f"[yellow]fix:[/] {error.fix}")
    return typer.Exit(code)


@contextmanager
def progress_bar(description: str, total: int | None = None) -> Iterator[Callable[..., None]]:
    """A progress bar; the yielded `advance(item, total=None)` moves it by one, shows the item just done and,
    when given, sets the total (for work that learns its size as it starts)."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[item]}", style="dim"), TimeElapsedColumn(), console=console,
                  transient=False) as progress:
        task = progress.add_task(description, total=total, item="")

        def advance(item: str, total: int | None = None) -> None:
            if total is not None:
                progress.update(task, total=total)
            progress.update(task, advance=1, item=item)

        yield advance
