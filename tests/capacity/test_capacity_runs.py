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

from rig.capacity.session import CapacityOptions, run_capacity
from rig.load.options import LoadOptions
from tests.schema_check import assert_valid

pytestmark = pytest.mark.slow  # `make test-slow`: each search runs a few minutes of load


def _options(tmp_path: Path, slots: int, *, workers: int = 0, max_users: int = 16) -> CapacityOptions:
    policy = tmp_path / "policy.yaml"
    policy.write_text("thresholds:\n  - T4.p95 < 300ms\n", encoding="utf-8")
    load = LoadOptions(policy=policy, slots=slots, workers=workers, think_min_s=0.0, think_max_s=0.0,
                       token_delay_ms=10, out=tmp_path / "run")
    return CapacityOptions(load=load, start=1, max_users=max_users, step_s=10, warmup_s=3, max_steps=8,
                           budget_s=420)


@pytest.mark.parametrize(("slots", "workers"), [(2, 0), (4, 2)], ids=["2 slots", "4 slots, 2 workers"])
def test_the_knee_is_where_the_slot_limit_puts_it(tmp_path: Path, slots: int, workers: int) -> None:
    run = run_capacity(_options(tmp_path, slots, workers=workers))
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
    if workers:
        steps = [s for s in cap.steps if s.client.processes]
        assert steps and all(s.client.processes == workers for s in steps)


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
