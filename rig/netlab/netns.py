"""Hosts on one machine: network namespaces on a private bridge, each with one interface and one address.

    switch namespace   rig-lab-<pid>-sw   holds the bridge; nothing else
    host namespaces    rig-lab-<pid>-<name>, each `eth0` 10.77.0.<n>/24 on the bridge, and `lo`

Nothing is added to the machine's own namespace: the addresses exist only inside the lab, so two labs
(or the machine's own 10.77.0.0/24, if any) never meet. Needs root (`ip netns`). `teardown()` removes
every namespace (which removes their interfaces); `sweep()` removes what a lab whose process is gone left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from rig.errors import ConfigError, RigError
from rig.lifeline import spawn

PREFIX = "rig-lab-"
SUBNET = "10.77.0"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RigError(f"`ip {' '.join(args)}` failed: {done.stderr.strip()}",
                       fix="rig lab needs root and the `ip` tool (iproute2) with network namespaces")
    return done


def check_can_run() -> None:
    """Raise ConfigError when this machine cannot make namespaces (not root, no `ip`)."""
    if shutil.which("ip") is None:
        raise ConfigError("the `ip` tool (iproute2) is not installed", fix="apt-get install -y iproute2")
    if os.geteuid() != 0:
        raise ConfigError("rig lab needs root: it creates network namespaces and virtual links",
                          fix="run it as root (sudo rig lab run ...)")


def lab_namespaces() -> list[str]:
    """Names of every lab namespace on this machine."""
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(PREFIX)]


def sweep() -> list[str]:
    """Delete the namespaces of labs whose process no longer runs; returns what was removed."""
    removed = []
    for name in lab_namespaces():
        pid = name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _ip("netns", "delete", name, check=False)
            removed.append(name)
    return removed


@dataclass
class Host:
    """One namespace standing for a machine: its name in the lab, its namespace and its address."""

    name: str
    netns: str
    address: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, argv: list[str], log: Path, *, env: dict[str, str] | None = None,
              stdin: bytes | None = None) -> subprocess.Popen[bytes]:
        """Start a command on this host (its own process group, output to `log`), as a person would there."""
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            proc = spawn(["ip", "netns", "exec", self.netns, *argv], stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.PIPE if stdin else None, env={**os.environ, **(env or {})})
        if stdin is not None and proc.stdin is not None:
            proc.stdin.write(stdin)
            proc.stdin.close()
        self.processes.append(proc)
        return proc

    def run(self, argv: list[str], log: Path, *, env: dict[str, str] | None = None, stdin: bytes | None = None,
            timeout_s: float = 120) -> int:
        """Run a command to its end on this host; returns its exit status."""
        proc = self.start(argv, log, env=env, stdin=stdin)
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise RigError(f"`{' '.join(argv[:4])}` on {self.name} did not end within {timeout_s:.0f} s; see {log}",
                           fix="read its log") from None

    def crash(self) -> float:
        """The machine dies: SIGKILL to every process on it — each one in its network namespace, whatever session
        it runs in (the rig starts its children in sessions of their own) — returns the wall time of the kill (ms)."""
        at = time.time() * 1000
        for pid in _ip("netns", "pids", self.netns, check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        self._signal(signal.SIGKILL)
        return at

    def _signal(self, sig: int) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    pass

    def link(self, up: bool) -> None:
        """Bring this host's interface down (its cable pulled) or up again."""
        _ip("-n", self.netns, "link", "set", "dev", "eth0", "up" if up else "down")

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM then, past `grace_s`, SIGKILL to what still runs (whole process groups)."""
        self._signal(signal.SIGTERM)
        for proc in self.processes:
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()


class Network:
    """A bridge in its own namespace and the hosts plugged into it; use as a context manager."""

    def __init__(self) -> None:
        self.lab_id = f"{PREFIX}{os.getpid()}"
        self.switch = f"{self.lab_id}-sw"
        self.hosts: dict[str, Host] = {}
        self._made: list[str] = []

    def __enter__(self) -> Network:
        check_can_run()
        sweep()
        self._netns(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        return self

    def __exit__(self, *exc: object) -> None:
        self.teardown()

    def _netns(self, name: str) -> None:
        _ip("netns", "add", name)
        self._made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def add_host(self, name: str) -> Host:
        """A new namespace with `eth0` on the bridge and the next address."""
        n = len(self.hosts) + 2
        netns, address = f"{self.lab_id}-{name}", f"{SUBNET}.{n}"
        self._netns(netns)
        outside = f"rl{os.getpid() % 100000}h{n}"  # interface names: 15 characters at most
        _ip("-n", self.switch, "link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", netns)
        _ip("-n", self.switch, "link", "set", outside, "master", "br0")
        _ip("-n", self.switch, "link", "set", outside, "up")
        _ip("-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", netns, "link", "set", "eth0", "up")
        host = Host(name, netns, address)
        self.hosts[name] = host
        return host

    def teardown(self) -> None:
        """Stop every process the lab started, then delete its namespaces (their links go with them)."""
        for host in self.hosts.values():
            host.stop(grace_s=5)
        for name in reversed(self._made):
            _ip("netns", "delete", name, check=False)
        self._made.clear()
