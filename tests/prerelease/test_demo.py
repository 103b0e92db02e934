"""The pre-release run, shortened: every part runs for real and the report's numbers are re-derived.

The load part is distributed (a master and 2 workers on loopback) with a browser user and a chaos
schedule (a tool error window, one restart); the gate and the quality run take a few cases each. The
numbers `report.html` and `prerelease.json` show are read again from each part's evidence store.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from rig.evidence import EvidenceStore
from rig.prerelease import PrereleaseOptions, PrereleaseResult, run_prerelease
from rig.quality.summary import turn_records
from rig.stats import summarize
from tests.schema_check import assert_valid

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)

SCHEDULE = """
title: short demo chaos
steady-state-hypothesis:
  title: the target answers
  probes:
    - {name: target-ready, probe: ready, timeout_s: 30}
method:
  - {name: tool-errors, at: 3s, duration: 4s, fault: {via: target, point: internal_search, mode: error}}
  - {name: restart, at: 11s, fault: {via: restart, mode: kill}}
rollbacks:
  - {name: clear-everything, action: clear_all}
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> PrereleaseResult:
    root = tmp_path_factory.mktemp("demo")
    schedule = root / "chaos.yaml"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    options = PrereleaseOptions(out=root / "run", reports_root=root, users=6, workers=2, browsers=1, duration_s=20,
                                chaos=schedule, gate_cases=[1, 12, 20, 27], quality_cases=["专家-01", "用户-04", "对抗-06"],
                                gate_browser=False)
    return run_prerelease(options)


def test_every_file_matches_its_published_schema(demo: PrereleaseResult) -> None:
    assert_valid("prerelease", demo.run_dir / "prerelease.json")
    assert_valid("load", demo.run_dir / "load" / "load.json")
    assert_valid("results", demo.run_dir / "gate" / "results.json")
    assert_valid("results", demo.run_dir / "quality" / "results.json")
    assert_valid("quality", demo.run_dir / "quality" / "quality.json")


def test_the_report_puts_the_gate_decision_first_and_holds_every_part(demo: PrereleaseResult) -> None:
    page = (demo.run_dir / "report.html").read_text(encoding="utf-8")
    banner = page.index(f"Gate decision: {demo.decision.decision.upper()}")
    order = [page.index(h) for h in ("Pre-release run", "Verdicts by module", "T-codes", "Load (T10)",
                                     "Chaos windows", "Quality metrics", "Judge sheets")]
    assert banner < order[0] and order == sorted(order)
    assert page.count("<svg") >= 5  # load curves and T-code bars
    assert demo.decision.decision == "pass" and demo.decision.exit_code == 0
    assert (demo.run_dir.parent / "latest").resolve() == demo.run_dir.resolve()
    assert not [p for p in demo.run_dir.rglob("latest")], "the parts leave no latest link inside the run directory"


def test_gate_verdicts_and_t4_match_the_gate_store(demo: PrereleaseResult) -> None:
    numbers = json.loads((demo.run_dir / "prerelease.json").read_text())
    store = EvidenceStore(demo.run_dir / "gate" / "evidence.sqlite3")
    try:
        verdicts = Counter(c.verdict.value for c in store.cases() if c.verdict)
        t4 = summarize([m.value for m in store.measures("T4") if m.source == "client"])
    finally:
        store.close()
    assert numbers["gate"]["verdicts"] == dict(verdicts) and sum(verdicts.values()) == 4
    page = (demo.run_dir / "report.html").read_text(encoding="utf-8")
    row = re.search(r"<tr><td>T4</td><td>client</td><td>first_text_kind=answer</td><td>ms</td>"
                    r"<td class=num>(\d+)</td><td class=num>([\d.]+)</td>", page)
    assert row and int(row.group(1)) == t4.count and float(row.group(2)) == round(t4.p50 or 0, 1)


def test_load_and_chaos_numbers_match_the_load_store(demo: PrereleaseResult) -> None:
    numbers = json.loads((demo.run_dir / "prerelease.json").read_text())
    store = EvidenceStore(demo.run_dir / "load" / "evidence.sqlite3")
    try:
        ends = Counter(m.label for m in store.measures("T8") if m.case_id is None)
        windows = store.evidence(kind="chaos_window")
    finally:
        store.close()
    assert numbers["load"]["runs"] == sum(ends.values()) > 0 and numbers["load"]["workers"] == 2
    completed = sum(n for label, n in ends.items() if label and label.startswith("completed/"))
    assert numbers["load"]["throughput_rps"] == pytest.approx(completed / 20)
    steps = {w.data["step"] for w in windows}
    assert steps == {w["step"] for w in numbers["chaos"]["windows"]} == {"tool-errors", "restart"}
    assert any(label == "failed/tool_error" for label in ends)  # the tool window really failed runs
    # what the windows caused is reported apart from what nobody injected, and the policy judges the latter
    assert numbers["load"]["error_ratio_in_fault"] > 0 and numbers["load"]["error_ratio_steady"] < 0.01
    assert numbers["load"]["headline"].startswith("error ratio") and "in steady state" in numbers["load"]["headline"]
    page = (demo.run_dir / "report.html").read_text(encoding="utf-8")
    assert "inside the 2 injected fault window(s)" in page
    restart = next(w for w in numbers["chaos"]["windows"] if w["step"] == "restart")
    assert restart["lost"] == 0 and restart["ready_s"] is not None
    browser = json.loads((demo.run_dir / "load" / "browser.json").read_text())
    assert browser["turns"] > 0


def test_quality_numbers_match_the_quality_store(demo: PrereleaseResult) -> None:
    numbers = json.loads((demo.run_dir / "prerelease.json").read_text())
    store = EvidenceStore(demo.run_dir / "quality" / "evidence.sqlite3")
    try:
        records = turn_records(store)
    finally:
        store.close()
    assert numbers["quality"]["turns"] == len(records) == 5  # 专家-01, 用户-04 (3 turns), 对抗-06
    trace = [r.metric("traceability") for r in records]
    num = sum(m.numerator or 0 for m in trace if m and m.value is not None)
    den = sum(m.denominator or 0 for m in trace if m and m.value is not None)
    assert den > 0 and numbers["quality"]["metrics"]["traceability"]["pooled"] == round(num / den, 4)
    recall = next(r for r in records if r.record_id == "专家-01-1").metric("recall@10")
    assert recall and numbers["quality"]["metrics"]["recall@10"]["mean"] == recall.value
    assert (Path(demo.run_dir) / "quality" / "judge" / "sheets.csv").exists()
