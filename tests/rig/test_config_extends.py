"""`extends:` in rig.yaml: a description built on another (a dialect on the base description of its target): the
file is merged over the one it names, a `null` removes a key, and a circle or a missing file is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.config import load_config
from rig.errors import ConfigError
from rig.yamlfile import merged

DIALECTS = Path(__file__).resolve().parents[2] / "docs" / "targets" / "dialects"


def test_merged_goes_key_by_key_and_null_removes() -> None:
    base = {"target": {"url": "u", "http": {"run": {"request": {"path": "/r"}}, "stop": {"request": {"path": "/s"}}}}}
    over = {"target": {"http": {"run": None, "stop": "disconnect"}}, "accounts": {"a": 1}}
    assert merged(base, over) == {"target": {"url": "u", "http": {"stop": "disconnect"}}, "accounts": {"a": 1}}


def test_every_dialect_description_reads_on_the_base_one() -> None:
    records = load_config(DIALECTS / "no_run_records.rig.yaml")
    assert records.target.http is not None and records.target.http.run is None
    assert records.target.http.capabilities["run_tool_calls"] is False
    assert records.target.http.session is not None  # what it does not override is the base's
    assert load_config(DIALECTS / "stop_disconnect.rig.yaml").target.http.stop == "disconnect"  # type: ignore[union-attr]
    for path in DIALECTS.glob("*.rig.yaml"):
        assert load_config(path).target.http is not None, path


def test_a_circle_or_a_missing_base_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("extends: b.yaml\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(ConfigError, match="circle"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: nowhere.yaml\n")
    with pytest.raises(ConfigError, match="nowhere.yaml, which is not a file"):
        load_config(tmp_path / "c.yaml")
