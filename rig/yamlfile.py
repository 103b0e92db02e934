"""Read a YAML file into a pydantic model; every problem is a ConfigError naming the file, the field and the fix.

An unknown key comes first and by its own name, with the nearest known key when one is close (`adaptr` →
`adapter`): a typo must not surface as "a required field is missing" somewhere else.
"""

from __future__ import annotations

import difflib
import types
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from rig.errors import ConfigError
from rig.jsonvalue import JsonObject

M = TypeVar("M", bound=BaseModel)
SHOWN = 6  # problems listed in one message


def load_yaml_model(path: Path, model: type[M], *, what: str, flag: str, shape_fix: str,
                    extends: bool = False) -> M:
    """`what` names the file in messages ("config"), `flag` the option that gave it, `shape_fix` the fix for bad fields.
    With `extends`, a top-level `extends: FILE` (relative to this file) is read first and this file merged over it
    (`merged`)."""
    raw = _read_mapping(path, what=what, flag=flag, shape_fix=shape_fix)
    if extends:
        raw = _extended(path, raw, what=what, flag=flag, shape_fix=shape_fix, seen=())
    return validate_model(raw, model, where=f"{what} {path}", fix=shape_fix)


def _read_mapping(path: Path, *, what: str, flag: str, shape_fix: str) -> JsonObject:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}", fix=f"pass an existing file to {flag}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not valid YAML: {exc}", fix="fix the YAML syntax") from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"{what} {path}: the top level is a {type(raw).__name__}, not a mapping of keys",
                          fix=shape_fix)
    return raw or {}


def _extended(path: Path, raw: JsonObject, *, what: str, flag: str, shape_fix: str,
              seen: tuple[Path, ...]) -> JsonObject:
    base_name = raw.pop("extends", None)
    if base_name is None:
        return raw
    if not isinstance(base_name, str) or not base_name:
        raise ConfigError(f"{what} {path}: extends must name one file (a path relative to this one)", fix=shape_fix)
    base = (path.parent / base_name).resolve()
    if base in seen or base == path.resolve():
        chain = " → ".join(str(p) for p in (*seen, path.resolve(), base))
        raise ConfigError(f"{what} {path}: extends goes round in a circle ({chain})",
                          fix="let one file of the chain extend none")
    if not base.is_file():
        raise ConfigError(f"{what} {path}: extends names {base_name}, which is not a file (looked for {base})",
                          fix="give a path relative to the file that extends it")
    under = _extended(base, _read_mapping(base, what=what, flag=flag, shape_fix=shape_fix), what=what, flag=flag,
                      shape_fix=shape_fix, seen=(*seen, path.resolve()))
    return merged(under, raw)


def merged(base: JsonObject, over: JsonObject) -> JsonObject:
    """`over` merged into `base`: mappings key by key, a `null` in `over` removes the key, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def validate_model(data: Any, model: type[M], *, where: str, fix: str) -> M:
    """`model` from already-parsed data; a ConfigError lists unknown keys first, then the other problems."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = describe(exc, model)
        more = f" (and {len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        raise ConfigError(f"{where}: " + "; ".join(problems[:SHOWN]) + more, fix=fix) from None


def describe(exc: ValidationError, model: type[BaseModel]) -> list[str]:
    """Each problem as `dotted.key: what is wrong`, unknown keys first (with the nearest known key)."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    out = []
    for error in errors:
        loc = [str(p) for p in error["loc"]]
        where = ".".join(loc) or "(top level)"
        if error["type"] == "extra_forbidden":
            near = difflib.get_close_matches(loc[-1], known_keys(model, loc[:-1]), n=1, cutoff=0.6)
            hint = f" (did you mean {'.'.join([*loc[:-1], near[0]])}?)" if near else ""
            out.append(f"unknown key {where}{hint}")
        else:
            out.append(f"{where}: {error['msg']}")
    return out


def known_keys(model: type[BaseModel], loc: list[str]) -> list[str]:
    """The keys the model accepts at `loc` (a path of keys below it), or [] when it cannot tell."""
    current: Any = model
    for part in loc:
        current = _below(_unwrap(current), part)
        if current is None:
            return []
    current = _unwrap(current)
    return list(current.model_fields) if _is_model(current) else []


def _below(annotation: Any, part: str) -> Any:
    """The annotation at key `part` below `annotation`: a model's field, a mapping's value, a list's item."""
    if _is_model(annotation):
        field = annotation.model_fields.get(part)
        return field.annotation if field is not None else None
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict and len(args) == 2:
        return args[1]
    if origin in (list, tuple, set) and args:
        return args[0]
    return None


def _unwrap(annotation: Any) -> Any:
    """Optional[X] and X | None as X (the first member of a union that is a model, else the union)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        models = [a for a in members if _is_model(a)]
        return models[0] if models else (members[0] if len(members) == 1 else annotation)
    return annotation


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
