"""The published JSON Schemas are the models' own, and they reject a file that breaks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.schemas import MODELS, main, schema_of
from tests.schema_check import SCHEMAS, assert_valid


def test_published_schemas_are_up_to_date() -> None:
    assert main(["--check", str(SCHEMAS)]) == 0, "run: python -m rig.schemas --write docs/schemas"
    assert {p.name for p in SCHEMAS.glob("*.schema.json")} == {f"{n}.schema.json" for n in MODELS}


def test_a_file_that_breaks_its_schema_is_rejected(tmp_path: Path) -> None:
    required = schema_of("load")["required"]
    assert {"t_codes", "requests", "error_ratio"} <= set(required)
    broken = tmp_path / "load.json"
    broken.write_text(json.dumps({"t_codes": {"T4": {"count": "many"}}}), encoding="utf-8")
    with pytest.raises(AssertionError, match="does not match load.schema.json"):
        assert_valid("load", broken)
