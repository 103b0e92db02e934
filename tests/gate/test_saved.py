"""What was saved stays saved: a control action that alters or loses an earlier object is FAIL, with both
versions kept as evidence; on the clean workbench the same check passes."""

from __future__ import annotations

from pathlib import Path

from rig.evidence import EvidenceStore
from rig.gate.session import GateOptions, run_gate


def _items(run_dir: Path, case_id: int) -> dict[str, str]:
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        return {i.name: i.verdict.value for i in store.items(1, case_id)}
    finally:
        store.close()


def test_a_stop_that_drops_earlier_citations_fails_with_both_versions(tmp_path: Path) -> None:
    result = run_gate(GateOptions(cases=[20], out=tmp_path / "broken", defects=["stop_drops_citations"]))
    assert result.decision.decision == "fail"
    assert _items(tmp_path / "broken", 20)["saved_results_kept"] == "FAIL"
    store = EvidenceStore(tmp_path / "broken" / "evidence.sqlite3")
    try:
        saved = [e.data for e in store.evidence(kind="saved") if e.data["action"] == "stop"][0]
    finally:
        store.close()
    changed = saved["altered"] + saved["lost"]
    assert changed and set(changed) <= set(saved["before"])
    altered = [k for k in saved["altered"] if k.startswith("message ")]
    assert altered and all(saved["before"][k]["citations"] and not saved["after"][k]["citations"] for k in altered)


def test_the_clean_workbench_keeps_what_it_saved_through_every_control_action(tmp_path: Path) -> None:
    run_gate(GateOptions(cases=[17, 18, 20, 23, 24, 25], out=tmp_path / "clean"))
    names = {c: _items(tmp_path / "clean", c) for c in (17, 18, 20, 23, 24, 25)}
    saved = {f"{c} {n}": v for c, items in names.items() for n, v in items.items() if "saved" in n}
    assert len(saved) >= 8 and set(saved.values()) == {"PASS"}, saved
