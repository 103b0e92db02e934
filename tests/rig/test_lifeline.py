"""Children die with the rig: SIGKILL of a rig process leaves none of the processes it started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rig.lifeline import start_time
from rig.waiting import wait_until


def in_group(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group `pgid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def nothing_left(run_dir: Path, pgid: int) -> None:
    """Wait for every process of a killed rig to be gone: by its process group and by its command line."""
    gone = wait_until(lambda: not in_group(pgid) and not _with_cmdline(str(run_dir)), 30.0, interval_s=0.2)
    assert gone, f"left running: group {in_group(pgid)}, by command line {_with_cmdline(str(run_dir))}"


def _with_cmdline(fragment: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds `fragment`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if fragment in cmd and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_guarded_child_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    marker = f"rig-lifeline-child-{os.getpid()}"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "from rig.lifeline import guard\n"
        f"marker = 'rig-lifeline-' + 'child-{os.getpid()}'  # built here, so only the child's argv holds it\n"
        "guard(subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', marker]))\n"
        "print('ready', flush=True)\n"
        "time.sleep(300)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
        children = _with_cmdline(marker)
        assert len(children) == 1 and start_time(children[0]) is not None
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        assert wait_until(lambda: not _with_cmdline(marker), 20.0), "the child outlived its killed parent"
    finally:
        for pid in _with_cmdline(marker):
            os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


@pytest.mark.slow
def test_sigkill_of_a_distributed_load_run_leaves_no_process_of_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "load-run"
    rig = subprocess.Popen([sys.executable, "-m", "rig.cli", "load", "--users", "4", "--workers", "2", "--duration",
                            "60s", "--out", str(run_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        # the workbench (its data under the run directory) and the Locust master and both workers are up
        assert wait_until(lambda: len(_with_cmdline(str(run_dir))) >= 4, 120.0, interval_s=0.2), \
            _with_cmdline(str(run_dir))
        os.kill(rig.pid, signal.SIGKILL)
        rig.wait(timeout=10)
        nothing_left(run_dir, rig.pid)
        assert (run_dir / "evidence.sqlite3").exists(), "the evidence store stays for a later report"
    finally:
        for pid in _with_cmdline(str(run_dir)):
            os.kill(pid, signal.SIGKILL)
        if rig.poll() is None:
            rig.kill()
