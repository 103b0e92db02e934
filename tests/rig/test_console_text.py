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
