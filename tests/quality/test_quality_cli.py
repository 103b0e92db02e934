"""`rig quality --json`: only the end summary on stdout, valid against its schema, its exit code the decision's
(progress lines without a terminal are live_progress's, tested with the load)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.schema_check import assert_valid


def test_quality_json_prints_only_the_summary(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "rig.cli", "quality", "--case", "用户-04", "--out",
                          str(tmp_path / "json"), "--json"], capture_output=True, text=True, timeout=600)
    (tmp_path / "summary.json").write_text(out.stdout, encoding="utf-8")
    assert_valid("summary", tmp_path / "summary.json")
    summary = json.loads(out.stdout)
    assert summary["kind"] == "quality" and summary["exit_code"] == out.returncode
    assert (tmp_path / "json" / "quality.json").exists()
