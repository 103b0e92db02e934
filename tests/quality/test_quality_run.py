"""`rig quality` on the embedded workbench: all 75 case-turns recorded, fixtures applied, numbers re-derived.

Traceability is 1.00 on the clean workbench and drops below 1.00 with `citation_page_shift` or
`removed_source_returns` seeded; the report's pooled traceability is re-derived from the target's own
SQLite file and the run records in the evidence store.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rig.catalog import load_eval_set
from rig.evidence import EvidenceStore
from rig.quality.session import JudgeOptions, QualityOptions, QualityResult, run_quality
from rig.quality.summary import turn_records
from rig.verdict import Verdict
from tests.schema_check import assert_valid


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> QualityResult:
    return run_quality(QualityOptions(out=tmp_path_factory.mktemp("quality") / "run"))


def _records(result: QualityResult) -> dict[str, object]:
    store = EvidenceStore(result.run_dir / "evidence.sqlite3")
    try:
        return {r.record_id: r for r in turn_records(store)}
    finally:
        store.close()


def test_every_case_turn_ends_in_a_recorded_state(clean: QualityResult) -> None:
    store = EvidenceStore(clean.run_dir / "evidence.sqlite3")
    try:
        cases = store.cases()
        rig_errors = [(c.record_id, i.reason) for c in cases for i in store.items(1, c.case_id)
                      if i.name in ("rig", "target", "precondition")]
    finally:
        store.close()
    assert len(cases) == 75 and all(c.status == "done" and c.verdict is not None for c in cases)
    assert rig_errors == []
    records = _records(clean)
    assert len(records) == 75
    states = clean.summary.states
    assert states.get("searched") == 10  # the ten direct tool cases
    assert sum(v for k, v in states.items() if k.startswith("completed/")) == 65
    # judged dimensions are U, never PASS: no program scores E1–E8
    assert {c.verdict for c in cases} <= {Verdict.U, Verdict.FAIL}


def test_traceability_is_one_and_every_metric_is_reported_apart(clean: QualityResult) -> None:
    by = {m.name: m for m in clean.summary.metrics}
    assert by["traceability"].turns == 65 and by["traceability"].pooled == 1.0 and not by["traceability"].below_bar
    assert by["out_of_scope_citations"].pooled == 0.0
    assert by["recall@10"].turns == 10 and by["nDCG@10"].turns == 10
    assert 0 < by["faithfulness"].mean <= 1  # type: ignore[operator]
    assert by["refusal"].turns == 2 and not by["refusal"].below_bar
    assert clean.decision.decision == "pass"


def test_the_reports_traceability_is_re_derived_from_the_target_and_the_store(clean: QualityResult) -> None:
    assert_valid("quality", clean.run_dir / "quality.json")
    quality = json.loads((clean.run_dir / "quality.json").read_text())
    store = EvidenceStore(clean.run_dir / "evidence.sqlite3")
    try:
        hits = {r.run_id: {(h["doc_id"], h["page"], h["chunk_id"]) for c in r.detail["tool_calls"]
                              for h in c["hits"]} for r in store.runs()}
        docs = store.meta("setup")["docs"]
        isolated = store.meta("setup")["isolated"]
    finally:
        store.close()
    db = sqlite3.connect(clean.run_dir / "target" / "workbench.sqlite3")
    turns = {t.record_id: t for t in load_eval_set().quality}
    good = total = 0
    for turn in quality["turns"]:
        if turn["kind"] == "direct_tool":
            continue
        allowed = {docs[p] for p in turns[turn["record_id"]].allowed_paper_ids}
        if turn["kind"] == "injection":
            allowed = {isolated["P32-INJECTED"]}
        rows = db.execute("SELECT doc_id, page, chunk_id FROM citations WHERE run_id=?", (turn["run_id"],)).fetchall()
        run_hits = hits[turn["run_id"]]
        run_docs = {d for d, _, _ in run_hits}  # a whole-file citation (no chunk) traces to any hit of its file
        ok = sum(1 for d, p, c in rows if ((d, p, c) in run_hits if c else d in run_docs) and d in allowed)
        good, total = good + ok, total + len(rows)
        if rows:
            assert turn["metrics"]["traceability"]["value"] == round(ok / len(rows), 4), turn["record_id"]
    pooled = next(m for m in quality["summary"]["metrics"] if m["name"] == "traceability")["pooled"]
    assert total > 100 and pooled == round(good / total, 4)
    assert f"<td class=num>{pooled:.2f}</td>" in (clean.run_dir / "report.html").read_text()


def test_fixture_cases_keep_their_evidence(clean: QualityResult) -> None:
    records = _records(clean)
    summary = records["用户-25-1"].fixture  # type: ignore[attr-defined]
    assert summary["summary"]["summary_id"] and summary["summary"]["lead_turns"] == ["专家-20-1", "专家-20-2"]
    assert any(m["included_summary_id"] == summary["summary"]["summary_id"] for m in summary["final_input"])
    injected = records["对抗-06-1"].fixture  # type: ignore[attr-defined]
    assert injected["injection"]["reached_tool_output"] and injected["injection"]["reached_model_input"]
    assert injected["derivation"]["original_sha256"] != injected["derivation"]["copy_sha256"]
    repeat = records["对抗-10-1"].fixture["variants"]  # type: ignore[attr-defined]
    assert [v["variant"] for v in repeat] == ["no_new_evidence", "round_limit"]
    assert repeat[0]["state"] == "completed/no_progress" and repeat[0]["distinct_results"] == 1
    assert repeat[1]["change"] == {"max_rounds": 2} and repeat[1]["rounds"] <= 2
    switch = records["专家-23-2"].fixture["scope_switch"]  # type: ignore[attr-defined]
    assert len(switch["from"]) == 2 and switch["backend_scope"] == switch["to"] == switch["effective_scope"]
    assert "abstract" in records["对抗-03-1"].fixture["preparation_not_applied"]  # type: ignore[attr-defined]
    expert10 = records["专家-10-1"].fixture  # type: ignore[attr-defined]
    assert expert10["history"][0]["content"].startswith("保修与卖家声誉")


def test_each_turn_lists_its_t_codes_and_the_judge_sheets_hold_every_dimension(clean: QualityResult) -> None:
    records = _records(clean)
    turn = records["专家-13-1"]
    assert set(turn.tcodes) == {"T3", "T4", "T7", "T8", "T11", "T12", "T13"}  # type: ignore[attr-defined]
    assert turn.tcodes["T4"] == "measured" and "estimate" in turn.tcodes["T13"]  # type: ignore[attr-defined]
    assert records["专家-01-1"].tcodes["T2"] == "measured"  # type: ignore[attr-defined]
    rows = list(csv.DictReader((clean.run_dir / "judge" / "sheets.csv").open(encoding="utf-8")))
    assert len(rows) == sum(len(r.dimensions) for r in records.values())  # type: ignore[attr-defined]
    assert all(r["score"] == "" for r in rows)
    sheets = json.loads((clean.run_dir / "judge" / "sheets.json").read_text())
    opened = [c for s in sheets for c in s["citations"] if c["page_text"]]
    assert opened and all(s["ground_truth"] and s["rules"] for s in sheets)
    assert sheets[[s["record_id"] for s in sheets].index("专家-23-2")]["fixture"]["scope_switch"]
    assert_valid("results", clean.run_dir / "results.json")
    results = json.loads((clean.run_dir / "results.json").read_text())
    assert len(results["cases"]) == 75 and (clean.run_dir / "junit.xml").exists()


@pytest.mark.parametrize("defect, cases", [("citation_page_shift", ["专家-13", "用户-04"]),
                                           ("removed_source_returns", ["专家-23", "用户-16", "用户-23"])])
def test_a_seeded_citation_defect_drops_traceability_below_one(tmp_path: Path, defect: str, cases: list[str]) -> None:
    result = run_quality(QualityOptions(out=tmp_path / "run", defects=[defect], cases=cases))
    trace = next(m for m in result.summary.metrics if m.name == "traceability")
    assert trace.pooled is not None and trace.pooled < 1.0 and trace.below_bar
    assert result.decision.decision == "fail" and result.decision.exit_code == 1


class _JudgeDouble(BaseHTTPRequestHandler):
    """An OpenAI-compatible `/chat/completions` that scores every dimension it is asked for with a 3."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)  # type: ignore[attr-defined]
        dims = body["messages"][1]["content"].split("\n", 1)[0].removeprefix("Dimensions: ").split(", ")
        content = json.dumps({"scores": {d: 3 for d in dims}, "reason": "double"})
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def judge_double() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JudgeDouble)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_judge_endpoint_proposes_scores_that_stay_marked_as_proposed(tmp_path: Path,
                                                                       judge_double: ThreadingHTTPServer) -> None:
    url = f"http://127.0.0.1:{judge_double.server_address[1]}/v1"
    result = run_quality(QualityOptions(out=tmp_path / "run", cases=["用户-04"],
                                        judge=JudgeOptions(base_url=url, model="judge-double")))
    assert len(judge_double.requests) == 3  # type: ignore[attr-defined]
    sheets = json.loads((result.run_dir / "judge" / "sheets.json").read_text())
    assert all(s["proposal"]["model"] == "judge-double" and set(s["proposal"]["scores"]) == set(s["dimensions"])
               for s in sheets)
    assert all(v is None for s in sheets for v in s["scores"].values())  # a proposal never fills the score
    rows = list(csv.DictReader((result.run_dir / "judge" / "sheets.csv").open(encoding="utf-8")))
    assert {r["proposed_score"] for r in rows} == {"3"} and {r["score"] for r in rows} == {""}
    assert "proposed by judge-double" in (result.run_dir / "judge" / "sheets.html").read_text()


def test_a_target_without_the_entries_ends_those_turns_not_run_or_blocked(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A target with no direct search and no test-only control: nothing is faked in their place."""
    from rig.adapters.workbench import WorkbenchAdapter

    declared = WorkbenchAdapter.capabilities

    def lacking(self: WorkbenchAdapter) -> object:
        return declared(self).model_copy(update={"direct_search": False, "chaos": False})

    monkeypatch.setattr(WorkbenchAdapter, "capabilities", lacking)
    result = run_quality(QualityOptions(out=tmp_path / "run", cases=["专家-01", "用户-25", "对抗-10", "专家-13"]))
    store = EvidenceStore(result.run_dir / "evidence.sqlite3")
    try:
        verdicts = {c.record_id: (c.verdict, c.reason) for c in store.cases()}
    finally:
        store.close()
    assert verdicts["专家-01-1"][0] == Verdict.NOT_RUN and "no direct search entry" in verdicts["专家-01-1"][1]
    assert verdicts["用户-25-1"][0] == Verdict.BLOCKED and "chaos" in verdicts["用户-25-1"][1]
    assert verdicts["对抗-10-1"][0] == Verdict.BLOCKED
    assert verdicts["专家-13-1"][0] == Verdict.U  # an ordinary conversation still runs
    assert result.summary.states.get("NOT_RUN") == 1 and result.summary.states.get("BLOCKED") == 2


def test_the_cli_prints_the_metrics_and_exits_with_the_decision(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rig.cli.main import app

    runner = CliRunner()
    ok = runner.invoke(app, ["quality", "--case", "专家-01", "--case", "对抗-02", "--out", str(tmp_path / "run")])
    assert ok.exit_code == 0, ok.output
    assert "traceability" in ok.output and "recall@10" in ok.output and "decision: pass" in ok.output
    bad = runner.invoke(app, ["quality", "--case", "专家-99", "--out", str(tmp_path / "other")])
    assert bad.exit_code == 2 and "no quality case" in bad.output
