"""Command-line flags declared on the option models themselves, once: a field annotated with a `Flag` is an option of
every command whose options model has that field (`rig.cli.grouped` turns the models into typer options), and the
class that declares it names the help panel it is listed under.

    class TargetChoice(BaseModel):
        PANEL: ClassVar[str] = "Target"
        target: Annotated[str | None, Flag("URL of an external target (needs --config).")] = None

A flag whose text the model parses (`--duration 2m` into seconds) says so with `cli_type=str` and `cli_default`;
a flag that is not one field (`--think 1-3` sets two) is declared in the model's `FLAGS` and read by its validator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class Flag:
    """How a field is typed on the command line: its help, its names (default `--field-name`), and the type and
    default the command line gives when they differ from the field's (text the model parses)."""

    help: str
    names: tuple[str, ...] = ()
    cli_type: Any = None
    cli_default: Any = ...
    hidden: bool = False
    sets: tuple[str, ...] = ()  # a `FLAGS` entry: the fields its value sets (their errors are said as this flag)

    def option_names(self, field: str) -> tuple[str, ...]:
        """The option's names: those given, else `--field-name`."""
        return self.names or (f"--{field.replace('_', '-')}",)


@dataclass(frozen=True)
class ModelFlag:
    """One command-line option of an options model: the keyword it is passed to the model as, its flag, the
    field's annotation and default where it is a field, and the help panel (the declaring group's `PANEL`)."""

    key: str
    flag: Flag
    annotation: Any
    default: Any
    panel: str | None
    rank: int = 50  # panels are listed by rank: the target first, the workload's own options, output, printing


def panel_of(model: type[BaseModel], name: str) -> tuple[str | None, int]:
    """The help panel of `name` and its rank: the `PANEL` and `RANK` of the first class in the model's MRO that
    declares it (a workload's own options rank 50)."""
    for cls in model.__mro__:
        if name in vars(cls).get("__annotations__", {}) or name in vars(cls).get("FLAGS", {}):
            return vars(cls).get("PANEL"), vars(cls).get("RANK", 50)
    return None, 50


def model_flags(model: type[BaseModel]) -> list[ModelFlag]:
    """Every command-line option of `model`: its fields that carry a `Flag`, then the flags in its (and its bases')
    `FLAGS` tables, each once."""
    out: dict[str, ModelFlag] = {}
    for name, field in model.model_fields.items():
        flag = next((m for m in field.metadata if isinstance(m, Flag)), None)
        if flag is not None:
            default = flag.cli_default if flag.cli_default is not ... else field.get_default(call_default_factory=True)
            annotation = flag.cli_type if flag.cli_type is not None else field.annotation
            out[name] = ModelFlag(name, flag, annotation, default, *panel_of(model, name))
    for cls in reversed(model.__mro__):
        for name, flag in vars(cls).get("FLAGS", {}).items():
            out.setdefault(name, ModelFlag(name, flag, flag.cli_type or str, flag.cli_default
                                           if flag.cli_default is not ... else None, *panel_of(model, name)))
    return sorted(out.values(), key=lambda f: f.rank)


def flag_names(model: type[BaseModel]) -> dict[str, str]:
    """Field (or `FLAGS` key) → the flag a user typed, to say a validation error in the user's words."""
    out: dict[str, str] = {}
    for f in model_flags(model):
        for key in (f.key, *f.flag.sets):
            out[key] = f.flag.option_names(f.key)[0]
    return out
