"""`rig selftest`: the clean workbench passes every case and reaches every contract cell, and each seeded defect is
caught (FAIL) by one of the cases that guard its promise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli.main import app
from rig.selftest import GUARDS, REPRESENTATIVE, SelftestReport

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)


@pytest.mark.timeout(1200)  # ~4 min on a quiet 2-core machine; a bound against a hang, not a judgement of speed
def test_every_defect_is_caught_and_the_clean_gate_reaches_every_contract_cell(tmp_path: Path) -> None:
    """The whole self-test, as `rig selftest --json` runs it: all 38 cases on the clean workbench (no FAIL, no U, and
    no cell of the coverage matrix that the contract defines left "never"), then every seeded defect against its
    guarding cases. The subset CI once ran alone (one defect per module) is part of it."""
    ran = CliRunner().invoke(app, ["selftest", "--json", "--out", str(tmp_path)])
    report = SelftestReport.model_validate(json.loads(ran.stdout))
    assert report.clean_problems == [] and len(report.clean) == 38
    assert set(report.clean.values()) == {"PASS"}
    assert report.coverage_never == []
    assert {d.defect for d in report.defects} == set(GUARDS) >= set(REPRESENTATIVE)
    for row in report.defects:  # caught by a case that guards the defect's promise, not by any case at all
        assert any(v == "FAIL" for c, v in row.verdicts.items() if c in GUARDS[row.defect]), row
    assert report.ok and ran.exit_code == 0
