"""The self-test on one seeded defect per reliability module: each is caught by its guarding case."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.selftest import GUARDS, REPRESENTATIVE, run_selftest

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)


def test_representative_defects_are_each_caught(tmp_path: Path) -> None:
    guard_cases = sorted({c for d in REPRESENTATIVE for c in GUARDS[d]})
    report = run_selftest(REPRESENTATIVE, tmp_path, clean_cases=guard_cases)
    assert report.clean_problems == []
    assert set(report.clean.values()) == {"PASS"}
    missed = [d.defect for d in report.defects if not d.caught]
    assert missed == []
    for row in report.defects:
        assert any(v == "FAIL" for c, v in row.verdicts.items() if c in GUARDS[row.defect])
    assert report.ok


def test_every_defect_is_caught_and_the_clean_gate_reaches_every_contract_cell(tmp_path: Path) -> None:
    """The whole self-test: all 38 cases on the clean workbench (no FAIL, no U, and no cell of the coverage matrix
    that the contract defines left "never"), then every seeded defect against its guarding cases."""
    report = run_selftest(None, tmp_path)
    assert report.clean_problems == [] and len(report.clean) == 38
    assert report.coverage_never == []
    assert [d.defect for d in report.defects if not d.caught] == []
    assert {d.defect for d in report.defects} == set(GUARDS)
    assert report.ok
