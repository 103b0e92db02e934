"""Loading the eval set: the packaged copy by default, or another file of the same schema."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from rig.catalog.models import EvalSet
from rig.errors import ConfigError


def packaged_eval_set_bytes() -> bytes:
    """Bytes of the eval set the rig ships with."""
    return resources.files("rig.catalog").joinpath("data/eval_set_v2.json").read_bytes()


def eval_set_sha256(path: Path | None = None) -> str:
    """sha256 of the eval-set file in use (recorded in every run manifest)."""
    data = path.read_bytes() if path else packaged_eval_set_bytes()
    return hashlib.sha256(data).hexdigest()


@cache
def load_eval_set(path: Path | None = None) -> EvalSet:
    """Parse and validate an eval set; `None` loads the packaged one."""
    try:
        data = path.read_bytes() if path else packaged_eval_set_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read eval set {path}: {exc.strerror}",
                          fix="pass an existing file to --eval-set") from None
    try:
        return EvalSet.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"eval set {path or 'packaged'} does not match the schema at {where}: {first['msg']}",
            fix="use a file with the same schema as rig/catalog/data/eval_set_v2.json",
        ) from None
