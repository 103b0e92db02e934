"""The coverage matrix: which operations the gate exercised, by whom, on objects in which state — recorded from the
calls the cases made, written to coverage.json and the report, and rebuilt the same by `rig report`."""

from __future__ import annotations

import json
from pathlib import Path

from rig.coverage import CHECKED, CONTRACT, CheckedItem, Exercise, build_matrix
from rig.gate.finish import finish_gate_dir
from rig.gate.session import GateOptions, run_gate
from tests.schema_check import assert_valid


def test_a_contract_cell_nothing_reached_is_never_and_one_reached_names_its_item() -> None:
    assert ("stop", "other", "running") in CONTRACT and ("stop", "other", "stale") not in CONTRACT
    matrix = build_matrix([Exercise(op="stop", actor="other", state="running", status="404", item="case 4 b_stop"),
                           Exercise(op="stop", actor="other", state="running", status="404", item="case 4 b_stop")])
    cell = matrix.cells["stop"]["other/running"]
    assert cell.items == ["case 4 b_stop"] and cell.statuses == ["404"] and cell.contract
    assert "stop other/running" not in matrix.never and "stop anonymous/running" in matrix.never
    assert len(matrix.never) == len(CONTRACT) - 1 + len(CHECKED) and matrix.exercised == 2


def test_the_principle_columns_name_the_items_that_held_an_answer_and_say_never_where_none_did() -> None:
    """`two channels agree` and `list complete`: an item that held an operation's answers to a principle fills its
    column with its verdict (a FAIL counts as held); a column the reference workbench must reach and nothing held
    is "never", like a contract cell."""
    items = [CheckedItem(case_id=1, name="accounts_agree", verdict="PASS"),
             CheckedItem(case_id=20, name="accounts_agree", verdict="FAIL"),
             CheckedItem(case_id=12, name="model_input_lists_every_result", verdict="PASS"),
             CheckedItem(case_id=1, name="answer_cites", verdict="PASS")]
    matrix = build_matrix([], items)
    agree = matrix.checks["run"]["two_channels_agree"]
    assert agree.items == ["case 1 accounts_agree", "case 20 accounts_agree"] and agree.statuses == ["PASS", "FAIL"]
    assert matrix.checks["events"]["two_channels_agree"].items == agree.items
    assert matrix.checks["run"]["list_complete"].items == ["case 12 model_input_lists_every_result"]
    assert "session list_complete" in matrix.never and "run list_complete" not in matrix.never
    assert not any(c.items for op, cells in matrix.checks.items() if op not in ("run", "events") for c in cells.values())


def test_the_gate_records_who_did_what_to_whose_objects(tmp_path: Path) -> None:
    result = run_gate(GateOptions(cases=[4], out=tmp_path / "run"))
    assert result.decision.decision == "pass"
    path = tmp_path / "run" / "coverage.json"
    assert_valid("coverage", path)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    refused = cells["stop"]["other/running"]
    assert refused["items"] == ["case 4 b_stop"] and refused["statuses"] == ["404"]
    assert "case 4 b_stop_left_the_run_running" in cells["stop"]["owner/running"]["items"]
    assert cells["resume"]["other/ended"]["statuses"] == ["404"]
    assert cells["session"]["owner/ended"]["statuses"] == ["2xx"]
    assert cells["upload"]["owner/ended"]["items"] == ["setup (judged by case 6)"]
    checks = json.loads(path.read_text(encoding="utf-8"))["checks"]
    assert checks["run"]["two_channels_agree"]["items"] == ["case 4 accounts_agree"]
    assert checks["run"]["two_channels_agree"]["statuses"] == ["PASS"]
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Coverage of the target's operations" in md and "Never exercised (contract cells):" in md
    assert "| two channels agree | list complete |" in md and "run list_complete" in md  # case 4 reads no list
    assert "<h2>Coverage of the target" in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    first = path.read_text(encoding="utf-8")
    finish_gate_dir(tmp_path / "run")  # `rig report`: the same matrix from the evidence store
    assert path.read_text(encoding="utf-8") == first


def test_docs_hold_the_contract_matrix_and_every_guarded_defect() -> None:
    from rig.coverage import contract_table
    from rig.selftest import GUARDS

    text = (Path(__file__).resolve().parents[2] / "docs" / "facets.md").read_text(encoding="utf-8")
    assert contract_table() in text
    assert [d for d in GUARDS if f"`{d}`" not in text] == []
