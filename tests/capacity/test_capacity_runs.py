"""`rig capacity` on the embedded workbench: the knee where its run-slot limit puts it (run slots named as what
saturated first), also across two Locust workers; and a step whose client was starved of CPU is undecided, never a
capacity figure."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import psutil
import pytest

from rig.capacity.session import CapacityOptions, CapacityRun, run_capacity
from rig.compare.report import write_reports
from rig.compare.runs import compare_dirs
from rig.load.options import LoadOptions
from tests.schema_check import assert_valid

pytestmark = pytest.mark.slow  # `make test-slow`: each search runs a few minutes of load


def _options(tmp_path: Path, slots: int, *, workers: int = 0, max_users: int = 16) -> CapacityOptions:
    policy = tmp_path / "policy.yaml"
    policy.write_text("thresholds:\n  - T4.p95 < 300ms\n", encoding="utf-8")
    load = LoadOptions(policy=policy, slots=slots, workers=workers, think_min_s=0.0, think_max_s=0.0,
                       token_delay_ms=10, out=tmp_path / "run")
    # from 2 users: one user's runs (up to 4.5 s each when its questions ask for long answers) can leave the first
    # step short of the 20 samples a p95 needs even after every extension — honestly undecided, but no knee to test
    return CapacityOptions(load=load, start=2, max_users=max_users, step_s=10, warmup_s=3, max_steps=8,
                           budget_s=420)


SEARCHES = {"2 slots": (2, 0), "4 slots, 2 workers": (4, 2)}


def _search(tmp_path_factory: pytest.TempPathFactory, name: str, slots: int, workers: int) -> CapacityRun:
    """A search; one the rig honestly left undecided because its own client was saturated (a busy machine) runs
    again with more client headroom — two more Locust workers — instead of failing or passing blindly."""
    run = run_capacity(_options(tmp_path_factory.mktemp(name.replace(" ", "_").replace(",", "")), slots,
                                workers=workers))
    if run.result.verdict == "undecided" and any(s.call == "client_saturated" for s in run.result.steps):
        run = run_capacity(_options(tmp_path_factory.mktemp("more_headroom"), slots, workers=workers + 2))
    return run


@pytest.fixture(scope="module")
def searches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CapacityRun]:
    """One search per slot limit, run once for the checks below (each takes a few minutes of load)."""
    return {name: _search(tmp_path_factory, name, slots, workers) for name, (slots, workers) in SEARCHES.items()}


@pytest.mark.parametrize("name", list(SEARCHES))
def test_the_knee_is_where_the_slot_limit_puts_it(searches: dict[str, CapacityRun], name: str) -> None:
    slots, workers = SEARCHES[name]
    run = searches[name]
    cap = run.result
    assert cap.verdict == "found", cap.answer
    assert cap.holds is not None and abs(cap.holds - slots) <= 1, [(s.users, s.call, s.why) for s in cap.steps]
    assert cap.breaks == cap.holds + 1
    assert cap.saturating == "run slots" and cap.saturating_at is not None and cap.saturating_at <= slots + 1
    assert cap.first_broken == ["T4.p95 < 300ms"]
    assert run.decision.decision == "recorded" and run.decision.exit_code == 0
    assert_valid("capacity", run.run_dir / "capacity.json")
    assert "holds" in json.loads((run.run_dir / "capacity.json").read_text())["answer"]
    assert 'name="rig capacity"' in (run.run_dir / "junit.xml").read_text(encoding="utf-8")
    # filed as a capacity run, with the time it ran and the throughput of that time (not the budget's)
    assert json.loads((run.run_dir / "manifest.json").read_text())["kind"] == "capacity"
    summary = json.loads((run.run_dir / "load.json").read_text())
    assert summary["duration_s"] < 420, "the search ended before its budget: the time that ran is counted"
    assert abs(summary["throughput_rps"] * summary["duration_s"] - summary["completed_runs"]) < 1.0
    page = (run.run_dir / "report.html").read_text(encoding="utf-8")
    assert "rig capacity report" in page and "Capacity decision: RECORDED" in page
    assert "offered load (users)" in page and f"holds: {cap.holds} users" in page
    if cap.overload is not None:
        assert "overload step" in page and "recovery step" in page
    if workers:  # each step's client health counts every worker (more, when the search ran again)
        steps = [s for s in cap.steps if s.client.processes]
        assert steps and all(s.client.processes >= workers for s in steps)


def test_rig_compare_names_the_release_that_holds_fewer(searches: dict[str, CapacityRun], tmp_path: Path) -> None:
    """The 2-slot release against the 4-slot one: it holds fewer researchers, the whole range below zero, and the
    comparison regresses on that alone (the steps' T-codes, taken at different loads, are not compared)."""
    base, new = searches["4 slots, 2 workers"], searches["2 slots"]
    result = compare_dirs(base.run_dir, new.run_dir)
    (part,) = result.parts
    cap = part.capacity
    assert cap is not None and cap.call == "fewer", cap
    assert cap.base_holds == base.result.holds and cap.new_holds == new.result.holds
    assert cap.high is not None and cap.high < 0 and part.tcodes == []
    assert result.decision == "regressed" and any("capacity" in r and "fewer" in r for r in result.reasons)
    again = compare_dirs(base.run_dir, base.run_dir)
    assert again.decision == "no regression" and again.parts[0].capacity is not None
    assert again.parts[0].capacity.call == "same"
    paths = write_reports(result, tmp_path / "cmp")
    assert "Capacity: <span" in paths[2].read_text(encoding="utf-8")


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:  # gone, or a zombie on its way out
        return []


def _signal(procs: list[psutil.Process], sig: int) -> None:
    for p in procs:
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass


def _starve(stop: threading.Event) -> None:
    """Stop the Locust process 400 ms of every 500 ms, as a throttled container would: its loop wakes late."""
    me = psutil.Process()
    while not stop.is_set():
        procs = [p for p in me.children(recursive=True) if "locust" in " ".join(_cmdline(p))]
        _signal(procs, signal.SIGSTOP)
        stop.wait(0.4)
        _signal(procs, signal.SIGCONT)
        stop.wait(0.1)


def test_a_starved_client_makes_its_step_undecided(tmp_path: Path) -> None:
    stop = threading.Event()
    starver = threading.Thread(target=_starve, args=(stop,), daemon=True)
    starver.start()
    try:
        run = run_capacity(_options(tmp_path, 2, max_users=8))
    finally:
        stop.set()
        starver.join(5)
        _signal(psutil.Process().children(recursive=True), signal.SIGCONT)  # nothing left stopped
    cap = run.result
    assert cap.steps and cap.steps[-1].call == "client_saturated", [(s.users, s.call, s.client) for s in cap.steps]
    assert cap.verdict == "undecided" and "client was saturated" in cap.answer
    assert "--workers" in cap.steps[-1].client.why
    assert run.decision.decision == "undecided" and run.decision.exit_code == 2
