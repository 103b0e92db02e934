"""Options declared once on their models (`rig.run.Flag`) become a command's flags, under their group's help panel;
the command gets the model, validated once, and a bad value is said as the flag the user typed (exit 2)."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, ClassVar

import typer
from pydantic import BaseModel, Field, field_validator, model_validator
from typer.testing import CliRunner

from rig.cli.grouped import grouped
from rig.cli.main import app as rig_app
from rig.clock import parse_duration
from rig.run import Flag, TargetChoice


class Shape(BaseModel):
    PANEL: ClassVar[str] = "Shape"
    FLAGS: ClassVar[dict[str, Flag]] = {"span": Flag("Low-high.", cli_default="1-3", sets=("low", "high"))}
    users: Annotated[int, Field(ge=1), Flag("How many.")] = 2
    duration_s: Annotated[float, Field(gt=0), Flag("How long.", names=("--duration",), cli_type=str,
                                                   cli_default="5s")] = 5.0
    fast: Annotated[bool, Flag("Go fast.")] = True
    low: float = 1.0
    high: float = 3.0

    @field_validator("duration_s", mode="before")
    @classmethod
    def _d(cls, v: object) -> object:
        return parse_duration(v) if isinstance(v, str) else v

    @model_validator(mode="before")
    @classmethod
    def _span(cls, data: Any) -> Any:
        span = data.pop("span", None) if isinstance(data, dict) else None
        if isinstance(span, str):
            lo, _, hi = span.partition("-")
            data.update(low=float(lo), high=float(hi))
        return data


class Options(TargetChoice, Shape):
    pass


seen: list[Options] = []


@grouped
def run(options: Options, loud: Annotated[bool, typer.Option(help="Say more.")] = False) -> None:
    """A command of grouped options."""
    seen.append(options)


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(run)
    app.command("other")(lambda: None)
    return app


def test_the_command_gets_its_model_built_from_the_flags() -> None:
    seen.clear()
    done = CliRunner().invoke(_app(), ["run", "--users", "4", "--duration", "2m", "--no-fast", "--target", "http://t",
                                       "--span", "2-5", "--loud"])
    assert done.exit_code == 0, done.output
    options = seen[-1]
    assert (options.users, options.duration_s, options.fast, options.target) == (4, 120.0, False, "http://t")
    assert (options.low, options.high) == (2.0, 5.0)


def test_help_lists_each_group_under_its_panel() -> None:
    shown = CliRunner().invoke(_app(), ["run", "--help"], env={"COLUMNS": "160"}).output
    for panel in ("Target", "Shape"):
        assert f"─ {panel} " in shown
    assert "--no-fast" in shown and "--duration" in shown


def test_a_bad_value_is_said_as_the_flag_the_user_typed() -> None:
    done = CliRunner().invoke(_app(), ["run", "--users", "0"])
    assert done.exit_code == 2
    assert "--users must be at least 1 (got 0)" in done.output


def test_every_run_command_has_few_parameters_of_its_own() -> None:
    """The run commands' options are groups: no command declares more than 15 parameters of its own."""
    crowded = {}
    for info in rig_app.registered_commands:
        command = info.callback
        assert command is not None
        own = inspect.signature(getattr(command, "__command__", command)).parameters
        if len(own) > 15:
            crowded[info.name] = len(own)
    assert crowded == {}
