"""Every command of the rig accepts `--json`: a CI step reads any command's result without parsing a table."""

from __future__ import annotations

from typing import Any

import typer

from rig.cli.main import app

PLUGGED = {"chaos"}  # command groups a plug-in brings (their own CLI), not the rig's


def _commands(group: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf command under `group` (typer's own command classes), by its full name."""
    out: dict[str, Any] = {}
    for name, command in group.commands.items():
        if name in PLUGGED and not prefix:
            continue
        if hasattr(command, "commands"):
            out |= _commands(command, f"{prefix}{name} ")
        else:
            out[f"{prefix}{name}"] = command
    return out


def test_every_command_accepts_json() -> None:
    commands = _commands(typer.main.get_command(app))
    assert len(commands) >= 18
    lacking = sorted(name for name, c in commands.items() if not any("--json" in getattr(p, "opts", []) for p in c.params))
    assert lacking == []
