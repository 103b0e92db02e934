"""`rig gate` on the clean embedded workbench: every case PASS, three repetitions agree, reports hold."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from rig.evidence import EvidenceStore
from rig.gate.session import GateOptions, GateResult, run_gate
from rig.verdict import Verdict
from tests.schema_check import assert_valid


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GateResult]:
    root = tmp_path_factory.mktemp("reports")
    yield run_gate(GateOptions(out=root / "gate-run", reports_root=root, repeat=3))


def test_every_case_passes_three_times_over(gate: GateResult) -> None:
    assert len(gate.data.cases) == 38
    not_pass = {c.case_id: (c.verdict.value, c.reason) for c in gate.data.cases if c.verdict != Verdict.PASS}
    assert not_pass == {}
    assert all(c.repeats == [Verdict.PASS] * 3 for c in gate.data.cases)
    assert gate.decision.decision == "pass" and gate.decision.exit_code == 0


def test_results_json_has_the_promised_shape(gate: GateResult) -> None:
    assert_valid("results", gate.run_dir / "results.json")
    results = json.loads((gate.run_dir / "results.json").read_text())
    assert results["decision"] == "pass" and results["reasons"]
    case = next(c for c in results["cases"] if c["case_id"] == 1)
    assert {"record_id", "case_id", "module", "verdict", "reason", "items", "metrics"} <= set(case)
    assert case["record_id"] == "可靠性-01-1" and case["verdict"] == "PASS"
    assert all({"name", "verdict", "evidence_ids"} <= set(i) for i in case["items"])
    assert {"T3", "T4", "T5"} <= set(case["metrics"]) and case["metrics"]["T4"]["source"] == "client"
    assert case["metrics"]["T3"]["p50"] <= case["metrics"]["T4"]["p50"] <= case["metrics"]["T5"]["p50"]


def test_report_numbers_are_the_stores(gate: GateResult) -> None:
    store = EvidenceStore(gate.run_dir / "evidence.sqlite3")
    results = json.loads((gate.run_dir / "results.json").read_text())
    t4 = sorted(m.value for m in store.measures("T4") if m.source == "client")
    row = next(r for r in results["tcodes"] if r["code"] == "T4" and r["source"] == "client")
    assert row["count"] == len(t4) and row["max"] == t4[-1] and row["min"] == t4[0]
    assert row["p50"] == t4[(len(t4) + 1) // 2 - 1]
    for case in results["cases"]:
        items = store.items(3, case["case_id"])
        assert [i["name"] for i in case["items"]] == [i.name for i in items]
        for item in case["items"]:
            for eid in item["evidence_ids"]:
                assert store.evidence(3, case["case_id"])  # the cited evidence exists in the store
                assert any(e.id == eid for e in store.evidence(3, case["case_id"]))


def test_junit_markdown_html_and_latest(gate: GateResult) -> None:
    suite = ET.parse(gate.run_dir / "junit.xml").getroot()
    assert suite.get("tests") == "38" and suite.get("failures") == "0"
    verdicts = {p.get("value") for p in suite.iter("property") if p.get("name") == "verdict"}
    assert verdicts == {"PASS"}
    md = (gate.run_dir / "report.md").read_text()
    assert md.index("Decision: PASS") < md.index("## Manifest") < md.index("## Verdicts")
    html = (gate.run_dir / "report.html").read_text()
    assert html.index("Gate decision: PASS") < html.index("<h2>Manifest") < html.index("<h2>Verdicts by module")
    assert "可靠性-38-1" in html
    manifest = json.loads((gate.run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "gate" and manifest["eval_set_sha256"] and manifest["corpus_digest"]
    assert manifest["machine"]["cores"] and manifest["started_at"] and manifest["ended_at"]
    latest = gate.run_dir.parent / "latest"
    assert latest.is_symlink() and latest.resolve() == gate.run_dir.resolve()


def test_no_api_key_or_token_lands_in_the_run_directory(gate: GateResult) -> None:
    for path in Path(gate.run_dir).rglob("*"):
        if path.is_file() and "target" not in path.relative_to(gate.run_dir).parts[:1]:
            data = path.read_bytes()
            assert b"sk-rig-" not in data, path
            assert b"Bearer " not in data, path


def test_the_embedded_targets_data_in_the_run_directory_holds_no_secret(gate: GateResult) -> None:
    """The run directory is shared; the embedded target's data in it is sealed once it stopped: no key that decrypts
    API keys, no encrypted API key, no password hash, no login token (a resume sets them again)."""
    data = Path(gate.run_dir) / "target"
    assert (data / "workbench.sqlite3").exists() and not (data / "secret.key").exists()
    conn = sqlite3.connect(data / "workbench.sqlite3")
    try:
        assert conn.execute("SELECT COUNT(*) FROM users WHERE pw_hash != ''").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM tokens").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM model_configs WHERE api_key_enc IS NOT NULL").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM users").fetchone()[0] >= 2  # what the run made is still there
    finally:
        conn.close()
