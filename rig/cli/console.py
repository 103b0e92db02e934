"""Shared console output: one rich Console, progress bars, and errors printed with their fix."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, ClassVar, TextIO

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.markup import escape as markup_escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rig.clock import parse_duration
from rig.errors import RigError
from rig.report.plain import visible
from rig.run.flags import Flag

PIPE_COLUMNS = 200  # without a terminal (a CI log, a pipe): lines as long as this before rich wraps them, not 80


def escape(text: str) -> str:
    """Text from a target, a file or a user, for a Rich print: its brackets shown as typed (never markup), its
    control characters (an ESC sequence, a NUL) shown as `\\xNN` (never acting on the terminal)."""
    return markup_escape(visible(text))


@contextmanager
def _plain_lines(name: str, every_s: float, heartbeat_s: float) -> Iterator[Update]:
    """Progress as plain lines for a CI log, with a heartbeat thread that repeats the last line when it goes quiet."""
    began = time.monotonic()
    last_text, last_at, printed_at, latest = "", -every_s, 0.0, "starting"
    lock, done = threading.Lock(), threading.Event()

    def say(text: str, now: float) -> None:
        nonlocal printed_at
        console.print(f"{name} {now:5.0f}s  {text}", soft_wrap=True)
        printed_at = now

    def line(text: str, done_: float, total: float) -> None:
        nonlocal last_text, last_at, latest
        with lock:
            latest = text
            now = time.monotonic() - began
            if text != last_text and now - last_at >= every_s:
                say(text, now)
                last_text, last_at = text, now

    def beat() -> None:
        while not done.wait(min(1.0, heartbeat_s / 2)):
            with lock:
                now = time.monotonic() - began
                if now - printed_at >= heartbeat_s:
                    say(f"{latest} … still", now)

    line("starting", 0, 0)  # a CI log shows at once that the run began
    thread = threading.Thread(target=beat, name=f"{name}-progress", daemon=True)
    thread.start()
    try:
        yield line
    finally:
        done.set()
        thread.join(timeout=2.0)


def _width(stream: TextIO) -> int | None:
    """The console's width: the terminal's own, else `COLUMNS`, else `PIPE_COLUMNS` — so a CI log keeps a message
    on one line (a grep for a target's own words finds them) and a table row on one row."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else PIPE_COLUMNS


console = Console(highlight=False, width=_width(sys.stdout))
err_console = Console(stderr=True, highlight=False, width=_width(sys.stderr))


def fail(error: RigError, code: int = 2) -> typer.Exit:
    """Print an error (cause and fix) and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {escape(error.message)}", soft_wrap=True)
    if error.fix:
        err_console.print(f"[yellow]fix:[/] {escape(error.fix)}", soft_wrap=True)
    return typer.Exit(code)


def option_error(exc: ValidationError, flags: dict[str, str]) -> RigError:
    """A model's validation error as the options the user typed: `--users must be at least 1 (got 0)`."""
    lines = []
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else ""
        flag = flags.get(field, f"--{field.replace('_', '-')}" if field else "options")
        ctx = err.get("ctx") or {}
        said = {"greater_than_equal": f"must be at least {ctx.get('ge')}",
                "greater_than": f"must be more than {ctx.get('gt')}",
                "less_than_equal": f"must be at most {ctx.get('le')}",
                "less_than": f"must be less than {ctx.get('lt')}",
                "literal_error": f"must be one of {ctx.get('expected')}"}.get(err["type"])
        message = said or str(err["msg"]).removeprefix("Value error, ")
        shown = f" (got {err['input']!r})" if said and not isinstance(err.get("input"), dict) else ""
        lines.append(message if message.startswith("--") else f"{flag} {message}{shown}")
    return RigError("; ".join(lines), fix="see the command's --help")


def seconds_option(text: str, flag: str, *, zero_ok: bool = False) -> float:
    """A duration option (`60s`, `2m`, `90`) in seconds, more than 0 (or 0 itself with `zero_ok`); anything else is
    the user's error (exit 2)."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=flag) from None
    if seconds < 0 or (seconds == 0 and not zero_ok):
        raise typer.BadParameter(f"{text!r} is no time at all: it must be longer than 0 s", param_hint=flag)
    return seconds


def think_option(text: str) -> tuple[float, float]:
    """`--think 1-3` (or `2`) as (low, high) seconds; anything else is the user's error (exit 2)."""
    lo, _, hi = text.partition("-")
    try:
        return float(lo), float(hi or lo)
    except ValueError:
        raise fail(RigError(f"--think {text!r} is not seconds or a range of seconds", fix="for example --think 1-3")
                   ) from None


Update = Callable[[str, float, float], None]  # (what is happening, done, total)


class Output(BaseModel, frozen=True):
    """How much a run command prints: everything (a bar or, in a CI log, progress lines, then tables), only the
    decision (`--quiet`), or only the JSON summary on stdout (`--json`)."""

    PANEL: ClassVar[str] = "Printing"
    RANK: ClassVar[int] = 90
    quiet: Annotated[bool, Flag("No progress and no tables: the decision only.", names=("--quiet", "-q"))] = False
    json_out: Annotated[bool, Flag("Print the end summary as JSON on stdout (nothing else there; "
                               "docs/schemas/summary.schema.json).", names=("--json",))] = False


JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (nothing else there).")]


def print_json(result: BaseModel | Sequence[BaseModel]) -> None:
    """A command's result as JSON on stdout, for a CI step to read (`--json`)."""
    if not isinstance(result, BaseModel):
        print("[" + ",\n".join(r.model_dump_json(indent=2) for r in result) + "]")
    else:
        print(result.model_dump_json(indent=2))


HEARTBEAT_S = 10.0  # in a CI log, a line at least this often: a long step never looks like a hang


@contextmanager
def live_progress(name: str, *, quiet: bool = False, every_s: float = 0.0, counts: bool = False,
                  heartbeat_s: float = HEARTBEAT_S) -> Iterator[Update]:
    """Progress of a run: a bar on a terminal; in a CI log (no terminal) a plain line whenever the text changes, at
    most every `every_s` seconds, the first at once, and the last one again (`… still`) after `heartbeat_s` without
    a line; nothing with `quiet`."""
    if quiet:
        yield lambda text, done, total: None
        return
    if not console.is_terminal:
        with _plain_lines(name, every_s, heartbeat_s) as line:
            yield line
        return
    columns = [TextColumn(f"[bold]{name}"), BarColumn(), *([MofNCompleteColumn()] if counts else []),
               TextColumn("{task.description}"), TimeElapsedColumn()]
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("starting", total=None)

        def update(text: str, done: float, total: float) -> None:
            bar.update(task, description=text, completed=done, total=total or None)

        yield update


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
