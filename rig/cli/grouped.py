"""Commands whose options are models: a parameter annotated with an options model (`options: GateOptions`) becomes
that model's flags (`rig.run.flags`), each under its group's help panel, and the command receives the model, validated
once; a validation error is said in the user's words (`--users must be at least 1 (got 0)`), exit 2.

    @grouped
    def gate(options: GateOptions, output: Output) -> None: ...
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ValidationError

from rig.cli.console import fail, option_error
from rig.run.flags import flag_names, model_flags


def _is_model(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _option(model: type[BaseModel], prefix: str) -> list[tuple[str, inspect.Parameter, str]]:
    """The typer parameters of `model`'s flags: (parameter name, parameter, model keyword)."""
    out = []
    for f in model_flags(model):
        names = f.flag.option_names(f.key)
        if f.annotation is bool and not f.flag.names:  # a switch: --browser / --no-browser
            names = (f"{names[0]}/--no-{names[0][2:]}",)
        info = typer.Option(*names, help=f.flag.help, hidden=f.flag.hidden,
                            rich_help_panel=f.panel, show_default=f.default is not None)
        name = f"{prefix}{f.key}"
        parameter = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                      annotation=Annotated[f.annotation, info])
        out.append((name, parameter, f.key))
    return out


def grouped(command: Callable[..., None]) -> Callable[..., None]:
    """`command` with each options-model parameter expanded into that model's flags (typer reads the new
    signature); the wrapper builds and validates each model from them and calls `command` with it."""
    hints = typing.get_type_hints(command, include_extras=True)
    own = inspect.signature(command)
    params: list[inspect.Parameter] = []
    models: dict[str, tuple[type[BaseModel], list[tuple[str, str]]]] = {}
    for name, parameter in own.parameters.items():
        annotation = hints.get(name)
        if _is_model(annotation):
            assert isinstance(annotation, type)
            expanded = _option(annotation, f"{name}__")
            models[name] = (annotation, [(p, key) for p, _, key in expanded])
            params.extend(p for _, p, _ in expanded)
        else:
            params.append(parameter.replace(annotation=annotation, kind=inspect.Parameter.KEYWORD_ONLY))
    taken = [p.name for p in params]
    if len(taken) != len(set(taken)):
        raise TypeError(f"{command.__name__}: two options share a name")

    @functools.wraps(command)
    def wrapper(**given: Any) -> None:
        built: dict[str, object] = {}
        for name, (model, keys) in models.items():
            values = {key: given.pop(param) for param, key in keys}
            try:
                built[name] = model.model_validate(values)
            except ValidationError as exc:
                raise fail(option_error(exc, flag_names(model))) from None
        command(**given, **built)

    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must read the expanded signature, not the command's own
    wrapper.__command__ = command  # type: ignore[attr-defined]  # what the command itself declares
    return wrapper
