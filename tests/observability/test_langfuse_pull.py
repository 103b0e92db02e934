"""`rig langfuse pull`: the workbench's Langfuse SDK export, read back through the public API shape, reconciled."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli.main import app
from rig.evidence import EvidenceStore
from rig.gate.session import GateOptions, run_gate
from rig.langfuse.client import LangfuseClient
from rig.langfuse.reconcile import pull
from tests.conftest import Corpus, start_workbench
from tests.observability.langfuse_double import LangfuseDouble
from tests.workbench.helpers import ask


@pytest.fixture()
def langfuse() -> Iterator[LangfuseDouble]:
    double = LangfuseDouble(ingest_delay_s=1.0).start()
    yield double
    double.stop()


def test_gate_runs_match_langfuse_tokens_and_cost(tmp_path: Path, langfuse: LangfuseDouble,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in langfuse.env().items():
        monkeypatch.setenv(k, v)  # the embedded workbench sends its runs to "Langfuse" through the SDK
    result = run_gate(GateOptions(cases=[1], out=tmp_path / "gate", reports_root=tmp_path))
    assert result.decision.decision == "pass"

    cli = CliRunner().invoke(app, ["langfuse", "pull", str(result.run_dir), "--settle", "1", "--timeout", "20"])
    assert cli.exit_code == 0, cli.output
    data = json.loads((result.run_dir / "langfuse.json").read_text(encoding="utf-8"))
    assert data["runs"] and all(r["status"] == "match" for r in data["runs"])
    for run in data["runs"]:
        rows = {f["field"]: f for f in run["rows"]}
        assert rows["input_tokens"]["langfuse"] == rows["input_tokens"]["target"] > 0
        assert rows["output_tokens"]["langfuse"] == rows["output_tokens"]["target"] > 0
        assert rows["cost_usd"]["langfuse"] == pytest.approx(rows["cost_usd"]["target"], abs=1e-6)
        assert rows["cost_usd"]["target"] > 0 and rows["generations"]["status"] == "match"
        assert not run["missing"]
    assert "match" in (result.run_dir / "langfuse.md").read_text(encoding="utf-8")
    assert langfuse.reads >= len(data["runs"])


def test_dropped_usage_is_named_and_late_traces_are_retried(tmp_path: Path, corpus: Corpus,
                                                            langfuse: LangfuseDouble) -> None:
    wb = start_workbench(tmp_path / "wb", corpus, include_variants=False)
    wb.target.env.update(langfuse.env())
    wb.target.stop()
    wb.target.start()
    wb.auth_a = wb.adapter.login(wb.a.username, wb.a.password)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        complete = ask(wb, ["P32"], "2.9%指什么？")
        wb.adapter.chaos("POST", "faults", {"point": "llm", "mode": "no_usage"})
        dropped = ask(wb, ["P32"], "2.9%指什么？")
        wb.adapter.chaos("DELETE", "faults")
        for case_id, asked in ((1, complete), (2, dropped)):
            store.add_run(1, case_id, asked.detail.model_dump(mode="json"))
            answer = "".join(e.data.get("text", "") for e in asked.events if e.event == "token")
            store.add_evidence(1, case_id, "run", "run", {"run_id": asked.run_id, "answer": answer})
    finally:
        store.close()
        wb.adapter.close()
        wb.target.stop()  # SIGTERM: its Langfuse SDK flushes on shutdown
        wb.target.cleanup()
    assert dropped.detail.usage.source == "estimate" and dropped.detail.state == "completed"

    client = LangfuseClient(langfuse.host, langfuse.public_key, langfuse.secret_key)
    result = pull(run_dir, client, settle_s=0.0, timeout_s=20.0)
    by_run = {r.run_id: r for r in result.runs}
    good, bad = by_run[complete.run_id], by_run[dropped.run_id]
    assert good.status == "match" and not good.missing
    assert good.attempts > 1, "the trace was not readable at first (ingest delay) and was retried"
    assert bad.status == "missing"
    rows = {f.field: f for f in bad.rows}
    assert rows["input_tokens"].langfuse is None and rows["input_tokens"].target == dropped.detail.usage.input_tokens
    assert rows["input_tokens"].target_kind == "estimate" and rows["cost_usd"].langfuse is None
    named = " | ".join(bad.missing)
    assert "usage_details of generation 1" in named and "cost_details of generation 2" in named
    assert "usage.source=estimate" in named
    assert rows["output_tokens"].rig_estimate and rows["output_tokens"].rig_estimate > 0


def test_wrong_keys_are_a_clear_error(tmp_path: Path, langfuse: LangfuseDouble) -> None:
    from rig.errors import ConfigError

    client = LangfuseClient(langfuse.host, langfuse.public_key, "sk-wrong")
    with pytest.raises(ConfigError, match="refused the keys"):
        client.trace("0" * 32)
