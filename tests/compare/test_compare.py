"""`rig compare`: a slower model is flagged regressed with an interval that excludes zero; pairs drawn from one
run's distribution are not (the false-alarm check: two real runs on a shared machine may really differ); a
seeded defect's PASS → FAIL is named; runs of different eval sets or corpora are refused."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from rig import events
from rig.compare.model import CompareSettings
from rig.compare.runs import compare_dirs, read_measures, samples
from rig.compare.stats import call_shift
from rig.gate.session import GateOptions, run_gate
from rig.load.context import LoadContext
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.promtext import sample_value
from rig.telemetry.local_prometheus import LocalPushgateway
from tests.schema_check import assert_valid

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)


def _load(out: Path, first_token_ms: float | None = None) -> Path:
    def slower(run: LoadContext) -> None:  # the target's own setting: every answer starts later and streams slower
        run.adapter.chaos("PUT", "settings", {"first_token_delay_ms": first_token_ms, "token_delay_ms": 20})

    options = LoadOptions(users=4, spawn_rate=4, duration_s=12, out=out, think_min_s=0.1, think_max_s=0.3,
                          fetch_detail=False)
    if first_token_ms is None:
        return run_load(options).run_dir
    with events.load_starting.listening(slower):
        return run_load(options).run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    return {"base": _load(root / "base"), "slow": _load(root / "slow", 400.0)}


def test_a_slower_model_is_flagged_regressed_on_t4_and_t5(runs: dict[str, Path], tmp_path: Path) -> None:
    result = compare_dirs(runs["base"], runs["slow"])
    assert result.decision == "regressed", result.reasons
    load = result.parts[0]
    by = {(t.code, t.source): {s.stat: s for s in t.shifts} for t in load.tcodes}
    for code in ("T4", "T5"):
        p50 = by[(code, "client")]["p50"]
        assert p50.call == "regressed", p50
        assert p50.low is not None and p50.low > 0, "the interval excludes zero"
    with LocalPushgateway(tmp_path / "pgw") as pgw:
        out = subprocess.run([sys.executable, "-m", "rig.cli", "compare", str(runs["base"]), str(runs["slow"]),
                              "--out", str(tmp_path / "cmp"), "--pushgateway", pgw.url],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
        pushed = httpx.get(f"{pgw.url}/metrics", timeout=10).text
    assert 'rig_compare_decision{' in pushed and 'kind="load"' in pushed, pushed[-1500:]
    assert sample_value(pushed, "rig_compare_decision", {"kind": "load"}) == 1.0
    page = (tmp_path / "cmp" / "compare.html").read_text(encoding="utf-8")
    assert page.index("setting") < page.index("Verdict changes") < page.index("T-codes") and "<svg" in page
    assert json.loads((tmp_path / "cmp" / "compare.json").read_text())["decision"] == "regressed"
    assert_valid("compare", tmp_path / "cmp" / "compare.json")


def test_split_halves_of_one_run_raise_at_most_one_false_alarm_in_twenty(runs: dict[str, Path]) -> None:
    t4 = samples(read_measures(runs["base"]))[("T4", "client")]
    assert len(t4) >= 40, len(t4)
    settings = CompareSettings()
    alarms = 0
    for seed in range(20):  # twenty pairs drawn from one distribution: any "regressed/improved" is a false alarm
        shuffled = random.Random(seed).sample(t4, len(t4))
        half = len(shuffled) // 2
        calls = {call_shift(stat, shuffled[:half], shuffled[half:], alpha=settings.alpha, min_rel=settings.min_rel,
                            min_abs=settings.min_abs_ms, seed=seed).call for stat in ("p50", "p95")}
        alarms += bool(calls & {"regressed", "improved"})
    assert alarms <= 1, f"{alarms} false alarms in 20 same-distribution pairs"


def test_too_few_samples_say_so_never_no_change() -> None:
    shift = call_shift("p95", [10.0] * 5, [500.0] * 5, alpha=0.05, min_rel=0.1, min_abs=50)
    assert shift.call == "not enough samples" and "needs at least" in shift.why


def test_a_seeded_defect_is_named_case_and_item(tmp_path: Path) -> None:
    clean = run_gate(GateOptions(out=tmp_path / "clean", cases=[5]))
    broken = run_gate(GateOptions(out=tmp_path / "broken", cases=[5], defects=["logout_keeps_token"]))
    result = compare_dirs(clean.run_dir, broken.run_dir)
    assert result.decision == "regressed"
    changes = {(v.case, v.item): (v.base, v.new, v.worse) for v in result.parts[0].verdict_changes}
    assert changes[("可靠性-05-1", "revoked_after_logout")] == ("PASS", "FAIL", True)
    assert changes[("可靠性-05-1", None)] == ("PASS", "FAIL", True)
    assert any("revoked_after_logout PASS → FAIL" in r for r in result.reasons)


def test_runs_of_another_eval_set_or_corpus_are_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    for field in ("eval_set_sha256", "corpus_digest"):
        other = tmp_path / field
        shutil.copytree(runs["base"], other, symlinks=True)
        manifest = json.loads((other / "manifest.json").read_text())
        manifest[field] = "0" * 64
        (other / "manifest.json").write_text(json.dumps(manifest))
        result = compare_dirs(runs["base"], other)
        assert result.decision == "not comparable"
        assert any(field in r for r in result.reasons), result.reasons
        assert result.parts[0].tcodes == [], "nothing is compared across different eval sets or corpora"


def test_units_are_shown_and_where_a_run_happened_is_set_apart(runs: dict[str, Path]) -> None:
    from rig.compare.report import markdown

    result = compare_dirs(runs["base"], runs["slow"])
    diffs = {d.field: d for d in result.parts[0].differences}
    assert diffs["target_url"].environment and not diffs["target_url"].blocking  # two embedded runs, two free ports
    assert result.decision != "not comparable"
    text = markdown(result)
    assert "environment only" in text
    t4 = [line for line in text.splitlines() if line.startswith("| T4 | client |")]
    assert t4 and all(" ms |" in line for line in t4), t4


def _offered_otherwise(run: Path, into: Path, **plan: object) -> Path:
    """A copy of `run` whose plan says the load was offered otherwise (think time, mix …)."""
    from rig.evidence import EvidenceStore

    shutil.copytree(run, into, symlinks=True)
    store = EvidenceStore(into / "evidence.sqlite3")
    try:
        store.set_meta("plan", {**store.meta("plan"), **plan})
    finally:
        store.close()
    return into


@pytest.mark.parametrize("plan, field", [({"think_min_s": 0.0, "think_max_s": 0.0}, "load.think"),
                                         ({"weights": {"ask": 1}}, "load.mix"),
                                         ({"arrival": "poisson", "rate_per_s": 2.0}, "load.arrival")])
def test_a_load_offered_otherwise_is_not_comparable_unless_asked(runs: dict[str, Path], tmp_path: Path,
                                                                 plan: dict[str, object], field: str) -> None:
    other = _offered_otherwise(runs["base"], tmp_path / "other", **plan)
    result = compare_dirs(runs["base"], other)
    assert result.decision == "not comparable" and any(field in r for r in result.reasons), result.reasons
    assert result.parts[0].tcodes == [], "nothing is compared at a different offered load"
    anyway = compare_dirs(runs["base"], other, CompareSettings(anyway=True))
    assert anyway.decision != "not comparable" and anyway.parts[0].tcodes
    assert any(r.startswith(f"load: compared anyway although {field} differs") for r in anyway.reasons), anyway.reasons


def test_what_could_not_be_compared_writes_nothing_into_the_new_run(runs: dict[str, Path], tmp_path: Path) -> None:
    other = _offered_otherwise(runs["base"], tmp_path / "other", think_min_s=0.0, think_max_s=0.0)
    cli = subprocess.run([sys.executable, "-m", "rig.cli", "compare", str(runs["base"]), str(other)],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and "load.think differs (0.1-0.3 → 0-0 s)" in cli.stdout, cli.stdout + cli.stderr
    assert not (other / "compare").exists() and "nothing written" in cli.stdout
