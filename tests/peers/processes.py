"""Starting and ending a peer target's processes: each in its own process group, logged to a file in its root,
its pid kept in a file so the deployment's restart command (another process) can find it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def spawn(root: Path, cmd: list[str], log: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start `cmd` in a new process group, its output appended to `root/log`."""
    with (root / log).open("ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie of ours counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def stop_recorded(pid_file: Path, sig: int = signal.SIGTERM, timeout_s: float = 20.0) -> None:
    """End the process group whose leader's pid `pid_file` holds, SIGKILL if it lingers; the file goes."""
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    kill_group(pid, sig)
    deadline = time.monotonic() + timeout_s
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not gone(pid):
        kill_group(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)


def stop_process(proc: subprocess.Popen[bytes] | None, timeout_s: float = 20.0) -> None:
    """End a process group this harness started (SIGTERM, then SIGKILL), and reap it."""
    if proc is None or proc.poll() is not None:
        return
    kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
