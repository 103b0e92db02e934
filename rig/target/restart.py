"""Restarters: the one way the rig restarts a target, for reliability case 26 and for chaos schedules alike.

`restarter_for()` builds it from what the run has: the embedded workbench's own process, else
`target.docker_container` (the docker SDK, `pip install 'rig[dist]'`), else `target.restart_cmd`. Every
restarter takes a mode — kill (SIGKILL), term (SIGTERM), restart, stop_start — waits until the target's
readiness path answers 2xx, and returns a `RestartRecord` stamped on the rig's one clock.
"""

from __future__ import annotations

import subprocess
from typing import Any, Literal, Protocol

from pydantic import BaseModel, computed_field

from rig.clock import now_ns
from rig.config import TargetConfig
from rig.errors import ConfigError, RigError
from rig.faults import RESTART_MODES, RestartMode
from rig.target.embedded import EmbeddedWorkbench
from rig.target.readiness import wait_ready

READY_TIMEOUT_S = 120.0  # the ceiling on a restart; the wait itself ends when the readiness path answers


class RestartRecord(BaseModel):
    """What a restart did: how, to what, and when it began and the target answered ready (`now_ns()` clock)."""

    kind: Literal["local_process", "command", "docker"]
    mode: RestartMode
    began_ns: int
    ready_ns: int
    down_s: float | None = None  # docker: how long the container took to go down and start again
    old_pid: int | None = None
    new_pid: int | None = None
    command: str | None = None
    container: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ready_s(self) -> float:
        """Seconds from the restart's start until the target answered ready."""
        return round((self.ready_ns - self.began_ns) / 1e9, 3)


class Restarter(Protocol):
    def restart(self, mode: RestartMode = "kill") -> RestartRecord:
        """Restart the target the way `mode` says and wait until it is ready."""


class LocalProcessRestarter:
    """The embedded workbench: SIGKILL (`kill`) or SIGTERM (any other mode), start on the same port and data."""

    def __init__(self, target: EmbeddedWorkbench) -> None:
        self.target = target

    def restart(self, mode: RestartMode = "kill") -> RestartRecord:
        old_pid = self.target.pid
        began = now_ns()
        self.target.restart(hard=mode == "kill")
        return RestartRecord(kind="local_process", mode=mode, began_ns=began, ready_ns=now_ns(), old_pid=old_pid,
                             new_pid=self.target.pid)


class CommandRestarter:
    """Any target: run a shell command (`restart_cmd`, whatever the mode), then poll its readiness path."""

    def __init__(self, command: str, base_url: str, timeout_s: float = READY_TIMEOUT_S,
                 ready_path: str = "/readyz") -> None:
        self.command = command
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.ready_path = ready_path

    def restart(self, mode: RestartMode = "kill") -> RestartRecord:
        began = now_ns()
        result = subprocess.run(self.command, shell=True, capture_output=True, text=True, timeout=self.timeout_s)
        if result.returncode != 0:
            raise RigError(f"restart command failed ({result.returncode}): {result.stderr.strip()[:300]}",
                           fix="check target.restart_cmd in the rig config")
        wait_ready(self.base_url, self.timeout_s, path=self.ready_path)
        return RestartRecord(kind="command", mode=mode, began_ns=began, ready_ns=now_ns(), command=self.command)


class DockerRestarter:
    """A container through the docker SDK: kill + start, stop + start (term, stop_start), or docker restart."""

    def __init__(self, container: str, base_url: str, timeout_s: float = READY_TIMEOUT_S, client: Any = None,
                 ready_path: str = "/readyz") -> None:
        self.container = container
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.ready_path = ready_path
        self._client = client

    def _get(self) -> Any:
        if self._client is None:
            try:
                import docker  # heavy optional dependency (rig[dist])
            except ImportError:
                raise ConfigError("the docker restarter needs the docker SDK",
                                  fix="pip install 'rig[dist]' (or pip install docker)") from None
            try:
                self._client = docker.from_env()
            except Exception as exc:
                raise RigError(f"cannot reach the docker engine: {exc}",
                               fix="check DOCKER_HOST and that the engine runs") from None
        try:
            return self._client.containers.get(self.container)
        except Exception as exc:
            raise RigError(f"no container {self.container!r}: {exc}", fix="check target.docker_container") from None

    def restart(self, mode: RestartMode = "kill") -> RestartRecord:
        container = self._get()
        began = now_ns()
        if mode == "kill":
            container.kill(signal="SIGKILL")
            container.start()
        elif mode in ("term", "stop_start"):
            container.stop(timeout=30)
            container.start()
        else:
            container.restart(timeout=30)
        down_s = round((now_ns() - began) / 1e9, 3)
        wait_ready(self.base_url, self.timeout_s, path=self.ready_path)
        return RestartRecord(kind="docker", mode=mode, began_ns=began, ready_ns=now_ns(), down_s=down_s,
                             container=self.container)


def restarter_for(target: TargetConfig | None, *, embedded: EmbeddedWorkbench | None = None) -> Restarter | None:
    """The run's restarter: the embedded workbench's process, else `target.docker_container`, else
    `target.restart_cmd`; None when rig.yaml gives neither (restart items are then BLOCKED)."""
    if embedded is not None:
        return LocalProcessRestarter(embedded)
    if target is None:
        return None
    if target.docker_container:
        return DockerRestarter(target.docker_container, target.url, ready_path=target.ready_path)
    if target.restart_cmd:
        return CommandRestarter(target.restart_cmd, target.url, ready_path=target.ready_path)
    return None


MISSING_RESTARTER = "a restarter: target.restart_cmd or target.docker_container in rig.yaml"

__all__ = ["CommandRestarter", "DockerRestarter", "LocalProcessRestarter", "MISSING_RESTARTER", "RESTART_MODES",
           "RestartMode", "RestartRecord", "Restarter", "restarter_for"]
