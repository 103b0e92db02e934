"""Read a YAML file into a pydantic model; every problem is a ConfigError naming the file, the field and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from rig.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def load_yaml_model(path: Path, model: type[M], *, what: str, flag: str, shape_fix: str) -> M:
    """`what` names the file in messages ("config"), `flag` the option that gave it, `shape_fix` the fix for bad fields."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}", fix=f"pass an existing file to {flag}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not valid YAML: {exc}", fix="fix the YAML syntax") from None
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ConfigError(f"{what} {path}: {where}: {first['msg']}", fix=shape_fix) from None
