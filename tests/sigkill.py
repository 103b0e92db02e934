"""Killing a rig command mid-run with SIGKILL, once its evidence store shows enough finished rows."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from rig.evidence import EvidenceStore
from rig.waiting import wait_until


def finished_rows(run_dir: Path) -> int:
    """Cases (or case-turns) the run's evidence store has marked done; 0 before the store exists."""
    db = run_dir / "evidence.sqlite3"
    if not db.exists():
        return 0
    store = EvidenceStore(db)
    try:
        return len(store.done_cases())
    finally:
        store.close()


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], object], timeout_s: float, why: Callable[[], str]
              ) -> int:
    """SIGKILL `proc` (started in a process group of its own) as soon as `ready()` holds; fails with `why()` if it
    never does or `proc` ends first. Returns the group id, to look for anything of it left."""
    try:
        assert wait_until(lambda: ready() or proc.poll() is not None, timeout_s, interval_s=0.05) \
            and proc.poll() is None, why()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.pid


def kill_after(cmd: list[str], run_dir: Path, rows: int, timeout_s: float = 120) -> int:
    """Start `cmd` in a process group of its own, SIGKILL it as soon as `rows` rows are done (fails if they
    never are); returns the group id, to look for anything of it left."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    return kill_when(proc, lambda: finished_rows(run_dir) >= rows, timeout_s, lambda: f"{cmd[3]} never got going")


def signal_when(cmd: list[str], ready: Callable[[], object], sig: int = signal.SIGTERM, timeout_s: float = 180
                ) -> tuple[int, str]:
    """Start `cmd`, send it `sig` once `ready()` holds, and return its exit code and output once it ended."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    try:
        assert wait_until(ready, timeout_s, interval_s=0.05), f"{cmd[3]} never got going"
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out


def running_case(run_dir: Path) -> int | None:
    """The case the run's evidence store shows in flight (None: none, or no store yet)."""
    db = run_dir / "evidence.sqlite3"
    if not db.exists():
        return None
    store = EvidenceStore(db)
    try:
        return next((c.case_id for c in store.cases() if c.status == "running"), None)
    finally:
        store.close()
