"""Restarters: how the rig restarts a target for case 26 and for chaos schedules."""

from __future__ import annotations

import subprocess
import time
from typing import Any, Protocol

from rig.errors import RigError
from rig.target.embedded import EmbeddedWorkbench
from rig.target.readiness import wait_ready


class Restarter(Protocol):
    def restart(self, *, hard: bool = True) -> dict[str, Any]:
        """Restart the target and wait until it is ready; returns a record of what was done."""


class LocalProcessRestarter:
    """The embedded workbench: SIGKILL (`hard`) or SIGTERM, start on the same port and data, wait for /readyz."""

    def __init__(self, target: EmbeddedWorkbench) -> None:
        self.target = target

    def restart(self, *, hard: bool = True) -> dict[str, Any]:
        old_pid = self.target.pid
        seconds = self.target.restart(hard=hard)
        return {"kind": "local_process", "signal": "SIGKILL" if hard else "SIGTERM", "old_pid": old_pid,
                "new_pid": self.target.pid, "ready_s": round(seconds, 3)}


class CommandRestarter:
    """Any target: run a shell command (`restart_cmd`), then poll its readiness path (`ready_path`)."""

    def __init__(self, command: str, base_url: str, timeout_s: float = 120.0, ready_path: str = "/readyz") -> None:
        self.command = command
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.ready_path = ready_path

    def restart(self, *, hard: bool = True) -> dict[str, Any]:
        began = time.monotonic()
        result = subprocess.run(self.command, shell=True, capture_output=True, text=True, timeout=self.timeout_s)
        if result.returncode != 0:
            raise RigError(f"restart command failed ({result.returncode}): {result.stderr.strip()[:300]}",
                           fix="check target.restart_cmd in the rig config")
        wait_ready(self.base_url, self.timeout_s, path=self.ready_path)
        return {"kind": "command", "command": self.command, "ready_s": round(time.monotonic() - began, 3)}
