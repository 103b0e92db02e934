"""`rig quality` in a CI log: a progress line from the start, and with `--json` only the end summary on stdout,
valid against its schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.schema_check import assert_valid


def test_quality_prints_progress_lines_and_json_prints_the_summary(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "rig.cli", "quality", "--case", "用户-04"]
    plain = subprocess.run([*cmd, "--out", str(tmp_path / "plain")], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "COLUMNS": "200"})
    assert plain.returncode in (0, 1, 2), plain.stderr[-2000:]
    first = plain.stdout.splitlines()[0]
    assert first.startswith("quality") and "starting" in first, plain.stdout[:500]
    out = subprocess.run([*cmd, "--out", str(tmp_path / "json"), "--json"], capture_output=True, text=True,
                         timeout=600)
    (tmp_path / "summary.json").write_text(out.stdout, encoding="utf-8")
    assert_valid("summary", tmp_path / "summary.json")
    summary = json.loads(out.stdout)
    assert summary["kind"] == "quality" and summary["exit_code"] == out.returncode
