"""One gate case's trace holds the rig's spans and the workbench's spans, joined parent to child."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from rig.evidence import StoredSpan
from rig.gate.session import GateOptions, run_gate
from rig.report.traces import trace_tree
from rig.telemetry.otlp_receiver import OtlpReceiver, ReceivedSpan
from workbench.tracing import ROOT_SPAN


def _spans(db: Path, trace_id: str) -> list[dict[str, object]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM spans WHERE trace_id=?", (trace_id,))]
    finally:
        conn.close()


def test_case_trace_joins_rig_and_workbench_spans(tmp_path: Path) -> None:
    collector = OtlpReceiver().start()  # stands for a team's OpenTelemetry Collector
    try:
        result = run_gate(GateOptions(cases=[1], out=tmp_path / "gate", reports_root=tmp_path,
                                      otlp_endpoint=collector.endpoint))
    finally:
        collector.stop()
    assert result.decision.decision == "pass"
    db = result.run_dir / "evidence.sqlite3"
    conn = sqlite3.connect(db)
    trace_id = conn.execute("SELECT trace_id FROM cases WHERE case_id=1").fetchone()[0]
    run_traces = {r[0] for r in conn.execute("SELECT trace_id FROM runs WHERE case_id=1")}
    conn.close()
    assert trace_id and run_traces == {trace_id}, "the target's runs must carry the case's trace id"

    spans = _spans(db, trace_id)
    by_id = {s["span_id"]: s for s in spans}
    assert {s["service"] for s in spans} == {"rig", "workbench"}
    roots = [s for s in spans if s["parent_span_id"] is None]
    assert [r["name"] for r in roots] == ["rig.case"], "one root: the rig's case span"
    assert json.loads(str(roots[0]["attributes"]))["rig.record_id"] == "可靠性-01-1"
    steps = [json.loads(str(s["attributes"])) for s in spans if s["name"] in ("GET", "POST")]
    assert steps and all({"url.full", "server.address", "server.port", "http.response.status_code"} <= set(a)
                         for a in steps), "the rig's HTTP client spans carry the stable HTTP attributes"
    for s in spans:  # every span, rig's or workbench's, climbs to that root
        hops, cur = 0, s
        while cur["parent_span_id"] is not None:
            assert cur["parent_span_id"] in by_id, f"{cur['name']} has a parent that never arrived"
            cur, hops = by_id[str(cur["parent_span_id"])], hops + 1
            assert hops < 50
        assert cur is roots[0]
    wb_runs = [s for s in spans if s["service"] == "workbench" and s["name"] == ROOT_SPAN]
    assert wb_runs, "the workbench's run span is in the case's trace"
    for run in wb_runs:
        parent = by_id[str(run["parent_span_id"])]
        assert parent["service"] == "rig" and parent["name"] == "rig.run"
    assert json.loads(str(roots[0]["attributes"]))["rig.verdict"] == "PASS"

    tree = trace_tree(trace_id, [StoredSpan.model_validate({**s, "attributes": {}}) for s in spans])
    assert not any(n.orphan for n in tree.nodes) and tree.nodes[0].depth == 0
    html = (result.run_dir / "report.html").read_text(encoding="utf-8")
    assert f"id='trace-{trace_id}'" in html and f"href='#trace-{trace_id}'" in html

    exported = collector.trace(trace_id)
    assert {s.name for s in exported if s.service == "rig"} >= {"rig.case", "rig.run"}, \
        "the configured OTLP endpoint receives the rig's spans too"


def test_a_span_whose_parent_never_arrived_is_an_orphan_root() -> None:
    spans = [
        {"span_id": "a", "parent_span_id": None, "service": "rig", "name": "case", "start_ns": 0, "end_ns": 9,
         "attributes": {}},
        {"span_id": "b", "parent_span_id": "a", "service": "wb", "name": "run", "start_ns": 1, "end_ns": 8,
         "attributes": {"run.id": "r1"}},
        {"span_id": "c", "parent_span_id": "lost", "service": "wb", "name": "chat", "start_ns": 2, "end_ns": 3,
         "attributes": {}},
    ]
    tree = trace_tree("t", [StoredSpan.model_validate({**s, "trace_id": "t", "scope": None}) for s in spans])
    assert [(n.name, n.depth, n.orphan) for n in tree.nodes] == [("case", 0, False), ("run", 1, False),
                                                                ("chat", 0, True)]
    assert tree.nodes[1].attributes == {"run.id": "r1"}


def test_simulated_runs_of_a_load_run_are_traced_with_the_target(tmp_path: Path) -> None:
    from rig.load.options import LoadOptions
    from rig.load.session import run_load

    collector = OtlpReceiver().start()
    try:
        run_load(LoadOptions(users=2, spawn_rate=2, duration_s=6, workers=1, out=tmp_path / "load",
                             think_min_s=0.2, think_max_s=0.4, otlp_endpoint=collector.endpoint))
        rig_runs = {s.span_id: s for s in collector.spans if s.service == "rig" and s.name == "rig.run"}
        assert rig_runs, "no simulated run span arrived"
        with_ids = {s.span_id: s.attributes["run.id"] for s in rig_runs.values() if "run.id" in s.attributes}
        # The target's root span of each run hangs under the rig's span of the same run.
        def joined_runs(spans: list[ReceivedSpan]) -> set[str]:
            return {str(s.attributes.get("run.id")) for s in spans if s.service == "workbench" and s.name == ROOT_SPAN
                    and s.parent_span_id in with_ids and with_ids[s.parent_span_id] == s.attributes.get("run.id")}

        joined = collector.wait_for(lambda spans: joined_runs(spans) >= set(with_ids.values()), 10.0)
        assert with_ids and joined, "workbench run spans are not children of the rig's run spans"
    finally:
        collector.stop()
