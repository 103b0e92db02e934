"""`rig gate --browser`: the browser halves pass on the clean workbench, catch a seeded defect, keep screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.gate.session import GateOptions, run_gate
from rig.verdict import Verdict

pytestmark = pytest.mark.browser


def _items(run_dir: Path, case_id: int) -> dict[str, Verdict]:
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        return {i.name: i.verdict for i in store.items(1, case_id)}
    finally:
        store.close()


def test_browser_cases_pass_and_keep_screenshots(tmp_path: Path) -> None:
    result = run_gate(GateOptions(cases=[1, 5, 20, 27], out=tmp_path / "run", browser=True,
                                  reports_root=tmp_path))
    assert result.decision.decision == "pass", result.decision.reasons
    for case_id, item in ((1, "browser_timings"), (5, "browser_cookie_revoked"), (20, "browser_stop_server"),
                          (27, "browser_unique_highlight")):
        assert _items(result.run_dir, case_id)[item] == Verdict.PASS
    shots = sorted((result.run_dir / "screenshots").glob("*.png"))
    assert len(shots) >= 4 and all(s.stat().st_size > 5000 for s in shots)
    html = (result.run_dir / "report.html").read_text()
    assert all(f'src="screenshots/{s.name}"' in html for s in shots)


def test_browser_half_fails_when_closing_the_page_cancels_the_run(tmp_path: Path) -> None:
    result = run_gate(GateOptions(cases=[22], out=tmp_path / "run", browser=True, reports_root=tmp_path,
                                  defects=["disconnect_cancels"]))
    assert result.decision.decision == "fail"
    assert _items(result.run_dir, 22)["browser_not_cancelled"] == Verdict.FAIL
