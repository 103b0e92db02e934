"""No secret on a command line: every process a load run starts (workbench, Locust master and workers) is read
from /proc while it runs, and neither the chaos token nor any password is in its argv, its log or the run
directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rig import events
from rig.load.context import LoadContext
from rig.load.options import LoadOptions
from rig.load.session import run_load

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)


def _descendants(root: int) -> list[int]:
    """Every live process below `root`, by walking /proc's parent links."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found += kids
        frontier += kids
    return found


def test_no_child_of_a_load_run_carries_a_secret_in_its_command_line(tmp_path: Path) -> None:
    seen: dict[int, str] = {}
    secrets: list[str] = []

    def scan(run: LoadContext) -> None:
        target = run.target
        assert target is not None and target.chaos_token
        secrets.extend([target.chaos_token, *run.passwords.values()])
        while not run.stopped.wait(0.5):  # several looks while the run goes on: workers start after the master
            for pid in _descendants(os.getpid()):
                try:
                    seen[pid] = (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")).decode(errors="replace")
                except OSError:
                    continue

    with events.load_running.listening(scan):
        run_load(LoadOptions(users=2, spawn_rate=2, duration_s=6, workers=2, out=tmp_path / "run",
                             think_min_s=0.2, think_max_s=0.5))
    assert len(secrets) >= 3 and all(len(s) >= 8 for s in secrets)
    names = " ".join(seen.values())
    assert "workbench" in names and "locust" in names and "--worker" in names, names[:2000]
    leaked = {pid: cmd for pid, cmd in seen.items() if any(s in cmd for s in secrets)}
    assert leaked == {}, leaked
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file() and path.suffix != ".sqlite3-wal":
            data = path.read_bytes()
            assert not any(s.encode() in data for s in secrets), path
