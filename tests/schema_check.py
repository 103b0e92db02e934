"""Checking a file a run wrote against its published JSON Schema (docs/schemas/)."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def assert_valid(name: str, path: Path) -> None:
    """`path` (a `<name>.json` a run wrote) validates against `docs/schemas/<name>.schema.json`."""
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    errors = sorted(Draft202012Validator(schema).iter_errors(json.loads(path.read_text(encoding="utf-8"))),
                    key=lambda e: list(e.path))
    assert not errors, f"{path} does not match {name}.schema.json: " + "; ".join(
        f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5])
