"""The FAIL/U line: a target that breaks the protocol or answers a status the case did not expect is FAIL,
with the exchange as evidence; U is for what the rig could not observe."""

from __future__ import annotations

from pathlib import Path

from rig.evidence import EvidenceRow, EvidenceStore
from rig.gate.session import GateOptions, run_gate
from rig.verdict import Verdict


def _target_item(run_dir: Path, case_id: int) -> tuple[str, str, list[EvidenceRow]]:
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        item = next(i for i in store.items(1, case_id) if i.name == "target")
        evidence = [e for e in store.evidence(1, case_id, kind="exchange")]
    finally:
        store.close()
    return item.verdict.value, item.reason, evidence


def test_a_value_the_protocol_does_not_allow_is_the_targets_fail(tmp_path: Path) -> None:
    result = run_gate(GateOptions(out=tmp_path / "run", cases=[1], defects=["run_record_null_state"]))
    assert result.data.cases[0].verdict == Verdict.FAIL
    verdict, reason, evidence = _target_item(result.run_dir, 1)
    assert verdict == "FAIL" and "RunDetail broke the protocol: state" in reason, reason
    assert evidence and isinstance(evidence[0].data, dict) and "RunDetail" in evidence[0].data["error"]


def test_an_unexpected_status_is_the_targets_fail_with_the_exchange(tmp_path: Path) -> None:
    result = run_gate(GateOptions(out=tmp_path / "run", cases=[9], defects=["search_down_after_corrupt"]))
    assert result.data.cases[0].verdict == Verdict.FAIL
    verdict, reason, evidence = _target_item(result.run_dir, 9)
    assert verdict == "FAIL" and "503 search_unavailable" in reason, reason
    data = evidence[0].data
    assert isinstance(data, dict) and data["status"] == 503 and data["path"].endswith("internal_search")
