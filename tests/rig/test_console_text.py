"""What a target or a file name says is never markup, and a CI log keeps a message on one line: the console prints
brackets as they came and wraps a pipe's lines at 200 columns, not 80."""

from __future__ import annotations

import os

import pytest

from rig.cli.console import PIPE_COLUMNS, err_console, fail
from rig.errors import RigError


def test_an_error_with_brackets_is_said_as_it_came_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    said = ("the target answered 500: template error near [/oops] in [bold]x[/bold].yaml, and then a long tail "
            "of words the target wrote, well past eighty columns")
    fail(RigError(said, fix="check [red]config[/red]"))
    err = capsys.readouterr().err
    assert f"error: {said}" in err.splitlines()
    assert "fix: check [red]config[/red]" in err


def test_a_pipe_is_as_wide_as_a_long_line() -> None:
    columns = os.environ.get("COLUMNS", "")
    assert not err_console.is_terminal and err_console.width == (int(columns) if columns.isdigit() else PIPE_COLUMNS)


def test_a_ci_log_hears_from_a_quiet_run_at_least_every_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    from rig.cli import console as module
    from rig.waiting import wait_until

    out = io.StringIO()
    monkeypatch.setattr(module, "console", Console(file=out, width=200, force_terminal=False))
    with module.live_progress("demo", every_s=5.0, heartbeat_s=0.3) as line:
        line("case 26 (restart)", 1, 38)  # within every_s of "starting": held back, as a change that came too soon
        assert wait_until(lambda: "… still" in out.getvalue(), 5.0), out.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("demo ") and lines[0].endswith("starting")
    assert lines[1].endswith("case 26 (restart) … still")  # where the run is now, though the change came too soon
