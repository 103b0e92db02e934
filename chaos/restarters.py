"""Restarters for chaos: the local process and a plain command (from `rig.target.restart`), and docker containers.

Each restarter takes a vocabulary mode — kill (SIGKILL), term (SIGTERM), restart, stop_start — waits
until the target's readiness URL answers 200, and returns what it did with its timings.
"""

from __future__ import annotations

import time
from typing import Any

from rig.errors import ConfigError, RigError
from rig.target.readiness import wait_ready
from rig.target.restart import CommandRestarter, LocalProcessRestarter, Restarter


class DockerRestarter:
    """A container, through the docker SDK (`pip install 'rig[dist]'`): restart, kill + start, stop + start."""

    def __init__(self, container: str, base_url: str, timeout_s: float = 120.0, client: Any = None,
                 ready_path: str = "/readyz") -> None:
        self.container = container
        self.ready_path = ready_path
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._client = client

    def _get(self) -> Any:
        if self._client is None:
            try:
                import docker
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
            raise RigError(f"no container {self.container!r}: {exc}", fix="check the container name") from None

    def restart(self, *, hard: bool = True, mode: str | None = None) -> dict[str, Any]:
        mode = mode or ("kill" if hard else "term")
        container = self._get()
        began = time.monotonic()
        if mode == "kill":
            container.kill(signal="SIGKILL")
            container.start()
        elif mode in ("term", "stop_start"):
            container.stop(timeout=30)
            container.start()
        else:
            container.restart(timeout=30)
        down_s = time.monotonic() - began
        wait_ready(self.base_url, self.timeout_s, path=self.ready_path)
        return {"kind": "docker", "container": self.container, "mode": mode, "down_s": round(down_s, 3),
                "ready_s": round(time.monotonic() - began, 3)}


def restart_with(restarter: Restarter | DockerRestarter, mode: str) -> dict[str, Any]:
    """Apply a vocabulary restart mode with any restarter."""
    if isinstance(restarter, DockerRestarter):
        return restarter.restart(mode=mode)
    record = restarter.restart(hard=mode == "kill")
    return {**record, "mode": mode}


__all__ = ["CommandRestarter", "DockerRestarter", "LocalProcessRestarter", "Restarter", "restart_with"]
